// The one way a thread writes to the store (issue 15, "One writer"): take the data dir's write
// token (write-gate.ts), run the change in a transaction, let the token go.
//
// - When the token is free, the change runs at once, in the caller's tick: what the caller read
//   just before is still true when it writes. The transaction it opens stays open until the
//   event loop's check phase (setImmediate), so the changes of every request handled in the same
//   turn commit together (group commit without waiting); each resolves after that COMMIT.
// - When another thread holds it, the change waits in a queue (a promise; the event loop goes on),
//   and everything queued meanwhile commits in ONE transaction (group commit), each change in its
//   own savepoint so that one change's error undoes only that change and rejects only its promise.
// - A promise resolves only after COMMIT: a 202 sent after `await write(...)` is for a committed row.
// - A change may be async (the store interface's `write(async (tx) => …)`): its savepoint stays
//   open until its promise settles, the changes after it wait their turn, and COMMIT waits for it.
//   The SQLite engine's own calls settle in microtasks, so such a change still ends before the
//   turn's COMMIT at setImmediate; a change that awaits real I/O holds the token that long.
//
// A store statement that writes outside a transaction fails at once (src/store/sqlite/statements.ts)
// instead of taking SQLite's lock behind the token's back, so a forgotten call site shows in the
// tests, not as a stall in production. (PRAGMA query_only toggled around each write would say the
// same, but costs every cached statement a re-prepare: it halved the ingest rate.)
import type { Statement } from 'better-sqlite3';
import { sqlite, type Db } from './sqlite.js';
import type { GateHolder, WriteGate } from './write-gate.js';

interface Queued {
  change: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** How a layer above the store writes: a change in (synchronous or async), its committed result out. */
export type WriteFn = <T>(change: () => T | Promise<T>) => Promise<T>;

/** Changes committed together at most; a queue longer than this commits in several transactions. */
const GROUP_LIMIT = 256;

interface OpenTransaction {
  settle: ((error: unknown) => void)[];
  unusable?: unknown;
  /** The async change still running in it, if any: the next change and COMMIT wait for it. */
  busy: Promise<void> | null;
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

export class Writer {
  private readonly queue: Queued[] = [];
  private flushing = false;
  private writing = false;
  /** The transaction opened by a change that found the token free, committed at setImmediate. */
  private open: OpenTransaction | null = null;
  private idle: Promise<void> = Promise.resolve();

  private readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Statement>;

  constructor(
    private readonly db: Db,
    private readonly gate: WriteGate,
    private readonly holder: GateHolder,
  ) {
    // Prepared once: db.exec compiles its SQL on every call, and these run several times per write.
    this.sql = {
      begin: sqlite(db).prepare('BEGIN IMMEDIATE'),
      commit: sqlite(db).prepare('COMMIT'),
      rollback: sqlite(db).prepare('ROLLBACK'),
      savepoint: sqlite(db).prepare('SAVEPOINT trove_change'),
      release: sqlite(db).prepare('RELEASE trove_change'),
      rollbackTo: sqlite(db).prepare('ROLLBACK TO trove_change'),
    };
  }

  /**
   * Runs `change` (synchronous; it must not call `write` itself) in a write transaction and
   * resolves with its result once committed.
   */
  write<T>(change: () => T | Promise<T>): Promise<T> {
    if (this.writing) return Promise.reject(new Error('Writer.write was called inside a change; call the store functions directly instead.'));
    if (!this.open && this.queue.length === 0 && !this.flushing && this.gate.tryAcquire(this.holder)) {
      try {
        this.begin();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (this.open) {
      const open = this.open;
      return new Promise<T>((resolve, reject) => {
        const run = (): void | Promise<void> => {
          if (open.unusable !== undefined) {
            reject(open.unusable);
            return;
          }
          const failed = (err: unknown): void => {
            if (!this.inTransaction()) {
              // SQLite undid the whole transaction: the turn's earlier changes are gone with it.
              for (const settle of open.settle.splice(0)) settle(err);
              open.unusable = this.beginAgain();
            }
            reject(err);
          };
          const succeeded = (value: T): void => {
            open.settle.push((error) => (error === undefined ? resolve(value) : reject(error)));
          };
          let outcome: T | Promise<T>;
          try {
            outcome = this.inSavepoint(change);
          } catch (err) {
            failed(err);
            return;
          }
          if (!isPromise(outcome)) {
            succeeded(outcome);
            return;
          }
          return outcome.then(succeeded, failed);
        };
        // A change runs in the caller's tick unless an async one is still running in this
        // transaction: then it waits its turn (savepoints nest, they must not interleave).
        const running = open.busy ? open.busy.then(run) : run();
        if (running) {
          const tracked: Promise<void> = running.then(() => {
            if (open.busy === tracked) open.busy = null;
          });
          open.busy = tracked;
        }
      });
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ change, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) this.idle = this.flush();
    });
  }

  /** Resolves once every write queued so far has committed or failed. */
  drained(): Promise<void> {
    return this.idle;
  }

  /**
   * Runs `work` holding the write token but outside any transaction, for what SQLite refuses inside
   * one (a WAL checkpoint). Waits for this writer's own writes first; the caller must not write
   * through this writer meanwhile (the indexing worker calls it from its idle loop).
   */
  async withTokenOutsideTransaction<T>(work: () => T): Promise<T> {
    await this.drained();
    await this.gate.acquire(this.holder);
    try {
      return work();
    } finally {
      this.gate.release(this.holder);
    }
  }

  /** Opens the turn's transaction (the token is held) and schedules its COMMIT. */
  private begin(): void {
    try {
      this.sql.begin.run();
    } catch (err) {
      this.gate.release(this.holder);
      throw err;
    }
    const open: OpenTransaction = { settle: [], busy: null };
    this.open = open;
    let done!: () => void;
    const committed = new Promise<void>((resolve) => (done = resolve));
    const before = this.idle;
    this.idle = before.then(() => committed);
    const commit = (): void => {
      const error = this.commitAndRelease();
      for (const settle of open.settle) settle(error);
      done();
    };
    setImmediate(() => {
      // Changes arriving from now on queue for the next transaction; one still running ends first.
      this.open = null;
      if (open.busy) void waitOut(open).then(commit);
      else commit();
    });
  }

  /**
   * Commits the open transaction and lets the token go; the error if COMMIT failed (then nothing of
   * it was written). No transaction is open when SQLite undid it and it could not be begun again:
   * then its changes have been told already, and there is nothing to commit.
   */
  private commitAndRelease(): unknown {
    try {
      if (this.inTransaction()) this.sql.commit.run();
      return undefined;
    } catch (err) {
      // A full disk fails COMMIT too; the transaction may still be open then, and must not stay so.
      if (this.inTransaction()) {
        try {
          this.sql.rollback.run();
        } catch {
          // Nothing more to undo: SQLite ends a transaction whose ROLLBACK fails.
        }
      }
      return err ?? new Error('COMMIT failed');
    } finally {
      this.gate.release(this.holder);
    }
  }

  private inTransaction(): boolean {
    return sqlite(this.db).inTransaction;
  }

  /**
   * After SQLite rolled back the whole transaction (it may, for SQLITE_FULL, SQLITE_IOERR,
   * SQLITE_NOMEM and SQLITE_BUSY; a full disk does), opens a new one for the changes still to run,
   * holding the token still. Returns the error when that fails too: those changes fail with it.
   */
  private beginAgain(): unknown {
    try {
      this.sql.begin.run();
      return undefined;
    } catch (err) {
      return err;
    }
  }

  /**
   * One change in its own savepoint: its error undoes only its own writes. An async change keeps
   * its savepoint until its promise settles (the value returned is then that promise's).
   */
  private inSavepoint<T>(change: () => T | Promise<T>): T | Promise<T> {
    this.writing = true;
    this.sql.savepoint.run();
    let value: T | Promise<T>;
    try {
      value = change();
    } catch (err) {
      this.writing = false;
      this.undoSavepoint();
      throw err;
    }
    this.writing = false;
    if (!isPromise(value)) {
      this.sql.release.run();
      return value;
    }
    return Promise.resolve(value).then(
      (settled) => {
        this.sql.release.run();
        return settled;
      },
      (err: unknown) => {
        this.undoSavepoint();
        throw err;
      },
    );
  }

  private undoSavepoint(): void {
    // A transaction SQLite has rolled back has no savepoint to return to; the caller sees the
    // change's own error either way (SQLITE_FULL, not "no such savepoint").
    if (this.inTransaction()) {
      this.sql.rollbackTo.run();
      this.sql.release.run();
    }
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        await this.gate.acquire(this.holder);
        const group = this.queue.splice(0, GROUP_LIMIT);
        try {
          this.sql.begin.run();
        } catch (error) {
          this.gate.release(this.holder);
          for (const item of group) item.reject(error);
          continue;
        }
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        let unusable: unknown;
        for (const item of group) {
          if (unusable !== undefined) {
            outcomes.push({ ok: false, error: unusable });
            continue;
          }
          try {
            const value = this.inSavepoint(item.change);
            outcomes.push({ ok: true, value: isPromise(value) ? await value : value });
          } catch (error) {
            if (!this.inTransaction()) {
              // SQLite undid the whole transaction: the group's earlier changes are gone with it.
              for (let i = 0; i < outcomes.length; i++) if (outcomes[i]!.ok) outcomes[i] = { ok: false, error };
              unusable = this.beginAgain();
            }
            outcomes.push({ ok: false, error });
          }
        }
        // A failed COMMIT wrote nothing of the group: every change in it fails.
        const failed = this.commitAndRelease();
        group.forEach((item, i) => {
          const outcome = outcomes[i]!;
          if (failed !== undefined) item.reject(failed);
          else if (outcome.ok) item.resolve(outcome.value);
          else item.reject(outcome.error);
        });
      }
    } finally {
      this.flushing = false;
    }
  }
}

/** Resolves once no async change is running in the transaction (one may start another behind it). */
async function waitOut(open: OpenTransaction): Promise<void> {
  while (open.busy) await open.busy;
}
