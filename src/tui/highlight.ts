// Marking a query's words in evidence text. The daemon's keyword index stems (porter) and folds
// diacritics, so a plain substring match would miss "purring" for "purr"; terms here are compared
// the same loose way, by a folded, lightly stemmed form of each word.

import { hasCjk, splitCjkRuns } from '../contract/cjk.js';
import { STOPWORDS } from '../contract/stopwords.js';

export interface Segment {
  text: string;
  match: boolean;
}

const WORD = /[\p{L}\p{N}]+/gu;

function fold(word: string): string {
  return word.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** A rough stem: enough that plural, past and -ing forms meet their base word. */
export function stem(word: string): string {
  let w = fold(word);
  for (const suffix of ['ingly', 'edly', 'ing', 'ies', 'ied', 'ed', 'es', 'ly', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      if (suffix === 'ies' || suffix === 'ied') w += 'y';
      break;
    }
  }
  // "rate" and "rates" (→ "rat"): a silent final e goes, so the base word meets its -es/-ed forms.
  if (w.length >= 4 && w.endsWith('e')) w = w.slice(0, -1);
  // "purring" → "purr" → "pur": doubled consonants left by -ing/-ed collapse on both sides alike.
  if (w.length >= 4 && w[w.length - 1] === w[w.length - 2]) w = w.slice(0, -1);
  return w;
}

/** The query's words worth marking: stopwords go unless nothing else is left. */
export function queryTerms(query: string): string[] {
  // A Han or kana run is a word of its own where it meets other letters, as the keyword stage splits it.
  // Kana keep their voicing marks (folding would turn ガ into カ, another sound).
  const words = [...new Set((query.match(WORD) ?? []).flatMap(splitCjkRuns).map((w) => (hasCjk(w) ? w : fold(w))))];
  // The words the keyword stage drops carry no ranking signal; marking every "the" would bury the
  // words that matched.
  const content = words.filter((w) => !STOPWORDS.has(w));
  return content.length > 0 ? content : words;
}

/** Splits `text` into runs, marking each word that matches a query term. */
export function highlightSegments(text: string, terms: readonly string[]): Segment[] {
  if (terms.length === 0 || text.length === 0) return text.length === 0 ? [] : [{ text, match: false }];
  const stems = new Set(terms.map(stem));
  const folded = new Set(terms.map(fold));
  const segments: Segment[] = [];
  let last = 0;
  const push = (piece: string, match: boolean) => {
    if (!piece) return;
    const previous = segments[segments.length - 1];
    if (previous && previous.match === match) previous.text += piece;
    else segments.push({ text: piece, match });
  };
  // Chinese and Japanese put no spaces between words: a term of theirs is marked wherever it stands
  // inside a run, as the keyword index's bigrams find it (src/contract/cjk.ts), longest first.
  const cjkTerms = terms.filter(hasCjk).sort((a, b) => b.length - a.length);
  for (const found of text.matchAll(WORD)) {
    const word = found[0];
    const at = found.index;
    if (cjkTerms.length > 0 && hasCjk(word)) {
      for (let i = 0; i < word.length; ) {
        const term = cjkTerms.find((c) => word.startsWith(c, i));
        if (!term) {
          i++;
          continue;
        }
        push(text.slice(last, at + i), false);
        push(word.slice(i, i + term.length), true);
        last = at + i + term.length;
        i += term.length;
      }
      continue;
    }
    if (!folded.has(fold(word)) && !stems.has(stem(word))) continue;
    push(text.slice(last, at), false);
    push(word, true);
    last = at + word.length;
  }
  push(text.slice(last), false);
  return segments;
}

/**
 * Evidence flattened to one line and cut to `width` characters, starting shortly before the first
 * marked word when that word would otherwise fall off the end.
 */
export function snippet(text: string, terms: readonly string[], width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (width <= 1) return flat.slice(0, Math.max(0, width));
  if (flat.length <= width) return flat;
  const first = highlightSegments(flat, terms).findIndex((s) => s.match);
  let start = 0;
  if (first > 0) {
    const offset = highlightSegments(flat, terms)
      .slice(0, first)
      .reduce((n, s) => n + s.text.length, 0);
    if (offset > width * 0.6) {
      start = Math.max(0, offset - Math.floor(width / 4));
      const space = flat.indexOf(' ', start);
      if (space >= 0 && space < offset) start = space + 1;
    }
  }
  const lead = start > 0 ? '…' : '';
  const room = width - lead.length;
  const rest = flat.slice(start);
  return lead + (rest.length <= room ? rest : rest.slice(0, room - 1) + '…');
}
