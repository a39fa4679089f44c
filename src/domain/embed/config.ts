// The daemon's embedding provider: its settings (resolved at start from config.json and the
// environment by daemon/config.ts), the model it loads. Shown in GET /info; recorded with each
// collection's vectors.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_MODEL_ID, defaultShippedModelPath, loadBuiltinEmbedder } from './builtin.js';
import type { EmbeddingProvider } from './provider.js';
import { RemoteEmbedder } from './remote.js';

/** Every embedding provider the daemon knows (config.json's embedding.provider, TROVE_EMBEDDING_PROVIDER). */
export const EMBEDDING_PROVIDERS = ['builtin', 'openai', 'ollama', 'transformers'] as const;

export interface EmbeddingConfig {
  provider: (typeof EMBEDDING_PROVIDERS)[number];
  model: string;
  url?: string | undefined;
  /** Name of the environment variable holding the API key (never the key itself in a file). */
  apiKeyEnv?: string | undefined;
  dimensions?: number | undefined;
  /** Where the builtin model's binary cache lives (shared by every data dir of this user). */
  cacheDir: string;
}

/** What a provider uses when neither config.json nor the environment says. */
export const EMBEDDING_DEFAULTS: Record<EmbeddingConfig['provider'], { model: string; url?: string }> = {
  builtin: { model: BUILTIN_MODEL_ID },
  openai: { model: 'text-embedding-3-small', url: 'https://api.openai.com' },
  ollama: { model: 'nomic-embed-text', url: 'http://127.0.0.1:11434' },
  transformers: { model: 'Xenova/all-MiniLM-L6-v2' },
};

export const DEFAULT_EMBEDDING_API_KEY_ENV = 'TROVE_EMBEDDING_API_KEY';

/** The builtin model's cache when config.json names none: TROVE_CACHE_DIR, else the user's cache dir. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TROVE_CACHE_DIR) return env.TROVE_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'trove');
}

/** The model id a collection records: switching it needs :reindex. */
export function modelId(config: EmbeddingConfig): string {
  return config.provider === 'builtin' ? BUILTIN_MODEL_ID : `${config.provider}:${config.model}`;
}

export function expectedDimensions(config: EmbeddingConfig): number {
  return config.provider === 'builtin' ? 100 : (config.dimensions ?? 0);
}

export async function createEmbedder(config: EmbeddingConfig): Promise<EmbeddingProvider> {
  switch (config.provider) {
    case 'builtin':
      // The package's converted model first (read-only), then the user's cache dir (converted there once).
      return loadBuiltinEmbedder({ cacheDir: config.cacheDir, shippedPath: defaultShippedModelPath() });
    case 'openai':
    case 'ollama':
      return new RemoteEmbedder({ kind: config.provider, url: config.url!, model: config.model, apiKey: config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined, dimensions: config.dimensions });
    case 'transformers':
      return loadTransformersEmbedder(config);
  }
}

/**
 * @huggingface/transformers is optional (large, and it brings a native runtime): installed by the
 * user who wants it. It reads a local model folder, or its hub cache when the machine is online.
 */
async function loadTransformersEmbedder(config: EmbeddingConfig): Promise<EmbeddingProvider> {
  const moduleName = '@huggingface/transformers';
  let lib: { pipeline: (task: string, model: string) => Promise<(texts: string[], opts: object) => Promise<{ tolist(): number[][] }>> };
  try {
    lib = (await import(moduleName)) as typeof lib;
  } catch {
    throw new Error(`The transformers provider needs the optional package ${moduleName}: run \`npm install ${moduleName}\` in the trove folder.`);
  }
  const extract = await lib.pipeline('feature-extraction', config.model);
  let dimensions = config.dimensions ?? 0;
  return {
    id: modelId(config),
    get dimensions() {
      return dimensions;
    },
    async embed(texts: string[]) {
      const out = (await extract(texts, { pooling: 'mean', normalize: true })).tolist();
      if (dimensions === 0) dimensions = out[0]?.length ?? 0;
      return out.map((v) => Float32Array.from(v));
    },
  };
}

/** The daemon's model, loaded on first need; a failed load is retried by the next caller. */
export interface LazyEmbedding {
  config: EmbeddingConfig;
  modelId: string;
  get(): Promise<EmbeddingProvider>;
}

export function lazyEmbedding(config: EmbeddingConfig): LazyEmbedding {
  let provider: Promise<EmbeddingProvider> | null = null;
  return {
    config,
    modelId: modelId(config),
    get: () =>
      (provider ??= createEmbedder(config).catch((err: unknown) => {
        provider = null;
        throw err;
      })),
  };
}
