// `import { startTrove } from 'trove/testing'`: a real trove daemon for a test suite, the way
// LocalStack or Azurite stand in for a cloud (docs/fixture-mode.md). It runs the CLI of this very
// build (`daemon start --ephemeral --port 0 --json`) in a child process, so a test talks HTTP to
// the same daemon its users run.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { SeedObject } from '../contract/seed.js';
import { packageFile } from '../contract/package-files.js';

export type { SeedObject } from '../contract/seed.js';

export interface StartTroveOptions {
  /** A seed file (YAML or JSON; relative paths from the current directory), or a seed object. */
  seed?: string | SeedObject;
  /** The cluster key (TROVE_CLUSTER_KEY); a random strong one by default. */
  clusterKey?: string;
  /** Extra environment for the daemon (on top of this process's). */
  env?: Record<string, string>;
  /** Extra `trove daemon start` arguments, e.g. ['--allow-file-root', dir]. */
  args?: string[];
  /** How long to wait for the daemon to listen (seeded files indexed included) before calling it a hang; default 5 min. */
  timeoutMs?: number;
}

export interface TroveFixture {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The cluster key. */
  key: string;
  /** The ephemeral data dir, removed by stop(). */
  dataDir: string;
  /** The daemon's process ID. */
  pid: number;
  /** SIGTERM, then SIGKILL if the daemon has not exited within 10 s; resolves once it is gone. */
  stop(): Promise<void>;
}

// What a user runs: bin/trove, which loads the bundled CLI (src/contract/package-files.ts).
const CLI = packageFile('bin/trove');
// A bound for a hang, not a performance target: in a CI runner whose cores are busy with other jobs,
// a start that indexes a seed took over a minute (a daemon alone took 30 s to listen on a 2-core
// machine another process kept busy), and a fixture that gives up early fails a suite for nothing.
const DEFAULT_TIMEOUT_MS = 300_000;
const KILL_AFTER_MS = 10_000;
/** How much of the daemon's stderr is kept for error messages. */
const STDERR_TAIL = 64 * 1024;

/**
 * Daemons still running when the test process exits are asked to stop: their stdin is closed, and
 * each stops cleanly and removes its ephemeral data dir. (SIGKILL here left the dir behind.)
 */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of running) c.stdin?.destroy();
  });
}

/** A cluster key shaped like the ones trove mints: `trove_<prefix>_<32 random bytes>`. */
export function newClusterKey(): string {
  return `trove_${randomBytes(5).toString('hex')}_${randomBytes(32).toString('base64url')}`;
}

/**
 * Starts an ephemeral trove daemon on a free port and resolves once it listens (with a seed, once
 * every seeded file is indexed, unless the seed says `wait: false`). Rejects with the daemon's
 * stderr when it exits first or does not listen within `timeoutMs`.
 */
export async function startTrove(options: StartTroveOptions = {}): Promise<TroveFixture> {
  const key = options.clusterKey ?? newClusterKey();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let seedDir: string | undefined;
  const removeSeed = () => {
    if (seedDir) rmSync(seedDir, { recursive: true, force: true });
    seedDir = undefined;
  };
  const args = ['daemon', 'start', '--ephemeral', '--port', '0', '--json', '--stop-with-stdin'];
  if (typeof options.seed === 'string') {
    args.push('--seed', resolve(options.seed));
  } else if (options.seed !== undefined) {
    seedDir = mkdtempSync(join(tmpdir(), 'trove-seed-'));
    const seedFile = join(seedDir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(withAbsoluteFiles(options.seed), null, 2), { mode: 0o600 });
    args.push('--seed', seedFile);
  }
  args.push(...(options.args ?? []));

  // The daemon holds the read end of its stdin: when this process ends, however it ends (even
  // killed, when no exit hook runs), the pipe closes and the daemon stops and removes its data dir.
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...options.env, TROVE_CLUSTER_KEY: key },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // The pipe alone must not keep this process alive.
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  track(child);
  let stderr = '';
  // Read to the end, or a chatty daemon would block on a full pipe.
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  // 'close' comes after 'exit' once stderr is drained, so a failure's message is complete.
  const exited = new Promise<void>((resolveExit) => child.once('close', () => resolveExit()));
  const lines = createInterface({ input: child.stdout! });

  let timer: NodeJS.Timeout | undefined;
  let first: string;
  try {
    first = await new Promise<string>((resolveLine, reject) => {
      lines.once('line', resolveLine);
      child.once('error', reject);
      void exited.then(() => reject(new Error(`trove daemon exited (${describeExit(child)}) before listening:\n${stderr.trim()}`)));
      timer = setTimeout(() => reject(new Error(`trove daemon did not listen within ${timeoutMs} ms:\n${stderr.trim()}`)), timeoutMs);
    });
  } catch (err) {
    await stopChild(child, exited);
    removeSeed();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  // The daemon read the seed before it said "listening".
  removeSeed();
  let listening: { event?: string; url?: string; data_dir?: string };
  try {
    listening = JSON.parse(first) as typeof listening;
  } catch {
    listening = {};
  }
  if (listening.event !== 'listening' || !listening.url || !listening.data_dir) {
    await stopChild(child, exited);
    throw new Error(`trove daemon printed an unexpected first line: ${first}\n${stderr.trim()}`);
  }
  const dataDir = listening.data_dir;
  let stopping: Promise<void> | undefined;
  return {
    url: listening.url,
    key,
    dataDir,
    pid: child.pid!,
    stop: () =>
      (stopping ??= (async () => {
        await stopChild(child, exited);
        // A daemon killed before it could clean up leaves its ephemeral dir behind.
        if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    await exited;
    clearTimeout(kill);
  }
  await exited;
}

function describeExit(child: ChildProcess): string {
  return child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
}

/** A seed object has no folder of its own: its `file` entries are read from the current directory. */
function withAbsoluteFiles(seed: SeedObject): SeedObject {
  if (!Array.isArray(seed.files)) return seed;
  return {
    ...seed,
    files: seed.files.map((file) => (typeof file?.file === 'string' && !isAbsolute(file.file) ? { ...file, file: resolve(file.file) } : file)),
  };
}
