// Reads that stay true until the database changes. An enforced search first works out which files
// its reader may read: a pass over every file of the collection (about a third of an enforced
// SciFact search's time, `npm run bench -- --only enforced`), with the same answer for each query
// of a reader while nothing is written. SQLite tells cheaply whether anything was: data_version
// moves when another connection commits (the indexing worker's), total_changes() when this one
// writes (the daemon's Writer). Any write clears every entry: correct first, cheap only when idle;
// except the writes no cached read looks at (search snapshots: a first page keeps one, and its
// write clearing the live file list cost every keyword search a pass over its collection's files).

import type { Db } from './db.js';
import { sqlite } from './sqlite.js';
import { stmt } from './statements.js';

// Few: an entry may hold a list of every file of a collection.
const MAX_ENTRIES = 32;
const caches = new WeakMap<Db, { token: string; entries: Map<string, unknown> }>();

/** Row changes this connection made in tables no cached read looks at. */
const unseenChanges = new WeakMap<Db, number>();

const totalChanges = (db: Db) => (stmt(db, 'SELECT total_changes() AS n').get() as { n: number }).n;

/**
 * Runs a change to tables that no `untilWrite` computation reads (search snapshots): it leaves
 * every cached value in place.
 */
export function unseenByCaches<T>(db: Db, change: () => T): T {
  const before = totalChanges(db);
  try {
    return change();
  } finally {
    unseenChanges.set(db, (unseenChanges.get(db) ?? 0) + totalChanges(db) - before);
  }
}

/** What the cache is valid for: null inside a transaction (its reads may see writes that roll back, and total_changes() does not go back). */
function cacheToken(db: Db): string | null {
  if (sqlite(db).inTransaction) return null;
  return `${sqlite(db).pragma('data_version', { simple: true }) as number}:${totalChanges(db) - (unseenChanges.get(db) ?? 0)}`;
}

function entriesFor(db: Db, token: string): Map<string, unknown> {
  let cache = caches.get(db);
  if (!cache || cache.token !== token) caches.set(db, (cache = { token, entries: new Map() }));
  return cache.entries;
}

function keep(entries: Map<string, unknown>, key: string, value: unknown): void {
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(key, value);
}

/** `compute()`'s value, reused for the same key while the database is unchanged. */
export function untilWrite<T>(db: Db, key: string, compute: () => T): T {
  const token = cacheToken(db);
  if (token === null) return compute();
  const entries = entriesFor(db, token);
  if (entries.has(key)) return entries.get(key) as T;
  const value = compute();
  keep(entries, key, value);
  return value;
}

/**
 * untilWrite for an asynchronous computation. The value is kept under the state seen before it
 * began: a write that lands meanwhile moves the token, so the next call computes again rather than
 * serve a value older than the write.
 */
export async function untilWriteAsync<T>(db: Db, key: string, compute: () => Promise<T>): Promise<T> {
  const token = cacheToken(db);
  if (token === null) return compute();
  const entries = entriesFor(db, token);
  if (entries.has(key)) return entries.get(key) as T;
  const value = await compute();
  if (cacheToken(db) === token) keep(entriesFor(db, token), key, value);
  return value;
}
