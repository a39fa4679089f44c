// `<data-dir>/daemon.json`: where the daemon of a data dir really listens, so the CLI finds it after
// `trove daemon start --port 7499` without being told. A module of its own (no daemon imports), so
// the CLI can read it without loading the daemon.
//
// Written (mode 0600, like the cluster key: it names the local machine's service) once the HTTP
// server listens, removed on a clean stop. A record left by a daemon that died is recognised by its
// pid no longer running, and ignored.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LISTENING_FILE = 'daemon.json';

export interface ListeningRecord {
  url: string;
  pid: number;
  started_at: string;
}

export function listeningFile(dataDir: string): string {
  return join(dataDir, LISTENING_FILE);
}

export function writeListeningRecord(dataDir: string, record: ListeningRecord): void {
  const file = listeningFile(dataDir);
  // Written beside and renamed over: a CLI reading at the same moment sees the old file or the new
  // one, never half of one.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(record) + '\n', { mode: 0o600 });
  renameSync(temp, file);
}

/** Removes the record if it is this process's (a daemon that took over a dead one's dir owns it). */
export function removeListeningRecord(dataDir: string, pid: number = process.pid): void {
  const record = readListeningRecord(dataDir);
  if (record === null || record.pid === pid) rmSync(listeningFile(dataDir), { force: true });
}

/** The record as written, or null when there is none or it is not one (never throws: it is a hint). */
export function readListeningRecord(dataDir: string): ListeningRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(listeningFile(dataDir), 'utf8'));
  } catch {
    return null;
  }
  const r = parsed as Partial<ListeningRecord> | null;
  if (!r || typeof r.url !== 'string' || !Number.isInteger(r.pid) || (r.pid as number) <= 0) return null;
  return { url: r.url, pid: r.pid as number, started_at: typeof r.started_at === 'string' ? r.started_at : '' };
}

/** The URL of the data dir's running daemon: a record whose process is still alive, else null. */
export function runningDaemonUrl(dataDir: string): string | null {
  const record = readListeningRecord(dataDir);
  return record && isAlive(record.pid) ? record.url : null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
