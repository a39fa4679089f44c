// One writer at a time per data dir, waited for without blocking (issue 15, "One writer").
//
// SQLite lets one connection write at a time, and better-sqlite3 waits for a held write lock
// synchronously, in its busy handler: on the HTTP thread that wait stalled every request, /health
// included, for as long as the indexing worker's transaction lasted. So every thread that writes
// takes this token first, and waits for it with Atomics.waitAsync, which yields to the event loop.
// A thread holding the token never meets SQLite's lock held by another thread of this daemon.

const HOLDER = 0;
/** How many writes the HTTP thread has waiting: the worker lets them go first (its writes can wait). */
const MAIN_WAITING = 1;
/** Threads waiting for the token: a release with none waiting skips the notify. */
const WAITERS = 2;

export type GateHolder = 'main' | 'worker';
const CODE: Record<GateHolder, number> = { main: 1, worker: 2 };
const FREE = 0;

/** Wakes re-check the token at least this often, in case a notify is missed (a thread that died holding it). */
const RECHECK_MS = 250;

export class WriteGate {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  /** A new gate, or (in a worker thread) the daemon's gate from the buffer it was handed. */
  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
    this.cells = new Int32Array(this.buffer);
  }

  /** Who holds the token now, or null. */
  holder(): GateHolder | null {
    const code = Atomics.load(this.cells, HOLDER);
    return code === CODE.main ? 'main' : code === CODE.worker ? 'worker' : null;
  }

  /** Takes the token if it is free (and, for the worker, if no write of the HTTP thread is waiting). */
  tryAcquire(holder: GateHolder): boolean {
    if (holder === 'worker' && Atomics.load(this.cells, MAIN_WAITING) > 0) return false;
    return Atomics.compareExchange(this.cells, HOLDER, FREE, CODE[holder]) === FREE;
  }

  /** Waits, without blocking the thread's event loop, until the token is this holder's. */
  async acquire(holder: GateHolder): Promise<void> {
    if (holder === 'main') Atomics.add(this.cells, MAIN_WAITING, 1);
    try {
      for (;;) {
        if (holder === 'worker') {
          const waiting = Atomics.load(this.cells, MAIN_WAITING);
          if (waiting > 0) {
            await Atomics.waitAsync(this.cells, MAIN_WAITING, waiting, RECHECK_MS).value;
            continue;
          }
        }
        if (this.tryAcquire(holder)) return;
        const current = Atomics.load(this.cells, HOLDER);
        if (current === FREE) continue;
        // Counted before waiting: a release that sees no waiter has already freed the token, and
        // then waitAsync finds HOLDER changed and returns at once.
        Atomics.add(this.cells, WAITERS, 1);
        try {
          await Atomics.waitAsync(this.cells, HOLDER, current, RECHECK_MS).value;
        } finally {
          Atomics.sub(this.cells, WAITERS, 1);
        }
      }
    } finally {
      if (holder === 'main') {
        Atomics.sub(this.cells, MAIN_WAITING, 1);
        Atomics.notify(this.cells, MAIN_WAITING);
      }
    }
  }

  release(holder: GateHolder): void {
    if (!this.releaseAbandoned(holder)) throw new Error(`the write gate is not held by the ${holder} thread`);
  }

  /**
   * Frees the token if this holder has it; false if not. Also how the runtime frees the token a
   * thread died holding (the indexing worker crashed mid-write: SQLite rolled its transaction back
   * when its connection went away).
   */
  releaseAbandoned(holder: GateHolder): boolean {
    if (Atomics.compareExchange(this.cells, HOLDER, CODE[holder], FREE) !== CODE[holder]) return false;
    if (Atomics.load(this.cells, WAITERS) > 0) Atomics.notify(this.cells, HOLDER);
    return true;
  }
}
