// The weights of hybrid search's signals next to BM25's 1, and the scaling that puts the signals
// on one footing (search.ts fuses them; calibration.ts replays the fusion). SEMANTIC_WEIGHT
// was calibrated to the builtin static embedder (bench/embed-research.mjs; docs/ranking.md); it is
// the default that calibration.ts replaces for a collection whose provider earns more.
// BM25 finds the candidates and dominates; the embedding adds a bounded, scale-free bonus and
// contributes a few candidates of its own. Rank fusion (RRF) gives a much weaker ranker an equal
// vote and loses score gaps: on SciFact it fell from 0.69 to 0.50 nDCG@10.
/** Default weight of the min-max-scaled cosine next to the min-max-scaled BM25 score (plateau 0.1-0.5). */
export const SEMANTIC_WEIGHT = 0.2;
/**
 * Weight of the min-max-scaled cosine in the collection's own model (collection-topics.ts), which
 * knows the collection's words where the builtin model knows English. Through beir.mjs on the three
 * dev sets (docs/ranking.md): 0.4 / 0.5 / 0.6 / 0.8 gave +0.036 / +0.037 / +0.044 / +0.044 mean
 * nDCG@10 over raw FTS5; SciFact, the set it helps least, peaks below 0.6 and falls slowly above.
 */
export const COLLECTION_WEIGHT = 0.6;

/** Scales values to 0..1 over their own range; a list of equal values scales to 1. */
export function minMax(values: number[]): (x: number) => number {
  if (values.length === 0) return () => 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const span = hi - lo;
  return span > 0 ? (x) => (x - lo) / span : () => 1;
}
