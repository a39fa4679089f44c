// The CLI's own small config file, written by `trove init`: the namespace, collection and folder the
// user chose, so that later commands can default to them. It lives in $TROVE_CONFIG_HOME/cli.json,
// else $XDG_CONFIG_HOME/trove/cli.json, else ~/.config/trove/cli.json. It holds no secrets (the key
// stays in the daemon's data dir), and keys this version does not know are kept as they are.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { homeDir } from '../../daemon/paths.js';
import { CliError } from './client.js';
import { cliCwd, cliEnv, type CliEnv } from './io.js';

type Env = CliEnv;

export const CLI_CONFIG_FILE = 'cli.json';

export interface CliConfig {
  /** The namespace commands use when none is named. */
  namespace?: string;
  /** The collection commands use when none is named. */
  collection?: string;
  /** The folder `trove init` ingested (absolute). */
  folder?: string;
  /** The daemon `trove init` set these up on: the TUI opens the saved collection only on that daemon. */
  url?: string;
  /** Patterns (.gitignore syntax) every `trove ingest` leaves out, with its own --exclude. */
  exclude?: string[];
  [other: string]: unknown;
}

export function cliConfigDir(env: Env = cliEnv()): string {
  if (env.TROVE_CONFIG_HOME) return resolve(cliCwd(), env.TROVE_CONFIG_HOME);
  if (env.XDG_CONFIG_HOME) return join(resolve(cliCwd(), env.XDG_CONFIG_HOME), 'trove');
  return join(homeDir(env), '.config', 'trove');
}

export function cliConfigPath(env: Env = cliEnv()): string {
  return join(cliConfigDir(env), CLI_CONFIG_FILE);
}

/** The config, or an empty one when there is no file yet; a file that is not a JSON object is an error. */
export async function readCliConfig(env: Env = cliEnv()): Promise<CliConfig> {
  const file = cliConfigPath(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`Cannot read the CLI config ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`The CLI config ${file} is not valid JSON; fix or delete it (\`trove init\` writes a new one).`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`The CLI config ${file} must hold a JSON object; fix or delete it (\`trove init\` writes a new one).`);
  }
  return parsed as CliConfig;
}

/** Merges `changes` into the file (created with its folder if missing) and returns the file's path. */
export async function updateCliConfig(changes: CliConfig, env: Env = cliEnv()): Promise<string> {
  const file = cliConfigPath(env);
  const current = await readCliConfig(env);
  const next = { ...current, ...changes };
  await mkdir(cliConfigDir(env), { recursive: true });
  // Written beside and renamed over, so a crash never leaves half a file behind; named apart from
  // any other invocation's (in-process ones share a pid).
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify(next, null, 2) + '\n', { mode: 0o644 });
  await rename(temp, file);
  return file;
}
