// The dense stage's exact top-k for one shard of a collection's vectors. With a current in-memory
// copy (src/domain/search/vector-copies.ts), its int8 scan orders the shard and a window of the best
// rows is scored exactly by the store, which also drops rows of files that are not ready or not
// selected. The int8 scores are off by at most `bound` (Int8Scanner.errorBound), so once the
// window's limit-th exact score beats the best score any row outside it could have, the answer is
// the exact one; otherwise the window grows to every row that could (or by 8× while too few rows
// survive the selection). Without a current copy the store scores the whole shard, selection first
// (`nearest`): in SQLite its SQL scan of a 50,000-row, 100-dimension shard took 205-218 ms where
// this module's loop over the shard's rows (readShard, then exactHits for a window) took 630-690
// ms, reading the rows alone 447 ms (2 cores, load 9). Either way the ranking is the float32 one,
// and filtering never happens after the cut.
import type { DenseHit, FileSelection, VectorReads } from '../../store/interface.js';
import type { VectorCopies } from './vector-copies.js';

export interface ShardQuery {
  collectionRid: number;
  query: Float32Array;
  selection: FileSelection | null;
  limit: number;
  shard: number;
}

/** Best first; ties: lower passage rid first. */
export const byDenseRank = (a: DenseHit, b: DenseHit) => b.similarity - a.similarity || a.passageRid - b.passageRid;

/** Exact nearest passages of one shard over ready files that the selection keeps, best first (the caller merges shards). */
export async function denseHits(vectors: VectorReads, copies: VectorCopies, q: ShardQuery): Promise<DenseHit[]> {
  const copy = await copies.current(q.collectionRid, q.shard);
  if (!copy || copy.scanner.dimensions !== q.query.length) return vectors.nearest(q.collectionRid, q.query, { shard: q.shard, selection: q.selection, limit: q.limit });
  let scores = copy.scanner.scan(q.query);
  let scannedAt = copy.scanner.scans;
  const bound = copy.scanner.errorBound(q.query);
  const n = scores.length;
  const exact = new Map<number, DenseHit>();
  const scored = new Set<number>();
  const score = async (indices: number[]) => {
    const fresh = indices.filter((i) => !scored.has(i));
    if (fresh.length === 0) return;
    for (const i of fresh) scored.add(i);
    for (const hit of await vectors.exactHits(q.collectionRid, q.query, fresh.map((i) => copy.rids[i]!), q.selection)) exact.set(hit.passageRid, hit);
  };
  // `inside`: rows to score exactly; `outside`: the best int8 score of any other row.
  let k = Math.min(n, firstWindow(q.limit, q.selection, Math.max(q.limit * 4, 64)));
  let { inside, outside } = topWindow(scores, k);
  for (;;) {
    await score(inside);
    // The scores are a view of the scanner's memory: if another query scanned while this one awaited
    // the store, scanning again gives this query's scores back. Copying them out instead cost 2.4 ms
    // a query for 100,000 rows (Float32Array slice), on a shard search of about 4 ms.
    if (copy.scanner.scans !== scannedAt) {
      scores = copy.scanner.scan(q.query);
      scannedAt = copy.scanner.scans;
    }
    const best = [...exact.values()].sort(byDenseRank);
    if (outside === -Infinity) return best.slice(0, q.limit);
    if (best.length >= q.limit) {
      const kth = best[q.limit - 1]!.similarity;
      if (outside + bound < kth) return best.slice(0, q.limit);
      // Only a row whose int8 score is at least kth - bound can still beat the limit-th; once
      // those are scored, every other row is below it (and the limit-th only rises).
      ({ inside, outside } = atLeast(scores, kth - bound));
    } else ({ inside, outside } = topWindow(scores, (k = Math.min(n, k * 8))));
  }
}

/**
 * The first candidate window: big enough that, at the selection's selectivity, `limit` rows survive.
 * Without a selection only passages of files not ready drop out, which is rare: a small margin, since
 * every windowed row is joined afterwards and a short window only costs a second, wider try.
 */
export function firstWindow(limit: number, selection: FileSelection | null, floor: number): number {
  if (!selection) return Math.max(floor, Math.ceil(limit * 1.1));
  return Math.max(floor, Math.ceil((limit * 1.5) / Math.max(selection.selectivity, 1e-6)));
}

/** The `k` best rows by int8 score and the best score among the rest (-Infinity when none is left). */
function topWindow(scores: Float32Array, k: number): { inside: number[]; outside: number } {
  const ordered = topIndices(scores, Math.min(scores.length, k + 1));
  return { inside: ordered.slice(0, k), outside: ordered.length > k ? scores[ordered[k]!]! : -Infinity };
}

/** Every row scoring at least `floor`, and the best score among the rest. */
function atLeast(scores: Float32Array, floor: number): { inside: number[]; outside: number } {
  const inside: number[] = [];
  let outside = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (s >= floor) inside.push(i);
    else if (s > outside) outside = s;
  }
  return { inside, outside };
}

/** Indices of the `k` highest scores, highest first (ties: lower index first). */
function topIndices(scores: Float32Array, k: number): number[] {
  const byScore = (a: number, b: number) => scores[b]! - scores[a]! || a - b;
  if (k >= scores.length) return Array.from(scores.keys()).sort(byScore);
  if (k > 512) {
    // Insertion into a sorted buffer costs O(k) a row: for a wide window, a histogram finds a
    // score that at least k rows reach, and only those are sorted.
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of scores) {
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    const buckets = 4096;
    const width = (hi - lo) / buckets || 1;
    const counts = new Uint32Array(buckets);
    for (const s of scores) counts[Math.min(buckets - 1, Math.floor((s - lo) / width))]!++;
    let bucket = buckets - 1;
    for (let seen = counts[bucket]!; seen < k; seen += counts[--bucket]!);
    const keep: number[] = [];
    for (let i = 0; i < scores.length; i++) if (Math.min(buckets - 1, Math.floor((scores[i]! - lo) / width)) >= bucket) keep.push(i);
    return keep.sort(byScore).slice(0, k);
  }
  // A threshold pass: keep a sorted buffer of the best k; most rows fail the first comparison.
  const best: number[] = [];
  let floor = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (best.length === k && s <= floor) continue;
    let at = best.length;
    while (at > 0 && scores[best[at - 1]!]! < s) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
    if (best.length === k) floor = scores[best[k - 1]!]!;
  }
  return best;
}
