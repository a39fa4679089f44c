// Fusion that calibrates itself per collection (issue 16, item 2): the weight of the embedding
// provider's vote next to BM25, fitted without labels on pseudo-queries drawn from the
// collection's own text, each time the collection model is trained (collection-topics.ts).
//
// A pseudo-query is one sentence of a file; its answer is the rest of that file, among the rests
// of up to PSEUDO_QUERIES files. Each candidate weight fuses the signals as search.ts does
// (min-max BM25 + w · min-max cosine + COLLECTION_WEIGHT · min-max collection cosine) and is scored
// by the reciprocal rank of the answer. The weight moves from the default only when the best
// weight's gain over the default is large and several standard errors clear of noise: on the
// three dev sets the builtin model's gains were all under 0.011 MRR within 2 standard errors
// (bench/calibration-research.mjs, docs/ranking.md), so the builtin model keeps SEMANTIC_WEIGHT,
// while a provider that finds the answers BM25 misses earns a larger weight.
import type { EmbeddingProvider } from '../embed/provider.js';
import { fnv1a } from '../fnv.js';
import { cosine, embedTerms, modelTerms, termIndex, type CollectionModel } from './collection-model.js';
import { COLLECTION_WEIGHT, minMax, SEMANTIC_WEIGHT } from './fusion-weights.js';

/** Weights tried; the default (0.2) is among them. */
export const WEIGHT_GRID = [0, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3] as const;
/** Pseudo-queries per calibration: one per file, the first files of the training sample that have enough sentences. */
export const PSEUDO_QUERIES = 200;
/** Fewer usable files than this: no calibration (the default weight stays). */
export const MIN_PSEUDO_QUERIES = 50;
/** A weight replaces the default only when its mean reciprocal rank is at least this much higher… */
export const MIN_GAIN = 0.02;
/** …and that gain is at least this many standard errors of the paired differences. */
export const MIN_STANDARD_ERRORS = 3;
/** A sentence counts when it has at least this many words and at most MAX_SENTENCE_CHARS; a file needs MIN_SENTENCES of them. */
const MIN_SENTENCE_WORDS = 6;
const MAX_SENTENCE_CHARS = 500;
const MIN_SENTENCES = 3;
/** The rest of a file, the answer: about a passage's worth (a remote provider limits its input). */
const REST_CHARS = 2000;
const EMBED_BATCH = 100;
/** BM25 for the pseudo-queries, FTS5's defaults. */
const K1 = 1.2;
const B = 0.75;

export interface PseudoQuery {
  query: string;
  rest: string;
}

export interface CalibrationResult {
  /** The weight to use, or null: keep the default. */
  weight: number | null;
  queries: number;
  /** Mean reciprocal rank of the answer per weight of WEIGHT_GRID. */
  mrr: number[];
  /** Best weight's gain over the default and its standard error. */
  gain: number;
  standardError: number;
}

/** The result when there are too few pseudo-queries to tell. */
function uncalibrated(queries: number): CalibrationResult {
  return { weight: null, queries, mrr: [], gain: 0, standardError: 0 };
}

/** The sentences of a text with enough words to stand as a query. */
function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length <= MAX_SENTENCE_CHARS && s.split(/\s+/).length >= MIN_SENTENCE_WORDS);
}

/** One pseudo-query per file with enough sentences, in the order given, up to `max`. */
export async function pseudoQueries(texts: Iterable<string> | AsyncIterable<string>, max = PSEUDO_QUERIES): Promise<PseudoQuery[]> {
  const out: PseudoQuery[] = [];
  for await (const text of texts) {
    if (out.length >= max) break;
    const sentences = sentencesOf(text);
    if (sentences.length < MIN_SENTENCES) continue;
    // Which sentence becomes the query: the same on every run.
    const pick = fnv1a(text) % sentences.length;
    out.push({ query: sentences[pick]!, rest: sentences.filter((_, i) => i !== pick).join(' ').slice(0, REST_CHARS) });
  }
  return out;
}

/** BM25 of every query against every rest, over the rests' own statistics: rows are queries. */
function bm25Matrix(queries: readonly (readonly string[])[], docs: readonly (readonly string[])[]): Float64Array[] {
  const n = docs.length;
  // Each term's rests and counts, in rest order: a query term visits only the rests that hold it
  // (each cell still gets the same additions in the same order, so the same bits).
  const postings = new Map<string, { rests: number[]; counts: number[] }>();
  docs.forEach((d, j) => {
    const tf = new Map<string, number>();
    for (const t of d) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, f] of tf) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = { rests: [], counts: [] }));
      p.rests.push(j);
      p.counts.push(f);
    }
  });
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(1, n) || 1;
  return queries.map((q) => {
    const row = new Float64Array(n);
    for (const t of new Set(q)) {
      const p = postings.get(t);
      if (!p) continue;
      const d = p.rests.length;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      for (let k = 0; k < d; k++) {
        const j = p.rests[k]!;
        const f = p.counts[k]!;
        row[j]! += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * docs[j]!.length) / avg));
      }
    }
    return row;
  });
}

function dotRows(queries: readonly (Float32Array | null)[], docs: readonly (Float32Array | null)[]): Float64Array[] {
  return queries.map((q) => {
    const row = new Float64Array(docs.length);
    if (!q) return row;
    docs.forEach((d, j) => {
      if (d) row[j] = cosine(q, d);
    });
    return row;
  });
}

/** A row scaled as search.ts scales each signal over its candidates. */
function minMaxRow(row: Float64Array): Float64Array {
  return row.map(minMax(Array.from(row)));
}

/**
 * Chooses the embedding's weight from each pseudo-query's signals against every candidate (row i's
 * answer is candidate i), all min-max scaled per row as search.ts scales them. Pure.
 */
export function chooseWeight(
  signals: { bm25: readonly Float64Array[]; cosine: readonly Float64Array[]; collection: readonly Float64Array[] | null },
  defaultWeight: number,
  collectionWeight: number,
): CalibrationResult {
  const n = signals.bm25.length;
  if (n < MIN_PSEUDO_QUERIES) return uncalibrated(n);
  const b = signals.bm25.map(minMaxRow);
  const c = signals.cosine.map(minMaxRow);
  const t = signals.collection?.map(minMaxRow) ?? null;
  const reciprocalRanks = (w: number): number[] =>
    b.map((row, i) => {
      const score = (j: number) => row[j]! + w * c[i]![j]! + (t ? collectionWeight * t[i]![j]! : 0);
      const own = score(i);
      // A tie counts half: search breaks ties by passage rid, which puts the answer anywhere among
      // them, and counting ties as wins would reward a weight that leaves every candidate equal.
      let above = 0;
      for (let j = 0; j < row.length; j++) {
        if (j === i) continue;
        const other = score(j);
        if (other > own) above++;
        else if (other === own) above += 0.5;
      }
      return 1 / (1 + above);
    });
  const base = reciprocalRanks(defaultWeight);
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  let best = { weight: defaultWeight, gain: 0, standardError: 0 };
  const mrr: number[] = [];
  for (const w of WEIGHT_GRID) {
    const rr = w === defaultWeight ? base : reciprocalRanks(w);
    mrr.push(mean(rr));
    const diff = rr.map((x, i) => x - base[i]!);
    const gain = mean(diff);
    const variance = diff.reduce((s, d) => s + (d - gain) ** 2, 0) / (n - 1);
    if (gain > best.gain) best = { weight: w, gain, standardError: Math.sqrt(variance / n) };
  }
  const clear = best.gain >= MIN_GAIN && best.gain >= MIN_STANDARD_ERRORS * best.standardError;
  return { weight: clear ? best.weight : null, queries: n, mrr, gain: best.gain, standardError: best.standardError };
}

/**
 * The provider's vectors of pseudo-queries and their answers, by provider and text, up to a byte
 * budget, least recently used first out. A collection of up to 4,096 files is trained, and so
 * calibrated, each time its queue empties (collection-topics.ts); the pairs are chosen by a hash
 * of each file, so after one file changed all but one pair are the same texts, and a remote
 * provider (a paid API) is asked for two vectors instead of four hundred.
 */
const embedded = new Map<string, Float32Array>();
let embeddedBytes = 0;
const CALIBRATION_CACHE_BYTES = 16 * 1024 * 1024;

async function embedAll(provider: EmbeddingProvider, texts: readonly string[]): Promise<Float32Array[]> {
  const keyOf = (text: string) => `${provider.id}\n${text}`;
  const missing = [...new Set(texts.filter((text) => !embedded.has(keyOf(text))))];
  const fresh = new Map<string, Float32Array>();
  for (let i = 0; i < missing.length; i += EMBED_BATCH) {
    const batch = missing.slice(i, i + EMBED_BATCH);
    const vectors = await provider.embed(batch);
    batch.forEach((text, j) => fresh.set(text, vectors[j]!));
  }
  const out = texts.map((text) => {
    const key = keyOf(text);
    const vector = fresh.get(text) ?? embedded.get(key)!;
    // Re-inserted: a Map keeps insertion order, so the first entries are the least recently used.
    if (embedded.delete(key)) embeddedBytes -= vector.byteLength;
    embedded.set(key, vector);
    embeddedBytes += vector.byteLength;
    return vector;
  });
  for (const [key, vector] of embedded) {
    if (embeddedBytes <= CALIBRATION_CACHE_BYTES) break;
    embedded.delete(key);
    embeddedBytes -= vector.byteLength;
  }
  return out;
}

/**
 * Calibrates the embedding's weight for a collection from the texts of its training sample (in
 * sample order) with the provider that embeds its passages and the model just trained.
 */
export async function calibrateSemanticWeight(
  texts: Iterable<string> | AsyncIterable<string>,
  provider: EmbeddingProvider,
  model: CollectionModel | null,
): Promise<CalibrationResult> {
  const pairs = await pseudoQueries(texts);
  if (pairs.length < MIN_PSEUDO_QUERIES) return uncalibrated(pairs.length);
  const queryTerms = pairs.map((p) => modelTerms(p.query));
  const restTerms = pairs.map((p) => modelTerms(p.rest));
  const vectors = await embedAll(provider, [...pairs.map((p) => p.query), ...pairs.map((p) => p.rest)]);
  let collection: Float64Array[] | null = null;
  if (model) {
    const index = termIndex(model);
    const inModel = (terms: readonly string[][]) => terms.map((ts) => embedTerms(model, ts, index));
    collection = dotRows(inModel(queryTerms), inModel(restTerms));
  }
  return chooseWeight(
    {
      bm25: bm25Matrix(queryTerms, restTerms),
      cosine: dotRows(vectors.slice(0, pairs.length), vectors.slice(pairs.length)),
      collection,
    },
    SEMANTIC_WEIGHT,
    COLLECTION_WEIGHT,
  );
}
