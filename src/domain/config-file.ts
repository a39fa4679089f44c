// `<data-dir>/config.json`, the daemon's settings file, and its one schema. The daemon reads and
// validates the whole file once at start (daemon/config.ts, which also says how flags and the
// environment override it); the operator edits it one key at a time (config.set, src/rpc/config.ts),
// each value checked by the same key's schema, so the file it writes is always one the daemon starts with.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { GENERATION_PROVIDERS } from './answer/config.js';
import { EMBEDDING_PROVIDERS } from './embed/config.js';
import { AllowedHosts, AllowedOrigins, ReplyBudgetTokens } from './mcp-settings.js';
import { parseVectorMemory } from './search/vector-memory.js';

export const CONFIG_FILE = 'config.json';

export function configFilePath(dataDir: string): string {
  return join(dataDir, CONFIG_FILE);
}

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http(s) URL');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (letters, digits and _)');
// Written by hand or from a shell (`trove config set generation.vision yes`), a flag reads as any of these words.
const boolean = z.preprocess((v) => (typeof v === 'string' ? ({ true: true, false: false, yes: true, no: false, '1': true, '0': false } as Record<string, boolean>)[v.toLowerCase()] ?? v : v), z.boolean({ error: 'must be true or false' }));
const positiveInt = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ error: 'must be a whole number from 1 to 65536' }).int('must be a whole number from 1 to 65536').min(1, 'must be a whole number from 1 to 65536').max(65536, 'must be a whole number from 1 to 65536'),
);
const text = z.string({ error: 'must be a text value' }).min(1, 'must not be empty');
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });

export interface KeySpec<S extends z.ZodType = z.ZodType> {
  /** `section.key`, as config.get/config.set and error messages name it. */
  key: string;
  schema: S;
  description: string;
  /** The daemon variable that wins over the file for this key. */
  env?: string;
  /** How the variable's text is read, where it differs from the file's rule. */
  envSchema?: z.ZodType<z.output<S>>;
}

const spec = <S extends z.ZodType>(key: string, schema: S, description: string, env?: string, envSchema?: z.ZodType<z.output<S>>): KeySpec<S> => ({
  key,
  schema,
  description,
  ...(env === undefined ? {} : { env }),
  ...(envSchema === undefined ? {} : { envSchema }),
});

/** Every setting of the file, by section, with what it means and the variable that overrides it. */
export const SETTINGS = {
  embedding: {
    provider: spec('embedding.provider', oneOf(EMBEDDING_PROVIDERS), 'embedding model provider', 'TROVE_EMBEDDING_PROVIDER'),
    model: spec('embedding.model', text, 'embedding model name', 'TROVE_EMBEDDING_MODEL'),
    url: spec('embedding.url', httpUrl, 'embedding server base URL', 'TROVE_EMBEDDING_URL'),
    apiKeyEnv: spec('embedding.apiKeyEnv', envName, 'name of the environment variable holding the embedding API key'),
    dimensions: spec('embedding.dimensions', positiveInt, 'vector dimensions of a remote embedding model', 'TROVE_EMBEDDING_DIMENSIONS'),
    // The file may be edited from another directory (config.set), so it needs an absolute path; the
    // variable is the daemon's own, read from where it starts.
    cacheDir: spec('embedding.cacheDir', z.string().refine(isAbsolute, 'must be an absolute path'), "where the builtin model's cache lives", 'TROVE_CACHE_DIR', z.string()),
  },
  vectors: {
    memory: spec(
      'vectors.memory',
      z.union([z.string(), z.number()], { error: 'must be a size' }).superRefine((value, ctx) => {
        const parsed = parseVectorMemory(value);
        if (parsed instanceof Error) ctx.addIssue({ code: 'custom', message: parsed.message });
      }),
      'memory for the in-memory vector copies: bytes, a size (512MB) or a share of RAM (25%)',
      'TROVE_VECTOR_MEMORY',
    ),
  },
  generation: {
    provider: spec('generation.provider', oneOf(GENERATION_PROVIDERS), 'answer generator', 'TROVE_GENERATION_PROVIDER'),
    model: spec('generation.model', text, 'generation model name', 'TROVE_GENERATION_MODEL'),
    url: spec('generation.url', httpUrl, 'OpenAI-compatible chat completions base URL', 'TROVE_GENERATION_URL'),
    apiKeyEnv: spec('generation.apiKeyEnv', envName, 'name of the environment variable holding the generation API key'),
    vision: spec('generation.vision', boolean, 'the generation model reads images', 'TROVE_GENERATION_VISION'),
  },
  mcp: {
    allowedOrigins: spec('mcp.allowedOrigins', AllowedOrigins, 'web origins that may call /mcp besides the daemon\'s own loopback ones', 'TROVE_MCP_ALLOWED_ORIGINS'),
    allowedHosts: spec('mcp.allowedHosts', AllowedHosts, 'host names /mcp answers to besides the bound address (a proxy or load balancer\'s)', 'TROVE_MCP_ALLOWED_HOSTS'),
    replyBudgetTokens: spec('mcp.replyBudgetTokens', ReplyBudgetTokens, 'most tokens (UTF-8 bytes / 4) one MCP tool reply may take, text and structured forms together', 'TROVE_MCP_REPLY_BUDGET_TOKENS'),
  },
} as const;

/** Every key config.set accepts, as `section.key`. The whole file applies at the next start. */
export const CONFIG_KEYS: Record<string, KeySpec> = Object.fromEntries(
  Object.values(SETTINGS).flatMap((section) => Object.values(section).map((s: KeySpec) => [s.key, s])),
);

type SectionShape<T extends Record<string, KeySpec>> = { [K in keyof T]: T[K]['schema'] };

/** A section of the file: every key optional; keys trove does not read are kept, not refused (config.get lists them). */
function section<T extends Record<string, KeySpec>>(settings: T) {
  const shape = Object.fromEntries(Object.entries(settings).map(([name, s]) => [name, s.schema])) as SectionShape<T>;
  return z.object(shape).partial().loose();
}

export const ConfigFileSchema = z
  .object({
    embedding: section(SETTINGS.embedding).optional(),
    vectors: section(SETTINGS.vectors).optional(),
    generation: section(SETTINGS.generation).optional(),
    mcp: section(SETTINGS.mcp).optional(),
  })
  .loose();

export type ConfigFile = z.output<typeof ConfigFileSchema>;

/** The file as written, not yet validated: {} when there is none. Refuses what is not a JSON object. */
export function readConfigDocument(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TroveError('invalid_request', `${file} is not valid JSON (${(err as Error).message}): fix or remove it.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TroveError('invalid_request', `${file} must hold a JSON object.`);
  return parsed as Record<string, unknown>;
}

/** A variable of the daemon's environment; an empty one counts as unset. */
export function variable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The variable that overrides a key of the file, when the daemon has it set. */
export function overridingVariable(spec: KeySpec | undefined, env: NodeJS.ProcessEnv): string | null {
  return spec?.env !== undefined && variable(env, spec.env) !== undefined ? spec.env : null;
}
