// The indexing worker: a thread with its own SQLite connection that claims jobs and runs them, so
// extraction and index writes never stall the HTTP thread (DESIGN.md).
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { openDatabase, truncateWal } from '../../store/sqlite/db.js';
import { mergeKeywordIndexStep } from '../../store/sqlite/passages.js';
import { keywordIndexOutgrown } from '../../store/sqlite/keyword-index.js';
import { moveKeywordIndexToOwnTable } from '../../store/sqlite/keyword-index-move.js';
import { WriteGate } from '../../store/sqlite/write-gate.js';
import { Writer } from '../../store/sqlite/writer.js';
import { sqliteStore } from '../../store/sqlite/store.js';
import { TrainingWords } from '../search/training-words.js';
import { nowIso } from '../../contract/ids.js';
import { runApplyAccessRuleJob } from '../access/rules.js';
import { shutdownOcr } from './formats/ocr.js';
import { lowerThisThreadPriority } from '../threads.js';
import { lazyEmbedding, type EmbeddingConfig } from '../embed/config.js';
import { expireUploads, markIndexing, recoverFromWorkerDeath, runDeleteContainerJob, runDeleteFileJob, runIndexJobs, runReindexJob, type IndexingWorker, type PipelineConfig } from './pipeline.js';
import type { Embedding } from '../embed/provider.js';
import { FETCH_AHEAD_CAPACITY, FetchAhead } from './fetch-ahead.js';
import { FsBlobStore } from '../../store/fs-blobs/fs-blob-store.js';

export interface WorkerInit extends PipelineConfig {
  embedding: EmbeddingConfig;
  dbFile: string;
  /** The data dir's blob folder (src/store/fs-blobs/), made ready by the daemon. */
  blobsDir: string;
  /** The daemon's write token (src/store/sqlite/write-gate.ts): this thread writes only while it holds it. */
  writeGate: SharedArrayBuffer;
  /** Jobs claimed per batch; one transaction commits a batch's results. */
  batchSize: number;
  /**
   * The worker before this one died while the daemon lived on: recover what it held first
   * (recoverFromWorkerDeath), counting the death against those jobs unless `countDeath` is false.
   */
  afterDeath?: { countDeath: boolean } | undefined;
}

/** `roots`: the operator changed the file:// roots while the daemon runs (src/domain/file-roots.ts). */
export type ToWorker = { type: 'wake' } | { type: 'cancel'; jobId: string } | { type: 'roots'; fileRoots: string[] } | { type: 'stop' };
export type FromWorker =
  | { type: 'progress'; finished: number }
  | { type: 'stopped' }
  /** `machine`: the error was the machine's (aboutTheMachine), not the work's. */
  | { type: 'error'; message: string; machine?: boolean }
  | { type: 'warning'; message: string; fields?: Record<string, unknown> | undefined }
  | { type: 'recovered'; requeued: number; failed: number };

const init = workerData as WorkerInit;
lowerThisThreadPriority();
const port = parentPort!;
const db = openDatabase(init.dbFile);
const writer = new Writer(db, new WriteGate(init.writeGate), 'worker');
const write = <T>(change: () => T | Promise<T>): Promise<T> => writer.write(change);
const store = sqliteStore(db, write);
const canceled = new Set<string>();
let stopping = false;
let wake: (() => void) | null = null;

function handle(msg: ToWorker): void {
  if (msg.type === 'cancel') canceled.add(msg.jobId);
  // Fetches read init.fileRoots when they start, so the next file:// source sees the new list.
  if (msg.type === 'roots') init.fileRoots = msg.fileRoots;
  if (msg.type === 'stop') stopping = true;
  wake?.();
}
port.on('message', handle);

/**
 * Messages already sent, handled before jobs are claimed: a root granted before a file was added
 * must be in force when that file's job runs, even if this thread has not yielded since.
 */
function drainMessages(): void {
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) handle(received.message as ToWorker);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake = null;
      resolve();
    }
    wake = done;
  });
}

const isCanceled = (id: string) => canceled.has(id);

// The model loads on first need (the builtin one converts its package once, then reads a cache).
const embedding: Embedding = lazyEmbedding(init.embedding);

const warn = (message: string, fields?: Record<string, unknown>) => port.postMessage({ type: 'warning', message, fields } satisfies FromWorker);
/** http(s) sources are fetched here, beside the indexing (fetch-ahead.ts). */
const ahead = new FetchAhead(
  () => ({ allowPrivate: init.allowPrivateSources, fileRoots: init.fileRoots, maxBytes: init.maxFileBytes, timeoutMs: init.fetchTimeoutMs }),
  () => wake?.(),
);
const worker: IndexingWorker = { store, storeFile: init.dbFile, words: new TrainingWords(), cfg: init, blobs: new FsBlobStore(init.blobsDir), embedding, isCanceled, isStopping: () => stopping, warn, fetchedAhead: (versionId) => ahead.fetched(versionId) };

/**
 * Ends the fetches of jobs that no longer wait for them (canceled, their collection or namespace
 * deleted, their file changed or deleted), then fills the lane from the queue.
 */
async function tendFetches(): Promise<void> {
  const gone: number[] = [];
  for (const job of ahead.jobs()) {
    if ((await store.jobs.status(job.rid)) !== 'queued' || job.file_rid === null) gone.push(job.rid);
    else {
      const state = await store.files.versionState(job.file_rid);
      if (!state || state.deleted_at !== null || state.version_id !== job.version_id) gone.push(job.rid);
    }
  }
  ahead.drop(gone);
  if (ahead.size < FETCH_AHEAD_CAPACITY) ahead.intake(await store.jobs.queuedSourceFetches(200));
}

/**
 * While files stream in (the last claim found work but not a full batch), the next claim waits this
 * long for more to queue: each batch costs a few transactions whatever its size, so a stream of
 * one-file batches spent most of its time starting and committing them (issue 15). A file added to
 * an idle daemon is claimed at once.
 */
const LINGER_MS = 20;

/**
 * Collections whose keyword index took writes since it was last merged. Once no job has run for
 * QUIET_MS, the worker merges their indexes a step at a time (mergeKeywordIndexStep), claiming jobs
 * between steps so that new work always goes first: a search reads one segment instead of dozens.
 */
const unmerged = new Set<number>();
/** Set by any write since the WAL was last truncated; cleared once the quiet-time upkeep has run. */
let walGrew = false;
const QUIET_MS = 1000;
/** FTS5 leaf pages (~4 KB) per merge step: a few ms of holding the write token. */
const MERGE_PAGES = 256;

async function loop(): Promise<void> {
  if (init.afterDeath) {
    const { countDeath } = init.afterDeath;
    const recovered = await store.write((tx) => recoverFromWorkerDeath(tx, nowIso(), countDeath));
    port.postMessage({ type: 'recovered', ...recovered } satisfies FromWorker);
  }
  let lastExpiry = 0;
  let lastClaimed = 0;
  let lastWork = 0;
  while (!stopping) {
    if (Date.now() - lastExpiry > Math.min(init.uploadTtlMs / 4, 60_000)) {
      lastExpiry = Date.now();
      await expireUploads(store, init.uploadTtlMs);
    }
    if (lastClaimed > 0 && lastClaimed < init.batchSize) await new Promise((resolve) => setTimeout(resolve, LINGER_MS));
    drainMessages();
    if (stopping) break;
    await tendFetches();
    // Claiming and marking the files `indexing` is one transaction. http(s) sources still being
    // fetched stay queued; those fetched are claimed like any job.
    const jobs = await store.write(async (tx) => {
      const claimed = await tx.jobs.claim(init.batchSize, nowIso(), ahead.fetchedRids());
      await markIndexing(tx, claimed);
      return claimed;
    });
    lastClaimed = jobs.length;
    if (jobs.length === 0) {
      const [next] = unmerged;
      if (next !== undefined) {
        const quietIn = lastWork + QUIET_MS - Date.now();
        if (quietIn > 0) {
          await sleep(quietIn);
          continue;
        }
        if (!(await write(() => mergeKeywordIndexStep(db, next, MERGE_PAGES)))) unmerged.delete(next);
        continue;
      }
      if (walGrew) {
        // Upkeep done: fold the WAL into the database and give its space back.
        walGrew = false;
        await writer.withTokenOutsideTransaction(() => truncateWal(db));
      }
      // A source fetched meanwhile is claimed at once.
      if (ahead.hasFetched()) {
        await sleep(10);
        continue;
      }
      // A wake message (or a fetch that ends) ends the wait at once; the timeout is a safety net for missed wakes.
      await sleep(Math.min(2000, init.uploadTtlMs / 4));
      continue;
    }
    const indexJobs = jobs.filter((j) => j.type === 'index_file');
    if (indexJobs.length > 0) {
      await runIndexJobs(worker, indexJobs);
    }
    // Claimed, so no longer waiting on the lane.
    ahead.drop(indexJobs.map((j) => j.rid));
    for (const job of jobs) {
      if (job.type === 'delete_file') await runDeleteFileJob(worker, job);
      else if (job.type === 'delete_collection' || job.type === 'delete_namespace') await runDeleteContainerJob(store, job);
      else if (job.type === 'reindex_collection') await runReindexJob(worker, job);
      else if (job.type === 'apply_access_rule') await runApplyAccessRuleJob(store, job);
    }
    const touched = new Set(jobs.flatMap((job) => (job.collection_rid === null ? [] : [job.collection_rid])));
    // A collection that outgrew the keyword index collections share moves to one of its own, its
    // terms copied as they are (store/sqlite/keyword-index.ts); asked first without the write token.
    for (const rid of touched) if (keywordIndexOutgrown(db, rid)) await write(() => moveKeywordIndexToOwnTable(db, rid));
    for (const rid of touched) unmerged.add(rid);
    lastWork = Date.now();
    walGrew = true;
    port.postMessage({ type: 'progress', finished: jobs.length } satisfies FromWorker);
  }
}

/**
 * Errors that say the machine is in trouble (a full disk, an I/O error, a lock another process
 * holds, no memory), not that a job is bad: a worker that died of one does not count it against
 * the jobs it held, which would fail healthy files while the disk is full.
 */
const MACHINE_ERRORS = /^(SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|READONLY|CANTOPEN|PROTOCOL|NOLFS|CORRUPT)|ENOSPC|EIO|EMFILE|ENFILE|ENOMEM|EDQUOT)/;

function aboutTheMachine(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && MACHINE_ERRORS.test(code);
}

loop()
  // Jobs whose source was being fetched are still queued: the next worker fetches them again.
  .finally(() => ahead.abortAll())
  .catch((err: unknown) => port.postMessage({ type: 'error', message: String((err as Error)?.stack ?? err), machine: aboutTheMachine(err) } satisfies FromWorker))
  // The OCR engine runs threads of its own; they would keep this thread alive.
  .finally(() => shutdownOcr().catch(() => undefined))
  .finally(async () => {
    await writer.drained();
    db.close();
    port.postMessage({ type: 'stopped' } satisfies FromWorker);
    port.close();
  });
