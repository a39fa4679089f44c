// An answer's [[SRC:nnnn]] markers as footnote numbers, numbered in the order the answer first
// cites them, with the sources list that goes under it.
import type { SourceEntry } from './types.js';

export interface Footnote {
  number: number;
  source: string;
  path: string;
}

export interface SourceLine {
  /** The footnote number, or null for a source the answer does not cite. */
  number: number | null;
  source: string;
  path: string;
  cited: boolean;
}

export interface RenderedAnswer {
  text: string;
  footnotes: Footnote[];
  sources: SourceLine[];
}

// A marker sits after its sentence's full stop or before it, usually after a space: the space goes
// with it, so a footnote number hugs the text it annotates.
const MARKER = /[ \t]*\[\[(SRC:\d+)\]\]/g;

export function renderFootnotes(answer: string, sources: Record<string, SourceEntry> | null | undefined): RenderedAnswer {
  const known = sources ?? {};
  const numbers = new Map<string, number>();
  const text = answer
    .replace(MARKER, (_marker, source: string) => {
      // The daemon removes markers that point at no source; one that slips through is dropped too,
      // rather than shown as a footnote with nothing under it.
      if (!Object.hasOwn(known, source)) return '';
      let number = numbers.get(source);
      if (number === undefined) {
        number = numbers.size + 1;
        numbers.set(source, number);
      }
      return `[${number}]`;
    });
  const footnotes = [...numbers].map(([source, number]) => ({ number, source, path: known[source]!.path }));
  const cited = footnotes.map((f) => ({ number: f.number, source: f.source, path: f.path, cited: true }));
  const rest = Object.entries(known)
    .filter(([source]) => !numbers.has(source))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([source, entry]) => ({ number: null, source, path: entry.path, cited: entry.is_cited }));
  return { text, footnotes, sources: [...cited, ...rest] };
}

/** Splits a line of rendered answer into text and footnote references, for colouring. */
export function footnoteSegments(line: string): { text: string; footnote: boolean }[] {
  const parts: { text: string; footnote: boolean }[] = [];
  let last = 0;
  for (const found of line.matchAll(/\[\d+\]/g)) {
    if (found.index > last) parts.push({ text: line.slice(last, found.index), footnote: false });
    parts.push({ text: found[0], footnote: true });
    last = found.index + found[0].length;
  }
  if (last < line.length) parts.push({ text: line.slice(last), footnote: false });
  return parts;
}
