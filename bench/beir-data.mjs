// A BEIR-layout data set as the research scripts read it: the corpus, the test qrels (graded,
// positive grades only) and the queries that have qrels.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const jsonl = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

export function loadBeir(dir) {
  const corpus = jsonl(join(dir, 'corpus.jsonl'));
  const qrels = new Map();
  for (const line of readFileSync(join(dir, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split(/\s+/);
    if (!q || !(Number(s) > 0)) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q).set(d, Number(s));
  }
  const queries = jsonl(join(dir, 'queries.jsonl')).filter((q) => qrels.has(q._id));
  return { corpus, qrels, queries };
}

/**
 * Raw FTS5 as ../shared/eval/fts5-baseline.mjs ranks: title + text, porter unicode61, the query's
 * words OR'd, bm25()'s defaults. Returns the top 100 of a word list as { r: corpus index + 1, s }.
 */
export function rawFts5(corpus) {
  const Database = createRequire(join(process.cwd(), 'package.json'))('better-sqlite3');
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, text, tokenize='porter unicode61')");
  const ins = db.prepare('INSERT INTO docs(rowid, title, text) VALUES (?, ?, ?)');
  db.transaction(() => corpus.forEach((d, i) => ins.run(i + 1, d.title ?? '', d.text ?? '')))();
  const top100 = db.prepare('SELECT rowid AS r, -bm25(docs) AS s FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100');
  return (words) => (words.length ? top100.all([...new Set(words)].map((t) => `"${t}"`).join(' OR ')) : []);
}

/** A query's words as fts5-baseline.mjs splits them. */
export const queryWords = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Scales values to 0..1 over their range (all 0 when they are equal). */
export function minmax(xs) {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0));
}

/** nDCG@10 as beir.mjs computes it, of corpus indexes + 1 ranked best first. */
export function ndcg10(corpus, rel, rankedRowids) {
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  let dcg = 0;
  rankedRowids.slice(0, 10).forEach((r, i) => (dcg += (2 ** (rel.get(String(corpus[r - 1]._id)) ?? 0) - 1) / Math.log2(i + 2)));
  return ideal ? dcg / ideal : 0;
}

/**
 * What the collection-model research scripts share: the data set, the collection model as the
 * product trains it (64 dimensions, 2 iterations, here on the first 2,048 texts), each document's
 * vector in it, and per query raw FTS5's top 100 with min-max scaled BM25 and model cosines.
 * Reads dist/ (needs `npm run build`); run from the project root.
 */
export async function modelFirstStage(dir) {
  const model = await import(pathToFileURL(join(process.cwd(), 'dist/src/domain/search/collection-model.js')).href);
  const { corpus, qrels, queries } = loadBeir(dir);
  const texts = corpus.map((d) => `${d.title ?? ''}\n${d.text ?? ''}`);
  const learned = model.trainCollectionModel(texts.slice(0, 2048), { dimensions: 64, iterations: 2 });
  const index = model.termIndex(learned);
  const docVec = texts.map((t) => model.embedWithModel(learned, t, index));
  const top100 = rawFts5(corpus);
  /** Min-max scaled cosines of a vector (none: all 0) with each candidate's document. */
  const cosines = (v, cands) => minmax(cands.map((c) => (v && docVec[c.r - 1] ? model.cosine(v, docVec[c.r - 1]) : 0)));
  const stage = (q) => {
    const cands = top100(queryWords(q.text));
    const qv = model.embedWithModel(learned, q.text, index);
    return { rel: qrels.get(q._id), cands, qv, bm25: minmax(cands.map((c) => c.s)), cos: cosines(qv, cands) };
  };
  return { corpus, queries, texts, model, learned, docVec, cosines, stage };
}
