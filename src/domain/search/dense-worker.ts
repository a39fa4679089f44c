// A read-only helper thread for nearest-neighbour scans: a large collection's scan takes tens of
// milliseconds, so it runs here, beside the keyword stage on the HTTP thread, not before or after it.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../store/sqlite/db.js';
import { denseHits, refreshVectorCopy } from '../../store/sqlite/vectors.js';
import type { DenseHit, FileSelection } from '../../store/interface.js';

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
const port = parentPort!;
port.on('message', (msg: DenseRequest | 'close') => {
  if (msg === 'close') {
    db.close();
    // Ends this thread only; loaders injected by a host (test runners) could otherwise keep it up.
    process.exit(0);
  }
  try {
    port.postMessage({ id: msg.id, hits: denseHits(db, msg) } satisfies DenseReply);
  } catch (err) {
    port.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) } satisfies DenseReply);
  }
  // After the reply, so no query waits for a rebuild; a failed rebuild leaves the table scan in charge.
  try {
    refreshVectorCopy(db, msg.collectionRid, msg.shard, { budgetBytes });
  } catch {
    // The next query tries again.
  }
});
