import type { Statement } from 'better-sqlite3';
import { sqlite, type Db } from './sqlite.js';

const caches = new WeakMap<Db, Map<string, Statement>>();

/**
 * Prepared statements are cached per connection; preparing costs more than running most of ours.
 *
 * A statement that writes must run inside a transaction: the daemon's connections write only in
 * the transactions their Writer opens (src/store/writer.ts) once it holds the data dir's write
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
