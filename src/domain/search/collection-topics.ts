// The collection model at work (issue 16, item 1): when it is trained, how each file's vector in
// it is kept, and how a search reads both. The model itself is collection-model.ts.
//
// Training runs in the indexing worker, before it commits the batch that leaves the collection
// with no queued work (and no more arrives for a moment), when the collection is due: once a
// collection reports no pending work its ranking is settled, and up to SETTLED_TRAINING_FILES
// files the model depends on the files, not on how their uploads interleaved or when the worker
// caught up (a CI suite that waits for `ready` sees the same order every run). During a bulk
// ingest that is one training at the end, not one per threshold on the way. Beyond that size,
// thresholds grow geometrically, so the training a collection ever gets costs at most twice its
// last one; each training reads at most MAX_TRAINING_FILES files.
import { nowIso } from '../../contract/ids.js';
import type { Store, StoreReads } from '../../store/interface.js';
import type { Embedding } from '../embed/provider.js';
import { fnv1a } from '../fnv.js';
import { ModelHelper } from './model-helper.js';
import { calibrateSemanticWeight } from './calibration.js';
import { TrainingWords } from './training-words.js';
import { deserializeCollectionModel, embedTermIds, embedTerms, embedWithModel, encodeTopic, MIN_TEXTS, modelTerms, modelText, serializeCollectionModel, termIndex, trainWithTextVectors, type CollectionModel } from './collection-model.js';

/**
 * 64 dimensions, 2 iterations: as good as 128 and 3 on the dev sets at a third of the training
 * time (bench/lsa-research.mjs, SciFact 1.9 s against 5.5 s; docs/ranking.md).
 */
export const TOPIC_DIMENSIONS = 64;
const TOPIC_ITERATIONS = 2;
/** The first training; below it there is too little co-occurrence to learn from. */
export const FIRST_TRAINING_FILES = Math.max(64, MIN_TEXTS);
/** Each later training waits until the collection has this many times the files of the last. */
export const TRAINING_GROWTH = 2;
/**
 * Files one training reads at most, chosen by a hash of their paths. Through the API (beir.mjs,
 * weight 0.6) a model of 2,048 of SciFact's 5,183 texts ranked better than one of 4,096 (0.6964
 * against 0.6913 nDCG@10) and trains in 0.7 s instead of 1.3 s.
 */
export const MAX_TRAINING_FILES = 2048;

/**
 * Files of a training (the sample read from the store and the files outside it) from which a second
 * thread splits words for it: starting the thread costs about what splitting 500 texts does.
 */
export const HELPER_MIN_FILES = 1000;
/** The part of the stored sample the helper splits (it starts later, and has the files outside the sample after). */
const HELPER_SAMPLE_SHARE = 0.45;

/**
 * Up to this many files, a collection is trained again each time its queue empties after files
 * were indexed, so its model is learnt from the files it holds whatever the timing of their
 * uploads: with doublings alone, a worker that caught up with the uploads at 800 of CISI's 1,460
 * files trained there and never again (nDCG@10 0.3738 instead of 0.3945 in one run of five).
 * Each such training costs at most one of MAX_TRAINING_FILES files plus a vector per file (about
 * 1.3 s at 4,096 SciFact files); beyond, trainings wait for the collection to double, and a model
 * can depend on when the worker caught up.
 */
export const SETTLED_TRAINING_FILES = 2 * MAX_TRAINING_FILES;

/**
 * True when a collection whose queue is about to empty, with `readyFiles` ready files once the
 * batch at hand is committed, should be trained first: it has no model yet and enough files, it
 * has doubled since its model, or it is small enough to be trained on every change.
 */
export function dueForTraining(trainedOnFiles: number | null, readyFiles: number): boolean {
  if (trainedOnFiles === null) return readyFiles >= FIRST_TRAINING_FILES;
  return readyFiles >= trainedOnFiles * TRAINING_GROWTH || readyFiles <= SETTLED_TRAINING_FILES;
}

/**
 * How long the collection's uploads must have been quiet before a due training runs: a script that
 * uploads one file at a time keeps the queue empty between its requests, and would otherwise have
 * the collection trained after every file. Only a due training waits; nothing else is delayed.
 */
export const TRAINING_LINGER_MS = 150;

/**
 * True when no new work came within `lingerMs` of the newest work at hand (checked every few
 * milliseconds): the queue is settled and a due training may run. `quietForMs`: how long ago that
 * newest work was queued; a worker that spent longer than the linger catching up with a bulk
 * upload has seen the quiet already and does not wait again. `sleep` is injectable so tests need no
 * clock.
 */
export async function staysSettled(
  hasQueuedWork: () => boolean | Promise<boolean>,
  { lingerMs = TRAINING_LINGER_MS, quietForMs = 0, sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) }: { lingerMs?: number; quietForMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<boolean> {
  const step = 10;
  for (let waited = Math.max(0, quietForMs); waited < lingerMs; waited += step) {
    if (await hasQueuedWork()) return false;
    await sleep(Math.min(step, lingerMs - waited));
  }
  return !(await hasQueuedWork());
}

/** Cosine of a unit query vector and a stored file vector. */
export function topicCosine(query: Float32Array, stored: Buffer): number {
  const v = new Int8Array(stored.buffer, stored.byteOffset, stored.byteLength);
  let s = 0;
  const n = Math.min(query.length, v.length);
  for (let i = 0; i < n; i++) s += query[i]! * v[i]!;
  return s / 127;
}

/** A collection's model as searches use it, with the embedding weight calibrated at its training. */
export interface CollectionModelEntry {
  version: number;
  model: CollectionModel;
  /** The calibrated weight of the embedding's vote and the embedding model it holds for; null: the default. */
  semanticWeight: { weight: number; embeddingModel: string } | null;
}

/**
 * Deserialised models by store and collection, each with the version it was read at (a few MB
 * each). Per store: versions are unique within a store only, and a test process opens many.
 */
const caches = new WeakMap<StoreReads, Map<number, CollectionModelEntry>>();
const CACHED_MODELS = 16;

/** The collection's current model, or null when it has none yet; one indexed lookup when cached. */
export async function collectionModelOf(store: StoreReads, collectionRid: number): Promise<CollectionModelEntry | null> {
  const version = (await store.collectionModels.header(collectionRid))?.version;
  if (version === undefined) return null;
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  const cached = cache.get(collectionRid);
  if (cached && cached.version === version) return cached;
  const stored = await store.collectionModels.get(collectionRid);
  if (!stored) return null;
  const entry: CollectionModelEntry = {
    version: stored.version,
    model: deserializeCollectionModel(stored.model),
    semanticWeight: stored.semantic_weight === null || stored.semantic_model === null ? null : { weight: stored.semantic_weight, embeddingModel: stored.semantic_model },
  };
  cache.delete(collectionRid);
  cache.set(collectionRid, entry);
  while (cache.size > CACHED_MODELS) cache.delete(cache.keys().next().value!);
  return entry;
}

/** Files' texts as the model reads them, from the store. */
async function storedTexts(store: StoreReads, fileRids: readonly number[]): Promise<Map<number, string>> {
  return new Map([...(await store.passages.ofFiles(fileRids))].map(([rid, passages]) => [rid, modelText(passages)]));
}

/** A file of a batch about to be committed: its text as the model reads it, and its words if split already. */
export interface BatchFile {
  fileRid: number;
  text: string;
  terms?: readonly string[];
}

/**
 * For a batch of files about to be committed to one collection: each file's vector under the
 * model in force. With `readyFiles` (the collection's ready files before the batch), a collection
 * due for training (dueForTraining) is trained first, if `settled` still holds (no new work came
 * meanwhile), re-embedding the files already there in the same transaction as the model; null:
 * never train (a reindex trains once it ends).
 */
export async function topicsForBatch(
  store: Store,
  collectionRid: number,
  batch: readonly BatchFile[],
  readyFiles: number | null,
  embedding: Embedding | null,
  settled: () => Promise<boolean> = async () => true,
  training: TrainingOptions = {},
): Promise<Map<number, Buffer>> {
  const header = await store.collectionModels.header(collectionRid);
  if (readyFiles !== null && dueForTraining(header?.files ?? null, readyFiles + batch.length) && (await settled())) {
    const trained = await trainAndRefold(store, collectionRid, embedding, batch, training);
    if (trained) return trained.extraTopics;
  }
  const current = (await collectionModelOf(store, collectionRid))?.model ?? null;
  const out = new Map<number, Buffer>();
  if (!current) return out;
  const index = termIndex(current);
  for (const f of batch) {
    const v = embedTerms(current, f.terms ?? modelTerms(f.text), index);
    if (v) out.set(f.fileRid, encodeTopic(v));
  }
  return out;
}

/**
 * Trains the collection's model from its ready files (and `extra`, files not yet committed), then
 * writes it with every ready file's vector in one transaction, so a search never mixes vectors of
 * two models; returns the model and the vectors of `extra`. Null when there is too little text
 * to learn from. Each file's words are those the worker kept when it indexed it (training-words.ts),
 * or else split here, on a helper thread when there are enough (model-helper-thread.ts): the same
 * model and vectors, bit for bit, either way. The sample's vectors come out of the training; every
 * other file is folded in from its words. With the collection's embedding, the
 * embedding's weight is calibrated on the same sample (calibration.ts).
 */
export async function trainAndRefold(
  store: Store,
  collectionRid: number,
  embedding: Embedding | null,
  extra: readonly BatchFile[] = [],
  options: TrainingOptions = {},
): Promise<{ model: CollectionModel; extraTopics: Map<number, Buffer>; helper: 'none' | 'used' | 'failed' } | null> {
  const extraFiles = new Map(extra.map((f) => [f.fileRid, f]));
  const ready = (await allReadyFiles(store, collectionRid)).filter((f) => !extraFiles.has(f.rid));
  const old = ready.map((f) => f.rid);
  const all = [...old, ...extraFiles.keys()];
  if (all.length < FIRST_TRAINING_FILES) return null;
  // The sample, and the order it is read in, follow a hash of each file's path, not the order of
  // upload: the same files give the same model however their uploads interleaved.
  const keys = new Map((await store.files.cards(all)).map((f) => [f.rid, fnv1a(f.path)]));
  const chosen = all
    .map((rid) => ({ rid, key: keys.get(rid) ?? 0 }))
    .sort((a, b) => a.key - b.key || a.rid - b.rid)
    .slice(0, options.maxFiles ?? MAX_TRAINING_FILES)
    .map((f) => f.rid);
  const stored = chosen.filter((rid) => !extraFiles.has(rid));
  const inSample = new Set(chosen);
  const outside = old.filter((rid) => !inSample.has(rid));
  // Words kept since the files were indexed (training-words.ts); the rest are split here.
  const words = options.words ?? new TrainingWords();
  const versionOf = new Map(ready.map((f) => [f.rid, f.version_id]));
  const heldIds = new Map<number, Int32Array>();
  for (const rid of old) {
    const ids = words.ids(rid, versionOf.get(rid));
    if (ids) heldIds.set(rid, ids);
  }
  const storedToSplit = stored.filter((rid) => !heldIds.has(rid));
  const outsideToSplit = outside.filter((rid) => !heldIds.has(rid));
  // A second thread splits part of the sample, and reads and splits the files outside it while this
  // one trains (model-helper-thread.ts); below HELPER_MIN_FILES it would cost more than it saves.
  const toSplit = storedToSplit.length + outsideToSplit.length;
  const file = options.helperFile !== undefined ? options.helperFile : toSplit >= HELPER_MIN_FILES ? (options.storeFile ?? null) : null;
  const helper = file && toSplit > 0 ? startHelper(file) : null;
  try {
    const handed = helper ? storedToSplit.slice(storedToSplit.length - Math.floor(storedToSplit.length * HELPER_SAMPLE_SHARE)) : [];
    const handedTerms = helper && handed.length > 0 ? helper.terms(handed).catch(() => null) : null;
    if (helper && outsideToSplit.length > 0) helper.prepare(outsideToSplit);
    const oldTexts = await storedTexts(store, storedToSplit);
    const textOf = (rid: number) => extraFiles.get(rid)?.text ?? oldTexts.get(rid) ?? '';
    // The sample's texts in order, for the calibration, which reads them only until it has enough
    // pseudo-queries (200 files): the rest of a sample whose words were kept is never read.
    const sampleTexts = async function* (): AsyncGenerator<string> {
      for (let from = 0; from < chosen.length; from += TEXT_PAGE) {
        const page = chosen.slice(from, from + TEXT_PAGE);
        const more = await storedTexts(store, page.filter((rid) => !extraFiles.has(rid) && !oldTexts.has(rid)));
        for (const rid of page) yield extraFiles.get(rid)?.text ?? oldTexts.get(rid) ?? more.get(rid) ?? '';
      }
    };
    const termsOf = new Map<number, readonly string[]>();
    const handedSet = new Set(handed);
    for (const rid of chosen) {
      if (handedSet.has(rid)) continue;
      const ids = heldIds.get(rid);
      termsOf.set(rid, extraFiles.get(rid)?.terms ?? (ids ? words.terms(ids) : modelTerms(textOf(rid))));
    }
    // The helper's words, or (it failed) this thread's: the same words either way.
    const helperWords = await handedTerms;
    const fromHelper = helperWords ?? handed.map((rid) => modelTerms(textOf(rid)));
    handed.forEach((rid, i) => termsOf.set(rid, fromHelper[i] ?? []));
    const trained = trainWithTextVectors(
      chosen.map((rid) => termsOf.get(rid)!),
      { dimensions: TOPIC_DIMENSIONS, iterations: TOPIC_ITERATIONS },
    );
    if (!trained) return null;
    const { model } = trained;
    const folding = helper && outsideToSplit.length > 0 ? helper.fold(model).catch(() => null) : null;
    // The sample's vectors come with the training; the other files are folded in from their words.
    const sampled = new Map<number, Float32Array | null>(chosen.map((rid, i) => [rid, trained.textVectors[i] ?? null]));
    const index = termIndex(model);
    const topics: { fileRid: number; vector: Buffer }[] = [];
    for (const rid of stored) {
      const v = sampled.get(rid);
      if (v) topics.push({ fileRid: rid, vector: encodeTopic(v) });
    }
    const extraTopics = new Map<number, Buffer>();
    for (const f of extra) {
      // A sampled file with no kept term has null, and stays without a vector.
      const v = sampled.has(f.fileRid) ? sampled.get(f.fileRid) : embedTerms(model, f.terms ?? modelTerms(f.text), index);
      if (v) extraTopics.set(f.fileRid, encodeTopic(v));
    }
    const rowOf = words.rowsIn(index);
    for (const rid of outside) {
      const ids = heldIds.get(rid);
      const v = ids ? embedTermIds(model, ids, rowOf) : null;
      if (v) topics.push({ fileRid: rid, vector: encodeTopic(v) });
    }
    // Calibrating here while the helper folds.
    const calibrated = embedding ? await calibrate(store, collectionRid, sampleTexts(), embedding, model) : null;
    const folded = await folding;
    if (folded) {
      outsideToSplit.forEach((rid, i) => {
        const topic = folded[i];
        if (topic) topics.push({ fileRid: rid, vector: topic });
      });
    } else {
      for (let from = 0; from < outsideToSplit.length; from += 1000) {
        const rids = outsideToSplit.slice(from, from + 1000);
        const unread = await storedTexts(store, rids);
        for (const rid of rids) {
          const v = embedTerms(model, modelTerms(unread.get(rid) ?? ''), index);
          if (v) topics.push({ fileRid: rid, vector: encodeTopic(v) });
        }
        // A large collection: the worker's other duties (cancellation, shutdown) get a turn between pages.
        if (from + 1000 < outsideToSplit.length) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const bytes = serializeCollectionModel(model);
    await store.write(async (tx) => {
      await tx.collectionModels.put(collectionRid, { files: all.length, model: bytes, semanticWeight: calibrated, semanticModel: calibrated === null ? null : embedding!.modelId }, nowIso());
      await tx.collectionModels.putFileTopics(topics);
    });
    // A part asked of the helper and not answered (null) was done here.
    const failed = (handedTerms !== null && helperWords === null) || (folding !== null && folded === null);
    return { model, extraTopics, helper: helper === null ? 'none' : failed ? 'failed' : 'used' };
  } finally {
    helper?.close();
  }
}

/** Stored texts read at a time for the calibration. */
const TEXT_PAGE = 256;

/** A helper thread, or null when one cannot be started here: the worker then does its part itself. */
function startHelper(file: string): ModelHelper | null {
  try {
    return new ModelHelper(file);
  } catch {
    return null;
  }
}

export interface TrainingOptions {
  /** Files one training reads at most (MAX_TRAINING_FILES). */
  maxFiles?: number;
  /** Words the indexing worker kept since it indexed the files; without them, every file is split here. */
  words?: TrainingWords;
  /** The database a helper thread reads, or null for none, whatever the number of files. */
  helperFile?: string | null;
  /** The store's database file, which a helper thread opens from HELPER_MIN_FILES files to split (below, it would cost more than it saves); without it, no helper. */
  storeFile?: string | null;
}

/**
 * The calibrated weight, or null for the default. A provider that fails here (a remote server
 * down) keeps the weight last fitted for it: a collection that stopped growing may not be trained
 * again for a long time. It never costs the collection its model or its files.
 */
async function calibrate(store: StoreReads, collectionRid: number, texts: AsyncIterable<string>, embedding: Embedding, model: CollectionModel): Promise<number | null> {
  try {
    return (await calibrateSemanticWeight(texts, await embedding.get(), model)).weight;
  } catch {
    const previous = await store.collectionModels.header(collectionRid);
    return previous?.semantic_model === embedding.modelId ? previous.semantic_weight : null;
  }
}

async function allReadyFiles(store: StoreReads, collectionRid: number): Promise<{ rid: number; version_id: string }[]> {
  const out: { rid: number; version_id: string }[] = [];
  for (let after = 0; ; ) {
    const page = await store.collectionModels.readyFileVersions(collectionRid, after, 10_000);
    if (page.length === 0) return out;
    for (const f of page) out.push(f);
    after = page[page.length - 1]!.rid;
  }
}

/** Per candidate file: cosine of the query and the file in the collection's model; null without a model or a query vector. */
export async function topicScores(store: Store, entry: CollectionModelEntry | null, query: string, fileRids: readonly number[]): Promise<Map<number, number> | null> {
  if (!entry) return null;
  const q = embedWithModel(entry.model, query, termIndex(entry.model));
  if (!q) return null;
  // Files' vectors change only with a write: each is read once until the next one (read-cache.ts),
  // not once per search (0.6 ms of a semantic SciFact search read its ~100 candidates' rows).
  const held = await store.untilChanged('file-topics', async () => ({ size: 0, byModel: new Map<number, Map<number, Buffer | null>>() }));
  let byFile = held.byModel.get(entry.version);
  if (!byFile) held.byModel.set(entry.version, (byFile = new Map()));
  let unread = fileRids.filter((rid) => !byFile!.has(rid));
  if (held.size + unread.length > MAX_HELD_TOPICS) {
    // Over the budget: start again from this search's files, all of them read afresh.
    held.byModel.clear();
    held.byModel.set(entry.version, (byFile = new Map()));
    held.size = 0;
    unread = [...fileRids];
  }
  if (unread.length > 0) {
    const read = await store.collectionModels.fileTopics(unread);
    for (const rid of unread) byFile.set(rid, read.get(rid) ?? null);
    held.size += unread.length;
  }
  const out = new Map<number, number>();
  for (const rid of fileRids) {
    const vector = byFile.get(rid);
    if (vector) out.set(rid, topicCosine(q, vector));
  }
  return out;
}

/** Files' vectors searches keep until the next write, over every model (about 0.5 KB each held: 10 MB). */
export const MAX_HELD_TOPICS = 20_000;

