// Evidence as a person reads it in `trove search` / `trove answer`: one line, cut to a window
// centred on the words that matched, those words marked. The API returns evidence as
// `{kind, text, location}` (retrieval-api.md, Evidence) with no highlight offsets, so the words are
// found here the way the TUI finds them (src/tui/highlight.ts: folded, lightly stemmed).
import { paint } from './colour.js';
import { highlightSegments, queryTerms, type Segment } from '../tui/highlight.js';

/** Default width of a snippet in characters. */
export const SNIPPET_CHARS = 200;

const ELLIPSIS = '…';

/**
 * `text` flattened to one line and cut to at most `width` characters around its densest run of
 * matched words: the window holding the most matches, centred on them, with its edges moved to
 * word boundaries and marked with … where text was cut. Without a match it is the start of the text.
 */
export function centredSnippet(text: string, terms: readonly string[], width = SNIPPET_CHARS): Segment[] {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= width) return highlightSegments(flat, terms);
  const spans = matchSpans(flat, terms);
  // Room for the text itself once both ellipses are placed.
  const room = Math.max(1, width - 2);
  let start = 0;
  if (spans.length > 0) {
    // The first match of the run that fits the most matches inside one window, and that run's end.
    let best = { first: 0, last: 0, count: 0 };
    for (let i = 0, j = 0; i < spans.length; i++) {
      if (j < i) j = i;
      while (j + 1 < spans.length && spans[j + 1]!.end - spans[i]!.start <= room) j++;
      if (j - i + 1 > best.count) best = { first: i, last: j, count: j - i + 1 };
    }
    const runStart = spans[best.first]!.start;
    const runEnd = Math.min(spans[best.last]!.end, runStart + room);
    const centre = (runStart + runEnd) / 2;
    start = Math.round(centre - room / 2);
    start = Math.max(0, Math.min(start, flat.length - room));
    // Do not start mid-word: step forward to the next word, unless that would pass the first match.
    if (start > 0 && /\S/.test(flat[start - 1]!) && /\S/.test(flat[start]!)) {
      const space = flat.indexOf(' ', start);
      if (space >= 0 && space < runStart) start = space + 1;
    }
  }
  let end = Math.min(flat.length, start + (start === 0 ? width - 1 : room));
  if (start === 0 && end === flat.length) return highlightSegments(flat, terms);
  // Do not end mid-word either, unless the window is one long word.
  if (end < flat.length && /\S/.test(flat[end - 1]!) && /\S/.test(flat[end]!)) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  const body = flat.slice(start, end).trim();
  const segments = highlightSegments(body, terms);
  if (start > 0) segments.unshift({ text: ELLIPSIS, match: false });
  if (end < flat.length) segments.push({ text: ELLIPSIS, match: false });
  return merge(segments);
}

/** Where the matched words sit in `text`, in order. */
export function matchSpans(text: string, terms: readonly string[]): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const segment of highlightSegments(text, terms)) {
    // Runs of adjacent matched words arrive as one segment; a word boundary splits them again.
    if (segment.match) {
      for (const word of segment.text.matchAll(/[\p{L}\p{N}]+/gu)) spans.push({ start: at + word.index, end: at + word.index + word[0].length });
    }
    at += segment.text.length;
  }
  return spans;
}

function merge(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (last && last.match === s.match) last.text += s.text;
    else if (s.text) out.push({ ...s });
  }
  return out;
}

/** Segments as one string: matched words bold yellow when `colour`, plain otherwise. */
export function renderSegments(segments: readonly Segment[], colour: boolean): string {
  return segments.map((s) => (s.match ? paint(s.text, ['bold', 'yellow'], colour) : s.text)).join('');
}

/** The one-line snippet of `text` for `query`, styled when `colour`. */
export function snippetLine(text: string, query: string, colour: boolean, width = SNIPPET_CHARS): string {
  return renderSegments(centredSnippet(text, queryTerms(query), width), colour);
}
