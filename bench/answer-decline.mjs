#!/usr/bin/env node
// How many questions a collection cannot answer are declined, through the public HTTP API.
//
//   node bench/answer-decline.mjs --url URL --key KEY --collection eval/scifact \
//        [--questions fixtures/answers/unanswerable.jsonl] [--mode standard]
//
// The collection is one beir.mjs ingested (namespace/collection). A declined answer cites nothing
// and lists no sources (docs/decisions.md, Answers). Prints one line per question, then the count.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.TROVE_URL ?? 'http://127.0.0.1:7410' },
    key: { type: 'string', default: process.env.TROVE_KEY ?? '' },
    collection: { type: 'string', default: 'eval/scifact' },
    questions: { type: 'string', default: new URL('../fixtures/answers/unanswerable.jsonl', import.meta.url).pathname },
    mode: { type: 'string', default: 'standard' },
  },
});
const [ns, name] = a.collection.split('/');
const questions = readFileSync(a.questions, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
let declined = 0;
for (const q of questions) {
  const res = await fetch(`${a.url.replace(/\/+$/, '')}/namespaces/${ns}/collections/${name}:answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: q.text, mode: a.mode }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${q.id}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  const cites = /\[\[SRC:\d+\]\]/.test(body.answer);
  if (!cites) declined++;
  console.log(`${cites ? 'answered' : 'declined'}  ${q.id}  ${q.text}${cites ? `\n          ${body.answer.slice(0, 160).replace(/\s+/g, ' ')}` : ''}`);
}
console.log(`declined ${declined} of ${questions.length}`);
