// The daemon's log file, `<data-dir>/logs/daemon.log` (rotated to daemon.log.1 past ~5 MB), written
// by `trove daemon start`, and `trove daemon logs [-n N] [--follow]`, which reads it. The log reads
// the file itself, so it works when the daemon is down too (that is when it is most wanted).
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { CLI_EXIT_CODES } from '../../contract/errors.js';
import { CliError, reportError } from '../client.js';
import { resolveDataDir, type GlobalOptions } from '../connection.js';
import { errOut, out } from '../io.js';

export const MAX_LOG_BYTES = 5 * 1024 * 1024;
export const daemonLogPath = (dataDir: string): string => join(dataDir, 'logs', 'daemon.log');

/**
 * Appends the daemon's log lines to its data dir's log file. Lines logged before the data dir is
 * known (and locked by this daemon) wait in memory; a failing write never stops the daemon.
 */
export class DaemonLogFile {
  private file: string | null = null;
  private size = 0;
  private pending: string[] = [];

  write(line: string): void {
    const stamped = `${new Date().toISOString()} ${line}`;
    if (this.file) this.append(stamped);
    else if (this.pending.length < 1000) this.pending.push(stamped);
  }

  /** Starts writing to the data dir's log (lines waiting first); false when its folder cannot be made. */
  open(dataDir: string): boolean {
    const file = daemonLogPath(dataDir);
    try {
      mkdirSync(join(dataDir, 'logs'), { recursive: true, mode: 0o700 });
      this.size = existsSync(file) ? statSync(file).size : 0;
    } catch {
      return false;
    }
    this.file = file;
    for (const line of this.pending.splice(0)) this.append(line);
    return true;
  }

  private append(line: string): void {
    const text = line + '\n';
    const bytes = Buffer.byteLength(text);
    try {
      if (this.size > 0 && this.size + bytes > MAX_LOG_BYTES) {
        renameSync(this.file!, `${this.file}.1`);
        this.size = 0;
      }
      appendFileSync(this.file!, text, { mode: 0o600 });
      this.size += bytes;
    } catch {
      // A full disk or a removed (ephemeral) data dir: the log line still went to stderr.
    }
  }
}

export interface DaemonLogsOptions {
  lines?: string;
  follow?: boolean;
  json?: boolean;
}

function parseLines(value: string | undefined): number {
  if (value === undefined) return 50;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`-n / --lines takes a whole number of lines (0 or more), got '${value}'.`, 2);
  return n;
}

const splitLines = (text: string): string[] => {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
};

/** The last `count` lines, reaching into the rotated file when the current one is shorter. */
function tail(file: string, count: number): string[] {
  if (count === 0) return [];
  const current = splitLines(readFileSync(file, 'utf8'));
  if (current.length >= count || !existsSync(`${file}.1`)) return current.slice(-count);
  const older = splitLines(readFileSync(`${file}.1`, 'utf8'));
  return [...older, ...current].slice(-count);
}

export async function runDaemonLogs(globalOpts: GlobalOptions, opts: DaemonLogsOptions): Promise<number> {
  const json = Boolean(opts.json);
  const print = (line: string) => out().write(json ? JSON.stringify({ line }) + '\n' : line + '\n');
  try {
    const count = parseLines(opts.lines);
    const dataDir = resolveDataDir(globalOpts);
    const file = daemonLogPath(dataDir);
    const exists = existsSync(file);
    if (!exists && !opts.follow) {
      throw new CliError(`No daemon log at ${file}: no daemon has run with data dir ${dataDir} (\`trove daemon start\` writes it).`, CLI_EXIT_CODES.daemon_not_running, 'no_daemon_log');
    }
    const lines = exists ? tail(file, count) : [];
    if (!opts.follow) {
      out().write(json ? JSON.stringify({ file, lines }) + '\n' : lines.map((l) => l + '\n').join(''));
      return 0;
    }
    if (!exists) errOut().write(`waiting for ${file} to appear…\n`);
    for (const line of lines) print(line);
    await follow(file, exists ? statSync(file).size : 0, print);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** Prints what is appended to the file until SIGINT/SIGTERM; a rotation starts over on the new file. */
function follow(file: string, startAt: number, print: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let offset = startAt;
    let inode = existsSync(file) ? statSync(file).ino : -1;
    let partial = '';
    let decoder = new StringDecoder('utf8');
    const poll = () => {
      let st;
      try {
        st = statSync(file);
      } catch {
        return;
      }
      if (st.ino !== inode || st.size < offset) {
        inode = st.ino;
        offset = 0;
        partial = '';
        decoder = new StringDecoder('utf8');
      }
      if (st.size === offset) return;
      const fd = openSync(file, 'r');
      try {
        const length = fstatSync(fd).size - offset;
        const buffer = Buffer.alloc(Math.max(0, length));
        const read = readSync(fd, buffer, 0, buffer.length, offset);
        offset += read;
        const text = partial + decoder.write(buffer.subarray(0, read));
        const complete = text.split('\n');
        partial = complete.pop() ?? '';
        for (const line of complete) print(line);
      } finally {
        closeSync(fd);
      }
    };
    const timer = setInterval(poll, 200);
    const stop = () => {
      clearInterval(timer);
      poll();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
