import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

const caches = new WeakMap<Db, Map<string, Statement>>();

/** Prepared statements are cached per connection; preparing costs more than running most of ours. */
export function stmt(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let s = cache.get(sql);
  if (!s) {
    s = db.prepare(sql);
    cache.set(sql, s);
  }
  return s;
}
