// A read-only helper thread for nearest-neighbour scans: a large collection's scan takes tens of
// milliseconds, so it runs here, beside the keyword stage on the HTTP thread, not before or after it.
// It opens its own read connection, keeps its shard's in-memory vector copies and runs the dense
// stage's scan (src/domain/search/vector-scan.ts) over the store.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../store/sqlite/db.js';
import { sqliteStore } from '../../store/sqlite/store.js';
import type { DenseHit, FileSelection } from '../../store/interface.js';
import { VectorCopies } from './vector-copies.js';
import { denseHits } from './vector-scan.js';

export interface DenseRequest {
  id: number;
  collectionRid: number;
  query: Float32Array;
  selection: FileSelection | null;
  limit: number;
  shard: number;
}

export interface DenseWorkerData {
  dbFile: string;
  /** Bytes this thread's in-memory vector copies may hold together. */
  budgetBytes: number;
}

export type DenseReply = { id: number; hits: DenseHit[] } | { id: number; error: string };

const { dbFile, budgetBytes } = workerData as DenseWorkerData;
const db = openDatabase(dbFile);
const store = sqliteStore(db, () => Promise.reject(new Error('the dense helper thread only reads')));
const copies = new VectorCopies(store.vectors);
const port = parentPort!;
port.on('message', async (msg: DenseRequest | 'close') => {
  if (msg === 'close') {
    db.close();
    // Ends this thread only; loaders injected by a host (test runners) could otherwise keep it up.
    process.exit(0);
  }
  try {
    port.postMessage({ id: msg.id, hits: await denseHits(store.vectors, copies, msg) } satisfies DenseReply);
  } catch (err) {
    port.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) } satisfies DenseReply);
  }
  // After the reply, so no query waits for a rebuild; a failed rebuild leaves the store's exact scan in charge.
  try {
    await copies.refresh(msg.collectionRid, msg.shard, { budgetBytes });
  } catch {
    // The next query tries again.
  }
});
