#!/usr/bin/env node
// Research for issue 16, item 3: does a document's best sentence add to BM25 plus the collection
// model? SciFact's claims were written from one sentence of their source. Not part of the tests;
// needs `npm run build` first; run from the project root:  node bench/sentence-research.mjs DATA_DIR
// Raw FTS5's top 100 (as fts5-baseline.mjs), fused as minmax(bm25) + 0.6·minmax(collection cosine)
// + w·minmax(feature), where the feature is the best sentence's BM25 (document idf, sentence
// lengths), the best pair of adjacent sentences', or the share of the query's idf one sentence holds.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { minmax, modelFirstStage, ndcg10 } from './beir-data.mjs';

const { termsOf } = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/answer/extractive.js')).href);
const { corpus, queries, stage } = await modelFirstStage(process.argv[2]);
const sentencesOf = (d) => [d.title ?? '', ...(d.text ?? '').split(/(?<=[.!?])\s+(?=[A-Z0-9(])/)].filter((s) => s.trim());
const docSentences = corpus.map((d) => sentencesOf(d).map((s) => termsOf(s)));
const df = new Map();
let sentences = 0;
let words = 0;
for (const ss of docSentences) {
  const seen = new Set();
  for (const s of ss) {
    sentences++;
    words += s.length;
    for (const t of s) seen.add(t);
  }
  for (const t of seen) df.set(t, (df.get(t) ?? 0) + 1);
}
const averageLength = words / sentences;
const idf = (t) => Math.log(1 + (corpus.length - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5));
function bm25(qTerms, terms, avgLength) {
  const tf = new Map();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  let s = 0;
  for (const t of qTerms) {
    const f = tf.get(t);
    if (f) s += (idf(t) * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * terms.length) / avgLength));
  }
  return s;
}
function features(qTerms, ss) {
  const total = qTerms.reduce((a, t) => a + idf(t), 0) || 1;
  let best = 0, bestPair = 0, cover = 0;
  for (let i = 0; i < ss.length; i++) {
    best = Math.max(best, bm25(qTerms, ss[i], averageLength));
    if (i + 1 < ss.length) bestPair = Math.max(bestPair, bm25(qTerms, ss[i].concat(ss[i + 1]), 2 * averageLength));
    const held = new Set(ss[i]);
    cover = Math.max(cover, qTerms.filter((t) => held.has(t)).reduce((a, t) => a + idf(t), 0) / total);
  }
  return [best, bestPair, cover];
}
const FEATURES = ['best sentence', 'best pair', 'idf share'];
const W = [0, 0.1, 0.2, 0.3, 0.5, 0.8];
const ndcg = FEATURES.map(() => W.map(() => 0));
for (const q of queries) {
  const { rel, cands, bm25: keyword, cos } = stage(q);
  const qTerms = [...new Set(termsOf(q.text))];
  const feats = cands.map((c) => features(qTerms, docSentences[c.r - 1]));
  FEATURES.forEach((_, fi) => {
    const f = minmax(feats.map((x) => x[fi]));
    W.forEach((w, wi) => {
      const ranked = cands.map((c, i) => ({ r: c.r, s: keyword[i] + 0.6 * cos[i] + w * f[i] })).sort((x, y) => y.s - x.s);
      ndcg[fi][wi] += ndcg10(corpus, rel, ranked.map((d) => d.r));
    });
  });
}
for (const [fi, f] of FEATURES.entries()) console.log(f.padEnd(14), W.map((w, wi) => `${w}: ${(ndcg[fi][wi] / queries.length).toFixed(4)}`).join('  '));
