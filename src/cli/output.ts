// Human output of the CLI: short aligned tables and `key: value` blocks. Machine output (--json) is
// the API's JSON as it came, one document per line.
import { out } from './io.js';

export type Cell = string | number | boolean | null | undefined;

const show = (value: Cell): string => (value === null || value === undefined || value === '' ? '-' : String(value));

/** Columns padded to their widest cell; the last column is not padded, so lines carry no trailing spaces. */
export function table(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => headers.map((_, i) => show(row[i])))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

/** `key: value` lines with the values aligned; pairs whose value is undefined are left out. */
export function keyValues(pairs: readonly (readonly [string, Cell])[]): string {
  const present = pairs.filter(([, value]) => value !== undefined);
  const width = Math.max(0, ...present.map(([key]) => key.length + 1));
  return present.map(([key, value]) => `${`${key}:`.padEnd(width)} ${show(value)}`).join('\n') + '\n';
}

export function writeJson(value: unknown): void {
  out().write(JSON.stringify(value) + '\n');
}

export function write(text: string): void {
  out().write(text);
}

/** The line under a page that was cut short, saying how to get the rest. */
export function moreHint(nextCursor: string | null | undefined): string {
  return nextCursor ? `(more: --cursor ${nextCursor}, or --all)\n` : '';
}
