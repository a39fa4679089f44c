#!/usr/bin/env node
// Research for issue 16: pseudo-relevance feedback in the collection model. The query's model vector
// plus beta times the centroid of the first ranking's top k documents, fused as
// minmax(bm25) + 0.6 minmax(cosine) over raw FTS5's top 100. Needs `npm run build`; run from the
// project root:  node bench/prf-research.mjs DATA_DIR
import { modelFirstStage, ndcg10 } from './beir-data.mjs';

const { corpus, queries, learned, docVec, cosines, stage } = await modelFirstStage(process.argv[2]);
const K = [3, 5, 10];
const B = [0, 0.5, 1, 2];
const ndcg = K.map(() => B.map(() => 0));
for (const q of queries) {
  const { rel, cands, qv, bm25, cos } = stage(q);
  const first = cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] })).sort((x, y) => y.s - x.s);
  K.forEach((k, ki) => {
    const centroid = new Float32Array(learned.dimensions);
    for (const d of first.slice(0, k)) { const v = docVec[d.r - 1]; if (v) for (let j = 0; j < v.length; j++) centroid[j] += v[j] / k; }
    B.forEach((b, bi) => {
      const v = qv ? Float32Array.from(qv, (x, j) => x + b * centroid[j]) : null;
      const c2 = cosines(v, cands);
      ndcg[ki][bi] += ndcg10(corpus, rel, cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * c2[i] })).sort((x, y) => y.s - x.s).map((d) => d.r));
    });
  });
}
for (const [ki, k] of K.entries()) console.log(`top ${k}`.padEnd(8), B.map((b, bi) => `β ${b}: ${(ndcg[ki][bi] / queries.length).toFixed(4)}`).join('  '));
