// Where a daemon keeps its data by default (decisions.md §1). A module of its own so the CLI can
// find the data dir without loading the daemon.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function defaultDataDir(): string {
  if (process.env.TROVE_DATA_DIR) return resolve(process.env.TROVE_DATA_DIR);
  const base = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'trove');
}
