// Evidence text: the part of a passage that shows why it matched. A whole passage can run to
// thousands of characters; a result list of a hundred of them would be mostly unread text.
import { commonJsonPath, isWithinJsonPath, jsonPathSteps } from '../ingest/json-path.js';
import type { JsonSpan } from '../ingest/types.js';
import { wordsOf } from './query-text.js';

/** Evidence text longer than this is cut to the best-matching run of sentences. */
export const MAX_EVIDENCE_CHARS = 480;

export interface Snippet {
  /** Offsets into the passage text. */
  start: number;
  end: number;
}

/** A term's first five letters stand in for its stem (the index stems with Porter; this only picks sentences). */
function stemKey(word: string): string {
  return word.slice(0, 5);
}

// Chinese and Japanese end sentences with 。！？ and no space after them.
const SENTENCE_END = /[.!?]+\s+|[。！？]+|\n+/g;

export function bestSnippet(text: string, terms: readonly string[], maxChars = MAX_EVIDENCE_CHARS): Snippet {
  if (text.length <= maxChars) return { start: 0, end: text.length };
  const keys = [...new Set(terms.map(stemKey))];
  // An exec loop over a shared regex: matchAll would compile a fresh copy per call.
  const starts = [0];
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(text); m; m = SENTENCE_END.exec(text)) if (m.index + m[0].length < text.length) starts.push(m.index + m[0].length);
  const endOf = (i: number) => (i + 1 < starts.length ? starts[i + 1]! : text.length);
  // Substring tests per sentence are an order of magnitude cheaper than tokenising every word, and
  // good enough to choose which sentences to show.
  // Lower-cased once, not per sentence (most of the cost at a hundred results); when lower-casing
  // changes the length (a few non-ASCII letters), offsets would shift, so then per sentence.
  const lower = text.toLowerCase();
  const sameOffsets = lower.length === text.length;
  const hits = starts.map((from, i) => {
    const sentence = sameOffsets ? lower.slice(from, endOf(i)) : text.slice(from, endOf(i)).toLowerCase();
    let n = 0;
    for (const key of keys) if (sentence.includes(key)) n++;
    return n;
  });
  // Two pointers: the run of whole sentences within maxChars holding the most matching terms.
  let best = { from: 0, to: -1, hits: -1 };
  let windowHits = 0;
  let from = 0;
  for (let to = 0; to < starts.length; to++) {
    windowHits += hits[to]!;
    while (from < to && endOf(to) - starts[from]! > maxChars) windowHits -= hits[from++]!;
    if (endOf(to) - starts[from]! <= maxChars && windowHits > best.hits) best = { from, to, hits: windowHits };
  }
  let start: number;
  let end: number;
  if (best.to < 0) {
    // Every sentence is longer than maxChars: cut the one with the most matches.
    const i = hits.indexOf(Math.max(...hits));
    start = starts[i]!;
    end = Math.min(endOf(i), start + maxChars);
  } else {
    start = starts[best.from]!;
    end = endOf(best.to);
  }
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  while (start < end && /\s/.test(text[start]!)) start++;
  return { start, end };
}

export interface JsonSnippet extends Snippet {
  /** The JSON path of the value (or smallest object) the snippet shows. */
  path: string;
}

/**
 * Evidence in a JSON passage (one line per value, `spans` saying where each lies and its path):
 * the value that best matches the query's words, widened to its smallest enclosing object or
 * array that holds every query word the passage matched, as long as that stays within maxChars.
 * A passage matching none of the words (a semantic match) falls back to bestSnippet, located at
 * the common ancestor of the values it shows.
 */
export function bestJsonSnippet(text: string, spans: readonly JsonSpan[], terms: readonly string[], maxChars = MAX_EVIDENCE_CHARS): JsonSnippet {
  const matches = spans.map(([start, end]) => termMatches(text.slice(start, end), terms));
  const score = (m: readonly number[]) => m.reduce((sum, x) => sum + x, 0);
  const coverage = (from: number, to: number) => terms.filter((_, k) => matches.slice(from, to + 1).some((m) => m[k]! > 0)).length;
  const matched = coverage(0, spans.length - 1);
  if (matched === 0) {
    const cut = bestSnippet(text, terms, maxChars);
    const shown = spans.filter(([start, end]) => start < cut.end && end > cut.start).map(([, , path]) => path);
    return { ...cut, path: shown.length > 0 ? shown.reduce(commonJsonPath) : (spans[0]?.[2] ?? '$') };
  }
  let best = 0;
  for (let i = 1; i < spans.length; i++) if (score(matches[i]!) > score(matches[best]!)) best = i;
  let lo = best;
  let hi = best;
  let path = spans[best]![2];
  let covered = coverage(lo, hi);
  // Values of one object are adjacent (extraction is depth-first), so each ancestor is a run around `best`.
  const steps = jsonPathSteps(path);
  for (let depth = steps.length - 1; depth >= 0 && covered < matched; depth--) {
    const ancestor = '$' + steps.slice(0, depth).join('');
    let from = lo;
    let to = hi;
    while (from > 0 && isWithinJsonPath(spans[from - 1]![2], ancestor)) from--;
    while (to + 1 < spans.length && isWithinJsonPath(spans[to + 1]![2], ancestor)) to++;
    if (spans[to]![1] - spans[from]![0] > maxChars) break;
    [lo, hi, path] = [from, to, ancestor];
    covered = coverage(lo, hi);
  }
  const start = spans[lo]![0];
  const end = spans[hi]![1];
  if (end - start <= maxChars) return { start, end, path };
  // One value longer than maxChars: its best run of sentences.
  const inner = bestSnippet(text.slice(start, end), terms, maxChars);
  return { start: start + inner.start, end: start + inner.end, path };
}

/**
 * Per query term, how well a value's text matches it: 2 for the word itself, 1 for a word sharing
 * its stem (approximated, like stemKey, by its first five letters, for terms of 3 letters or
 * more), else 0. Exact words win, so a rare `marker337` picks its own value over `marker338`.
 */
function termMatches(value: string, terms: readonly string[]): number[] {
  const words = new Set(wordsOf(value));
  return terms.map((term) => {
    if (words.has(term)) return 2;
    if (term.length < 3) return 0;
    const key = stemKey(term);
    for (const word of words) if (word.startsWith(key)) return 1;
    return 0;
  });
}
