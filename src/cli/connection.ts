// Where the CLI finds the daemon and the key to talk to it: flags, then TROVE_* env, then local defaults.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { defaultDataDir } from '../../daemon/paths.js';
import { CliError } from './client.js';

export const DEFAULT_URL = 'http://127.0.0.1:7410';

/** The global options of `trove` (program.opts()). */
export interface GlobalOptions {
  url?: string | undefined;
  key?: string | undefined;
  dataDir?: string | undefined;
}

export interface Connection {
  url: string;
  key: string;
}

type Env = Readonly<Record<string, string | undefined>>;

export function resolveUrl(opts: GlobalOptions, env: Env = process.env): string {
  const raw = opts.url || env.TROVE_URL || DEFAULT_URL;
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

export function resolveDataDir(opts: GlobalOptions, env: Env = process.env): string {
  const dir = opts.dataDir || env.TROVE_DATA_DIR;
  return dir ? resolve(dir) : defaultDataDir();
}

export async function resolveKey(opts: GlobalOptions, env: Env = process.env): Promise<string> {
  const explicit = opts.key || env.TROVE_KEY;
  if (explicit) return explicit.trim();
  const keyFile = join(resolveDataDir(opts, env), 'cluster-key');
  let contents: string;
  try {
    contents = await readFile(keyFile, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `there is no cluster key file at ${keyFile}` : `the cluster key file ${keyFile} cannot be read (${code ?? String(err)})`;
    throw new CliError(
      `No API key: ${why}. Pass --key <key> or set TROVE_KEY, or point --data-dir / TROVE_DATA_DIR at the data dir of the local daemon.`,
      1,
    );
  }
  const key = contents.trim();
  if (!key) throw new CliError(`The cluster key file ${keyFile} is empty. Pass --key <key> or set TROVE_KEY.`, 1);
  return key;
}

export async function resolveConnection(opts: GlobalOptions, env: Env = process.env): Promise<Connection> {
  const url = resolveUrl(opts, env);
  return { url, key: await resolveKey(opts, env) };
}
