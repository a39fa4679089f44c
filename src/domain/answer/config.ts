// Which generator answers: `<data-dir>/config.json` {"generation": {...}}, overridden by
// TROVE_GENERATION_* variables. The default, `extractive`, needs no model and works offline; `openai`
// speaks to any OpenAI-compatible chat completions endpoint. Shown in GET /info.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractiveGenerator } from './extractive.js';
import type { Generator } from './generator.js';
import { openAiGenerator } from './openai.js';

export interface GenerationConfig {
  provider: 'extractive' | 'openai';
  model: string;
  url?: string | undefined;
  /** Name of the environment variable holding the API key (never the key itself in a file). */
  apiKeyEnv: string;
  /** The model reads images (a vision-capable chat model): query images are described by it too. */
  vision?: boolean | undefined;
}

const PROVIDERS = ['extractive', 'openai'] as const;

export function resolveGenerationConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): GenerationConfig {
  const file = join(dataDir, 'config.json');
  let fromFile: Partial<GenerationConfig> = {};
  if (existsSync(file)) fromFile = (JSON.parse(readFileSync(file, 'utf8')) as { generation?: Partial<GenerationConfig> }).generation ?? {};
  const provider = (env.TROVE_GENERATION_PROVIDER ?? fromFile.provider ?? 'extractive') as GenerationConfig['provider'];
  if (!PROVIDERS.includes(provider)) throw new Error(`Unknown generation provider '${provider}'; use one of ${PROVIDERS.join(', ')}.`);
  const defaults = { extractive: { model: 'mmr-v1', url: undefined }, openai: { model: 'gpt-4o-mini', url: 'https://api.openai.com/v1' } }[provider];
  return {
    provider,
    model: env.TROVE_GENERATION_MODEL ?? fromFile.model ?? defaults.model,
    url: env.TROVE_GENERATION_URL ?? fromFile.url ?? defaults.url,
    apiKeyEnv: fromFile.apiKeyEnv ?? 'TROVE_GENERATION_API_KEY',
    vision: env.TROVE_GENERATION_VISION !== undefined ? /^(1|true|yes)$/i.test(env.TROVE_GENERATION_VISION) : (fromFile.vision ?? false),
  };
}

export function createGenerator(config: GenerationConfig): Generator {
  if (config.provider === 'extractive') return extractiveGenerator();
  const apiKey = process.env[config.apiKeyEnv];
  return openAiGenerator({ baseUrl: config.url!, model: config.model, vision: config.vision, ...(apiKey ? { apiKey } : {}) });
}
