import type { Services } from './context.js';
import { EVENT_TYPES } from './events.js';
import { expectedDimensions } from './embed/config.js';
import { DEFAULT_BODY_LIMIT } from './limits.js';

export const API_VERSION = '1';

/** GET /info: the contract's fields plus decisions.md §3's embedding, generation, web_search and limits. */
export function infoDocument(s: Services) {
  const { config } = s.embedding;
  return {
    api_version: API_VERSION,
    search_modes: ['keyword', 'semantic'],
    query_modes: ['standard', 'ultra', 'recall'],
    uri_schemes: ['file', 'http', 'https'],
    event_types: [...EVENT_TYPES],
    embedding: { provider: config.provider, model: s.embedding.modelId, dimensions: expectedDimensions(config) },
    generation: { provider: s.generation.provider, model: s.generation.model },
    web_search: { enabled: false },
    limits: {
      json_body_bytes: DEFAULT_BODY_LIMIT,
      search_body_bytes: 4_194_304,
      query_chars: 32000,
      search_limit_max: 100,
      list_limit_max: 100,
      file_path_bytes: 1024,
      filter_depth: 8,
      filter_clauses: 100,
      principals: 4096,
      list_cursor_seconds: 3600,
      search_cursor_seconds: 2400,
    },
  };
}
