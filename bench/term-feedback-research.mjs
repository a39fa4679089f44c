#!/usr/bin/env node
// Research for issue 16, item 3: feedback in words (RM3-like) on top of BM25 plus the collection
// model. The first ranking's top k documents vote for their words (term frequency share × e^score
// × idf); the best T words, weighted, form a second query whose BM25 over the same candidates is
// fused as λ·minmax(...). prf-research.mjs tried the same in the collection model's space. Not part
// of the tests; needs `npm run build` first; run from the project root:
//   node bench/term-feedback-research.mjs DATA_DIR
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { minmax, modelFirstStage, ndcg10 } from './beir-data.mjs';

const { termsOf } = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/answer/extractive.js')).href);
const { corpus, queries, texts, stage } = await modelFirstStage(process.argv[2]);
const docTerms = texts.map((t) => termsOf(t));
const docTf = docTerms.map((ts) => {
  const m = new Map();
  for (const t of ts) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
});
const df = new Map();
for (const m of docTf) for (const t of m.keys()) df.set(t, (df.get(t) ?? 0) + 1);
const averageLength = docTerms.reduce((a, t) => a + t.length, 0) / corpus.length;
const idf = (t) => Math.log(1 + (corpus.length - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5));
function weightedBm25(query, r) {
  const tf = docTf[r - 1];
  const length = docTerms[r - 1].length;
  let s = 0;
  for (const [t, w] of query) {
    const f = tf.get(t);
    if (f) s += (w * idf(t) * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * length) / averageLength));
  }
  return s;
}
const K = [3, 10];
const T = [10, 30];
const L = [0.1, 0.2, 0.3, 0.5];
const sums = new Map([['no feedback', 0]]);
const add = (key, v) => sums.set(key, (sums.get(key) ?? 0) + v);
for (const q of queries) {
  const { rel, cands, bm25, cos } = stage(q);
  const first = cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] })).sort((x, y) => y.s - x.s);
  add('no feedback', ndcg10(corpus, rel, first.map((d) => d.r)));
  for (const k of K) {
    const votes = new Map();
    for (const d of first.slice(0, k)) {
      const length = docTerms[d.r - 1].length;
      for (const [t, f] of docTf[d.r - 1]) votes.set(t, (votes.get(t) ?? 0) + (f / length) * Math.exp(d.s));
    }
    for (const size of T) {
      const best = [...votes].map(([t, v]) => [t, v * idf(t)]).sort((a, b) => b[1] - a[1]).slice(0, size);
      const total = best.reduce((a, x) => a + x[1], 0);
      const expansion = best.map(([t, v]) => [t, v / total]);
      const feedback = minmax(cands.map((c) => weightedBm25(expansion, c.r)));
      for (const l of L) {
        const ranked = cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] + l * feedback[i] })).sort((x, y) => y.s - x.s);
        add(`top ${k}, ${size} words, λ ${l}`, ndcg10(corpus, rel, ranked.map((d) => d.r)));
      }
    }
  }
}
for (const [key, v] of sums) console.log(key.padEnd(26), (v / queries.length).toFixed(4));
