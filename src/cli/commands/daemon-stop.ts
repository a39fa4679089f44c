// `trove daemon stop`: asks the data dir's daemon to stop over the operator channel (the same path
// as SIGTERM: in-flight requests finish, the worker stops, the store closes), then waits until it
// has: its socket gone, its data-dir lock released and its process ended.
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { CliError, reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { out } from '../io.js';
import { withOperator } from './operator-call.js';
import { isAlive } from '../../../daemon/listening.js';

export interface DaemonStopOptions {
  json?: boolean;
  timeout?: string;
}

function parseTimeout(value: string | undefined): number {
  if (value === undefined) return 30_000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new CliError(`--timeout takes a number of seconds above 0, got '${value}'.`, 2);
  return seconds * 1000;
}

/** Whether anything still accepts connections on the socket. */
function socketAnswers(socketPath: string): Promise<boolean> {
  if (!existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function lockHeldBy(dataDir: string, pid: number): boolean {
  try {
    return Number(readFileSync(join(dataDir, 'daemon.lock'), 'utf8').trim()) === pid;
  } catch {
    return false;
  }
}

async function hasStopped(dataDir: string, socketPath: string, pid: number): Promise<boolean> {
  if (lockHeldBy(dataDir, pid) || (await socketAnswers(socketPath))) return false;
  // A daemon inside this very process (tests) has stopped once its lock and socket are gone.
  return pid === process.pid || !isAlive(pid);
}

export async function runDaemonStop(globalOpts: GlobalOptions, opts: DaemonStopOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const timeoutMs = parseTimeout(opts.timeout);
    const started = Date.now();
    const { reply, socketPath } = await withOperator(globalOpts, async (op) => ({ reply: await op.client.daemon.stop.mutate(), socketPath: op.socketPath }));
    while (!(await hasStopped(reply.data_dir, socketPath, reply.pid))) {
      if (Date.now() - started > timeoutMs) {
        throw new CliError(
          `The daemon (pid ${reply.pid}) for data dir ${reply.data_dir} was asked to stop but is still running after ${timeoutMs / 1000} s; it may be finishing long work (see \`trove daemon logs\`).`,
          1,
          'stop_timeout',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const waitedMs = Date.now() - started;
    out().write(json ? JSON.stringify({ stopped: true, pid: reply.pid, data_dir: reply.data_dir, waited_ms: waitedMs }) + '\n' : `stopped the daemon (pid ${reply.pid}) for data dir ${reply.data_dir}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
