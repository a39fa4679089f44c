// Which generator answers (resolved at start from config.json and the environment by
// daemon/config.ts). The default, `extractive`, needs no model and works offline; `openai` speaks to
// any OpenAI-compatible chat completions endpoint. Shown in GET /info.
import { extractiveGenerator } from './extractive.js';
import type { Generator } from './generator.js';
import { openAiGenerator } from './openai.js';

/** Every generator the daemon knows (config.json's generation.provider, TROVE_GENERATION_PROVIDER). */
export const GENERATION_PROVIDERS = ['extractive', 'openai'] as const;

export interface GenerationConfig {
  provider: (typeof GENERATION_PROVIDERS)[number];
  model: string;
  url?: string | undefined;
  /** Name of the environment variable holding the API key (never the key itself in a file). */
  apiKeyEnv: string;
  /** The model reads images (a vision-capable chat model): query images are described by it too. */
  vision?: boolean | undefined;
}

/** What a provider uses when neither config.json nor the environment says. */
export const GENERATION_DEFAULTS: Record<GenerationConfig['provider'], { model: string; url: string | undefined }> = {
  extractive: { model: 'mmr-v1', url: undefined },
  openai: { model: 'gpt-4o-mini', url: 'https://api.openai.com/v1' },
};

export const DEFAULT_GENERATION_API_KEY_ENV = 'TROVE_GENERATION_API_KEY';

export function createGenerator(config: GenerationConfig): Generator {
  if (config.provider === 'extractive') return extractiveGenerator();
  const apiKey = process.env[config.apiKeyEnv];
  return openAiGenerator({ baseUrl: config.url!, model: config.model, vision: config.vision, ...(apiKey ? { apiKey } : {}) });
}
