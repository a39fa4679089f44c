#!/usr/bin/env node
// Research for issue 16, items 1 and 2: does the collection's own semantic model
// (src/domain/search/collection-model.ts, LSA of its TF-IDF matrix) add meaning keyword search
// misses, and can its fusion weight be calibrated per collection without labels?
// Not part of the tests. Needs `npm run build` first (it uses dist/); run from the project root:
//
//   node bench/lsa-research.mjs ../shared/data/cisi [dimensions=128] [iterations=3]
//   PSEUDO=200 (pseudo-queries), KEEP=0.5 (share of a sentence's content words each keeps)
//
// - Ranking: raw FTS5 bm25()'s top 100 (title + text, porter unicode61, the query's words OR'd, as
//   ../shared/eval/fts5-baseline.mjs), reranked by (1 − w)·minmax(bm25) + w·minmax(cosine) of the
//   query's and the document's model vectors, for a grid of w; nDCG@10 as beir.mjs computes it.
// - Calibration probe: pseudo-queries are sentences of random documents with a KEEP share of
//   their content words; the document they came from is the one right answer (MRR@10 per w).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadBeir, minmax, queryWords, rawFts5 } from './beir-data.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/lsa-research.mjs DATA_DIR [dimensions] [iterations]');
  process.exit(2);
}
const dimensions = Number(process.argv[3] ?? 128);
const iterations = Number(process.argv[4] ?? 3);
const model = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/search/collection-model.js')).href);
const { corpus, qrels, queries } = loadBeir(dir);

const texts = corpus.map((d) => `${d.title ?? ''}\n${d.text ?? ''}`);
let t0 = performance.now();
// SAMPLE=n trains on every (texts/n)-th text only, as the worker does on a large collection.
const sample = Number(process.env.SAMPLE ?? 0);
const trainTexts = sample > 0 && sample < texts.length ? texts.filter((_, i) => Math.floor((i * sample) / texts.length) !== Math.floor(((i - 1) * sample) / texts.length)) : texts;
const learned = model.trainCollectionModel(trainTexts, { dimensions, iterations });
const trainMs = performance.now() - t0;
const index = model.termIndex(learned);
const docVec = texts.map((t) => model.embedWithModel(learned, t, index));

const top100 = rawFts5(corpus);
const words = queryWords;

const W = [0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

/** FTS5's top 100 for a word list, and each candidate's fused score at every w (ranked best first). */
function rankings(queryWords, queryText) {
  const cands = top100(queryWords);
  const qv = model.embedWithModel(learned, queryText, index);
  const bm25 = minmax(cands.map((c) => c.s));
  const cos = minmax(cands.map((c) => (qv && docVec[c.r - 1] ? model.cosine(qv, docVec[c.r - 1]) : 0)));
  return W.map((w) => cands.map((c, i) => ({ r: c.r, s: (1 - w) * bm25[i] + w * cos[i] })).sort((x, y) => y.s - x.s));
}

const ndcg = W.map(() => 0);
for (const q of queries) {
  const rel = qrels.get(q._id);
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  rankings(words(q.text), q.text).forEach((ranked, wi) => {
    let dcg = 0;
    ranked.slice(0, 10).forEach((d, i) => (dcg += (2 ** (rel.get(String(corpus[d.r - 1]._id)) ?? 0) - 1) / Math.log2(i + 2)));
    ndcg[wi] += ideal ? dcg / ideal : 0;
  });
}

const STOP = new Set('a an and are as at be by for from has have in is it its of on or that the to was were which with'.split(' '));
const keep = Number(process.env.KEEP ?? 0.5);
let seed = 777;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const mrr = W.map(() => 0);
let pseudo = 0;
for (let i = 0; i < Number(process.env.PSEUDO ?? 200); i++) {
  const doc = Math.floor(random() * corpus.length);
  const sentences = (corpus[doc].text ?? '').split(/(?<=[.!?])\s+/).filter((x) => x.split(' ').length >= 8);
  if (sentences.length === 0) continue;
  const kept = words(sentences[Math.floor(random() * sentences.length)]).filter((w) => !STOP.has(w) && w.length > 2 && random() < keep);
  if (kept.length < 2) continue;
  const ranked = rankings(kept, kept.join(' '));
  if (ranked[0].length === 0) continue;
  pseudo++;
  ranked.forEach((list, wi) => {
    const at = list.findIndex((x) => x.r === doc + 1);
    if (at >= 0 && at < 10) mrr[wi] += 1 / (at + 1);
  });
}

const byW = (xs, n) => Object.fromEntries(W.map((w, i) => [w, Math.round((xs[i] / n) * 1e4) / 1e4]));
console.log(
  JSON.stringify({
    set: dir.replace(/\/+$/, '').split('/').pop(),
    docs: corpus.length,
    terms: learned.terms.length,
    dimensions: learned.dimensions,
    train_ms: Math.round(trainMs),
    stored_kb: Math.round(model.serializeCollectionModel(learned).length / 1024),
    ndcg: byW(ndcg, queries.length),
    pseudo_queries: pseudo,
    pseudo_mrr10: byW(mrr, pseudo),
  }),
);
