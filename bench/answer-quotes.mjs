// Answers that quote their source, measured on a BEIR set (issue 16's answer target): asks the first
// N labelled queries as answers of a collection that ../shared/eval/beir.mjs has already ingested,
// and checks what beir.mjs does not: each marker's sentence (the text since the marker before it)
// is in the evidence its source returns, reads as a whole sentence, and a refusal marks no source
// as used. Also counts, as beir.mjs does, answers citing a relevant document.
//   node bench/answer-quotes.mjs --url URL --key KEY --data ../shared/data/scifact [--n 100]
//        [--namespace eval] [--collection NAME] [--answer-mode standard]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:7410' },
    key: { type: 'string', default: '' },
    data: { type: 'string' },
    n: { type: 'string', default: '100' },
    namespace: { type: 'string', default: 'eval' },
    collection: { type: 'string' },
    'answer-mode': { type: 'string', default: 'standard' },
  },
});
if (!a.data || !a.key) {
  console.error('usage: answer-quotes.mjs --data DIR --key KEY [--url URL] [--n 100] [--namespace eval] [--collection NAME]');
  process.exit(2);
}
// The collection name beir.mjs gives a data set.
const name = a.collection ?? a.data.replace(/\/+$/, '').split('/').pop().replace(/[^a-z0-9_-]/gi, '-').toLowerCase();
const headers = { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' };
const jsonl = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

const qrels = new Map();
for (const line of readFileSync(join(a.data, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) {
  const [q, d, s] = line.trim().split(/\s+/);
  if (!q || !(Number(s) > 0)) continue;
  if (!qrels.has(q)) qrels.set(q, new Set());
  qrels.get(q).add(d);
}
const queries = jsonl(join(a.data, 'queries.jsonl')).filter((q) => qrels.has(q._id)).slice(0, Number(a.n));

const collapse = (text) => text.replace(/\s+/g, ' ').trim();
const docOf = (path) => path.split('/').pop().replace(/\.md$/, '');
const MARKER = /\[\[SRC:(\d{4})\]\]/g;

let answered = 0, refusals = 0, refusalsCiting = 0, citesRelevant = 0;
let markers = 0, inEvidence = 0, wholeSentences = 0, firstEvidenceHoldsFirstQuote = 0, citedSources = 0;
const misses = [];
const notWhole = [];
for (const q of queries) {
  const res = await fetch(`${a.url}/namespaces/${a.namespace}/collections/${name}:answer`, { method: 'POST', headers, body: JSON.stringify({ query: q.text, mode: a['answer-mode'] }) });
  if (res.status !== 200) throw new Error(`answer → ${res.status} ${(await res.text()).slice(0, 300)}`);
  const r = await res.json();
  const sources = r.sources ?? {};
  const cited = Object.entries(sources).filter(([, s]) => s.is_cited);
  const hits = [...r.answer.matchAll(MARKER)];
  if (hits.length === 0) {
    refusals++;
    if (cited.length > 0) refusalsCiting++;
    continue;
  }
  answered++;
  if (cited.some(([, s]) => qrels.get(q._id).has(docOf(s.path)))) citesRelevant++;
  let from = 0;
  const firstQuote = new Map();
  for (const m of hits) {
    const said = collapse(r.answer.slice(from, m.index));
    from = m.index + m[0].length;
    if (!said) continue;
    const key = `SRC:${m[1]}`;
    markers++;
    const evidence = (sources[key]?.evidence ?? []).map((e) => collapse(e.text));
    if (evidence.some((e) => e.includes(said))) inEvidence++;
    else misses.push({ query: q._id, key, said: said.slice(0, 160) });
    // A first word all in lower case goes on from something before it; "mTOR" or "p53" may open a sentence.
    if (/[.!?:;]$|^[A-Z][^.]*$/.test(said) && !/^\p{Ll}[\p{Ll}'’-]*(?![\p{L}\p{N}])/u.test(said)) wholeSentences++;
    else notWhole.push({ query: q._id, key, said: said.slice(0, 160) });
    if (!firstQuote.has(key)) firstQuote.set(key, said);
  }
  for (const [key, said] of firstQuote) {
    citedSources++;
    if (collapse(sources[key]?.evidence?.[0]?.text ?? '').includes(said)) firstEvidenceHoldsFirstQuote++;
  }
}
const round = (x) => Math.round(x * 1e4) / 1e4;
console.log(
  JSON.stringify({
    bench: 'answer-quotes',
    data: a.data,
    queries: queries.length,
    answered,
    refusals,
    refusals_marking_sources_used: refusalsCiting,
    cites_relevant_of_all: round(citesRelevant / queries.length),
    markers,
    marker_sentence_in_evidence: round(inEvidence / Math.max(1, markers)),
    marker_sentence_whole: round(wholeSentences / Math.max(1, markers)),
    first_evidence_holds_first_quote: round(firstEvidenceHoldsFirstQuote / Math.max(1, citedSources)),
    misses: misses.slice(0, 5),
    not_whole: notWhole.slice(0, 5),
  }),
);
