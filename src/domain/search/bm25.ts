// BM25 over postings and statistics that an engine feeds in: the passages that count (an open
// collection's live passages, or the ones an enforced reader may read), each one's length, and each
// query phrase's occurrences per field. Nothing here reads storage, so any store that can list a
// term's postings and its passages' lengths gets the same scores.
//
// The statistics are the live passages' own. FTS5's bm25() keeps N and the average length in a
// record that DELETE never lowers on a contentless_delete table, while document frequencies follow
// the live rows: 40 passages with 20 deleted scored a term 1.541 where the same formula over the live
// rows gives 0.832, and every edit moved scores further.
//
// IDF is Lucene's, log(1 + (N − n + 0.5) / (n + 0.5)): always positive, so a term in more than half
// the passages still ranks by how often and where it occurs (classic BM25's IDF goes negative there,
// and FTS5 clamps it to 1e-6, which flattened small collections' scores to ~0.000001).

/** Saturation of term frequency and strength of length normalisation: FTS5's and Lucene's defaults. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

// Field weights: the heading trail (a document's title, a section's heading) says more per word than
// body text. Tuned on SciFact and checked not to hurt on plain text (docs/ranking.md).
export const HEADING_WEIGHT = 2.0;
export const BODY_WEIGHT = 1.0;

/** The passages that count, indexed 0..N−1 in the order ties are broken by (the engine's passage order). */
export interface Bm25Statistics {
  /** Tokens in each passage, heading and body together. */
  lengths: ArrayLike<number>;
  /** The sum of `lengths`. */
  totalLength: number;
}

/** One query phrase's occurrences in the passages that count. */
export interface PhrasePostings {
  /** Passages (indexes into the statistics) holding the phrase, ascending, each once. */
  passages: ArrayLike<number>;
  /** Occurrences in each of those passages' heading and body. */
  heading: ArrayLike<number>;
  body: ArrayLike<number>;
}

export function bm25Idf(passages: number, documentFrequency: number): number {
  return Math.log(1 + (passages - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

/** Every matching passage's score (a passage matches when it holds any phrase: the phrases are OR'd). */
export interface Bm25Scores {
  /** Matching passages, in the order they were first met. */
  matched: number[];
  /** Score by passage index; 0 for passages that do not match. */
  scores: Float64Array;
}

export function bm25Scores(statistics: Bm25Statistics, phrases: readonly PhrasePostings[]): Bm25Scores {
  const n = statistics.lengths.length;
  const scores = new Float64Array(n);
  const matched: number[] = [];
  if (n === 0) return { matched, scores };
  const averageLength = statistics.totalLength / n;
  for (const phrase of phrases) {
    const documentFrequency = phrase.passages.length;
    if (documentFrequency === 0) continue;
    const idf = bm25Idf(n, documentFrequency);
    for (let i = 0; i < documentFrequency; i++) {
      const passage = phrase.passages[i]!;
      const frequency = HEADING_WEIGHT * phrase.heading[i]! + BODY_WEIGHT * phrase.body[i]!;
      if (frequency === 0) continue;
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * statistics.lengths[passage]!) / averageLength);
      if (scores[passage] === 0) matched.push(passage);
      scores[passage]! += (idf * (frequency * (BM25_K1 + 1))) / (frequency + norm);
    }
  }
  return { matched, scores };
}

/**
 * The best `limit` of the matching passages that `keep` lets through, best first, ties by passage
 * index. A bounded heap, not a sort: an OR query with a common word matches a large share of a big
 * collection, and a page needs its head only.
 */
export function topBm25(ranked: Bm25Scores, limit: number, keep: (passage: number) => boolean = () => true): { passage: number; score: number }[] {
  const { matched, scores } = ranked;
  // Worse first: the root is the one to drop.
  const worse = (a: number, b: number) => scores[a]! < scores[b]! || (scores[a] === scores[b] && a > b);
  const heap: number[] = [];
  if (limit > 0)
    for (const passage of matched) {
      if (!keep(passage)) continue;
      if (heap.length < limit) {
        heap.push(passage);
        siftUp(heap, heap.length - 1, worse);
      } else if (worse(heap[0]!, passage)) {
        heap[0] = passage;
        siftDown(heap, 0, worse);
      }
    }
  heap.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return heap.map((passage) => ({ passage, score: scores[passage]! }));
}

function siftUp(heap: number[], at: number, worse: (a: number, b: number) => boolean): void {
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!worse(heap[at]!, heap[parent]!)) return;
    [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
    at = parent;
  }
}

function siftDown(heap: number[], at: number, worse: (a: number, b: number) => boolean): void {
  for (;;) {
    const left = 2 * at + 1;
    const right = left + 1;
    let least = at;
    if (left < heap.length && worse(heap[left]!, heap[least]!)) least = left;
    if (right < heap.length && worse(heap[right]!, heap[least]!)) least = right;
    if (least === at) return;
    [heap[at], heap[least]] = [heap[least]!, heap[at]!];
    at = least;
  }
}
