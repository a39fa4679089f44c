#!/usr/bin/env node
// Research for issue 16 (a negative result, docs/ranking.md): does a weight of the collection model
// per query help, lowered when BM25's top result stands out from its tenth (BM25 is confident)?
// Not part of the tests; needs `npm run build` first; run from the project root:
//   node bench/adaptive-research.mjs DATA_DIR
// Raw FTS5's top 100 fused as minmax(bm25) + w·minmax(collection cosine): fixed weights, then
// w = base·(1 − slope·(feature − 0.2)) for two features of the BM25 scores; nDCG@10 as beir.mjs.
import { modelFirstStage, ndcg10 } from './beir-data.mjs';
const { corpus, queries, stage } = await modelFirstStage(process.argv[2]);
const stages = queries.map((q) => ({ q, ...stage(q) })).filter((x) => x.rel && x.cands.length);
// confidence features
const feats = stages.map(({ cands }) => {
  const s = cands.map((c) => c.s);
  const top = s[0], tenth = s[Math.min(9, s.length - 1)], last = s[s.length - 1];
  const mean10 = s.slice(0, 10).reduce((a, b) => a + b, 0) / Math.min(10, s.length);
  return { gap: (top - tenth) / (top || 1), spread: (top - mean10) / ((top - last) || 1), top };
});
const run = (wOf) => stages.reduce((acc, st, i) => {
  const w = wOf(feats[i]);
  const ranked = st.cands.map((c, j) => ({ r: c.r, s: st.bm25[j] + w * st.cos[j] })).sort((a, b) => b.s - a.s);
  return acc + ndcg10(corpus, st.rel, ranked.map((d) => d.r));
}, 0) / stages.length;
console.log('fixed', [0, 0.2, 0.4, 0.6, 0.8, 1.0].map((w) => `${w}:${run(() => w).toFixed(4)}`).join(' '));
// distribution of gap
const g = feats.map((f) => f.gap).sort((a, b) => a - b);
console.log('gap quartiles', [0.1, 0.25, 0.5, 0.75, 0.9].map((p) => g[Math.floor(p * g.length)].toFixed(3)).join(' '));
for (const feat of ['gap', 'spread']) {
  const rows = [];
  for (const base of [0.4, 0.6, 0.8, 1.0]) for (const slope of [0.5, 1, 2, 3]) rows.push(`${base}/${slope}:${run((f) => Math.max(0, base * (1 - slope * (f[feat] - 0.2)))).toFixed(4)}`);
  console.log(feat, rows.join(' '));
}
