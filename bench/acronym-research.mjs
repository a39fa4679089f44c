#!/usr/bin/env node
// Research for issue 16, item 3: abbreviations learnt from the collection ("long form (SF)", after
// Schwartz and Hearst's rule: the short form's letters in order, its first letter starting the long
// form's first word, at most min(|SF| + 5, 2|SF|) words). A query word written as an abbreviation
// (an upper-case letter after its first character, or all capitals and digits) is expanded with
// its commonest long form, OR'd into raw FTS5's query. Not part of the tests; needs `npm run build`;
// run from the project root:  node bench/acronym-research.mjs DATA_DIR
import { modelFirstStage, ndcg10, queryWords, rawFts5 } from './beir-data.mjs';

const { corpus, queries, stage } = await modelFirstStage(process.argv[2]);
const top100 = rawFts5(corpus);
const longForms = new Map();
for (const d of corpus) {
  const text = `${d.title ?? ''}. ${d.text ?? ''}`;
  for (const m of text.matchAll(/\(([A-Za-z0-9][\w-]{1,9})\)/g)) {
    const short = m[1];
    if (!/[A-Z]/.test(short)) continue;
    const letters = short.toLowerCase().replace(/[^a-z0-9]/g, '');
    const before = text.slice(0, m.index).split(/[.;:!?()[\]]/).pop().trim().split(/\s+/);
    let found = null;
    for (let n = 1; n <= Math.min(letters.length + 5, letters.length * 2, before.length) && !found; n++) {
      const words = before.slice(before.length - n);
      const long = words.join(' ').toLowerCase();
      if (words[0]?.[0]?.toLowerCase() !== letters[0]) continue;
      let i = long.length - 1;
      let ok = true;
      for (let s = letters.length - 1; s >= 0 && ok; s--) {
        while (i >= 0 && (long[i] !== letters[s] || (s === 0 && i > 0 && /[a-z0-9]/.test(long[i - 1])))) i--;
        ok = i >= 0;
        i--;
      }
      if (ok && long.includes(' ')) found = long;
    }
    if (!found) continue;
    const key = short.toLowerCase();
    const counts = longForms.get(key) ?? new Map();
    counts.set(found, (counts.get(found) ?? 0) + 1);
    longForms.set(key, counts);
  }
}
const commonest = new Map([...longForms].map(([s, counts]) => [s, [...counts].sort((a, b) => b[1] - a[1])[0][0]]));
let expanded = 0;
let plain = 0;
let withLongForms = 0;
let fused = 0;
for (const q of queries) {
  const { rel, cands, bm25, cos } = stage(q);
  const abbreviations = (q.text.match(/[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []).filter((t) => /[A-Z]/.test(t.slice(1)) || /^[A-Z0-9]+$/.test(t));
  const extra = abbreviations.flatMap((t) => queryWords(commonest.get(t.toLowerCase()) ?? ''));
  if (extra.length) expanded++;
  plain += ndcg10(corpus, rel, cands.map((c) => c.r));
  withLongForms += ndcg10(corpus, rel, (extra.length ? top100([...queryWords(q.text), ...extra]) : cands).map((c) => c.r));
  fused += ndcg10(corpus, rel, cands.map((c, i) => ({ r: c.r, s: bm25[i] + 0.6 * cos[i] })).sort((x, y) => y.s - x.s).map((d) => d.r));
}
const n = queries.length;
console.log(`${commonest.size} abbreviations learnt; ${expanded}/${n} queries expanded`);
console.log(`raw FTS5 ${(plain / n).toFixed(4)}, with long forms ${(withLongForms / n).toFixed(4)} (fused with the model, unexpanded: ${(fused / n).toFixed(4)})`);
