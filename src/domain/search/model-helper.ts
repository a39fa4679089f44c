// The indexing worker's side of model-helper-thread.ts: one thread for one training, closed after.
import { Worker } from 'node:worker_threads';
import { entryFile } from '../../contract/package-files.js';
import { workerExecArgv } from '../threads.js';
import type { CollectionModel } from './collection-model.js';
import type { ModelHelperData, ModelHelperReply, ModelHelperRequest } from './model-helper-thread.js';

export class ModelHelper {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (reply: ModelHelperReply) => void; reject: (err: Error) => void }>();
  private failure: Error | null = null;
  /** Files of the last `prepare`. */
  private prepared = 0;

  constructor(dbFile: string) {
    this.worker = new Worker(entryFile('model-helper'), { workerData: { dbFile } satisfies ModelHelperData, execArgv: workerExecArgv() });
    this.worker.on('message', (reply: ModelHelperReply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ('error' in reply) waiter?.reject(new Error(reply.error));
      else waiter?.resolve(reply);
    });
    const fail = (err: Error) => {
      this.failure ??= err;
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new Error('the model helper thread stopped')));
  }

  private send(request: ModelHelperRequest): void {
    this.worker.postMessage(request);
  }

  private ask(request: ModelHelperRequest & { id: number }): Promise<ModelHelperReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      this.send(request);
    });
  }

  /** The words of these stored files, as modelTerms splits their model text. */
  async terms(rids: number[]): Promise<string[][]> {
    const reply = await this.ask({ type: 'terms', id: this.nextId++, rids });
    if (!('terms' in reply)) throw new Error('unexpected reply');
    // An empty line is a file with no words; split would make it one empty word.
    const lines = reply.terms.split('\n').map((line) => (line === '' ? [] : line.split(' ')));
    if (lines.length !== rids.length) throw new Error(`the model helper split ${lines.length} files of ${rids.length}`);
    return lines;
  }

  /** Starts reading and splitting these stored files; `fold` gives their vectors. */
  prepare(rids: number[]): void {
    this.prepared = rids.length;
    if (!this.failure) this.send({ type: 'prepare', id: this.nextId++, rids });
  }

  /** The vectors of the files of `prepare`, in order (null: no word of the model), encoded as stored. */
  async fold(model: CollectionModel): Promise<(Buffer | null)[]> {
    const reply = await this.ask({ type: 'fold', id: this.nextId++, model });
    if (!('topics' in reply)) throw new Error('unexpected reply');
    const k = model.dimensions;
    if (reply.has.length !== this.prepared) throw new Error(`the model helper folded ${reply.has.length} files of ${this.prepared}`);
    return Array.from(reply.has, (has, i) => (has ? Buffer.from(reply.topics.buffer, reply.topics.byteOffset + i * k, k) : null));
  }

  close(): void {
    if (!this.failure) this.send({ type: 'close' });
    this.failure ??= new Error('closed');
  }
}
