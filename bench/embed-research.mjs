#!/usr/bin/env node
// Research for the builtin embedder (issue 3): how GloVe/SIF vectors should be fused with BM25.
// Not part of the tests. Needs `npm run build` first (it uses dist/).
//
//   node bench/embed-research.mjs [--data ../shared/data/scifact] [--cache-dir /tmp/trove-embed-research]
//        [--bm25 FILE] [--url URL --key KEY] [--quick]
//
// (a) dense-only retrieval (brute-force cosine over every document, "title\n\ntext" embedded);
// (b) BM25 ranks from a real daemon through the public API (an ephemeral daemon is started unless
//     --url is given; the corpus is ingested by ../shared/eval/beir.mjs --mode keyword, whose
//     figure is printed as the reference), saved to --bm25 so later runs skip the daemon;
// (c) fusion variants over BM25 top-100 + dense top-100, each over a curve of weights;
// (d) embedder variants: SIF a, common components removed (0/1/2, analytic vs fitted on the
//     corpus), int8 vs f32 vectors.
// Metrics are beir.mjs's: nDCG@10 (gain 2^rel − 1) and recall@100, means over test queries.
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: resolve(root, '../shared/data/scifact') },
    'cache-dir': { type: 'string', default: '/tmp/trove-embed-research' },
    bm25: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const cacheDir = args['cache-dir'];
mkdirSync(cacheDir, { recursive: true });
const dataName = args.data.replace(/\/+$/, '').split('/').pop();
const bm25File = args.bm25 ?? join(cacheDir, `bm25-${dataName}.json`);

const emb = await import(join(root, 'dist/src/domain/embed/builtin.js'));

// ------------------------------------------------------------------ data (as beir.mjs reads it)
const jsonl = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const corpus = jsonl(join(args.data, 'corpus.jsonl'));
let queries = jsonl(join(args.data, 'queries.jsonl'));
const qrels = new Map();
for (const line of readFileSync(join(args.data, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) {
  const [q, d, s] = line.trim().split(/\s+/);
  if (!q || !(Number(s) > 0)) continue;
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q).set(d, Number(s));
}
queries = queries.filter((q) => qrels.has(q._id));
const docIds = corpus.map((d) => String(d._id));
const docText = corpus.map((d) => `${d.title ?? ''}\n\n${d.text ?? ''}`);

function evaluate(rankedFor) {
  let ndcg = 0, recall = 0;
  const per = [];
  for (const q of queries) {
    const ranked = rankedFor(q);
    const rel = qrels.get(q._id);
    let dcg = 0;
    ranked.slice(0, 10).forEach((d, i) => { const g = rel.get(d) ?? 0; dcg += (2 ** g - 1) / Math.log2(i + 2); });
    const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
    const n = ideal ? dcg / ideal : 0;
    per.push(n);
    ndcg += n;
    recall += ranked.slice(0, 100).filter((d) => rel.has(d)).length / rel.size;
  }
  return { ndcg: ndcg / queries.length, recall: recall / queries.length, per };
}

// ------------------------------------------------------------------ (b) BM25 from the daemon
async function bm25FromDaemon() {
  let url = args.url;
  let key = args.key;
  let child = null;
  if (!url) {
    key = 'k';
    child = spawn(process.execPath, [join(root, 'bin/trove'), 'daemon', 'start', '--ephemeral', '--port', '0', '--json'], {
      env: { ...process.env, TROVE_CLUSTER_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errText = '';
    child.stderr.on('data', (b) => { errText += b; });
    url = await new Promise((ok, fail) => {
      let out = '';
      child.stdout.on('data', (b) => {
        out += b;
        for (const line of out.split('\n')) {
          try { const ev = JSON.parse(line); if (ev.event === 'listening') ok(ev.url); } catch { /* partial line */ }
        }
      });
      child.on('exit', (code) => fail(new Error(`daemon exited (${code}): ${errText.slice(-2000)}`)));
    });
    console.error(`[research] daemon at ${url} (pid ${child.pid})`);
  }
  try {
    const beir = join(root, '../shared/eval/beir.mjs');
    const reference = await new Promise((ok, fail) => execFile(process.execPath, [beir, '--url', url, '--key', key, '--data', args.data, '--mode', 'keyword'], { maxBuffer: 1 << 24 }, (err, stdout) => (err ? fail(err) : ok(stdout))));
    const refJson = JSON.parse(reference.slice(0, reference.lastIndexOf('}') + 1));
    console.error(`[research] beir.mjs --mode keyword: ndcg@10=${refJson['ndcg@10']} recall@100=${refJson['recall@100']}`);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const out = {};
    for (const q of queries) {
      const res = await fetch(`${url}/namespaces/eval/collections/${dataName}:search`, { method: 'POST', headers, body: JSON.stringify({ query: q.text, mode: 'keyword', limit: 100, result_unit: 'file' }) });
      if (!res.ok) throw new Error(`search -> ${res.status} ${await res.text()}`);
      const r = await res.json();
      out[q._id] = r.results.map((x) => [x.path.split('/').pop().replace(/\.md$/, ''), x.score]);
    }
    return { reference: { ndcg: refJson['ndcg@10'], recall: refJson['recall@100'] }, ranks: out };
  } finally {
    if (child) {
      child.kill('SIGTERM');
      await new Promise((ok) => { if (child.exitCode !== null) ok(); else child.on('exit', ok); });
    }
  }
}

let bm25;
if (existsSync(bm25File)) bm25 = JSON.parse(readFileSync(bm25File, 'utf8'));
else {
  bm25 = await bm25FromDaemon();
  writeFileSync(bm25File, JSON.stringify(bm25));
}

// ------------------------------------------------------------------ dense vectors
const D = 100;
function embedAll(e, texts) {
  const m = new Float32Array(texts.length * D);
  texts.forEach((t, i) => m.set(e.embedSync(t), i * D));
  return m;
}
/** cos[q][doc] for every test query. */
function cosines(e) {
  const docs = embedAll(e, docText);
  const qv = embedAll(e, queries.map((q) => q.text));
  const out = new Map();
  queries.forEach((q, qi) => {
    const c = new Float32Array(docIds.length);
    for (let j = 0; j < docIds.length; j++) {
      let s = 0;
      for (let k = 0; k < D; k++) s += qv[qi * D + k] * docs[j * D + k];
      c[j] = s;
    }
    out.set(q._id, c);
  });
  return out;
}
const docIndex = new Map(docIds.map((d, i) => [d, i]));
const topMemo = new WeakMap();
function topDense(c, n) {
  let top = topMemo.get(c);
  if (!top) {
    top = Array.from(c.keys()).sort((x, y) => c[y] - c[x]).slice(0, 100).map((i) => [docIds[i], c[i]]);
    topMemo.set(c, top);
  }
  return top.slice(0, n);
}

// ------------------------------------------------------------------ fusion methods
const mm = (xs) => { const lo = Math.min(...xs), hi = Math.max(...xs); return (x) => (hi > lo ? (x - lo) / (hi - lo) : 1); };
const zs = (xs) => { const m = xs.reduce((s, x) => s + x, 0) / xs.length; const sd = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length) || 1; return (x) => (x - m) / sd; };
const rank = (scored) => [...scored.entries()].sort((x, y) => y[1] - x[1]).slice(0, 100).map(([d]) => d);

const methods = {
  bm25: () => (q) => bm25.ranks[q._id].map(([d]) => d),
  dense: () => (q, c) => topDense(c, 100).map(([d]) => d),
  rrf: (wd, k = 60) => (q, c) => {
    const s = new Map();
    bm25.ranks[q._id].forEach(([d], i) => s.set(d, (s.get(d) ?? 0) + 1 / (k + i + 1)));
    topDense(c, 100).forEach(([d], i) => s.set(d, (s.get(d) ?? 0) + wd / (k + i + 1)));
    return rank(s);
  },
  // union of both top-100s; BM25 min-max over its list (absent = 0), cosine min-max over the union
  mmUnion: (w, depth = 100) => (q, c) => {
    const b = bm25.ranks[q._id];
    const bn = b.length ? mm(b.map(([, x]) => x)) : () => 0;
    const bmap = new Map(b.map(([d, x]) => [d, bn(x)]));
    const cand = new Set([...b.map(([d]) => d), ...topDense(c, depth).map(([d]) => d)]);
    const cn = mm([...cand].map((d) => c[docIndex.get(d)]));
    return rank(new Map([...cand].map((d) => [d, (bmap.get(d) ?? 0) + w * cn(c[docIndex.get(d)])])));
  },
  // union; z-scores (BM25 over its list, absent = its list's minimum; cosine over the union)
  zUnion: (w) => (q, c) => {
    const b = bm25.ranks[q._id];
    const bz = b.length ? zs(b.map(([, x]) => x)) : () => 0;
    const lo = b.length ? bz(Math.min(...b.map(([, x]) => x))) : 0;
    const bmap = new Map(b.map(([d, x]) => [d, bz(x)]));
    const cand = new Set([...b.map(([d]) => d), ...topDense(c, 100).map(([d]) => d)]);
    const cz = zs([...cand].map((d) => c[docIndex.get(d)]));
    return rank(new Map([...cand].map((d) => [d, (bmap.get(d) ?? lo) + w * cz(c[docIndex.get(d)])])));
  },
  // union; BM25 min-max (absent 0) + w · raw cosine (an absolute, model-calibrated scale)
  rawUnion: (w, depth = 100) => (q, c) => {
    const b = bm25.ranks[q._id];
    const bn = b.length ? mm(b.map(([, x]) => x)) : () => 0;
    const bmap = new Map(b.map(([d, x]) => [d, bn(x)]));
    const cand = new Set([...b.map(([d]) => d), ...topDense(c, depth).map(([d]) => d)]);
    return rank(new Map([...cand].map((d) => [d, (bmap.get(d) ?? 0) + w * c[docIndex.get(d)]])));
  },
  // union; BM25 / its top score (absent 0: a document matching no query term has BM25 0) +
  // w · cosine min-max over the union (cosn) or raw cosine
  maxUnion: (w, depth = 100, cosNorm = true) => (q, c) => {
    const b = bm25.ranks[q._id];
    const top = b.length ? Math.max(...b.map(([, x]) => x)) : 1;
    const bmap = new Map(b.map(([d, x]) => [d, top > 0 ? x / top : 0]));
    const cand = new Set([...b.map(([d]) => d), ...topDense(c, depth).map(([d]) => d)]);
    const cn = cosNorm ? mm([...cand].map((d) => c[docIndex.get(d)])) : (x) => x;
    return rank(new Map([...cand].map((d) => [d, (bmap.get(d) ?? 0) + w * cn(c[docIndex.get(d)])])));
  },
  // BM25 first stage (top 100), re-ranked by min-max BM25 + w · min-max cosine over that list
  rerankMM: (w) => (q, c) => {
    const b = bm25.ranks[q._id];
    if (!b.length) return topDense(c, 100).map(([d]) => d);
    const bn = mm(b.map(([, x]) => x));
    const cn = mm(b.map(([d]) => c[docIndex.get(d)]));
    return rank(new Map(b.map(([d, x]) => [d, bn(x) + w * cn(c[docIndex.get(d)])])));
  },
  // BM25 first stage, min-max BM25 + w · raw cosine
  rerankRaw: (w) => (q, c) => {
    const b = bm25.ranks[q._id];
    if (!b.length) return topDense(c, 100).map(([d]) => d);
    const bn = mm(b.map(([, x]) => x));
    return rank(new Map(b.map(([d, x]) => [d, bn(x) + w * c[docIndex.get(d)]])));
  },
  // BM25 first stage, rank-based: RRF of the BM25 order and the cosine order within the list
  rerankRRF: (wd, k = 60) => (q, c) => {
    const b = bm25.ranks[q._id];
    if (!b.length) return topDense(c, 100).map(([d]) => d);
    const byCos = [...b].sort((x, y) => c[docIndex.get(y[0])] - c[docIndex.get(x[0])]).map(([d]) => d);
    const s = new Map(b.map(([d], i) => [d, 1 / (k + i + 1)]));
    byCos.forEach((d, i) => s.set(d, s.get(d) + wd / (k + i + 1)));
    return rank(s);
  },
};

/** Two-sided sign test p-value of wins vs losses (ties dropped). */
function signP(w, l) {
  const n = w + l;
  if (n === 0) return 1;
  const k = Math.min(w, l);
  let logc = 0, p = 0;
  for (let i = 0; i <= k; i++) { if (i > 0) logc += Math.log((n - i + 1) / i); p += Math.exp(logc - n * Math.LN2); }
  return Math.min(1, 2 * p);
}
function run(name, makeRanker, cos, baseline) {
  const r = evaluate((q) => makeRanker(q, cos.get(q._id)));
  let wins = 0, losses = 0;
  if (baseline) r.per.forEach((x, i) => { if (x > baseline.per[i] + 1e-9) wins++; else if (x < baseline.per[i] - 1e-9) losses++; });
  return { name, ndcg: r.ndcg, recall: r.recall, wins, losses, per: r.per };
}
const fmt = (r, base) => `${r.name.padEnd(30)} ${r.ndcg.toFixed(4)}  ${r.recall.toFixed(4)}${base ? `  ${(r.ndcg - base.ndcg >= 0 ? '+' : '') + (r.ndcg - base.ndcg).toFixed(4)}  ${String(r.wins).padStart(3)}/${String(r.losses).padStart(3)}  p=${signP(r.wins, r.losses).toFixed(2)}` : ''}`;
const header = `${'method'.padEnd(30)} nDCG@10 recall@100  ΔnDCG   win/loss vs BM25 (sign test)`;

const t0 = performance.now();
const def = await emb.loadBuiltinEmbedder({ cacheDir: join(cacheDir, 'int8') });
console.log(`# builtin embedder: ${def.id}, loaded from ${def.loadedFrom} in ${(def.loadedFrom === 'json' ? def.buildMs : def.loadMs).toFixed(0)} ms, a=${def.options.a}, components=${def.options.components}`);
console.log(`# ${dataName}: ${docIds.length} docs, ${queries.length} test queries; BM25 through the API (beir.mjs): nDCG@10 ${bm25.reference.ndcg}, recall@100 ${bm25.reference.recall}`);
const dummy = new Map(queries.map((q) => [q._id, null]));
const base = run('bm25 (API ranks)', methods.bm25(), dummy, null);
console.log(`\n## (a)+(c) fusion with the default embedder\n${header}\n${fmt(base)}`);
const t1 = performance.now();
const cosDef = cosines(def);
console.log(`# embedded ${docIds.length} docs + ${queries.length} queries in ${(performance.now() - t1).toFixed(0)} ms`);
const lines = [];
const show = (r) => { lines.push(r); console.log(fmt(r, base)); };
show(run('dense only', methods.dense(), cosDef, base));
const W = args.quick ? [0.1, 0.3, 1] : [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1];
for (const w of [1, 0.5, 0.3, 0.2, 0.1]) show(run(`rrf k=60 dense×${w}`, methods.rrf(w), cosDef, base));
for (const w of W) show(run(`rerank100 rrf dense×${w}`, methods.rerankRRF(w), cosDef, base));
const WS = args.quick ? [0.1, 0.3, 1] : [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5];
for (const w of WS) show(run(`union mm+mm w=${w}`, methods.mmUnion(w), cosDef, base));
for (const w of WS) show(run(`union z+z w=${w}`, methods.zUnion(w), cosDef, base));
for (const w of WS) show(run(`union mm+rawcos w=${w}`, methods.rawUnion(w), cosDef, base));
for (const w of WS) show(run(`union max+mm w=${w}`, methods.maxUnion(w), cosDef, base));
for (const w of WS) show(run(`union max+rawcos w=${w}`, methods.maxUnion(w, 100, false), cosDef, base));
for (const depth of [10, 50]) for (const w of [0.2, 0.3, 0.5]) show(run(`union(dense top${depth}) mm+mm w=${w}`, methods.mmUnion(w, depth), cosDef, base));
for (const w of WS) show(run(`union(dense top20) mm+mm w=${w}`, methods.mmUnion(w, 20), cosDef, base));
for (const w of WS) show(run(`rerank100 mm+mm w=${w}`, methods.rerankMM(w), cosDef, base));
for (const w of WS) show(run(`rerank100 mm+rawcos w=${w}`, methods.rerankRaw(w), cosDef, base));

// Is the weight choice stable? Pick each family's best w on half the queries, score it on the other.
console.log(`\n## 2-fold check of the weight choice (best w on odd queries → its nDCG on even, and back)`);
const half = (r, parity) => r.per.filter((_, i) => i % 2 === parity).reduce((s, x) => s + x, 0) / Math.ceil(r.per.length / 2);
const families = {
  'union mm+mm': (w) => methods.mmUnion(w), 'union(top20) mm+mm': (w) => methods.mmUnion(w, 20), 'union z+z': (w) => methods.zUnion(w), 'union max+mm': (w) => methods.maxUnion(w),
  'union max+rawcos': (w) => methods.maxUnion(w, 100, false), 'rerank100 mm+mm': (w) => methods.rerankMM(w), 'rerank100 mm+rawcos': (w) => methods.rerankRaw(w),
};
for (const [fam, make] of Object.entries(families)) {
  const rs = WS.map((w) => ({ w, r: run('', make(w), cosDef, base) }));
  const parts = [0, 1].map((p) => {
    const best = rs.reduce((x, y) => (half(y.r, p) > half(x.r, p) ? y : x));
    return `w*=${best.w} → ${half(best.r, 1 - p).toFixed(4)} (BM25 ${half(base, 1 - p).toFixed(4)})`;
  });
  console.log(`${fam.padEnd(22)} odd→even: ${parts[0]}   even→odd: ${parts[1]}`);
}

// ------------------------------------------------------------------ (d) embedder variants
console.log(`\n## (d) embedder variants: dense only, and the recommended fusion (BM25 top-100 ∪ dense top-20, min-max + w·min-max)\n${'variant'.padEnd(40)} dense nDCG  R@100 | w=0.1  | w=0.2  | w=0.3  | w=0.5  | R@100 (w=0.2)`);
const variants = [];
const As = args.quick ? [1e-3, 3e-4, 1e-4] : [3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5];
for (const a of As) for (const components of [0, 1, 2]) variants.push({ name: `a=${a} pcs=${components}`, cacheDir: join(cacheDir, 'int8'), sif: { a, components } });
variants.push({ name: `a=${emb.DEFAULT_SIF_A} pcs=1 f32`, cacheDir: join(cacheDir, 'f32'), quantization: 'f32', sif: {} });
variants.push({ name: `a=${emb.DEFAULT_SIF_A} pcs=2 f32`, cacheDir: join(cacheDir, 'f32'), quantization: 'f32', sif: { components: 2 } });
for (const v of variants) await report(v);
// Components fitted on this corpus (SIF's original recipe) instead of the corpus-free estimate.
for (const k of [1, 2]) {
  const raw = docText.map((t) => def.rawSync(t)).filter(Boolean);
  const fitted = emb.fitCommonComponents(raw, k);
  const cosA = fitted.map((u, i) => def.table.storedComponents[i].reduce((s, x, j) => s + x * u[j], 0));
  await report({ name: `a=${emb.DEFAULT_SIF_A} pcs=${k} fitted (cos ${cosA.map((x) => Math.abs(x).toFixed(3)).join('/')})`, cacheDir: join(cacheDir, 'int8'), sif: { components: k, commonComponents: fitted } });
}

async function report(v) {
  const e = await emb.loadBuiltinEmbedder({ cacheDir: v.cacheDir, quantization: v.quantization, sif: v.sif });
  const c = cosines(e);
  const d = run('', methods.dense(), c, base);
  const f = [0.1, 0.2, 0.3, 0.5].map((w) => run('', methods.mmUnion(w, 20), c, base));
  console.log(`${v.name.padEnd(40)} ${d.ndcg.toFixed(4)}     ${d.recall.toFixed(4)} | ${f.map((r) => r.ndcg.toFixed(4)).join(' | ')} | ${f[1].recall.toFixed(4)}`);
}
console.log(`\n# total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
