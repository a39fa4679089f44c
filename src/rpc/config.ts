// `<data-dir>/config.json` as the operator reads and edits it (config.get / config.set), key by key
// against the file's schema (src/domain/config-file.ts). The daemon reads the file once at start
// (daemon/config.ts), so every change here applies at the next start. TROVE_* variables of the
// daemon override the file.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { TroveError } from '../contract/errors.js';
import { issuesSentence } from '../contract/issues.js';
import { CONFIG_KEYS, configFilePath, overridingVariable, readConfigDocument } from '../domain/config-file.js';

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
  const file = configFilePath(dataDir);
  if (key !== undefined && !Object.hasOwn(CONFIG_KEYS, key)) throw unknownKey(key);
  const values = flatten(readConfigDocument(file));
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
  return { key: name, value, overridden_by: overridingVariable(spec, env), description: spec?.description ?? null };
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
  const file = configFilePath(dataDir);
  const doc = readConfigDocument(file);
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
    overridden_by: overridingVariable(spec, env),
  };
}
