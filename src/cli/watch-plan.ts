// The decisions of `trove ingest --watch` that need no I/O: how watcher events add up to a batch,
// when a batch syncs (debounce, never two syncs at once, backoff after a failure), and which files a
// sync must hash. src/cli/commands/ingest-watch.ts does the I/O around them.

/** The events chokidar reports for a watched folder. */
export type WatchEventName = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

export interface ChangeBatch {
  /** Collection paths of the files the watcher saw added, changed or removed. */
  paths: Set<string>;
  /**
   * Hash every file instead of the changed ones: the first sync, any sync after a failed one (the
   * daemon may have lost or kept anything meanwhile), and after the watcher reported an error.
   */
  full: boolean;
  /** A .gitignore was added, changed or removed: the ignore rules must be read again. */
  rulesChanged: boolean;
  /** A folder appeared or vanished: nothing to hash by name, but the folder must be walked again. */
  foldersChanged: boolean;
}

export function emptyBatch(): ChangeBatch {
  return { paths: new Set(), full: false, rulesChanged: false, foldersChanged: false };
}

export function isBatchEmpty(batch: ChangeBatch): boolean {
  return batch.paths.size === 0 && !batch.full && !batch.rulesChanged && !batch.foldersChanged;
}

export function mergeBatches(a: ChangeBatch, b: ChangeBatch): ChangeBatch {
  return {
    paths: new Set([...a.paths, ...b.paths]),
    full: a.full || b.full,
    rulesChanged: a.rulesChanged || b.rulesChanged,
    foldersChanged: a.foldersChanged || b.foldersChanged,
  };
}

/**
 * Adds one watcher event to the batch. `relPath` is relative to the watched folder, with forward
 * slashes; events outside the folder (or for the folder itself) are ignored.
 */
export function recordEvent(batch: ChangeBatch, event: WatchEventName, relPath: string): void {
  if (relPath === '' || relPath === '..' || relPath.startsWith('../') || relPath.startsWith('/')) return;
  const name = relPath.slice(relPath.lastIndexOf('/') + 1);
  if (name === '.gitignore' && (event === 'add' || event === 'change' || event === 'unlink')) {
    batch.rulesChanged = true;
    return;
  }
  if (event === 'addDir' || event === 'unlinkDir') batch.foldersChanged = true;
  else batch.paths.add(`/${relPath}`);
}

/**
 * What one sync compares, given the folder's files (walked, not hashed yet) and the collection's.
 * A full batch compares everything. Otherwise only what may differ: the files the watcher saw change,
 * the local files the collection lacks (new ones, and those a .gitignore change let back in) and the
 * collection's files that are no longer in the folder (deleted, or newly ignored). A file the watcher
 * did not report and that both sides hold keeps its bytes, so hashing it again would only cost time.
 */
export function scopeSync<L extends { path: string }, R extends { path: string }>(
  local: readonly L[],
  remote: readonly R[],
  batch: Pick<ChangeBatch, 'paths' | 'full'>,
): { hash: L[]; compare: R[] } {
  if (batch.full) return { hash: [...local], compare: [...remote] };
  const remotePaths = new Set(remote.map((file) => file.path));
  const hash = local.filter((file) => batch.paths.has(file.path) || !remotePaths.has(file.path));
  const hashed = new Set(hash.map((file) => file.path));
  const localPaths = new Set(local.map((file) => file.path));
  const compare = remote.filter((file) => hashed.has(file.path) || !localPaths.has(file.path));
  return { hash, compare };
}

/** Waits after the n-th failure in a row (n ≥ 1): doubling from `baseMs`, at most `maxMs`. */
export function backoffDelay(failures: number, baseMs: number, maxMs: number): number {
  const exponent = Math.max(0, failures - 1);
  return Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 30));
}

/** How a sync ended: done, failed in a way a later attempt may fix, or failed for good. */
export type SyncOutcome = 'ok' | 'retry' | 'stop';

export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
  now(): number;
}

export const realTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

export interface SchedulerOptions {
  debounceMs: number;
  /** A folder that never falls quiet still syncs this long after its first unsynced change. */
  maxWaitMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  timers: Timers;
  sync: (batch: ChangeBatch) => Promise<SyncOutcome>;
  /** Told before each wait after a failed sync. */
  onRetryScheduled?: (delayMs: number, failures: number) => void;
  /** Told once when a sync answers 'stop'; the scheduler runs nothing more. */
  onStopped?: () => void;
}

/**
 * Turns a stream of changes into syncs: a sync starts once `debounceMs` pass without a change (or
 * `maxWaitMs` after the first change of the batch), never while another one runs (changes meanwhile
 * wait for the next), and after a failure the batch is kept, made full and retried with backoff (new
 * changes do not cut the wait short).
 */
export class SyncScheduler {
  private pending = emptyBatch();
  private timer: { handle: unknown; kind: 'debounce' | 'retry' } | null = null;
  private running: Promise<void> | null = null;
  private failures = 0;
  private stopped = false;
  /** When the oldest change still waiting for a sync was recorded. */
  private pendingSince: number | null = null;

  constructor(private readonly options: SchedulerOptions) {}

  /** Adds changes (a function that records into the pending batch, or a batch to merge). */
  record(change: ChangeBatch | ((batch: ChangeBatch) => void)): void {
    if (this.stopped) return;
    if (typeof change === 'function') change(this.pending);
    else this.pending = mergeBatches(this.pending, change);
    if (isBatchEmpty(this.pending)) return;
    this.pendingSince ??= this.options.timers.now();
    if (this.running || this.timer?.kind === 'retry') return;
    this.armDebounce();
  }

  /** Starts a sync of what is pending now, without the debounce wait (unless one is running). */
  flush(): void {
    if (this.stopped || this.running || isBatchEmpty(this.pending)) return;
    this.disarm();
    this.fire();
  }

  /** True while a sync runs or a change waits for one. */
  get busy(): boolean {
    return this.running !== null || this.timer !== null;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Runs nothing more; resolves once the sync in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.disarm();
    await this.running;
  }

  private armDebounce(): void {
    const since = this.pendingSince ?? this.options.timers.now();
    const untilMaxWait = since + this.options.maxWaitMs - this.options.timers.now();
    this.arm('debounce', Math.max(0, Math.min(this.options.debounceMs, untilMaxWait)));
  }

  private arm(kind: 'debounce' | 'retry', ms: number): void {
    this.disarm();
    const handle = this.options.timers.set(() => {
      this.timer = null;
      this.fire();
    }, ms);
    this.timer = { handle, kind };
  }

  private disarm(): void {
    if (this.timer) this.options.timers.clear(this.timer.handle);
    this.timer = null;
  }

  private fire(): void {
    if (this.stopped || this.running || isBatchEmpty(this.pending)) return;
    const batch = this.pending;
    this.pending = emptyBatch();
    this.pendingSince = null;
    this.running = this.run(batch);
  }

  private async run(batch: ChangeBatch): Promise<void> {
    let outcome: SyncOutcome;
    try {
      outcome = await this.options.sync(batch);
    } catch {
      outcome = 'retry';
    }
    this.running = null;
    if (this.stopped) return;
    if (outcome === 'stop') {
      this.stopped = true;
      this.disarm();
      this.options.onStopped?.();
      return;
    }
    if (outcome === 'retry') {
      this.failures++;
      this.pending = mergeBatches(batch, this.pending);
      this.pending.full = true;
      this.pendingSince ??= this.options.timers.now();
      const delay = backoffDelay(this.failures, this.options.retryBaseMs, this.options.retryMaxMs);
      this.options.onRetryScheduled?.(delay, this.failures);
      this.arm('retry', delay);
      return;
    }
    this.failures = 0;
    if (!isBatchEmpty(this.pending)) this.armDebounce();
  }
}
