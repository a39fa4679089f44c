#!/usr/bin/env node
// BM25 parameters (issue 16, item 3; docs/ranking.md): BM25 computed in JavaScript from an fts5vocab
// instance table, checked equal to FTS5's bm25() (k1 1.2, b 0.75, title ×2) on every query, timed
// against it, then a grid over k1, b and the title weight. Whole documents, trove's tokenizer and
// stopwords. Run from the project root after `npm run build`:
//   node bench/bm25-research.mjs ../shared/data/scifact        (GRID=1 for the grid)
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { loadBeir } from './beir-data.mjs';
const dir = process.argv[2];
const Database = createRequire(join(process.cwd(), 'package.json'))('better-sqlite3');
const { corpus, qrels, queries } = loadBeir(dir);
const { STOPWORDS } = await import(join(process.cwd(), 'dist/src/domain/search/query-text.js'));
const words = (s) => s.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE docs USING fts5(heading, body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')");
db.exec("CREATE VIRTUAL TABLE temp.docs_inst USING fts5vocab(main, docs, 'instance')");
db.exec("CREATE VIRTUAL TABLE temp.q USING fts5(t, tokenize='porter unicode61 remove_diacritics 2')");
db.exec("CREATE VIRTUAL TABLE temp.q_inst USING fts5vocab(temp, q, 'instance')");
const ins = db.prepare('INSERT INTO docs(rowid, heading, body) VALUES (?, ?, ?)');
db.transaction(() => { corpus.forEach((d, i) => ins.run(i + 1, d.title ?? '', d.text ?? '')); })();
const ids = corpus.map((d) => d._id);
const N = corpus.length;
// doc lengths
const dl = new Float64Array(N + 1);
let total = 0;
for (const r of db.prepare('SELECT id, sz FROM docs_docsize').raw().all()) {
  let i = 0, sum = 0; const b = r[1];
  while (i < b.length) { let v = 0; for (;;) { const x = b[i++]; v = v * 128 + (x & 127); if (!(x & 128)) break; } sum += v; }
  dl[r[0]] = sum; total += sum;
}
const avgdl = total / N;
const tokenize = (text) => {
  db.prepare('INSERT INTO q(rowid, t) VALUES (1, ?)').run(text);
  const t = db.prepare('SELECT term FROM q_inst WHERE doc = 1 ORDER BY offset').raw().all().map((r) => r[0]);
  db.prepare('DELETE FROM q WHERE rowid = 1').run();
  return t;
};
const postQ = db.prepare('SELECT doc, col FROM docs_inst WHERE term = ?').raw();
const ftsQ = db.prepare('SELECT rowid, -bm25(docs, 2.0, 1.0) AS s FROM docs WHERE docs MATCH ? ORDER BY s DESC, rowid LIMIT 100').raw();
function terms(q) { const u = [...new Set(words(q))]; const c = u.filter((w) => !STOPWORDS.has(w)); return c.length ? c : u; }
function own(toks, k1, b, wH) {
  const score = new Map();
  for (const term of toks) {
    const rows = postQ.all(term);
    const f = new Map();
    for (const [doc, col] of rows) f.set(doc, (f.get(doc) ?? 0) + (col === 'heading' ? wH : 1));
    const df = f.size; if (!df) continue;
    let idf = Math.log((N - df + 0.5) / (df + 0.5)); if (idf <= 0) idf = 1e-6;
    for (const [doc, fr] of f) score.set(doc, (score.get(doc) ?? 0) + idf * (fr * (k1 + 1)) / (fr + k1 * (1 - b + b * dl[doc] / avgdl)));
  }
  return [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100);
}
function ndcgOf(q, ranked) {
  const rel = qrels.get(q._id); let dcg = 0;
  ranked.slice(0, 10).forEach((d, i) => { const g = rel.get(ids[d - 1]) ?? 0; dcg += (2 ** g - 1) / Math.log2(i + 2); });
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  return ideal ? dcg / ideal : 0;
}
const qtoks = queries.map((q) => { const ts = terms(q.text); return { q, phrases: ts.map((t) => `"${t}"`), toks: ts.flatMap(tokenize) }; });
let mism = 0; const tF = [], tO = []; let nF = 0, nO = 0;
for (let rep = 0; rep < 3; rep++) for (const { q, phrases, toks } of qtoks) {
  let t0 = performance.now(); const a = phrases.length ? ftsQ.all(phrases.join(' OR ')) : []; tF.push(performance.now() - t0);
  t0 = performance.now(); const o = own(toks, 1.2, 0.75, 2); tO.push(performance.now() - t0);
  if (rep === 0) { nF += ndcgOf(q, a.map((r) => r[0])); nO += ndcgOf(q, o.map((r) => r[0]));
    for (let i = 0; i < Math.min(10, a.length); i++) if (a[i][0] !== o[i]?.[0] && Math.abs(a[i][1] - (o[i]?.[1] ?? 0)) > 1e-9) { mism++; break; } }
}
const med = (x) => x.sort((a, b) => a - b)[x.length >> 1];
console.log(JSON.stringify({ set: dir, N, fts_ndcg: (nF / queries.length).toFixed(4), own_ndcg: (nO / queries.length).toFixed(4), mismatched_queries: mism, fts_p50: med(tF).toFixed(2), own_p50: med(tO).toFixed(2) }));
if (process.env.GRID) for (const k1 of [0.9, 1.2, 1.5]) for (const b of [0.4, 0.6, 0.75, 0.9]) for (const wH of [1, 2, 3]) {
  let n = 0; for (const { q, toks } of qtoks) n += ndcgOf(q, own(toks, k1, b, wH).map((r) => r[0]));
  console.log(k1, b, wH, (n / queries.length).toFixed(4));
}
