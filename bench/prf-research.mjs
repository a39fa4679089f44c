#!/usr/bin/env node
// Research for issue 16: pseudo-relevance feedback in the collection model. The query's model vector
// plus beta times the centroid of the first ranking's top k documents, fused as
// minmax(bm25) + 0.6 minmax(cosine) over raw FTS5's top 100. Needs `npm run build`; run from the
// project root:  node bench/prf-research.mjs DATA_DIR
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadBeir, minmax, ndcg10, queryWords, rawFts5 } from './beir-data.mjs';

const dir = process.argv[2];
const model = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/search/collection-model.js')).href);
const { corpus, qrels, queries } = loadBeir(dir);
const texts = corpus.map((d) => `${d.title ?? ''}\n${d.text ?? ''}`);
const learned = model.trainCollectionModel(texts.slice(0, 2048), { dimensions: 64, iterations: 2 });
const index = model.termIndex(learned);
const docVec = texts.map((t) => model.embedWithModel(learned, t, index));
const top100 = rawFts5(corpus);
const K = [3, 5, 10];
const B = [0, 0.5, 1, 2];
const ndcg = K.map(() => B.map(() => 0));
for (const q of queries) {
  const rel = qrels.get(q._id);
  const cands = top100(queryWords(q.text));
  const qv = model.embedWithModel(learned, q.text, index);
  const bm25 = minmax(cands.map((c) => c.s));
  const cosWith = (v) => minmax(cands.map((c) => (v && docVec[c.r - 1] ? model.cosine(v, docVec[c.r - 1]) : 0)));
  const cos = cosWith(qv);
  const first = cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] })).sort((x, y) => y.s - x.s);
  K.forEach((k, ki) => {
    const centroid = new Float32Array(learned.dimensions);
    for (const d of first.slice(0, k)) { const v = docVec[d.r - 1]; if (v) for (let j = 0; j < v.length; j++) centroid[j] += v[j] / k; }
    B.forEach((b, bi) => {
      const v = qv ? Float32Array.from(qv, (x, j) => x + b * centroid[j]) : null;
      const c2 = cosWith(v);
      ndcg[ki][bi] += ndcg10(corpus, rel, cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * c2[i] })).sort((x, y) => y.s - x.s).map((d) => d.r));
    });
  });
}
for (const [ki, k] of K.entries()) console.log(`top ${k}`.padEnd(8), B.map((b, bi) => `β ${b}: ${(ndcg[ki][bi] / queries.length).toFixed(4)}`).join('  '));
