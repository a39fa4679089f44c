// Evidence text: the part of a passage that shows why it matched. A whole passage can run to
// thousands of characters; a result list of a hundred of them would be mostly unread text.

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

const SENTENCE_END = /[.!?]+\s+|\n+/g;

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
  const hits = starts.map((from, i) => {
    const sentence = text.slice(from, endOf(i)).toLowerCase();
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
