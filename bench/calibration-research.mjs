#!/usr/bin/env node
// Research for issue 16, item 2 (docs/ranking.md): can the embedding's fusion weight be calibrated
// per collection without labels? Pseudo-queries are one sentence of a document, the answer is the
// rest of that document (title and other sentences), among 200 such rests. Prints the fused MRR
// (min-max BM25 + w · min-max GloVe cosine + 0.6 · min-max collection-model cosine) for a grid of w,
// and each signal's MRR alone. Needs `npm run build`; run from the project root:
//   node bench/calibration-research.mjs ../shared/data/scifact        (Q=N pseudo-queries, default 200)
import { jsonl } from './beir-data.mjs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const dir = process.argv[2];
const emb = await import(join(process.cwd(), 'dist/src/domain/embed/builtin.js'));
const cm = await import(join(process.cwd(), 'dist/src/domain/search/collection-model.js'));
const e = await emb.loadBuiltinEmbedder({ cacheDir: join(tmpdir(), 'trove-calib'), shippedPath: emb.defaultShippedModelPath() });
const corpus = jsonl(join(dir, 'corpus.jsonl'));
const texts = corpus.map((d) => `${d.title ?? ''}\n${d.text ?? ''}`);
const model = cm.trainFromTerms(texts.slice(0, 2048).map((t) => cm.modelTerms(t)), { dimensions: 64, iterations: 2 });
let seed = 7; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pairs = [];
for (const d of corpus) {
  const sentences = (d.text ?? '').split(/(?<=[.!?])\s+/).filter((s) => s.split(/\s+/).length >= 6);
  if (sentences.length < 3) continue;
  const i = Math.floor(rnd() * sentences.length);
  pairs.push({ q: sentences[i], rest: [d.title ?? '', ...sentences.filter((_, k) => k !== i)].join(' ') });
  if (pairs.length >= Number(process.env.Q ?? 200)) break;
}
const words = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const docs = pairs.map((p) => words(p.rest));
const df = new Map(); for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
const avg = docs.reduce((s, d) => s + d.length, 0) / docs.length; const N = docs.length;
const bm25 = (q, d) => { let s = 0; const tf = new Map(); for (const w of d) tf.set(w, (tf.get(w) ?? 0) + 1);
  for (const w of new Set(words(q))) { const f = tf.get(w); if (!f) continue; const n = df.get(w); const idf = Math.log(1 + (N - n + 0.5) / (n + 0.5)); s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * d.length / avg)); } return s; };
const qv = pairs.map((p) => e.embedSync(p.q)), dv = pairs.map((p) => e.embedSync(p.rest));
const idx = cm.termIndex(model);
const qt = pairs.map((p) => cm.embedWithModel(model, p.q, idx)), dt = pairs.map((p) => cm.embedWithModel(model, p.rest, idx));
const dot = (a, b) => { if (!a || !b) return 0; let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };
const mm = (xs) => { const lo = Math.min(...xs), hi = Math.max(...xs); return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 1)); };
const per = pairs.map((p, i) => ({ b: mm(docs.map((d) => bm25(p.q, d))), c: mm(dv.map((v) => dot(qv[i], v))), t: mm(dt.map((v) => dot(qt[i], v))) }));
for (const w of [0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 2]) {
  let mrr = 0;
  per.forEach((s, i) => {
    const f = s.b.map((b, j) => b + w * s.c[j] + 0.6 * s.t[j]);
    const rank = 1 + f.filter((x, j) => j !== i && x > f[i]).length; mrr += 1 / rank;
  });
  console.log(dir.split('/').pop(), 'w', w, 'mrr', (mrr / per.length).toFixed(4));
}
let mb = 0, mc = 0, mt = 0; per.forEach((s, i) => { for (const [k, arr] of [['b', s.b], ['c', s.c], ['t', s.t]]) { const r = 1 + arr.filter((x, j) => j !== i && x > arr[i]).length; if (k === 'b') mb += 1 / r; if (k === 'c') mc += 1 / r; if (k === 't') mt += 1 / r; } });
console.log('alone: bm25', (mb / per.length).toFixed(3), 'glove', (mc / per.length).toFixed(3), 'topic', (mt / per.length).toFixed(3));
// What the product's calibration (src/domain/search/calibration.ts) decides for this set with the
// builtin model: the weight (null keeps the default), the best gain and its standard error.
const cal = await import(join(process.cwd(), 'dist/src/domain/search/calibration.js'));
const decided = await cal.calibrateSemanticWeight(texts.slice(0, 2048), e, model);
console.log('calibration: weight', decided.weight, 'queries', decided.queries, 'best gain', decided.gain.toFixed(4), 'se', decided.standardError.toFixed(4), 'mrr', decided.mrr.map((m) => m.toFixed(3)).join(' '));
