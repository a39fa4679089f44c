#!/usr/bin/env node
// Research for issue 16, items 1 and 2: does a model learned from the collection itself (latent
// semantic analysis: a rank-K SVD of the collection's TF-IDF matrix) add meaning keyword search
// misses, and can its fusion weight be calibrated per collection without labels?
// Not part of the tests, and self-contained: SQLite FTS5 in memory, like ../shared/eval/fts5-baseline.mjs.
//
//   node bench/lsa-research.mjs ../shared/data/cisi [K=128] [power iterations=3]
//   ALPHA=1 (term vectors scaled by singular value^ALPHA), PSEUDO=200 (pseudo-queries), KEEP=0.5
//
// - Model: terms with df ≥ 2 and ≤ N/2, light stemming; rows log-tf·idf, L2-normalised; the
//   top-K right singular vectors by randomised subspace iteration, then a Jacobi eigensolve.
//   A document or query is the normalised sum of its terms' vectors (weights tf-idf / idf).
// - Ranking: raw FTS5 bm25()'s top 100, reranked by (1 − w)·minmax(bm25) + w·minmax(cosine).
// - Calibration probe: pseudo-queries are sentences of random documents with a KEEP share of
//   their content words; the document they came from is the one right answer (MRR@10 per w).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
const dir = process.argv[2]; const K = Number(process.argv[3] ?? 128); const ITERS = Number(process.argv[4] ?? 3);
const Database = createRequire(join(process.cwd(), 'package.json'))('better-sqlite3');
const jsonl = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const corpus = jsonl(join(dir, 'corpus.jsonl'));
const qrels = new Map();
for (const line of readFileSync(join(dir, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) { const [q, d, s] = line.trim().split(/\s+/); if (!q || !(Number(s) > 0)) continue; if (!qrels.has(q)) qrels.set(q, new Map()); qrels.get(q).set(d, Number(s)); }
const queries = jsonl(join(dir, 'queries.jsonl')).filter((q) => qrels.has(q._id));
const STOP = new Set('a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves'.split(' '));
const stem = (w) => { if (w.length <= 3 || /\d/.test(w)) return w; if (w.endsWith('ies')) return w.slice(0, -3) + 'y'; if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1); if (w.endsWith('ing') && w.length >= 6) w = w.slice(0, -3); else if (w.endsWith('ed') && w.length >= 5) w = w.slice(0, -2); return w; };
const terms = (s) => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOP.has(w)).map(stem);
const t0 = performance.now();
const docTerms = corpus.map((d) => terms(`${d.title ?? ''} ${d.text ?? ''}`));
const df = new Map(); for (const ts of docTerms) for (const t of new Set(ts)) df.set(t, (df.get(t) ?? 0) + 1);
const N = corpus.length;
const vocab = new Map(); for (const [t, c] of df) if (c >= 2 && c <= 0.5 * N) vocab.set(t, vocab.size);
const M = vocab.size;
const idf = new Float64Array(M); for (const [t, i] of vocab) idf[i] = Math.log(N / df.get(t));
// sparse rows: (idx, val), L2-normalised tf-idf
const rows = docTerms.map((ts) => { const tf = new Map(); for (const t of ts) { const i = vocab.get(t); if (i !== undefined) tf.set(i, (tf.get(i) ?? 0) + 1); } const idx = Int32Array.from(tf.keys()); const val = Float64Array.from([...tf.values()].map((f, k) => (1 + Math.log(f)) * idf[idx[k]])); let n = 0; for (const v of val) n += v * v; n = Math.sqrt(n) || 1; for (let k = 0; k < val.length; k++) val[k] /= n; return { idx, val }; });
const L = K + 10;
// Q: M x L (column-major as L arrays of length M)
let rand = 12345; const rnd = () => { rand = (rand * 1103515245 + 12345) % 2147483648; return rand / 2147483648 - 0.5; };
let Q = Array.from({ length: L }, () => Float64Array.from({ length: M }, rnd));
const orth = (cols) => { for (let j = 0; j < cols.length; j++) { const c = cols[j]; for (let i = 0; i < j; i++) { const p = cols[i]; let d = 0; for (let r = 0; r < c.length; r++) d += c[r] * p[r]; for (let r = 0; r < c.length; r++) c[r] -= d * p[r]; } let n = 0; for (let r = 0; r < c.length; r++) n += c[r] * c[r]; n = Math.sqrt(n) || 1; for (let r = 0; r < c.length; r++) c[r] /= n; } return cols; };
const AQ = (Q) => Q.map((q) => Float64Array.from(rows, (row) => { let s = 0; for (let k = 0; k < row.idx.length; k++) s += row.val[k] * q[row.idx[k]]; return s; }));
const AtZ = (Z) => Z.map((z) => { const out = new Float64Array(M); rows.forEach((row, d) => { const zd = z[d]; if (zd === 0) return; for (let k = 0; k < row.idx.length; k++) out[row.idx[k]] += row.val[k] * zd; }); return out; });
orth(Q);
for (let it = 0; it < ITERS; it++) { Q = orth(AtZ(AQ(Q))); }
const B = AQ(Q); // N x L as L columns
// G = B^T B (L x L); eigen via Jacobi
const G = Array.from({ length: L }, (_, i) => Float64Array.from({ length: L }, (_, j) => { let s = 0; const a = B[i], b = B[j]; for (let r = 0; r < N; r++) s += a[r] * b[r]; return s; }));
const V = Array.from({ length: L }, (_, i) => Float64Array.from({ length: L }, (_, j) => (i === j ? 1 : 0)));
for (let sweep = 0; sweep < 12; sweep++) { for (let p = 0; p < L; p++) for (let q = p + 1; q < L; q++) { const apq = G[p][q]; if (Math.abs(apq) < 1e-12) continue; const app = G[p][p], aqq = G[q][q]; const th = 0.5 * Math.atan2(2 * apq, aqq - app); const c = Math.cos(th), s = Math.sin(th); for (let k = 0; k < L; k++) { const gkp = G[k][p], gkq = G[k][q]; G[k][p] = c * gkp - s * gkq; G[k][q] = s * gkp + c * gkq; } for (let k = 0; k < L; k++) { const gpk = G[p][k], gqk = G[q][k]; G[p][k] = c * gpk - s * gqk; G[q][k] = s * gpk + c * gqk; } for (let k = 0; k < L; k++) { const vkp = V[k][p], vkq = V[k][q]; V[k][p] = c * vkp - s * vkq; V[k][q] = s * vkp + c * vkq; } } }
const eig = Array.from({ length: L }, (_, i) => G[i][i]); const order = eig.map((e, i) => i).sort((a, b) => eig[b] - eig[a]).slice(0, K);
// term vectors: row t of (Q W) where W = V[:, order]; scaled by sigma^alpha
const ALPHA = Number(process.env.ALPHA ?? 0);
const termVec = Array.from({ length: M }, () => new Float32Array(K));
order.forEach((o, k) => { const sig = Math.sqrt(Math.max(eig[o], 0)); const scale = sig ** ALPHA; for (let t = 0; t < M; t++) { let s = 0; for (let l = 0; l < L; l++) s += Q[l][t] * V[l][o]; termVec[t][k] = s * scale; } });
const embed = (idxVal) => { const v = new Float64Array(K); for (const [i, w] of idxVal) { const tv = termVec[i]; for (let k = 0; k < K; k++) v[k] += w * tv[k]; } let n = 0; for (const x of v) n += x * x; n = Math.sqrt(n) || 1; for (let k = 0; k < K; k++) v[k] /= n; return v; };
const docVec = rows.map((r) => embed([...r.idx].map((i, k) => [i, r.val[k]])));
const buildMs = performance.now() - t0;
const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, text, tokenize='porter unicode61')");
const ins = db.prepare('INSERT INTO docs(rowid, title, text) VALUES (?, ?, ?)');
db.transaction(() => corpus.forEach((d, i) => ins.run(i + 1, d.title ?? '', d.text ?? '')))();
const st = db.prepare('SELECT rowid AS r, -bm25(docs) AS s FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100');
const words = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const W = [0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
const nd = W.map(() => 0);
for (const q of queries) {
  const toks = [...new Set(words(q.text))];
  const cands = toks.length ? st.all(toks.map((t) => `"${t}"`).join(' OR ')) : [];
  const qt = new Map(); for (const t of terms(q.text)) { const i = vocab.get(t); if (i !== undefined) qt.set(i, (qt.get(i) ?? 0) + idf[i]); }
  const qv = embed([...qt]);
  const cos = cands.map((c) => { const dv = docVec[c.r - 1]; let s = 0; for (let k = 0; k < K; k++) s += qv[k] * dv[k]; return s; });
  const mm = (xs) => { const lo = Math.min(...xs), hi = Math.max(...xs); return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0)); };
  const b = mm(cands.map((c) => c.s)), cs = mm(cos);
  const rel = qrels.get(q._id);
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  W.forEach((w, wi) => { const ranked = cands.map((c, i) => ({ id: corpus[c.r - 1]._id, s: (1 - w) * b[i] + w * cs[i] })).sort((x, y) => y.s - x.s); let dcg = 0; ranked.slice(0, 10).forEach((d, i) => { const g = rel.get(String(d.id)) ?? 0; dcg += (2 ** g - 1) / Math.log2(i + 2); }); nd[wi] += ideal ? dcg / ideal : 0; });
}
// Self-calibration probe: pseudo-queries drawn from the collection (a sentence of a document, its
// words shuffled and half dropped), the document they came from as the one relevant answer.
const PSEUDO = Number(process.env.PSEUDO ?? 200);
const pmrr = W.map(() => 0); let pn = 0;
let prand = 777; const prnd = () => { prand = (prand * 1103515245 + 12345) % 2147483648; return prand / 2147483648; };
for (let i = 0; i < PSEUDO; i++) {
  const di = Math.floor(prnd() * N); const text = corpus[di].text ?? '';
  const sentences = text.split(/(?<=[.!?])\s+/).filter((x) => x.split(' ').length >= 8);
  if (sentences.length === 0) continue;
  const sent = sentences[Math.floor(prnd() * sentences.length)];
  const ws = words(sent).filter((w) => !STOP.has(w) && w.length > 2);
  const keep = ws.filter(() => prnd() < (Number(process.env.KEEP ?? 0.5)));
  if (keep.length < 2) continue;
  const cands = st.all([...new Set(keep)].map((t) => `"${t}"`).join(' OR '));
  if (cands.length === 0) continue;
  pn++;
  const qt = new Map(); for (const t of keep.map(stem)) { const ix = vocab.get(t); if (ix !== undefined) qt.set(ix, (qt.get(ix) ?? 0) + idf[ix]); }
  const qv = embed([...qt]);
  const cos = cands.map((c) => { const dv = docVec[c.r - 1]; let s2 = 0; for (let k = 0; k < K; k++) s2 += qv[k] * dv[k]; return s2; });
  const mm = (xs) => { const lo = Math.min(...xs), hi = Math.max(...xs); return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0)); };
  const b = mm(cands.map((c) => c.s)), cs = mm(cos);
  W.forEach((w, wi) => { const ranked = cands.map((c, j) => ({ r: c.r, s: (1 - w) * b[j] + w * cs[j] })).sort((x, y) => y.s - x.s); const at = ranked.findIndex((x) => x.r === di + 1); if (at >= 0 && at < 10) pmrr[wi] += 1 / (at + 1); });
}
console.log(JSON.stringify({ pseudo_queries: pn, pseudo_mrr10: Object.fromEntries(W.map((w, i) => [w, Math.round((pmrr[i] / pn) * 1e4) / 1e4])) }));
console.log(JSON.stringify({ set: dir.split('/').pop(), K, docs: N, vocab: M, build_ms: Math.round(buildMs), ndcg: Object.fromEntries(W.map((w, i) => [w, Math.round((nd[i] / queries.length) * 1e4) / 1e4])) }));
