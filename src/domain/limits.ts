// retrieval-api.md, Limits: the request bodies.
export const DEFAULT_BODY_LIMIT = 1_048_576;
export const SEARCH_BODY_LIMIT = 4_194_304;
export const ANSWER_BODY_LIMIT = 6_291_456;

/**
 * What the indexing worker accepts of one file, and how long it waits for it (docs/decisions.md,
 * "Per-file limits"); and how many queued jobs it claims at once.
 */
export const INDEXING_LIMITS = {
  maxFileBytes: 256 * 1024 * 1024,
  /**
   * What a file's compressed parts (zip entries, PDF Flate streams, PNG and TIFF image data) may expand to,
   * measured before any library inflates them (src/domain/ingest/decompression.ts).
   */
  maxInflatedBytes: 256 * 1024 * 1024,
  fetchTimeoutMs: 60_000,
  maxPages: 2_000,
  extractTimeoutMs: 300_000,
  batchSize: 64,
} as const;
