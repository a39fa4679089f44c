// The research `verify` stage (decisions.md §7): every marker must point at evidence that supports
// the sentence it follows. A sentence is supported when it appears in the source's evidence, or when
// most of its content words do (a model may rephrase); markers that fail are removed, and
// `is_cited` follows what is left.

import { citedKeys, findMarkers, stripMarkers } from './markers.js';

type Sources = Record<string, { is_cited: boolean; evidence: { text: string }[] }>;

/** Share of a sentence's content words its source must contain. */
const MIN_SUPPORT = 0.6;

const words = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => !STOP.has(w));
const STOP = new Set(['the', 'and', 'for', 'are', 'was', 'were', 'that', 'this', 'with', 'from', 'have', 'has', 'not', 'but', 'its', 'they', 'their', 'which', 'been', 'also']);
const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

export function supports(sentence: string, evidence: readonly { text: string }[]): boolean {
  const plain = normalize(stripMarkers(sentence));
  if (plain === '') return false;
  const joined = normalize(evidence.map((e) => e.text).join(' '));
  if (joined.includes(plain)) return true;
  const needed = words(plain);
  if (needed.length === 0) return false;
  const have = new Set(words(joined));
  return needed.filter((w) => have.has(w)).length / needed.length >= MIN_SUPPORT;
}

export function verifyCitations<S extends Sources>(answer: string, sources: S): { answer: string; sources: S; cited: string[] } {
  let lastEnd = 0;
  let sentenceStart = 0;
  const out: string[] = [];
  for (const m of findMarkers(answer)) {
    const at = m.index;
    // The sentence a marker follows runs from the previous marker (or sentence end) to the marker.
    const before = answer.slice(sentenceStart, at);
    out.push(answer.slice(lastEnd, at));
    const source = sources[m.key];
    if (source && supports(before, source.evidence)) out.push(answer.slice(at, at + m.length));
    lastEnd = at + m.length;
    if (!/^\s*\[\[/.test(answer.slice(lastEnd))) sentenceStart = lastEnd;
  }
  out.push(answer.slice(lastEnd));
  const verified = out.join('').replace(/[ \t]{2,}/g, ' ').replace(/ +([.,;:!?])/g, '$1').trim();
  const cited = citedKeys(verified);
  const next = {} as S;
  for (const [k, v] of Object.entries(sources)) (next as Sources)[k] = { ...v, is_cited: cited.includes(k) };
  return { answer: verified, sources: next, cited };
}
