#!/usr/bin/env node
// Research for issue 16: pseudo-relevance feedback in the collection model. The query's model vector
// plus beta times the centroid of the first ranking's top k documents, fused as
// minmax(bm25) + 0.6 minmax(cosine) over raw FTS5's top 100. Needs `npm run build`; run from the
// project root:  node bench/prf-research.mjs DATA_DIR
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { loadBeir } from './beir-data.mjs';
const dir = process.argv[2];
const model = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/search/collection-model.js')).href);
const Database = createRequire(join(process.cwd(), 'package.json'))('better-sqlite3');
const { corpus, qrels, queries } = loadBeir(dir);
const texts = corpus.map((d) => `${d.title ?? ''}\n${d.text ?? ''}`);
const learned = model.trainCollectionModel(texts.slice(0, 2048), { dimensions: 64, iterations: 2 });
const index = model.termIndex(learned);
const docVec = texts.map((t) => model.embedWithModel(learned, t, index));
const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, text, tokenize='porter unicode61')");
const ins = db.prepare('INSERT INTO docs(rowid, title, text) VALUES (?, ?, ?)');
db.transaction(() => corpus.forEach((d, i) => ins.run(i + 1, d.title ?? '', d.text ?? '')))();
const top100 = db.prepare('SELECT rowid AS r, -bm25(docs) AS s FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100');
const words = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const minmax = (xs) => { const lo = Math.min(...xs), hi = Math.max(...xs); return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0)); };
const K = [3, 5, 10];
const B = [0, 0.5, 1, 2];
const ndcg = K.map(() => B.map(() => 0));
const dcgOf = (ranked, rel, ideal) => { let dcg = 0; ranked.slice(0, 10).forEach((d, i) => (dcg += (2 ** (rel.get(String(corpus[d.r - 1]._id)) ?? 0) - 1) / Math.log2(i + 2))); return ideal ? dcg / ideal : 0; };
for (const q of queries) {
  const rel = qrels.get(q._id);
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  const qw = words(q.text);
  const cands = qw.length ? top100.all([...new Set(qw)].map((t) => `"${t}"`).join(' OR ')) : [];
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
      ndcg[ki][bi] += dcgOf(cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * c2[i] })).sort((x, y) => y.s - x.s), rel, ideal);
    });
  });
}
for (const [ki, k] of K.entries()) console.log(`top ${k}`.padEnd(8), B.map((b, bi) => `β ${b}: ${(ndcg[ki][bi] / queries.length).toFixed(4)}`).join('  '));
