#!/usr/bin/env node
// Research for issue 16, item 3 (lexical quality where it is cheap): does the proximity of the
// query's terms in a document add to BM25 plus the collection model? Not part of the tests; needs
// `npm run build` first; run from the project root:  node bench/proximity-research.mjs DATA_DIR
// Raw FTS5's top 100 (as fts5-baseline.mjs), fused as minmax(bm25) + 0.6·minmax(collection cosine)
// + w·minmax(proximity) for a grid of w and a few proximity features; nDCG@10 as beir.mjs computes it.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { minmax, modelFirstStage, ndcg10 } from './beir-data.mjs';

const { termsOf } = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/answer/extractive.js')).href);
const { corpus, queries, texts, stage } = await modelFirstStage(process.argv[2]);
const docTerms = texts.map((t) => termsOf(t));
const df = new Map();
for (const ts of docTerms) for (const t of new Set(ts)) df.set(t, (df.get(t) ?? 0) + 1);
const idf = (t) => Math.log(1 + corpus.length / (df.get(t) ?? 1));


/** Proximity features of a document for the query's distinct terms. */
function proximity(qTerms, terms) {
  const pos = new Map();
  terms.forEach((t, i) => { if (qTerms.includes(t)) (pos.get(t) ?? pos.set(t, []).get(t)).push(i); });
  const present = [...pos.keys()];
  let inverseSquare = 0, windowed = 0, bestPair = 0;
  for (let a = 0; a < present.length; a++) for (let b = a + 1; b < present.length; b++) {
    let d = Infinity;
    const pa = pos.get(present[a]), pb = pos.get(present[b]);
    for (let i = 0, j = 0; i < pa.length && j < pb.length; ) { d = Math.min(d, Math.abs(pa[i] - pb[j])); if (pa[i] < pb[j]) i++; else j++; }
    const w = Math.min(idf(present[a]), idf(present[b]));
    inverseSquare += w / (d * d);
    if (d <= 4) windowed += w;
    bestPair = Math.max(bestPair, w / d);
  }
  return [inverseSquare, windowed, bestPair];
}

const FEATURES = ['inverse-square', 'window-4', 'best-pair'];
const W = [0, 0.05, 0.1, 0.2, 0.3, 0.5];
const ndcg = FEATURES.map(() => W.map(() => 0));
for (const q of queries) {
  const { rel, cands, bm25, cos } = stage(q);
  const qTerms = [...new Set(termsOf(q.text))];
  const feats = cands.map((c) => proximity(qTerms, docTerms[c.r - 1]));
  FEATURES.forEach((_, fi) => {
    const prox = minmax(feats.map((f) => f[fi]));
    W.forEach((w, wi) => {
      const ranked = cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] + w * prox[i] })).sort((x, y) => y.s - x.s);
      ndcg[fi][wi] += ndcg10(corpus, rel, ranked.map((d) => d.r));
    });
  });
}
for (const [fi, f] of FEATURES.entries()) console.log(f.padEnd(15), W.map((w, wi) => `${w}: ${(ndcg[fi][wi] / queries.length).toFixed(4)}`).join('  '));
