// Running jobs: fetch → detect → extract → chunk → index. Plain functions over the store
// (src/store/interface.ts); the worker thread (worker-thread.ts) drives them off the HTTP thread.
import { nowIso } from '../../contract/ids.js';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS, type Processing } from '../../contract/schemas.js';
import type { Embedding } from '../embed/provider.js';
import { hash } from 'node:crypto';
import type {
  BlobStore,
  CollectionRow,
  FileRow,
  FileVersionRow,
  JobRow,
  KeywordTextOfPassages,
  NewPassage,
  NewVector,
  PassageSource,
  PreparedKeywordText,
  Store,
  StoreReads,
  StoreTx,
} from '../../store/interface.js';
import { TroveError } from '../../contract/errors.js';
import { checksumMatches } from './checksum.js';
import { chunkDocument } from './chunk.js';
import { hasCjk, keywordIndexText } from '../../contract/cjk.js';
import { staysSettled, topicsForBatch, trainAndRefold } from '../search/collection-topics.js';
import { modelTerms, modelText } from '../search/collection-model.js';
import type { TrainingWords } from '../search/training-words.js';
import { relativeSpans } from './json-path.js';
import { detectContentType, isSupportedContentType } from './detect.js';
import { extractDocument } from './extract.js';
import { fetchSourceUri, type FetchedSource } from './fetch.js';
import { IngestFailure, type IngestFailureCode } from './types.js';
import type { FileErrorCode } from '../../contract/errors.js';

export interface PipelineConfig {
  fileRoots: string[];
  allowPrivateSources: boolean;
  /** How long a signed upload URL lives; a file whose bytes never came fails after it. */
  uploadTtlMs: number;
  /** Per-file limits (docs/decisions.md). */
  maxFileBytes: number;
  fetchTimeoutMs: number;
  /** Pages (PDF pages, slides) per file; more fails `too_large`. */
  maxPages: number;
  /** Time to extract one file's text (OCR included); longer fails `extraction_failed`. */
  extractTimeoutMs: number;
}

/**
 * `source`: the version's inline text, which passages that are verbatim slices of it may be read
 * from. `keywordText`: what the keyword index is to hold for each passage (the passage, or for Han
 * or kana text its keyword form, src/contract/cjk.ts), prepared by the store here, not in the write
 * transaction, which holds the write token.
 */
export type Indexed =
  | {
      ok: true;
      contentType: string;
      notes: string[];
      passages: NewPassage[];
      vectors?: EmbeddedPassage[];
      source?: PassageSource;
      keywordText: PreparedKeywordText;
    }
  | { ok: false; code: IngestFailureCode; message: string };

export interface EmbeddedPassage {
  textHash: string;
  embedding: Float32Array;
}

/** The text a passage's vector stands for: its heading trail gives a short passage its topic. */
export function embeddingText(p: Pick<NewPassage, 'heading' | 'text'>): string {
  return p.heading ? `${p.heading}\n${p.text}` : p.text;
}

// One-shot hash: a Hash object per passage was a tenth of embedding's cost at ingest.
const hashText = (text: string) => hash('sha1', text, 'base64url');

/**
 * Vectors for a file's passages. Passages whose text is unchanged since the last version keep
 * their vectors (when they came from the same model); only the rest are embedded, in one batch.
 */
async function embedPassages(store: StoreReads, col: CollectionRow, fileRid: number, hadIndexedVersion: boolean, passages: NewPassage[], embedding: Embedding): Promise<EmbeddedPassage[]> {
  // A file never indexed has no vectors to reuse: looking cost the worker 0.2 s of SciFact's ingest.
  const reusable = col.embedding_model === embedding.modelId && hadIndexedVersion ? await store.vectors.ofFileByTextHash(col.rid, fileRid) : new Map<string, Float32Array>();
  const items = passages.map((p) => {
    const text = embeddingText(p);
    const textHash = hashText(text);
    return { text, textHash, embedding: reusable.get(textHash) };
  });
  const missing = items.filter((i) => i.embedding === undefined);
  if (missing.length > 0) {
    let vectors: Float32Array[];
    try {
      vectors = await (await embedding.get()).embed(missing.map((i) => i.text));
    } catch (err) {
      throw new IngestFailure('embedding_failed', `Embedding with ${embedding.modelId} failed: ${(err as Error).message}`);
    }
    missing.forEach((item, i) => (item.embedding = vectors[i]!));
  }
  return items.map((i) => ({ textHash: i.textHash, embedding: i.embedding! }));
}

/** A collection's vectors all come from one model: a different one needs :reindex. */
function checkModel(col: CollectionRow, embedding: Embedding): void {
  if (col.embedding_model && col.embedding_model !== embedding.modelId) {
    throw new IngestFailure(
      'embedding_model_mismatch',
      `The collection's vectors come from ${col.embedding_model} but the daemon now uses ${embedding.modelId}; reindex the collection (POST …:reindex) to switch.`,
    );
  }
}

/** What every indexing job runs with, in the indexing worker (worker-thread.ts). */
export interface IndexingWorker {
  /** Where the jobs read and write: the worker thread's own connection to the store. */
  store: Store;
  /** The database file a helper thread may open to share a model's training (collection-topics.ts); null: no helper. */
  storeFile: string | null;
  /** The words of the files this worker indexed, kept for the next training of their collection. */
  words: TrainingWords;
  cfg: PipelineConfig;
  /** Uploaded bytes (src/store/blob-store.ts). */
  blobs: BlobStore;
  /** The provider that embeds passages; null when the daemon embeds nothing. */
  embedding: Embedding | null;
  isCanceled: (jobId: string) => boolean;
  /** The daemon is shutting down: a long job stops at its next batch and resumes at the next start. */
  isStopping: () => boolean;
  /** Reports a failure the worker lived through (the daemon's log). */
  warn: (message: string, fields?: Record<string, unknown>) => void;
  /** A version's source already fetched beside the indexing (fetch-ahead.ts), if it was. */
  fetchedAhead?: (versionId: string) => Promise<FetchedSource> | undefined;
}

/** Reads a version's bytes and turns them into passages. Never throws for a bad file: it reports. */
export async function indexVersion({ store, cfg, blobs, embedding, fetchedAhead }: IndexingWorker, file: FileRow, versionId: string, col: CollectionRow): Promise<Indexed> {
  const processing = processingOf(col);
  try {
    const { bytes, inlineText } = await versionBytes(store, cfg, blobs, file, versionId, fetchedAhead?.(versionId));
    const source = inlineText === null ? {} : { source: { versionId, text: inlineText } };
    if (bytes.length > cfg.maxFileBytes) throw new IngestFailure('too_large', `The file is ${bytes.length} bytes; the limit is ${cfg.maxFileBytes}.`);
    if (file.checksum && !checksumMatches(bytes, file.checksum)) {
      throw new IngestFailure('source_mismatch', `The bytes do not match the declared checksum ${file.checksum}.`);
    }
    if (file.source_type !== 'inline' && file.bytes !== null && bytes.length !== file.bytes) {
      throw new IngestFailure('source_mismatch', `The source is ${bytes.length} bytes; ${file.bytes} were declared.`);
    }
    const detected = await detectContentType({ bytes, declared: file.declared_content_type ?? undefined, path: file.path });
    if (!isSupportedContentType(detected.contentType)) {
      throw new IngestFailure('unsupported_content', `Content type ${detected.contentType} cannot be indexed${detected.note ? ` (${detected.note})` : ''}.`);
    }
    const deadline = Date.now() + cfg.extractTimeoutMs;
    const doc = await withDeadline(extractDocument(bytes, detected.contentType, { ocr: processing.ocr ?? true, maxPages: cfg.maxPages, deadline }), cfg.extractTimeoutMs);
    const passages = chunkDocument(doc, {
      chunkTokens: processing.chunk_tokens ?? DEFAULT_CHUNK_TOKENS,
      chunkOverlap: processing.chunk_overlap ?? Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor((processing.chunk_tokens ?? DEFAULT_CHUNK_TOKENS) / 4)),
    });
    const rows: NewPassage[] = passages.map((p) => ({
        ordinal: p.ordinal,
        evidence_kind: p.evidenceKind,
        heading: p.heading,
        text: p.text,
        char_start: p.charStart,
        char_end: p.charEnd,
        // The evidence location, plus (JSON) where each value lies in the text, for search's evidence;
        // none when it is only the passage's own offsets, which search reads from the columns (33
        // bytes a passage at 1M, issue 15).
        location: isOwnSpan(p.location, p.charStart, p.charEnd)
          ? null
          : JSON.stringify(p.jsonSpans && 'json_path' in p.location ? { ...p.location, json_spans: relativeSpans(p.jsonSpans, p.location.json_path) } : p.location),
      }));
    // A declared type the bytes contradict was read as what the bytes are; the file says so.
    const notes = [...(detected.note ? [detected.note] : []), ...(doc.notes ?? [])];
    const cjk = rows.some((p) => hasCjk(p.text) || hasCjk(p.heading));
    const keywordText = await store.keywordIndex.prepare(col.rid, cjk ? rows.map((p) => ({ heading: keywordIndexText(p.heading), text: keywordIndexText(p.text) })) : rows);
    const indexed = { ok: true as const, contentType: detected.contentType, notes, passages: rows, ...source, keywordText };
    if (!processing.semantic || !embedding) return indexed;
    checkModel(col, embedding);
    return { ...indexed, vectors: await embedPassages(store, col, file.rid, file.indexed_version_id !== null, rows, embedding) };
  } catch (err) {
    if (err instanceof IngestFailure) return { ok: false, code: err.code, message: err.message };
    return { ok: false, code: 'extraction_failed', message: `Could not read the file: ${(err as Error)?.message ?? String(err)}` };
  }
}

/** True when a location says no more than a passage's char_start/char_end columns do. */
function isOwnSpan(location: object, start: number, end: number): boolean {
  const keys = Object.keys(location);
  const span = location as { char_start?: unknown; char_end?: unknown };
  return keys.length === 2 && span.char_start === start && span.char_end === end;
}

/** Extraction past its time limit fails the file; the work still running is abandoned, not awaited. */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IngestFailure('extraction_failed', `Reading the file took longer than the ${Math.round(ms / 1000)} s limit.`)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

async function versionBytes(store: StoreReads, cfg: PipelineConfig, blobs: BlobStore, file: FileRow, versionId: string, ahead?: Promise<FetchedSource>): Promise<{ bytes: Buffer; inlineText: string | null }> {
  const version = await store.files.version(versionId);
  if (!version) throw new IngestFailure('fetch_failed', 'The file version no longer exists.');
  if (version.inline_text !== null) return { bytes: Buffer.from(version.inline_text, 'utf8'), inlineText: version.inline_text };
  return { bytes: await storedOrFetchedBytes(cfg, blobs, file, version, ahead), inlineText: null };
}

async function storedOrFetchedBytes(cfg: PipelineConfig, blobs: BlobStore, file: FileRow, version: FileVersionRow, ahead?: Promise<FetchedSource>): Promise<Buffer> {
  if (ahead) return (await ahead).bytes;
  if (version.blob_sha256) return readStoredBlob(blobs, version.blob_sha256, cfg.maxFileBytes);
  // An upload that never will arrive (e.g. a reindex of its failed file) keeps the reason it failed.
  if (version.upload_state === 'rejected') throw new IngestFailure('source_mismatch', 'The uploaded bytes did not match the size or checksum the file declared.');
  if (version.upload_state === 'expired') throw new IngestFailure('upload_expired', UPLOAD_EXPIRED_MESSAGE);
  if (file.uri) {
    const fetched = await fetchSourceUri(file.uri, { allowPrivate: cfg.allowPrivateSources, fileRoots: cfg.fileRoots, maxBytes: cfg.maxFileBytes, timeoutMs: cfg.fetchTimeoutMs });
    return fetched.bytes;
  }
  throw new IngestFailure('fetch_failed', 'The upload has not arrived.');
}

/** An upload's bytes; one over the per-file limit fails `too_large` without being read. */
async function readStoredBlob(blobs: BlobStore, sha256: string, maxFileBytes: number): Promise<Buffer> {
  try {
    return await blobs.read(sha256, { maxBytes: maxFileBytes });
  } catch (err) {
    if (err instanceof TroveError && err.code === 'request_too_large') throw new IngestFailure('too_large', `The file is ${err.details.bytes} bytes; the limit is ${maxFileBytes}.`);
    throw err;
  }
}

function processingOf(col: CollectionRow): Processing {
  return col.processing;
}

type IndexedFile = { col: CollectionRow; fileRid: number; result: Extract<Indexed, { ok: true }>; topic?: Buffer | undefined };

/**
 * Writes indexed versions: passages, vectors and keyword rows, recording the model on first use.
 * Runs after the transaction's status and event writes, and writes the keyword rows last
 * (PassageWrites.indexKeywordText says why).
 */
async function commitIndexed(tx: StoreTx, files: IndexedFile[], embedding: Embedding | null): Promise<void> {
  const byCollection = new Map<number, IndexedFile[]>();
  for (const f of files) {
    const group = byCollection.get(f.col.rid);
    if (group) group.push(f);
    else byCollection.set(f.col.rid, [f]);
  }
  const keywordText: { collectionRid: number; files: KeywordTextOfPassages[] }[] = [];
  for (const [collectionRid, group] of byCollection) {
    const rids = await tx.passages.replace(collectionRid, group.map((f) => ({ fileRid: f.fileRid, passages: f.result.passages, source: f.result.source })));
    const vectors: NewVector[] = [];
    group.forEach((f, k) => {
      const fileRids = rids[k]!;
      f.result.vectors?.forEach((v, i) => vectors.push({ passageRid: fileRids[i]!, textHash: v.textHash, embedding: v.embedding }));
    });
    await tx.collectionModels.putFileTopics(group.flatMap((f) => (f.topic ? [{ fileRid: f.fileRid, vector: f.topic }] : [])));
    // One call per collection: the table check and the vector-version bump once, not per file.
    if (embedding && group.some((f) => f.result.vectors)) {
      await tx.vectors.insert(collectionRid, vectors);
      if (group[0]!.col.embedding_model !== embedding.modelId) await tx.collections.setEmbeddingModel(collectionRid, embedding.modelId);
    }
    keywordText.push({ collectionRid, files: group.map((f, k) => ({ passageRids: rids[k]!, text: f.result.keywordText })) });
  }
  for (const t of keywordText) await tx.passages.indexKeywordText(t.collectionRid, t.files);
}

/**
 * A file that failed contributes nothing: the previous version's passages must not outlive it, and
 * without them it has no indexed version either (a canceled later job would otherwise put it back
 * to `ready` with nothing to find, and a training would look for words it no longer has).
 */
async function failFile(tx: StoreTx, collectionRid: number, fileRid: number, now: string, error: { code: FileErrorCode; message: string }): Promise<void> {
  await tx.passages.deleteOfFile(collectionRid, fileRid);
  await tx.files.clearIndexedVersion(fileRid);
  await tx.files.setStatus(fileRid, 'failed', now, error);
}

/**
 * Marks files `indexing` as their jobs are claimed, so the collection reports the work honestly.
 * Runs inside the claiming transaction.
 */
export async function markIndexing(tx: StoreTx, jobs: JobRow[]): Promise<void> {
  const now = nowIso();
  for (const job of jobs) {
    if (job.type !== 'index_file' || job.file_rid === null) continue;
    const file = await tx.files.versionState(job.file_rid);
    if (file && !file.deleted_at && file.version_id === job.version_id) await tx.files.setStatus(file.rid, 'indexing', now);
  }
}

/**
 * Passages one indexing transaction writes at most (a single bigger file still commits whole): the
 * write token goes back between transactions, so a write of the HTTP thread waits for one short
 * transaction, not for a whole batch.
 */
const PASSAGES_PER_COMMIT = 2_000;

/** Splits results into runs of whole files of at most PASSAGES_PER_COMMIT passages (a bigger file alone). */
function commitGroups<T>(items: T[], passagesOf: (item: T) => number, limit = PASSAGES_PER_COMMIT): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const n = passagesOf(item);
    if (current.length > 0 && size + n > limit) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += n;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

const passageCount = (result: Indexed | null) => (result?.ok ? result.passages.length : 0);

/**
 * Each indexed file's vector in its collection's model, for collections searched semantically.
 * A collection due for training is trained first (collection-topics.ts: dueForTraining), but only
 * with the batch that empties its queue: during a bulk ingest the model is learned once,
 * from everything, just before the last files become ready, instead of at every threshold on
 * the way (SciFact's ingest spent 1.6 s on three trainings that the next one replaced).
 */
async function batchTopics(
  worker: IndexingWorker,
  files: { collectionRid: number; fileRid: number; result: Extract<Indexed, { ok: true }>; queuedAt?: string }[],
  mayTrain = true,
): Promise<{ topics: Map<number, Buffer>; words: Map<number, readonly string[]> }> {
  const { embedding, store } = worker;
  const byCollection = new Map<number, { fileRid: number; text: string }[]>();
  // The newest of each collection's jobs at hand: when the queue is empty, no work came after it.
  const newestQueued = new Map<number, number>();
  for (const f of files) {
    const at = f.queuedAt === undefined ? NaN : Date.parse(f.queuedAt);
    if (at > (newestQueued.get(f.collectionRid) ?? -Infinity)) newestQueued.set(f.collectionRid, at);
    const list = byCollection.get(f.collectionRid) ?? [];
    list.push({ fileRid: f.fileRid, text: modelText(f.result.passages) });
    byCollection.set(f.collectionRid, list);
  }
  const topics = new Map<number, Buffer>();
  const words = new Map<number, readonly string[]>();
  for (const [collectionRid, texts] of byCollection) {
    const col = await store.collections.byRid(collectionRid);
    if (!col || col.deleted_at || !processingOf(col).semantic) continue;
    // Split once: for the vectors here, and kept for the collection's next training once committed.
    const batch = texts.map((f) => ({ ...f, terms: modelTerms(f.text) }));
    for (const f of batch) words.set(f.fileRid, f.terms);
    const settling = mayTrain && !(await store.jobs.hasQueuedIndexJobs(collectionRid));
    const newest = newestQueued.get(collectionRid);
    const settled = () => staysSettled(() => store.jobs.hasQueuedIndexJobs(collectionRid), newest === undefined ? {} : { quietForMs: Date.now() - newest });
    let vectors: Map<number, Buffer>;
    try {
      vectors = await topicsForBatch(store, collectionRid, batch, settling ? (await store.collections.fileCounts(collectionRid)).ready : null, calibrating(col, embedding), settled, { storeFile: worker.storeFile, words: worker.words });
    } catch (err) {
      modelFailed(worker, err);
      // Without a new model, the one in force (if any) still gives the batch its vectors.
      vectors = await topicsForBatch(store, collectionRid, batch, null, null).catch(() => new Map<number, Buffer>());
    }
    for (const [rid, topic] of vectors) topics.set(rid, topic);
  }
  return { topics, words };
}

/**
 * After a commit, the words of the files whose passages it wrote, for the collection's next
 * training (training-words.ts); a file committed without words (failed, or in a collection
 * without a model) is forgotten, so what is kept is always what the store holds.
 */
function keepWords(held: TrainingWords, committed: readonly { fileRid: number; versionId: string }[], words: ReadonlyMap<number, readonly string[]>): void {
  for (const { fileRid, versionId } of committed) {
    const terms = words.get(fileRid);
    if (terms) held.put(fileRid, versionId, terms);
    else held.forget(fileRid);
  }
}

/**
 * The embedding to calibrate a collection's weight with, or null: an enforced collection's readers
 * always rank with the default weight (it is learnt from every file), so it would be work for nothing.
 */
function calibrating(col: CollectionRow, embedding: Embedding | null): Embedding | null {
  return col.access_control === 'enforced' ? null : embedding;
}

/**
 * A collection's model that could not be trained (a training that threw, or whose write failed):
 * said in the daemon's log, and otherwise lived with. The files still become ready, searchable by
 * keywords and passage vectors, with the model in force if there is one; the next training gives
 * them vectors in a new one. Before, such a fault killed the worker with its batch claimed.
 */
function modelFailed(worker: IndexingWorker, err: unknown): void {
  worker.warn('the collection model could not be trained; the files are indexed without a new one', { cause: String((err as Error)?.stack ?? err) });
}

/** Runs a batch of index_file jobs and commits their results in a few short transactions. */
export async function runIndexJobs(worker: IndexingWorker, jobs: JobRow[]): Promise<void> {
  const { store, isCanceled, embedding } = worker;
  const results: { job: JobRow; file: FileRow | undefined; result: Indexed | null }[] = [];
  for (const job of jobs) {
    const file = job.file_rid === null ? undefined : await store.files.byRid(job.file_rid);
    const col = job.collection_rid === null ? undefined : await store.collections.byRid(job.collection_rid);
    const current = file && col && !file.deleted_at && !col.deleted_at && file.version_id === job.version_id;
    const result = current && !isCanceled(job.id) ? await indexVersion(worker, file, job.version_id!, col) : null;
    results.push({ job, file, result });
  }
  const { topics, words } = await batchTopics(
    worker,
    results.flatMap((r) => (r.result?.ok && r.file ? [{ collectionRid: r.file.collection_rid, fileRid: r.file.rid, result: r.result, queuedAt: r.job.created_at }] : [])),
  );
  for (const group of commitGroups(results, (r) => passageCount(r.result))) {
    const now = nowIso();
    const committed: { fileRid: number; versionId: string }[] = [];
    await store.write(async (tx) => {
      const bumped = new Set<number>();
      const indexed: IndexedFile[] = [];
      // A commit is mostly one collection's files, and nothing changes its row meanwhile: read once.
      const collections = new Map<number, CollectionRow>();
      const collectionOf = async (rid: number) => {
        let col = collections.get(rid);
        if (!col) collections.set(rid, (col = (await tx.collections.byRid(rid))!));
        return col;
      };
      for (const { job, file, result } of group) {
        if ((await tx.jobs.status(job.rid)) !== 'running') continue; // canceled meanwhile: its result is dropped
        const fresh = file ? await tx.files.versionState(file.rid) : undefined;
        if (!result || !fresh || fresh.deleted_at || fresh.version_id !== job.version_id) {
          await tx.jobs.finish(job.rid, 'canceled', now, { code: 'superseded', message: 'The file was changed or deleted before indexing finished.' });
          continue;
        }
        const col = await collectionOf(fresh.collection_rid);
        committed.push({ fileRid: fresh.rid, versionId: job.version_id! });
        if (result.ok) {
          indexed.push({ col, fileRid: fresh.rid, result, topic: topics.get(fresh.rid) });
          await tx.files.markIndexed(fresh.rid, { versionId: job.version_id!, contentType: result.contentType, notes: result.notes }, now);
          bumped.add(fresh.collection_rid);
          await tx.jobs.finish(job.rid, 'succeeded', now);
        } else {
          await failFile(tx, fresh.collection_rid, fresh.rid, now, { code: result.code, message: result.message });
          await tx.jobs.finish(job.rid, 'failed', now, { code: result.code, message: result.message });
        }
      }
      // One new index generation per collection per transaction, not per file.
      for (const rid of bumped) await tx.collections.bumpGeneration(rid);
      await commitIndexed(tx, indexed, embedding);
    });
    keepWords(worker.words, committed, words);
  }
}

export async function runDeleteFileJob({ store, words }: IndexingWorker, job: JobRow): Promise<void> {
  await store.write(async (tx) => {
    if ((await tx.jobs.status(job.rid)) !== 'running') return;
    if (job.file_rid !== null && job.collection_rid !== null) {
      await tx.passages.deleteOfFile(job.collection_rid, job.file_rid);
      await tx.collections.bumpGeneration(job.collection_rid);
    }
    await tx.jobs.finish(job.rid, 'succeeded', nowIso());
  });
  if (job.file_rid !== null) words.forget(job.file_rid);
}

/** Re-extracts every indexed or failed file of the collection; files stay searchable meanwhile. */
export async function runReindexJob(worker: IndexingWorker, job: JobRow): Promise<'done' | 'interrupted'> {
  const { store, isCanceled, isStopping, embedding } = worker;
  let after = 0;
  const start = job.collection_rid === null ? undefined : await store.collections.byRid(job.collection_rid);
  // A reindex is how a collection moves to the daemon's current model: vectors of another model are
  // dropped (never reused), and new files are accepted under the new model from now on.
  if (start && embedding && processingOf(start).semantic && start.embedding_model !== embedding.modelId) {
    await store.write(async (tx) => {
      await tx.vectors.dropAll(start.rid);
      await tx.collections.setEmbeddingModel(start.rid, embedding.modelId);
    });
  }
  for (;;) {
    if (isCanceled(job.id) || (await store.jobs.status(job.rid)) !== 'running') return 'done';
    if (isStopping()) return 'interrupted';
    const col = job.collection_rid === null ? undefined : await store.collections.byRid(job.collection_rid);
    if (!col || col.deleted_at) break;
    const batch = await store.files.settled(col.rid, after, 50);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.rid;
    const results: { rid: number; versionId: string; result: Indexed }[] = [];
    for (const { rid, version_id } of batch) {
      const file = (await store.files.byRid(rid))!;
      results.push({ rid, versionId: version_id, result: await indexVersion(worker, file, version_id, col) });
    }
    // Vectors under the model in force; the model itself is trained afresh once the reindex ends.
    const { topics, words } = await batchTopics(worker, results.flatMap((r) => (r.result.ok ? [{ collectionRid: col.rid, fileRid: r.rid, result: r.result }] : [])), false);
    const now = nowIso();
    const committed: { fileRid: number; versionId: string }[] = [];
    await store.write(async (tx) => {
      const indexed: IndexedFile[] = [];
      for (const { rid, versionId, result } of results) {
        const fresh = await tx.files.versionState(rid);
        if (!fresh || fresh.deleted_at || fresh.version_id !== versionId || (fresh.status !== 'ready' && fresh.status !== 'failed')) continue;
        committed.push({ fileRid: rid, versionId });
        if (result.ok) {
          indexed.push({ col, fileRid: rid, result, topic: topics.get(rid) });
          await tx.files.markIndexed(rid, { versionId, contentType: result.contentType, notes: result.notes }, now);
        } else {
          await failFile(tx, col.rid, rid, now, { code: result.code, message: result.message });
        }
      }
      await tx.collections.bumpGeneration(col.rid);
      await commitIndexed(tx, indexed, embedding);
    });
    keepWords(worker.words, committed, words);
  }
  // A reindex re-reads every file: the moment to learn the collection's model afresh.
  const end = job.collection_rid === null ? undefined : await store.collections.byRid(job.collection_rid);
  if (end && !end.deleted_at && processingOf(end).semantic) await trainAndRefold(worker.store, end.rid, calibrating(end, embedding), [], { storeFile: worker.storeFile, words: worker.words }).catch((err: unknown) => modelFailed(worker, err));
  await store.write((tx) => tx.jobs.finish(job.rid, 'succeeded', nowIso()));
  return 'done';
}

/** Deleted collections and namespaces keep their data for the recovery window; their pending work stops. */
export async function runDeleteContainerJob(store: Store, job: JobRow): Promise<void> {
  await store.write(async (tx) => {
    if ((await tx.jobs.status(job.rid)) !== 'running') return;
    const now = nowIso();
    if (job.type === 'delete_collection' && job.collection_rid !== null) await tx.jobs.cancelCollectionJobs(job.collection_rid, now, job.rid);
    if (job.type === 'delete_namespace' && job.namespace_rid !== null) {
      for (const rid of await tx.collections.allRids(job.namespace_rid)) await tx.jobs.cancelCollectionJobs(rid, now, job.rid);
    }
    await tx.jobs.finish(job.rid, 'succeeded', now);
  });
}

/**
 * Deaths of the indexing worker while holding one job after which the job fails instead of being
 * tried again. The first may be a batch-mate's fault; after it the job runs alone (claimJobs), so
 * the next two are its own.
 */
export const MAX_WORKER_DEATHS = 3;

/**
 * After the indexing worker died while the daemon lives on: the jobs it held go back to the queue
 * and their files back to pending, as at a restart, so none stays `running` or `indexing` for ever.
 * With `countDeath` (the worker died of something in the work, not of the machine: see
 * worker-thread.ts) each of those jobs counts one more death, and one at MAX_WORKER_DEATHS fails,
 * an index job's file with it (`extraction_failed`), so one file that kills the worker cannot keep
 * it dying. Runs inside the new worker's first transaction.
 */
export async function recoverFromWorkerDeath(tx: StoreTx, now: string, countDeath: boolean): Promise<{ requeued: number; failed: number }> {
  let failed = 0;
  for (const job of countDeath ? await tx.jobs.countWorkerDeath() : []) {
    if (job.worker_deaths < MAX_WORKER_DEATHS) continue;
    const file = job.type === 'index_file' && job.file_rid !== null ? await tx.files.versionState(job.file_rid) : undefined;
    const error = {
      code: 'extraction_failed' as const,
      message: file
        ? `Indexing this file stopped the indexing worker ${job.worker_deaths} times, so it was not tried again; add the file again to retry.`
        : `This job stopped the indexing worker ${job.worker_deaths} times, so it was not tried again.`,
    };
    await tx.jobs.finish(job.rid, 'failed', now, error);
    failed++;
    if (file && !file.deleted_at && file.version_id === job.version_id) {
      await failFile(tx, file.collection_rid, file.rid, now, error);
    }
  }
  return { requeued: (await tx.jobs.requeueInterruptedWork(now)).jobs, failed };
}

const UPLOAD_EXPIRED_MESSAGE = 'The upload URL expired before the bytes arrived; add the file again to get a new one.';

/**
 * A file whose upload URL expired before its bytes arrived would stay pending forever and keep its
 * collection `indexing`; it fails instead, and a new upload (adding the path again) starts over.
 */
export async function expireUploads(store: Store, uploadTtlMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - uploadTtlMs).toISOString();
  const expired = await store.files.expiredWaitingUploads(cutoff);
  if (expired.length === 0) return 0;
  const now = nowIso();
  const error = { code: 'upload_expired' as const, message: UPLOAD_EXPIRED_MESSAGE };
  await store.write(async (tx) => {
    for (const { version_id, file_rid } of expired) await failWaitingUpload(tx, version_id, file_rid, 'expired', error, now);
  });
  return expired.length;
}

/**
 * Ends a version that was waiting for its upload and will never get it (its URL expired, or its
 * bytes were rejected): its job fails and, if it is still the file's version, the file fails with
 * the same error (reported as file.failed and object.indexing_failed). Runs
 * inside the caller's transaction; false when the version was no longer waiting.
 */
export async function failWaitingUpload(
  tx: StoreTx,
  versionId: string,
  fileRid: number,
  state: 'expired' | 'rejected',
  error: { code: FileErrorCode; message: string },
  now: string,
): Promise<boolean> {
  if (!(await tx.files.closeWaitingUpload(versionId, state))) return false;
  await tx.jobs.failVersionJobs(versionId, now, error);
  const file = await tx.files.versionState(fileRid);
  if (file && !file.deleted_at && file.version_id === versionId) {
    await failFile(tx, file.collection_rid, file.rid, now, error);
  }
  return true;
}
