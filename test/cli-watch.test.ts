// `trove ingest --watch`: the pure batching/debounce/retry logic (src/cli/watch-plan.ts) with a fake
// clock, then the built CLI watching a real folder against a real daemon that is killed and restarted.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  backoffDelay,
  emptyBatch,
  isBatchEmpty,
  mergeBatches,
  recordEvent,
  scopeSync,
  SyncScheduler,
  type ChangeBatch,
  type SyncOutcome,
  type Timers,
} from '../src/cli/watch-plan.js';
import { BIN, cleanEnv, freePort, newClusterKey, runCli, runCliInProcess, startDaemonProcess, type DaemonProcess } from './helpers/cli.js';
import { PATIENCE_MS } from './helpers/wait.js';

// Daemons, restarts and a dozen CLI processes: well past tap's default on a busy two-core machine.

// ---------------------------------------------------------------- pure logic

class FakeTimers implements Timers {
  private clock = 0;
  private nextId = 1;
  private readonly due = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.clock;
  }

  set(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.due.set(id, { at: this.clock + ms, callback });
    return id;
  }

  clear(handle: unknown): void {
    this.due.delete(handle as number);
  }

  get armed(): number[] {
    return [...this.due.values()].map((entry) => entry.at - this.clock);
  }

  /** Moves the clock forward, running each timer that comes due (and the promises it starts) in order. */
  async advance(ms: number): Promise<void> {
    const end = this.clock + ms;
    for (;;) {
      const next = [...this.due.entries()].filter(([, entry]) => entry.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.due.delete(next[0]);
      this.clock = next[1].at;
      next[1].callback();
      await settle();
    }
    this.clock = end;
    await settle();
  }
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

function batchOf(events: [Parameters<typeof recordEvent>[1], string][]): ChangeBatch {
  const batch = emptyBatch();
  for (const [event, rel] of events) recordEvent(batch, event, rel);
  return batch;
}

t.test('recordEvent sorts watcher events into the batch', async (t) => {
  const batch = batchOf([
    ['add', 'notes/a.md'],
    ['change', 'b.txt'],
    ['unlink', 'old.md'],
  ]);
  t.same([...batch.paths].sort(), ['/b.txt', '/notes/a.md', '/old.md']);
  t.notOk(batch.full || batch.rulesChanged || batch.foldersChanged);

  const rules = batchOf([['change', 'sub/.gitignore']]);
  t.ok(rules.rulesChanged, 'a nested .gitignore changes the rules');
  t.equal(rules.paths.size, 0, 'the .gitignore itself is never a document');
  t.ok(batchOf([['unlink', '.gitignore']]).rulesChanged, 'removing a .gitignore changes the rules');

  const folders = batchOf([['unlinkDir', 'gone'], ['addDir', 'new']]);
  t.ok(folders.foldersChanged);
  t.equal(folders.paths.size, 0);
  t.notOk(isBatchEmpty(folders), 'a folder change alone is worth a sync');

  t.ok(isBatchEmpty(batchOf([['add', '../outside.md'], ['add', '']])), 'paths outside the folder, or the folder itself, are dropped');
  t.ok(isBatchEmpty(emptyBatch()));
});

t.test('mergeBatches unions paths and flags', async (t) => {
  const a = batchOf([['add', 'a.md']]);
  const b = { ...batchOf([['change', 'b.md'], ['add', '.gitignore']]), full: true };
  const merged = mergeBatches(a, b);
  t.same([...merged.paths].sort(), ['/a.md', '/b.md']);
  t.ok(merged.full && merged.rulesChanged);
  t.notOk(merged.foldersChanged);
  t.same([...a.paths], ['/a.md'], 'the inputs are left alone');
});

t.test('scopeSync hashes only what may differ, unless the batch is full', async (t) => {
  const local = ['/same.md', '/edited.md', '/new.md', '/unignored.md'].map((p) => ({ path: p }));
  const remote = ['/same.md', '/edited.md', '/deleted.md', '/newly-ignored.md', '/touched-gone.md'].map((p) => ({ path: p, id: p }));
  const batch = { paths: new Set(['/edited.md', '/touched-gone.md']), full: false };
  const scoped = scopeSync(local, remote, batch);
  t.same(scoped.hash.map((f) => f.path), ['/edited.md', '/new.md', '/unignored.md'], 'changed files and files the collection lacks');
  t.same(
    scoped.compare.map((f) => f.path),
    ['/edited.md', '/deleted.md', '/newly-ignored.md', '/touched-gone.md'],
    'the hashed files, and whatever the folder no longer has',
  );
  t.notOk(scoped.hash.some((f) => f.path === '/same.md'), 'an untouched file held on both sides is not hashed again');

  const full = scopeSync(local, remote, { paths: new Set(), full: true });
  t.equal(full.hash.length, local.length);
  t.equal(full.compare.length, remote.length);

  const nothing = scopeSync(local.slice(0, 1), remote.slice(0, 1), { paths: new Set(), full: false });
  t.same(nothing, { hash: [], compare: [] }, 'a batch that touched nothing compares nothing');
});

t.test('backoffDelay doubles up to the cap', async (t) => {
  t.same([1, 2, 3, 4, 5, 6, 50].map((n) => backoffDelay(n, 500, 10_000)), [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  t.equal(backoffDelay(0, 500, 10_000), 500, 'no failure yet still waits the base');
});

interface Harness {
  timers: FakeTimers;
  scheduler: SyncScheduler;
  batches: ChangeBatch[];
  retries: [number, number][];
  stopped: () => boolean;
  /** Outcomes the next syncs answer (default 'ok'); a sync waits for `release()` when `hold` is set. */
  outcomes: (SyncOutcome | 'throw')[];
  hold: boolean;
  release: () => void;
  maxConcurrent: () => number;
}

function harness(options: { debounceMs?: number; maxWaitMs?: number } = {}): Harness {
  const timers = new FakeTimers();
  const batches: ChangeBatch[] = [];
  const retries: [number, number][] = [];
  let stopped = false;
  let running = 0;
  let maxConcurrent = 0;
  let releases: (() => void)[] = [];
  const h: Harness = {
    timers,
    batches,
    retries,
    outcomes: [],
    hold: false,
    stopped: () => stopped,
    release: () => {
      const pending = releases;
      releases = [];
      for (const release of pending) release();
    },
    maxConcurrent: () => maxConcurrent,
    scheduler: null as unknown as SyncScheduler,
  };
  h.scheduler = new SyncScheduler({
    debounceMs: options.debounceMs ?? 100,
    maxWaitMs: options.maxWaitMs ?? 1000,
    retryBaseMs: 500,
    retryMaxMs: 4000,
    timers,
    sync: async (batch) => {
      running++;
      maxConcurrent = Math.max(maxConcurrent, running);
      batches.push(batch);
      try {
        if (h.hold) await new Promise<void>((resolve) => releases.push(resolve));
        const outcome = h.outcomes.shift() ?? 'ok';
        if (outcome === 'throw') throw new Error('boom');
        return outcome;
      } finally {
        running--;
      }
    },
    onRetryScheduled: (delay, failures) => retries.push([delay, failures]),
    onStopped: () => (stopped = true),
  });
  return h;
}

const add = (rel: string) => (batch: ChangeBatch) => recordEvent(batch, 'add', rel);

t.test('SyncScheduler: changes within the debounce make one sync, after the last change', async (t) => {
  const h = harness({ debounceMs: 100 });
  h.scheduler.record(add('a.md'));
  await h.timers.advance(60);
  h.scheduler.record(add('b.md'));
  await h.timers.advance(60);
  h.scheduler.record(add('a.md'));
  await h.timers.advance(99);
  t.equal(h.batches.length, 0, 'nothing yet: each change restarts the wait');
  await h.timers.advance(1);
  t.equal(h.batches.length, 1, 'one sync once the folder fell quiet');
  t.same([...h.batches[0]!.paths].sort(), ['/a.md', '/b.md']);
  t.notOk(h.batches[0]!.full);
  await h.timers.advance(1000);
  t.equal(h.batches.length, 1, 'no sync without changes');
  t.notOk(h.scheduler.busy);
});

t.test('SyncScheduler: a folder that never falls quiet still syncs after maxWait', async (t) => {
  const h = harness({ debounceMs: 100, maxWaitMs: 300 });
  for (let i = 0; i < 10; i++) {
    h.scheduler.record(add(`f${i}.md`));
    await h.timers.advance(50);
  }
  t.equal(h.batches.length, 1, 'synced while changes kept coming');
  await h.timers.advance(200);
  t.same([...h.batches[0]!.paths].sort(), ['/f0.md', '/f1.md', '/f2.md', '/f3.md', '/f4.md', '/f5.md'], 'the first batch closed 300 ms after its first change');
  t.ok(h.batches[1]?.paths.has('/f6.md'), 'the changes after it went into the next one');
});

t.test('SyncScheduler: syncs never overlap; changes during one wait for the next', async (t) => {
  const h = harness({ debounceMs: 100 });
  h.hold = true;
  h.scheduler.record(add('a.md'));
  await h.timers.advance(100);
  t.equal(h.batches.length, 1, 'first sync running');
  h.scheduler.record(add('b.md'));
  h.scheduler.record(add('c.md'));
  await h.timers.advance(500);
  t.equal(h.batches.length, 1, 'the second sync waits while the first runs');
  h.scheduler.flush();
  t.equal(h.batches.length, 1, 'flush does not start a second sync either');
  h.hold = false;
  h.release();
  await settle();
  t.same(h.timers.armed, [100], 'the next sync is debounced from the end of the running one');
  await h.timers.advance(100);
  t.equal(h.batches.length, 2);
  t.same([...h.batches[1]!.paths].sort(), ['/b.md', '/c.md']);

  h.hold = true;
  h.scheduler.record(add('d.md'));
  await h.timers.advance(100);
  h.scheduler.record(add('e.md'));
  await h.timers.advance(5000);
  h.hold = false;
  h.release();
  await settle();
  t.same(h.timers.armed, [0], 'changes that already waited maxWait during a long sync go at once');
  t.equal(h.maxConcurrent(), 1);
});

t.test('SyncScheduler: a failed sync keeps its batch, turns it full, and retries with backoff', async (t) => {
  const h = harness({ debounceMs: 100 });
  h.outcomes.push('retry', 'throw', 'retry');
  h.scheduler.record(add('a.md'));
  await h.timers.advance(100);
  t.equal(h.batches.length, 1);
  t.same(h.retries, [[500, 1]], 'told before the first wait');
  h.scheduler.record(add('b.md'));
  await h.timers.advance(200);
  t.equal(h.batches.length, 1, 'a new change does not cut the backoff short');
  await h.timers.advance(300);
  t.equal(h.batches.length, 2, 'retried after 500 ms');
  t.ok(h.batches[1]!.full, 'the retry compares every file');
  t.same([...h.batches[1]!.paths].sort(), ['/a.md', '/b.md'], 'and still carries the changes');
  t.same(h.retries[1], [1000, 2], 'a thrown error is a failure too, and the wait doubles');
  await h.timers.advance(1000);
  t.equal(h.batches.length, 3);
  t.same(h.retries[2], [2000, 3]);
  t.equal(h.scheduler.consecutiveFailures, 3);
  await h.timers.advance(2000);
  t.equal(h.batches.length, 4, 'the fourth attempt succeeds');
  t.equal(h.scheduler.consecutiveFailures, 0, 'success resets the backoff');
  h.scheduler.record(add('c.md'));
  await h.timers.advance(100);
  t.equal(h.batches.length, 5);
  t.notOk(h.batches[4]!.full, 'after a success, syncs go back to the changed paths');
});

t.test('SyncScheduler: "stop" ends it, and stop() waits for the sync in progress', async (t) => {
  const h = harness();
  h.outcomes.push('stop');
  h.scheduler.record(add('a.md'));
  await h.timers.advance(100);
  t.ok(h.stopped(), 'onStopped told');
  h.scheduler.record(add('b.md'));
  await h.timers.advance(1000);
  t.equal(h.batches.length, 1, 'nothing runs after a stop');

  const g = harness();
  g.hold = true;
  g.scheduler.record(add('a.md'));
  await g.timers.advance(100);
  let stopResolved = false;
  const stopping = g.scheduler.stop().then(() => (stopResolved = true));
  g.scheduler.record(add('b.md'));
  await settle();
  t.notOk(stopResolved, 'stop waits for the running sync');
  g.release();
  await stopping;
  await g.timers.advance(1000);
  t.equal(g.batches.length, 1, 'and starts nothing after it');
  t.same(g.timers.armed, []);
});

t.test('SyncScheduler: flush runs what is pending at once', async (t) => {
  const h = harness({ debounceMs: 10_000 });
  h.scheduler.record((batch) => (batch.full = true));
  h.scheduler.flush();
  await settle();
  t.equal(h.batches.length, 1);
  t.ok(h.batches[0]!.full);
  t.same(h.timers.armed, [], 'the debounce timer was dropped');
});

// ---------------------------------------------------------------- end to end

interface SyncLine {
  event: string;
  full: boolean;
  added: number;
  updated: number;
  removed: number;
  ready: number;
  failed: number;
  pending: number;
  paths: { added: string[]; updated: string[]; removed: string[] };
  retried_after_failures: number;
}

interface RemoteFile {
  path: string;
  status: string;
  source: { checksum?: string };
}

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A long-running `trove … ingest --watch --json`, its sync lines parsed as they come. */
function spawnWatcher(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: SyncLine[] = [];
  let stdout = '';
  let stderr = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout += line + '\n';
    lines.push(JSON.parse(line) as SyncLine);
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, lines, exited, stdout: () => stdout, stderr: () => stderr };
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(100);
  }
}

t.test('ingest --watch keeps a collection in step with a folder, through a daemon restart', async (t) => {
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-watch-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const folder = path.join(work, 'notes');
  const dataDir = path.join(work, 'data');
  const write = async (rel: string, content: string) => {
    await mkdir(path.dirname(path.join(folder, rel)), { recursive: true });
    await writeFile(path.join(folder, rel), content);
  };
  await write('.gitignore', 'build/\nsecret.md\n');
  await write('a.md', '# Alpha\n\nThe lighthouse keeper counted gulls.\n');
  await write('b.md', 'Bravo: the baker kneaded rye dough.\n');
  await write('secret.md', 'never uploaded\n');
  await write('sub/build/out.md', 'generated output\n');

  const key = newClusterKey();
  const port = await freePort();
  const daemonArgs = ['--data-dir', dataDir, '--port', String(port)];
  let daemon: DaemonProcess = await startDaemonProcess({ key, args: daemonArgs });
  t.teardown(() => daemon.kill());
  t.equal(daemon.url, `http://127.0.0.1:${port}`, 'the daemon listens on the port we chose, so a restart keeps the URL');

  const listFiles = async (): Promise<RemoteFile[]> => {
    const res = await fetch(`${daemon.url}/namespaces/w/collections/notes/files?limit=100`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`list files: HTTP ${res.status}`);
    return ((await res.json()) as { items: RemoteFile[] }).items.sort((a, b) => a.path.localeCompare(b.path));
  };
  const paths = async () => (await listFiles()).map((f) => f.path);
  const settledTo = (unsorted: string[]) => {
    const expected = [...unsorted].sort((a, b) => a.localeCompare(b));
    return until(`the collection to hold ${expected.join(', ')}`, async () => {
      const files = await listFiles();
      return files.map((f) => f.path).join() === expected.join() && files.every((f) => f.status === 'ready') ? files : undefined;
    });
  };

  const watchArgs = ['--url', daemon.url, '--key', key, 'ingest', folder, '-n', 'w', '-c', 'notes', '--watch', '--debounce', '100', '--json'];
  const watcher = spawnWatcher(watchArgs);
  t.teardown(() => {
    if (watcher.child.exitCode === null && watcher.child.signalCode === null) watcher.child.kill('SIGKILL');
  });
  const syncAfter = (count: number, what: string) => until(what, () => (watcher.lines.length > count ? watcher.lines[watcher.lines.length - 1] : undefined));

  await t.test('the first sync mirrors the folder, honouring .gitignore', async (t) => {
    const first = await syncAfter(0, 'the first sync line');
    t.match(first, { event: 'sync', full: true, added: 2, updated: 0, removed: 0, ready: 2, failed: 0 });
    t.same(first.paths.added, ['/a.md', '/b.md']);
    t.same(await paths(), ['/a.md', '/b.md'], 'secret.md and sub/build/ stay out');
  });

  await t.test('an added file is uploaded', async (t) => {
    const before = watcher.lines.length;
    await write('c.md', 'Charlie: a comet crossed the winter sky.\n');
    await settledTo(['/a.md', '/b.md', '/c.md']);
    const line = await syncAfter(before, 'a sync line for c.md');
    t.match(line, { full: false, added: 1, updated: 0, removed: 0 });
    t.same(line.paths.added, ['/c.md']);
  });

  await t.test('a changed file is uploaded again, and only that file', async (t) => {
    const before = watcher.lines.length;
    const text = '# Alpha\n\nThe lighthouse keeper counted seals instead.\n';
    await write('a.md', text);
    await until('a.md to carry its new checksum', async () => {
      const a = (await listFiles()).find((f) => f.path === '/a.md');
      return a?.source.checksum === sha(text) && a.status === 'ready';
    });
    const line = await syncAfter(before, 'a sync line for a.md');
    t.match(line, { full: false, added: 0, updated: 1, removed: 0 });
    t.same(line.paths.updated, ['/a.md'], 'b.md and c.md were not re-uploaded');
  });

  await t.test('a deleted file is deleted from the collection', async () => {
    await unlink(path.join(folder, 'b.md'));
    await settledTo(['/a.md', '/c.md']);
  });

  await t.test('a new .gitignore rule deletes the newly ignored file; dropping it brings back ignored folders', async (t) => {
    await write('.gitignore', 'build/\nsecret.md\nc.md\n');
    await settledTo(['/a.md']);
    await write('.gitignore', 'secret.md\n');
    await settledTo(['/a.md', '/sub/build/out.md', '/c.md']);
    // sub/build/ was ignored when the watcher started, and the rule that freed it lives in another
    // folder: a change inside it proves the watcher looks there now.
    const text = 'regenerated output\n';
    await write('sub/build/out.md', text);
    await until('sub/build/out.md to be updated', async () => (await listFiles()).find((f) => f.path === '/sub/build/out.md')?.source.checksum === sha(text));
    await write('secret.md', 'still never uploaded\n');
    await write('d.md', 'Delta: the river delta flooded in spring.\n');
    await settledTo(['/a.md', '/sub/build/out.md', '/c.md', '/d.md']);
    t.notOk((await paths()).includes('/secret.md'), 'a still-ignored file stays out');
  });

  await t.test('the daemon goes away: the watcher reports it, keeps watching and reconciles when it is back', async (t) => {
    daemon.kill();
    await daemon.exited;
    const errorsBefore = watcher.stderr().length;
    const linesBefore = watcher.lines.length;
    await unlink(path.join(folder, 'c.md'));
    await write('e.md', 'Echo: the canyon answered twice.\n');
    await until('a retry notice on stderr', () => /"retry_in_ms":\d+/.test(watcher.stderr().slice(errorsBefore)));
    const notice = JSON.parse(watcher.stderr().slice(errorsBefore).trim().split('\n')[0]!) as { error: { code: string }; retry_in_ms: number };
    t.equal(notice.error.code, 'daemon_unreachable');
    t.ok(notice.retry_in_ms > 0);
    t.equal(watcher.child.exitCode, null, 'the watcher is still running');
    t.equal(watcher.lines.length, linesBefore, 'no sync line while the daemon is away');

    daemon = await startDaemonProcess({ key, args: daemonArgs });
    await settledTo(['/a.md', '/sub/build/out.md', '/d.md', '/e.md']);
    const line = await syncAfter(linesBefore, 'the reconciling sync line');
    t.ok(line.full, 'the sync after a failure compares every file');
    t.ok(line.retried_after_failures > 0, 'and says it followed failures');
    t.match(line, { added: 1, removed: 1, updated: 0 }, 'the unchanged files were not uploaded again');
  });

  await t.test('SIGTERM stops the watcher cleanly', async (t) => {
    watcher.child.kill('SIGTERM');
    const { code, signal } = await watcher.exited;
    t.equal(code, 0, `exit 0 (${watcher.stderr()})`);
    t.equal(signal, null);
  });

  await t.test('a new watcher first reconciles what changed while nothing watched', async (t) => {
    await unlink(path.join(folder, 'd.md'));
    await write('f.md', 'Foxtrot: the fox trotted past the barn.\n');
    // Deletions found at reconciliation (not seen happening) need --yes: a watcher never asks.
    const again = spawnWatcher([...watchArgs, '--yes']);
    t.teardown(() => {
      if (again.child.exitCode === null && again.child.signalCode === null) again.child.kill('SIGKILL');
    });
    const first = await until('the first sync line', () => again.lines[0]);
    t.match(first, { full: true, added: 1, removed: 1, updated: 0 });
    t.same(first.paths, { added: ['/f.md'], updated: [], removed: ['/d.md'] });
    await settledTo(['/a.md', '/sub/build/out.md', '/e.md', '/f.md']);
    again.child.kill('SIGINT');
    t.equal((await again.exited).code, 0, 'SIGINT stops it with exit 0 too');
  });
});

t.test('ingest --watch refuses bad input', async (t) => {
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-watch-bad-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  await writeFile(path.join(work, 'a.md'), 'alpha\n');
  const key = newClusterKey();
  const daemon = await startDaemonProcess({ key });
  t.teardown(() => daemon.kill());
  const conn = ['--url', daemon.url, '--key', key];

  const port = await freePort();
  // Independent runs, started together, in-process (runCliInProcess) but the first, which runs
  // through the real entry: exit code, stdout and stderr as a process of its own gives them.
  const [dry, debounce, missing, badKey, noDaemon] = await Promise.all([
    runCli([...conn, 'ingest', work, '-n', 'w', '-c', 'x', '--watch', '--dry-run']),
    runCliInProcess([...conn, 'ingest', work, '-n', 'w', '-c', 'x', '--watch', '--debounce', 'soon', '--json']),
    runCliInProcess([...conn, 'ingest', path.join(work, 'nope'), '-n', 'w', '-c', 'x', '--watch']),
    runCliInProcess(['--url', daemon.url, '--key', 'trove_wrong_key', 'ingest', work, '-n', 'w', '-c', 'x', '--watch', '--json']),
    runCliInProcess(['--url', `http://127.0.0.1:${port}`, '--key', key, 'ingest', work, '-n', 'w', '-c', 'x', '--watch']),
  ]);
  t.equal(dry.code, 2, '--watch with --dry-run is a usage error');
  t.match(dry.stderr, /--dry-run/);
  t.equal(dry.stdout, '');

  t.equal(debounce.code, 2, 'a non-numeric --debounce is a usage error');
  t.match(debounce.stderr, /"code":"usage_error".*--debounce/);

  t.equal(missing.code, 2, 'a folder that does not exist');

  t.equal(badKey.code, 3, 'a refused key ends the watcher with the unauthenticated exit code instead of retrying');
  t.match(badKey.stderr, /"code":"unauthenticated"/);

  t.equal(noDaemon.code, 9, 'no daemon at start: the first sync fails and says how to start one');
  t.match(noDaemon.stderr, /trove daemon start/);

  const res = await fetch(`${daemon.url}/namespaces/w/collections/x/files`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(res.status, 404, 'none of the refused runs created the collection');
});
