// `<data-dir>/config.json` as the operator reads and edits it (config.get / config.set). The daemon
// reads the file once at start (src/domain/embed/config.ts, src/domain/answer/config.ts,
// src/domain/search/vector-memory.ts), so every
// change here applies at the next start. TROVE_* variables of the daemon override the file.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { issuesSentence } from '../contract/issues.js';
import { parseVectorMemory } from '../domain/search/vector-memory.js';

export const CONFIG_FILE = 'config.json';

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http(s) URL');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (letters, digits and _)');
const boolean = z.preprocess((v) => (typeof v === 'string' ? ({ true: true, false: false, yes: true, no: false, '1': true, '0': false } as Record<string, boolean>)[v.toLowerCase()] ?? v : v), z.boolean({ error: 'must be true or false' }));
const positiveInt = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ error: 'must be a whole number from 1 to 65536' }).int('must be a whole number from 1 to 65536').min(1, 'must be a whole number from 1 to 65536').max(65536, 'must be a whole number from 1 to 65536'),
);

interface KeySpec {
  schema: z.ZodType;
  description: string;
  /** The daemon variable that wins over the file for this key. */
  env?: string;
}

/** Every key config.set accepts, with what it means. The whole file applies at the next start. */
export const CONFIG_KEYS: Record<string, KeySpec> = {
  'embedding.provider': { schema: z.enum(['builtin', 'openai', 'ollama', 'transformers'], { error: 'must be one of builtin, openai, ollama, transformers' }), description: 'embedding model provider', env: 'TROVE_EMBEDDING_PROVIDER' },
  'embedding.model': { schema: z.string({ error: 'must be a text value' }).min(1, 'must not be empty'), description: 'embedding model name', env: 'TROVE_EMBEDDING_MODEL' },
  'embedding.url': { schema: httpUrl, description: 'embedding server base URL', env: 'TROVE_EMBEDDING_URL' },
  'embedding.apiKeyEnv': { schema: envName, description: 'name of the environment variable holding the embedding API key' },
  'embedding.dimensions': { schema: positiveInt, description: 'vector dimensions of a remote embedding model', env: 'TROVE_EMBEDDING_DIMENSIONS' },
  'embedding.cacheDir': { schema: z.string().refine(isAbsolute, 'must be an absolute path'), description: "where the builtin model's cache lives", env: 'TROVE_CACHE_DIR' },
  'vectors.memory': {
    schema: z.union([z.string(), z.number()], { error: 'must be a size' }).superRefine((value, ctx) => {
      const parsed = parseVectorMemory(value);
      if (parsed instanceof Error) ctx.addIssue({ code: 'custom', message: parsed.message });
    }),
    description: 'memory for the in-memory vector copies: bytes, a size (512MB) or a share of RAM (25%)',
    env: 'TROVE_VECTOR_MEMORY',
  },
  'generation.provider': { schema: z.enum(['extractive', 'openai'], { error: 'must be one of extractive, openai' }), description: 'answer generator', env: 'TROVE_GENERATION_PROVIDER' },
  'generation.model': { schema: z.string({ error: 'must be a text value' }).min(1, 'must not be empty'), description: 'generation model name', env: 'TROVE_GENERATION_MODEL' },
  'generation.url': { schema: httpUrl, description: 'OpenAI-compatible chat completions base URL', env: 'TROVE_GENERATION_URL' },
  'generation.apiKeyEnv': { schema: envName, description: 'name of the environment variable holding the generation API key' },
  'generation.vision': { schema: boolean, description: 'the generation model reads images', env: 'TROVE_GENERATION_VISION' },
};

const SECRET_NAME = /(api[-_]?key|secret|token|password|passwd|credential)s?$/i;
export const MASK = '********';

/** A value safe to show: secrets by name are masked, and so is the password of a URL. */
export function maskValue(name: string, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (SECRET_NAME.test(name)) return MASK;
  if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    try {
      const url = new URL(value);
      if (url.password) {
        url.password = MASK;
        return url.toString();
      }
    } catch {
      return value;
    }
  }
  return value;
}

/** Every leaf of the file as `section.key`, masked. */
function flatten(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = Array.isArray(value) ? value.map((v) => maskValue(prefix, v)) : maskValue(prefix, value);
  }
  return out;
}

export function configFile(dataDir: string): string {
  return join(dataDir, CONFIG_FILE);
}

function readFileObject(file: string): Record<string, unknown> {
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

export interface ConfigEntry {
  key: string;
  /** The value in config.json (masked when secret), or null when the file does not set it. */
  value: unknown;
  /** The daemon variable that overrides the file for this key, when the daemon has it set. */
  overridden_by: string | null;
  description: string | null;
}

export interface ConfigView {
  file: string;
  exists: boolean;
  entries: ConfigEntry[];
  /** What the running daemon uses (read at its start), masked. */
  running: Record<string, unknown>;
}

export function readConfig(dataDir: string, running: Record<string, unknown>, env: NodeJS.ProcessEnv, key?: string): ConfigView {
  const file = configFile(dataDir);
  if (key !== undefined && !Object.hasOwn(CONFIG_KEYS, key)) throw unknownKey(key);
  const values = flatten(readFileObject(file));
  // Known keys always show (null when unset); keys a person wrote by hand show too, masked.
  const names = key !== undefined ? [key] : [...new Set([...Object.keys(CONFIG_KEYS), ...Object.keys(values)])];
  return {
    file,
    exists: existsSync(file),
    entries: names.map((name) => entry(name, values[name] ?? null, env)),
    running: flatten(running),
  };
}

function entry(name: string, value: unknown, env: NodeJS.ProcessEnv): ConfigEntry {
  const spec = CONFIG_KEYS[name];
  return { key: name, value, overridden_by: spec?.env && env[spec.env] !== undefined ? spec.env : null, description: spec?.description ?? null };
}

function unknownKey(key: string): TroveError {
  if (SECRET_NAME.test(key)) {
    const section = key.split('.')[0] ?? 'generation';
    return new TroveError('invalid_request', `trove never stores API keys in config.json: put the key in an environment variable of the daemon and set ${section}.apiKeyEnv to its name.`, { key });
  }
  return new TroveError('invalid_request', `Unknown config key '${key}'. Known keys: ${Object.keys(CONFIG_KEYS).join(', ')}.`, { key, known_keys: Object.keys(CONFIG_KEYS) });
}

export interface ConfigChange {
  file: string;
  key: string;
  value: unknown;
  previous: unknown;
  changed: boolean;
  /** Embedding and generation settings are read at start: the daemon must restart to use them. */
  restart_required: boolean;
  overridden_by: string | null;
}

/** Sets (or, with null, removes) one key; the file is replaced atomically and kept private (0600). */
export function setConfig(dataDir: string, key: string, raw: string | number | boolean | null, env: NodeJS.ProcessEnv): ConfigChange {
  const spec = CONFIG_KEYS[key];
  if (!spec) throw unknownKey(key);
  let value: unknown = null;
  if (raw !== null) {
    const parsed = spec.schema.safeParse(raw);
    if (!parsed.success) {
      throw new TroveError('invalid_request', issuesSentence(parsed.error.issues, { schema: spec.schema, input: raw, field: key }), { key });
    }
    value = parsed.data;
  }
  const file = configFile(dataDir);
  const doc = readFileObject(file);
  const [section, leaf] = key.split('.') as [string, string];
  const current = doc[section];
  if (current !== undefined && (current === null || typeof current !== 'object' || Array.isArray(current))) {
    throw new TroveError('invalid_request', `${file}: '${section}' must be an object; fix the file by hand first.`);
  }
  const sectionObject = { ...((current as Record<string, unknown> | undefined) ?? {}) };
  const previous = sectionObject[leaf] ?? null;
  if (value === null) delete sectionObject[leaf];
  else sectionObject[leaf] = value;
  if (Object.keys(sectionObject).length === 0) delete doc[section];
  else doc[section] = sectionObject;
  const changed = JSON.stringify(previous) !== JSON.stringify(value);
  if (changed) {
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
    renameSync(temp, file);
  }
  return {
    file,
    key,
    value: maskValue(key, value),
    previous: maskValue(key, previous),
    changed,
    restart_required: changed,
    overridden_by: spec.env && env[spec.env] !== undefined ? spec.env : null,
  };
}
