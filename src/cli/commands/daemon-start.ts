import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, resolveDataDir, type DaemonConfig, type DaemonFlags } from '../../../daemon/config.js';
import { UserError } from '../../../daemon/user-error.js';
import { startDaemon, type RunningDaemon } from '../../../daemon/main.js';
import type { LoadedSeed } from '../../../daemon/seed.js';
import { entryFile } from '../../contract/package-files.js';
import { CliError, reportError } from '../client.js';
import { cliArgs, cliCwd, cliEnv, cliStdin, errOut, formatForConsole, out, setExitCode } from '../io.js';
import { DaemonLogFile, daemonLogPath } from './daemon-logs.js';

// daemon/seed.ts and its YAML parser load only when --seed is given (start-up loads what it needs, issue 15).
type SeedModule = typeof import('../../../daemon/seed.js');

export interface DaemonStartOptions extends DaemonFlags {
  json?: boolean;
  /** A seed file applied before "listening" is reported (daemon/seed.ts, docs/fixture-mode.md). */
  seed?: string;
  /** Run in the background (runDaemonStartDetached). */
  detach?: boolean;
  /** Stop cleanly when stdin closes (startTrove: the runner's death, however it dies, ends its daemon). */
  stopWithStdin?: boolean;
}

/** Every log line goes to stderr and to <data-dir>/logs/daemon.log (`trove daemon logs`), once that is opened. */
function daemonLog(logFile: DaemonLogFile) {
  const stderr = errOut();
  const emit = (line: string) => {
    stderr.write(line + '\n');
    logFile.write(line);
  };
  return {
    info: (message: string, fields: Record<string, unknown> = {}) => emit(`[trove] ${message}${Object.keys(fields).length ? ' ' + JSON.stringify(fields) : ''}`),
    warn: (message: string, fields: Record<string, unknown> = {}) => emit(`[trove] warning: ${message}${Object.keys(fields).length ? ' ' + JSON.stringify(fields) : ''}`),
    error: (message: string, fields: Record<string, unknown> = {}) => emit(`[trove] error: ${message} ${JSON.stringify(fields)}`),
  };
}

type DaemonLog = ReturnType<typeof daemonLog>;

/**
 * Says why the daemon did not start and returns the exit code. A user's mistake (UserError: a bad
 * flag, variable or config file, a data dir or port another daemon holds) is its message alone,
 * with its own exit code (6 for a conflict, as docs/tour.md's exit codes have it). Anything else
 * is unexpected: its message, and its stack in the data dir's log, or on stderr when there is no
 * log to write (an ephemeral data dir, or the error came before the data dir was known).
 */
export function reportStartFailure(err: unknown, dataDir: string | undefined, logFile: DaemonLogFile = new DaemonLogFile()): number {
  const stderr = errOut();
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UserError) {
    stderr.write(`trove: ${message}\n`);
    return err.exitCode;
  }
  const stack = err instanceof Error && err.stack ? err.stack : message;
  if (dataDir !== undefined && logFile.open(dataDir)) {
    logFile.write(`[trove] error: the daemon did not start ${JSON.stringify({ cause: stack })}`);
    stderr.write(`trove: ${message} (stack trace in ${daemonLogPath(dataDir)})\n`);
  } else {
    stderr.write(`trove: ${message}\n${stack}\n`);
  }
  return 1;
}

/** Runs the daemon in the foreground until SIGINT or SIGTERM. */
export async function runDaemonStart(opts: DaemonStartOptions): Promise<void> {
  const stdout = out();
  const stderr = errOut();
  // Whoever read our output may be gone (a test runner killed): a write to its closed pipe must not
  // kill the daemon before it has stopped cleanly and removed an ephemeral data dir (EPIPE, found
  // by a packed-install test). The log file still gets every line.
  for (const stream of [stdout, stderr]) stream.on('error', () => undefined);
  const logFile = new DaemonLogFile();
  const log = daemonLog(logFile);
  if (opts.ephemeral && opts.dataDir !== undefined) {
    // It was ignored (found by a packed-install test): whoever named a data dir expects it used.
    setExitCode(reportError(new CliError('--ephemeral and --data-dir do not go together: an ephemeral daemon makes a temporary data dir of its own and removes it on exit. Drop one of them.', 2), opts.json ?? false));
    return;
  }
  // A seed is checked whole before anything starts, so a bad one leaves nothing behind.
  let seed: { module: SeedModule; loaded: LoadedSeed } | undefined;
  if (opts.seed !== undefined) {
    const module = await import('../../../daemon/seed.js');
    try {
      seed = { module, loaded: module.loadSeedFile(opts.seed) };
    } catch (err) {
      if (!(err instanceof module.SeedError)) throw err;
      setExitCode(reportError(new CliError(err.message, 2, 'invalid_seed'), opts.json ?? false));
      return;
    }
  }
  let daemon;
  let config: DaemonConfig | undefined;
  // `trove daemon stop` (the operator channel) takes the same path as SIGTERM, set up below; a
  // request that comes before then (while seeding) is kept for then.
  let stopPending = false;
  let stopRequested = () => {
    stopPending = true;
  };
  try {
    // Flags, environment and config.json, checked whole before anything starts (daemon/config.ts).
    config = loadConfig(opts, cliEnv(), cliCwd());
    daemon = await startDaemon({ ...config, log, onStopRequest: () => stopRequested() });
  } catch (err) {
    // `config` is unset when the configuration itself was refused (a UserError).
    setExitCode(reportStartFailure(err, config === undefined || config.ephemeral ? undefined : config.dataDir, logFile));
    return;
  }
  // Only now is the data dir this daemon's own (locked): its log file may be written.
  logFile.open(daemon.dataDir);
  logFile.write(`[trove] listening on ${daemon.url} (data dir ${daemon.dataDir}, operator socket ${daemon.operatorSocket ?? 'off'})`);
  if (seed) await applySeedAtStart(daemon, seed, log, opts.json ?? false);
  if (opts.json) {
    stdout.write(JSON.stringify({ event: 'listening', url: daemon.url, data_dir: daemon.dataDir, cluster_key_file: daemon.clusterKeyFile, operator_socket: daemon.operatorSocket }) + '\n');
  } else {
    stdout.write(`trove daemon listening on ${daemon.url}\n`);
    stdout.write(`data dir:         ${daemon.dataDir}${opts.ephemeral ? ' (ephemeral: removed on exit)' : ''}\n`);
    stdout.write(`cluster key file: ${daemon.clusterKeyFile}\n`);
    if (daemon.operatorSocket) stdout.write(`operator socket:  ${daemon.operatorSocket} (trove daemon status|stop|logs, trove config, trove roots)\n`);
    stdout.write(`try: curl -H "Authorization: Bearer $(cat ${daemon.clusterKeyFile})" ${daemon.url}/info\n`);
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    signals++;
    if (signals > 1) {
      stderr.write('[trove] second signal: exiting now\n');
      process.exit(130);
    }
    log.info(`${signal}: finishing in-flight requests and stopping (they get ${config.drainSeconds} s, then 503; a second signal exits at once)`);
    daemon.stop().then(
      () => {
        logFile.write('[trove] stopped');
        if (opts.json) stdout.write(JSON.stringify({ event: 'stopped' }) + '\n');
        process.exit(0);
      },
      (err: unknown) => {
        stderr.write(formatForConsole(err, stderr) + '\n');
        process.exit(1);
      },
    );
  };
  stopRequested = () => shutdown('trove daemon stop');
  if (stopPending) stopRequested();
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  if (opts.stopWithStdin) {
    // The parent holds the other end: when it exits, however (even SIGKILL), the pipe closes. That
    // is not a second signal: a stop already under way goes on.
    const parentGone = () => {
      if (signals === 0) shutdown('stdin closed');
    };
    const stdin = cliStdin();
    stdin.on('end', parentGone);
    stdin.on('error', parentGone);
    stdin.resume();
  }
}

/**
 * Applies --seed before "listening" is reported. A seed that fails stops the whole daemon (an
 * ephemeral data dir goes with it) and exits 2; a signal while seeding stops it the same way and
 * exits 0, as a signal after start-up does.
 */
async function applySeedAtStart(daemon: RunningDaemon, seed: { module: SeedModule; loaded: LoadedSeed }, log: DaemonLog, json: boolean): Promise<void> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const report = await seed.module.applySeed(daemon.runtime, seed.loaded, { signal: abort.signal });
    log.info(`seeded from ${seed.loaded.name}`, { ...report });
  } catch (err) {
    await daemon.stop();
    if (abort.signal.aborted) process.exit(0);
    if (!(err instanceof seed.module.SeedError)) throw err;
    process.exit(reportError(new CliError(err.message, 2, 'invalid_seed'), json));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

// ---------------------------------------------------------------- --detach

const DETACH_WAIT_MS = 120_000;

/** Where a detached daemon's stdout and stderr go (next to daemon.log, which the daemon writes itself). */
export const detachedOutputPath = (dataDir: string): string => join(dataDir, 'logs', 'daemon.out');

/**
 * `trove daemon start --detach`: the same command without --detach, run as a detached child whose
 * output goes to <data-dir>/logs/daemon.out; waits for its "listening" line and reports where it
 * listens, or, when it exits first, its error and its exit code (6 for a held data dir or port).
 */
export async function runDaemonStartDetached(opts: DaemonStartOptions, argv: readonly string[] = cliArgs()): Promise<number> {
  const json = opts.json ?? false;
  try {
    if (opts.ephemeral) throw new CliError('--detach and --ephemeral do not go together: an ephemeral data dir is removed when the daemon exits, and a detached one has no terminal to stop it from.', 2);
    const env = cliEnv();
    const dataDir = resolveDataDir(opts, env, cliCwd());
    mkdirSync(join(dataDir, 'logs'), { recursive: true, mode: 0o700 });
    const outFile = detachedOutputPath(dataDir);
    const start = existsSync(outFile) ? statSync(outFile).size : 0;
    const fd = openSync(outFile, 'a', 0o600);
    // The child gets the same arguments, minus --detach, plus --json so its "listening" line can be read.
    const childArgs = argv.filter((arg) => arg !== '--detach');
    if (!childArgs.includes('--json')) childArgs.push('--json');
    if (!childArgs.includes('--data-dir')) childArgs.push('--data-dir', dataDir);
    const child = spawn(process.execPath, [entryFile('cli'), ...childArgs], {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: cliCwd(),
      env: { ...env },
    });
    closeSync(fd);
    let exitCode: number | null = null;
    child.on('exit', (code, signal) => (exitCode = code ?? (signal ? 1 : 0)));
    const written = () => (existsSync(outFile) ? readFileSync(outFile).subarray(start).toString('utf8') : '');
    const deadline = Date.now() + DETACH_WAIT_MS;
    for (;;) {
      const lines = written().split('\n');
      const listening = lines.map(parseEvent).find((event) => event?.event === 'listening');
      if (listening) {
        child.unref();
        const report = { event: 'started', url: listening.url, pid: child.pid, data_dir: listening.data_dir, log_file: daemonLogPath(dataDir), output_file: outFile };
        if (json) out().write(JSON.stringify(report) + '\n');
        else {
          out().write(
            `trove daemon listening on ${String(listening.url)} (pid ${child.pid}, in the background)\n` +
              `data dir: ${String(listening.data_dir)}\nlog:      ${report.log_file} (trove daemon logs)\noutput:   ${outFile}\nstop it:  trove daemon stop${opts.dataDir ? ` --data-dir ${dataDir}` : ''}\n`,
          );
        }
        return 0;
      }
      if (exitCode !== null) {
        const why = lines.filter((line) => line.trim() && !parseEvent(line)).join('\n').trim() || `it exited with status ${exitCode}`;
        throw new CliError(`The daemon did not start: ${why.replace(/^trove: /, '')} (output in ${outFile})`, exitCode === 0 ? 1 : exitCode, 'daemon_start_failed');
      }
      if (Date.now() > deadline) {
        child.unref();
        throw new CliError(`The daemon (pid ${child.pid}) did not report listening within ${DETACH_WAIT_MS / 1000} s; see ${outFile}.`, 1, 'daemon_start_timeout');
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  } catch (err) {
    return reportError(err, json);
  }
}

function parseEvent(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}
