import type { Statement } from 'better-sqlite3';
import { sqlite, type Db } from './sqlite.js';

const caches = new WeakMap<Db, Map<string, Statement>>();

/** IN lists are bound in blocks of this many (unused slots bound to NULL): a few cached statements serve every size. */
export const IN_BLOCK = 64;

/**
 * Rows of a table by primary key, in blocks of bound IN lists. `rid IN (SELECT value FROM
 * json_each(?))` let the planner scan the whole table and probe the list: 0.8 ms for a hundred
 * files of SciFact at every search (issue 15); a bound list is a lookup per key.
 */
export function rowsByRid<T>(db: Db, table: keyof typeof KEY_COLUMN, rids: readonly number[], columns = '*'): T[] {
  const out: T[] = [];
  // The SQL text is built once per shape: a fresh string per call cost a hash of it in the statement cache.
  const key = `${table} ${columns}`;
  const sql = (ROWS_BY_RID_SQL[key] ??= `SELECT ${columns} FROM ${table} WHERE ${KEY_COLUMN[table]} IN (${IN_BLOCK_PARAMS})`);
  for (let from = 0; from < rids.length; from += IN_BLOCK) {
    const block: (number | null)[] = rids.slice(from, from + IN_BLOCK);
    while (block.length < IN_BLOCK) block.push(null);
    for (const row of stmt(db, sql).all(...block) as T[]) out.push(row);
  }
  return out;
}

/** `?,?,…` for one IN block. */
export const IN_BLOCK_PARAMS = Array.from({ length: IN_BLOCK }, () => '?').join(',');
const ROWS_BY_RID_SQL: Record<string, string> = {};
/** Each table's integer key: file_versions is keyed by its id text, so its rowid stands in. */
const KEY_COLUMN = { files: 'rid', passages: 'rid', file_versions: 'rowid', file_topics: 'file_rid' } as const;

/**
 * Prepared statements are cached per connection; preparing costs more than running most of ours.
 *
 * A statement that writes must run inside a transaction: the daemon's connections write only in
 * the transactions their Writer opens (src/store/sqlite/writer.ts) once it holds the data dir's write
 * token. A write in autocommit mode would take SQLite's lock behind the token's back (and, on the
 * HTTP thread, wait for it synchronously), so it fails here, at once, where a test sees it.
 */
export function stmt(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let s = cache.get(sql);
  if (!s) {
    s = sqlite(db).prepare(sql);
    cache.set(sql, s);
  }
  if (!s.readonly && !sqlite(db).inTransaction) {
    throw new Error(`A store write outside a write transaction (go through the Writer: Services.write): ${sql.slice(0, 80)}`);
  }
  return s;
}
