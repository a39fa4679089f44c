import type { Services } from './context.js';
import { LIST_CURSOR_TTL_MS, signCursor } from './cursors.js';

/** Keyset pages, oldest first: fetch limit+1 rows; the cursor carries the last row's rid. */
export async function pageOf<R extends { rid: number }, T>(s: Services, rows: R[], limit: number, binding: string, present: (row: R) => T | Promise<T>): Promise<{ items: T[]; next_cursor: string | null }> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: await Promise.all(pageRows.map(present)),
    next_cursor: more && last ? signCursor(s.cursorSecret, binding, last.rid, LIST_CURSOR_TTL_MS) : null,
  };
}

