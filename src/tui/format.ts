// Text fitting for a fixed-size terminal: every line the views draw is cut to the width here, so
// nothing wraps behind Ink's back and the frame height stays what the layout planned.
import type { Evidence } from './types.js';

/** Cuts `text` to at most `width` characters, ending in … when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...text];
  if (chars.length <= width) return text;
  return chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/**
 * Cuts `text` to at most `width` characters from the left, starting with … when cut: for paths,
 * whose end (the file's name) says more than their start.
 */
export function truncateStart(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...text];
  if (chars.length <= width) return text;
  return '…' + chars.slice(chars.length - Math.max(0, width - 1)).join('');
}

/** Pads or cuts to exactly `width` characters. */
export function fit(text: string, width: number): string {
  const cut = truncate(text, width);
  return cut + ' '.repeat(Math.max(0, width - [...cut].length));
}

export function fitRight(text: string, width: number): string {
  const cut = truncate(text, width);
  return ' '.repeat(Math.max(0, width - [...cut].length)) + cut;
}

/** Word-wraps `text` into lines of at most `width` characters (long words are cut hard). */
export function wrapText(text: string, width: number): string[] {
  const w = Math.max(1, width);
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      let rest = word;
      while ([...rest].length > w) {
        if (line) {
          lines.push(line);
          line = '';
        }
        lines.push([...rest].slice(0, w).join(''));
        rest = [...rest].slice(w).join('');
      }
      if (!rest) continue;
      if (!line) line = rest;
      else if ([...line].length + 1 + [...rest].length <= w) line += ' ' + rest;
      else {
        lines.push(line);
        line = rest;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Scores span many magnitudes (BM25 on a tiny collection is ~1e-6): three significant digits, short. */
export function formatScore(score: number): string {
  const size = Math.abs(score);
  if (size === 0) return '0';
  if (size >= 100) return score.toFixed(1);
  if (size >= 0.01) return score.toPrecision(3);
  return score.toExponential(2);
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return 'unknown';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 10 ? 0 : 1)} ${units[unit]}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** Where a piece of evidence sits in its file, in a few words. */
export function formatLocation(evidence: Evidence): string {
  const location = evidence.location;
  if (!location) return evidence.kind;
  if ('json_path' in location) return location.json_path;
  if ('page' in location) {
    const box = location.bbox ? ` [${location.bbox.map((n) => Math.round(n)).join(',')}]` : '';
    return `${evidence.kind === 'image_region' ? 'image' : evidence.kind === 'ocr' ? 'ocr page' : 'page'} ${location.page}${box}`;
  }
  if ('char_start' in location) return `chars ${location.char_start}-${location.char_end}`;
  return `${seconds(location.start_ms)}-${seconds(location.end_ms)}`;
}

/** A metadata value on one line. */
export function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
