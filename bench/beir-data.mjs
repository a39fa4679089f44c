// A BEIR-layout data set as the research scripts read it: the corpus, the test qrels (graded,
// positive grades only) and the queries that have qrels.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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
