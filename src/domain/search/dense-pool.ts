import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../threads.js';
import { entryFile } from '../../contract/package-files.js';
import { VECTOR_SHARDS, type DenseHit } from '../../store/interface.js';
import type { DenseReply, DenseRequest, DenseWorkerData } from './dense-worker.js';
import { byDenseRank } from './vector-scan.js';

export type DenseQuery = Omit<DenseRequest, 'id' | 'shard'>;

/**
 * Nearest-neighbour scans on helper threads, one per shard of the vectors, all at once; the
 * shards' exact top-k lists merge into the exact top-k. Each thread keeps its shard's in-memory
 * copies, so each gets an equal part of the copies' memory budget (shards are equal by rid).
 */
export class DenseSearcher {
  private readonly shards: ShardThread[];

  constructor(dbFile: string, options: { vectorMemoryBytes: number }) {
    const budgetBytes = Math.floor(options.vectorMemoryBytes / VECTOR_SHARDS);
    this.shards = Array.from({ length: VECTOR_SHARDS }, () => new ShardThread({ dbFile, budgetBytes }));
  }

  async search(query: DenseQuery): Promise<DenseHit[]> {
    const lists = await Promise.all(this.shards.map((thread, shard) => thread.search({ ...query, shard })));
    return lists
      .flat()
      .sort(byDenseRank)
      .slice(0, query.limit);
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((t) => t.close()));
  }
}

/** One helper thread with its own read connection; restarted on the next query if it dies. */
class ShardThread {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (hits: DenseHit[]) => void; reject: (err: Error) => void }>();
  private closed = false;

  constructor(private readonly data: DenseWorkerData) {}

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(entryFile('dense-worker'), { workerData: this.data, execArgv: workerExecArgv() });
    worker.on('message', (reply: DenseReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in reply) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.hits);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the search helper thread stopped')));
    // An idle helper must not keep the process alive; a busy one must (search() refs it).
    worker.unref();
    this.worker = worker;
    return worker;
  }

  search(query: Omit<DenseRequest, 'id'>): Promise<DenseHit[]> {
    if (this.closed) return Promise.reject(new Error('closed'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...query, id } satisfies DenseRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      // Held referenced until it exits: an unreferenced thread would let the process end mid-close.
      worker.ref();
      const force = setTimeout(() => void worker.terminate(), 2000);
      worker.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      worker.postMessage('close');
    });
  }
}
