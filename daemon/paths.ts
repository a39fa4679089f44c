// Where a daemon keeps its data by default (decisions.md §1). A module of its own so the CLI can
// find the data dir without loading the daemon.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The home directory as a process with `env` would see it: $HOME, else the account's (what
 * os.homedir() does with the process's own environment). The CLI passes the environment of the
 * invocation, which a test running it in-process sets apart from the test's own.
 */
export function homeDir(env: Env = process.env): string {
  return env.HOME || homedir();
}

export function defaultDataDir(env: Env = process.env, cwd: string = process.cwd()): string {
  if (env.TROVE_DATA_DIR) return resolve(cwd, env.TROVE_DATA_DIR);
  const base = env.XDG_DATA_HOME || join(homeDir(env), '.local', 'share');
  return join(base, 'trove');
}

/**
 * The data dir a command line and environment name: `dataDir` (--data-dir), else TROVE_DATA_DIR,
 * else the user's default; relative paths against `cwd` (a CLI invocation's). An empty value counts
 * as unset. One rule for the daemon's start (daemon/config.ts) and the CLI that looks for it.
 */
export function resolveDataDir(dataDir: string | undefined, env: Env = process.env, cwd: string = process.cwd()): string {
  return dataDir ? resolve(cwd, dataDir) : defaultDataDir(env, cwd);
}
