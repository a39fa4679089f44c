#!/usr/bin/env node
// Research: can the built-in model's meaning tell a question the collection cannot answer from an
// answerable one worded unlike its source? Not part of the tests; needs `npm run build` first; run
// from the project root:   node bench/decline-research.mjs [SHARED_DATA_DIR]
//
// For fixtures/answers/unanswerable.jsonl (SciFact) and the first 100 judged questions of SciFact,
// Cranfield and CISI: a plain BM25 top 10 over the abstracts, and over their pairs of adjacent
// sentences the features support.ts weighs (coverage, matched) plus the best cosine of the built-in
// embedding (GloVe SIF) between the question and a pair. Then the most questions of the twenty a
// rule "decline unless cosine ≥ s or coverage ≥ c or matched ≥ m" declines, for each number of
// answerable questions it also declines. docs/ranking.md, "Answers: declining a question", quotes it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = (p) => import(pathToFileURL(join(process.cwd(), 'dist/src', p)).href);
const { termsOf, termWords, questionText, sentenceSpans } = await dist('domain/answer/extractive.js');
const { loadBuiltinEmbedder, defaultShippedModelPath } = await dist('domain/embed/builtin.js');
const dataDir = process.argv[2] ?? '../shared/data';
const jsonl = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const embedder = await loadBuiltinEmbedder({ cacheDir: join(process.cwd(), '.cache-decline-research'), shippedPath: defaultShippedModelPath() });
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

function load(dir) {
  const docs = jsonl(join(dir, 'corpus.jsonl')).map((d) => {
    const text = `${d.title ?? ''}\n\n${d.text}`;
    const tf = new Map();
    const terms = termsOf(text);
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { id: d._id, text, len: terms.length, tf };
  });
  const df = new Map();
  const postings = new Map();
  docs.forEach((d, i) => {
    for (const [t, f] of d.tf) {
      df.set(t, (df.get(t) ?? 0) + 1);
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t).push([i, f]);
    }
  });
  const rel = new Map();
  for (const line of readFileSync(join(dir, 'qrels/test.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.split(/\s+/);
    if (Number(s) > 0) rel.set(q, (rel.get(q) ?? new Set()).add(d));
  }
  const queries = jsonl(join(dir, 'queries.jsonl')).filter((q) => rel.has(q._id)).slice(0, 100);
  return { docs, df, postings, avg: docs.reduce((s, d) => s + d.len, 0) / docs.length, queries, rel };
}

function features(c, question) {
  const n = c.docs.length;
  const idf = (t) => Math.log(1 + (n - (c.df.get(t) ?? 0) + 0.5) / ((c.df.get(t) ?? 0) + 0.5));
  const terms = [...termWords(questionText(question)).keys()].map((t) => [t, idf(t)]);
  const total = terms.reduce((s, [, w]) => s + w, 0);
  const scores = new Map();
  for (const [t, w] of terms) for (const [i, f] of c.postings.get(t) ?? []) scores.set(i, (scores.get(i) ?? 0) + (w * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * c.docs[i].len) / c.avg)));
  const top = [...scores].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([i]) => c.docs[i]);
  const q = embedder.embedSync(question);
  let coverage = 0;
  let matched = 0;
  let cosine = -1;
  for (const d of top) {
    const spans = sentenceSpans(d.text);
    const sets = spans.map((s) => new Set(termsOf(d.text.slice(s.start, s.end))));
    const whole = new Set(sets.flatMap((s) => [...s]));
    matched = Math.max(matched, terms.reduce((s, [t, w]) => s + (whole.has(t) ? w : 0), 0));
    for (let i = 0; i < spans.length; i++) {
      const held = terms.reduce((s, [t, w]) => s + (sets[i].has(t) || sets[i + 1]?.has(t) ? w : 0), 0);
      coverage = Math.max(coverage, held / (total || 1));
      cosine = Math.max(cosine, dot(q, embedder.embedSync(d.text.slice(spans[i].start, (spans[i + 1] ?? spans[i]).end))));
    }
  }
  return { coverage, matched: matched / Math.log(1 + (n + 0.5) / 0.5), cosine, top: top.map((d) => d.id) };
}

const rows = [];
const scifact = load(join(dataDir, 'scifact'));
for (const q of jsonl(new URL('../fixtures/answers/unanswerable.jsonl', import.meta.url))) rows.push({ set: 'unanswerable', ...features(scifact, q.text) });
for (const name of ['scifact', 'cranfield', 'cisi']) {
  const c = name === 'scifact' ? scifact : load(join(dataDir, name));
  for (const q of c.queries) {
    const f = features(c, q.text);
    rows.push({ set: name, retrieved: f.top.some((d) => c.rel.get(q._id).has(d)), ...f });
  }
}
const steps = (from, to, step) => Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => +(from + i * step).toFixed(3));
const best = new Map();
for (const s of [...steps(0.5, 0.9, 0.01), 2]) {
  for (const c of [...steps(0.3, 0.6, 0.02), 2]) {
    for (const m of [...steps(1.2, 3, 0.1), 99]) {
      const declined = (r) => !(r.cosine >= s || r.coverage >= c || r.matched >= m);
      const count = (set, extra = () => true) => rows.filter((r) => r.set === set && declined(r) && extra(r)).length;
      const answerable = count('scifact') + count('cranfield') + count('cisi');
      const line = { unanswerable: count('unanswerable'), scifact: count('scifact'), scifact_retrieved: count('scifact', (r) => r.retrieved), cranfield: count('cranfield'), cisi: count('cisi'), cosine: s, coverage: c, matched: m };
      const held = best.get(answerable);
      if (!held || held.unanswerable < line.unanswerable) best.set(answerable, line);
    }
  }
}
let most = -1;
for (const [answerable, line] of [...best].sort((a, b) => a[0] - b[0])) {
  if (line.unanswerable <= most) continue;
  most = line.unanswerable;
  console.log(JSON.stringify({ answerable_declined: answerable, ...line }));
}
