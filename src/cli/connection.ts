// Where the CLI finds the daemon and the key to talk to it: flags, then TROVE_* env, then local defaults.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runningDaemonUrl } from '../../daemon/listening.js';
import { resolveDataDir as dataDirFrom } from '../../daemon/paths.js';
import { ERROR_TABLE } from '../contract/errors.js';
import { CliError, type KeySource } from './client.js';
import { cliCwd, cliEnv, type CliEnv } from './io.js';

export const DEFAULT_URL = 'http://127.0.0.1:7410';

/** The global options of `trove` (program.opts()). */
export interface GlobalOptions {
  url?: string | undefined;
  key?: string | undefined;
  dataDir?: string | undefined;
  /** --quiet: commands that report progress (ingest, ingest --watch) print only errors and failed files. */
  quiet?: boolean | undefined;
}

export type { KeySource };

export interface Connection {
  url: string;
  key: string;
  /** Where the key came from; absent when a caller (a test) hands a key over directly. */
  keySource?: KeySource;
}

type Env = CliEnv;

/**
 * The daemon's URL: --url, then TROVE_URL, then where the local data dir's running daemon says it
 * listens (<data-dir>/daemon.json, written by the daemon; a file read and a signal-0 check, no network
 * round trip), then the default port.
 */
export function resolveUrl(opts: GlobalOptions, env: Env = cliEnv()): string {
  const raw = opts.url || env.TROVE_URL || runningDaemonUrl(resolveDataDir(opts, env)) || DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new CliError(`--url / TROVE_URL must be an http(s) URL such as ${DEFAULT_URL}, got '${raw}'.`, 2);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`--url / TROVE_URL must be an http(s) URL such as ${DEFAULT_URL}, got '${raw}'.`, 2);
  }
  return raw.replace(/\/+$/, '');
}

export function resolveDataDir(opts: GlobalOptions, env: Env = cliEnv()): string {
  return dataDirFrom(opts.dataDir, env, cliCwd());
}

// The exit codes (docs/tour.md): a missing or bad key is 3, as the API's unauthenticated is.
const EXIT_UNAUTHENTICATED = ERROR_TABLE.unauthenticated.exitCode;

export async function resolveKeyWithSource(opts: GlobalOptions, env: Env = cliEnv()): Promise<{ key: string; source: KeySource }> {
  if (opts.key) return { key: opts.key.trim(), source: { kind: 'flag' } };
  if (env.TROVE_KEY) return { key: env.TROVE_KEY.trim(), source: { kind: 'env' } };
  const keyFile = join(resolveDataDir(opts, env), 'cluster-key');
  let contents: string;
  try {
    contents = await readFile(keyFile, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `there is no cluster key file at ${keyFile}` : `the cluster key file ${keyFile} cannot be read (${code ?? String(err)})`;
    throw new CliError(
      `No API key: ${why}. Pass --key <key> or set TROVE_KEY, or point --data-dir / TROVE_DATA_DIR at the data dir of the local daemon.`,
      EXIT_UNAUTHENTICATED,
      'unauthenticated',
    );
  }
  const key = contents.trim();
  if (!key) throw new CliError(`The cluster key file ${keyFile} is empty. Pass --key <key> or set TROVE_KEY.`, EXIT_UNAUTHENTICATED, 'unauthenticated');
  return { key, source: { kind: 'file', path: keyFile } };
}

export async function resolveKey(opts: GlobalOptions, env: Env = cliEnv()): Promise<string> {
  return (await resolveKeyWithSource(opts, env)).key;
}

export async function resolveConnection(opts: GlobalOptions, env: Env = cliEnv()): Promise<Connection> {
  const url = resolveUrl(opts, env);
  const { key, source } = await resolveKeyWithSource(opts, env);
  return { url, key, keySource: source };
}
