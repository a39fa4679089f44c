// The indexing worker as a test runs it on the fixture's own database handle (no thread of its
// own): claim jobs as the worker would, then run them through src/domain/ingest/pipeline.ts.
import { nowIso } from '../../src/contract/ids.js';
import { markIndexing, type IndexingWorker } from '../../src/domain/ingest/pipeline.js';
import type { WriteFn } from '../../src/store/sqlite/writer.js';
import { Writer } from '../../src/store/sqlite/writer.js';
import { TrainingWords } from '../../src/domain/search/training-words.js';
import { databaseFile } from '../../src/store/sqlite/db.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';
import type { Fixture } from './trove.js';

/** Claims up to `limit` queued jobs and marks their files `indexing`, in one transaction. */
export const claim = (f: Fixture, limit = 500) =>
  f.rt.services.store.write(async (tx) => {
    const jobs = await tx.jobs.claim(limit, nowIso());
    await markIndexing(tx, jobs);
    return jobs;
  });

/** The words a fixture's in-process workers keep: one set per fixture, as one worker thread keeps one. */
const wordsOf = new WeakMap<Fixture, TrainingWords>();
export function keptWords(f: Fixture): TrainingWords {
  let words = wordsOf.get(f);
  if (!words) wordsOf.set(f, (words = new TrainingWords()));
  return words;
}

/**
 * An IndexingWorker writing through its own Writer; `wrap` may stand between it and each write (to
 * make one fail), and `warn` receives what the worker reports.
 */
export function inProcessWorker(f: Fixture, opts: { wrap?: (write: WriteFn) => WriteFn; warn?: IndexingWorker['warn'] } = {}): IndexingWorker {
  const writer = new Writer(f.rt.db, f.rt.writeGate, 'worker');
  const write: WriteFn = (change) => writer.write(change);
  const wrapped = opts.wrap ? opts.wrap(write) : write;
  return {
    store: sqliteStore(f.rt.db, wrapped),
    storeFile: databaseFile(f.rt.db),
    words: keptWords(f),
    cfg: { fileRoots: [], allowPrivateSources: false, uploadTtlMs: 3600_000, maxFileBytes: 1 << 20, fetchTimeoutMs: 1000, maxPages: 10, extractTimeoutMs: 10_000 },
    blobs: f.rt.services.blobs,
    embedding: null,
    isCanceled: () => false,
    isStopping: () => false,
    warn: opts.warn ?? (() => {}),
  };
}
