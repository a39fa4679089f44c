import type { NamespaceReads, NamespaceRow, NamespaceUsage, NamespaceWrites } from '../aggregates/namespaces.js';
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { stmt } from './statements.js';

export type { NamespaceRow, NamespaceUsage } from '../aggregates/namespaces.js';

export function sqliteNamespaces(db: Db): NamespaceReads & NamespaceWrites {
  return {
    find: async (ref) => findNamespace(db, ref),
    byId: async (id) => findNamespaceById(db, id),
    byRid: async (rid) => getNamespaceByRid(db, rid),
    findDeleted: async (ref) => findDeletedNamespace(db, ref),
    list: async (opts) => listNamespaces(db, opts),
    usage: async (rid, onlyCollections) => namespaceUsage(db, rid, onlyCollections),
    insert: async (row) => insertNamespace(db, row),
    updateDisplayName: async (rid, displayName, now) => updateNamespaceDisplayName(db, rid, displayName, now),
    markDeleted: async (rid, now) => markNamespaceDeleted(db, rid, now),
    restore: async (rid, now) => restoreNamespace(db, rid, now),
  };
}

export function insertNamespace(db: Db, row: Omit<NamespaceRow, 'rid' | 'deleted_at'>): NamespaceRow {
  return stmt(db, `INSERT INTO namespaces (id, name, display_name, created_at, updated_at) VALUES (@id, @name, @display_name, @created_at, @updated_at) RETURNING *`).get(row) as NamespaceRow;
}

/** A living namespace by ID or name (the contract accepts both in URLs). */
export function findNamespace(db: Db, ref: string): NamespaceRow | undefined {
  return stmt(db, 'SELECT * FROM namespaces WHERE (id = @ref OR name = @ref) AND deleted_at IS NULL').get({ ref }) as NamespaceRow | undefined;
}

export function getNamespaceByRid(db: Db, rid: number): NamespaceRow | undefined {
  return stmt(db, 'SELECT * FROM namespaces WHERE rid = ?').get(rid) as NamespaceRow | undefined;
}

export function listNamespaces(db: Db, opts: { afterRid: number; limit: number; onlyRids?: readonly number[] | undefined }): NamespaceRow[] {
  if (opts.onlyRids) {
    if (opts.onlyRids.length === 0) return [];
    return stmt(db, `SELECT * FROM namespaces WHERE deleted_at IS NULL AND rid > ? AND rid IN (SELECT value FROM json_each(?)) ORDER BY rid LIMIT ?`).all(opts.afterRid, JSON.stringify(opts.onlyRids), opts.limit) as NamespaceRow[];
  }
  return stmt(db, 'SELECT * FROM namespaces WHERE deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?').all(opts.afterRid, opts.limit) as NamespaceRow[];
}

export function updateNamespaceDisplayName(db: Db, rid: number, displayName: string | null, now: string): NamespaceRow {
  return stmt(db, 'UPDATE namespaces SET display_name = ?, updated_at = ? WHERE rid = ? RETURNING *').get(displayName, now, rid) as NamespaceRow;
}

export function markNamespaceDeleted(db: Db, rid: number, now: string): void {
  stmt(db, 'UPDATE namespaces SET deleted_at = ?, updated_at = ? WHERE rid = ?').run(now, now, rid);
}

/** A namespace's usage, over all its collections or (`onlyCollections`, by name) some of them. */
export function namespaceUsage(db: Db, rid: number, onlyCollections?: readonly string[]): NamespaceUsage {
  // json_each(NULL) is empty: a NULL list means every collection.
  const names = onlyCollections === undefined ? null : JSON.stringify(onlyCollections);
  const within = '(@names IS NULL OR c.name IN (SELECT value FROM json_each(@names)))';
  const c = stmt(db, `SELECT count(*) AS n FROM collections c WHERE c.namespace_rid = @rid AND c.deleted_at IS NULL AND ${within}`).get({ rid, names }) as { n: number };
  const f = stmt(
    db,
    `SELECT count(*) AS n, coalesce(sum(coalesce(f.bytes, 0)), 0) AS b FROM files f JOIN collections c ON c.rid = f.collection_rid
     WHERE c.namespace_rid = @rid AND c.deleted_at IS NULL AND f.deleted_at IS NULL AND ${within}`,
  )
    .safeIntegers(true)
    .get({ rid, names }) as { n: bigint; b: bigint };
  return { collections: c.n, files: Number(f.n), source_bytes: f.b };
}

/** Including deleted ones: jobs and keys keep pointing at a namespace after it is deleted. */
export function findNamespaceById(db: Db, id: string): NamespaceRow | undefined {
  return stmt(db, 'SELECT * FROM namespaces WHERE id = ?').get(id) as NamespaceRow | undefined;
}

/** The most recently deleted namespace with this ID or name. */
export function findDeletedNamespace(db: Db, ref: string): NamespaceRow | undefined {
  return stmt(db, 'SELECT * FROM namespaces WHERE (id = @ref OR name = @ref) AND deleted_at IS NOT NULL ORDER BY deleted_at DESC, rid DESC LIMIT 1').get({ ref }) as NamespaceRow | undefined;
}

/** Undeletes a namespace and the collections its deletion took with it (same deletion time); returns those collections. */
export function restoreNamespace(db: Db, rid: number, now: string): number[] {
  const deletedAt = (stmt(db, 'SELECT deleted_at FROM namespaces WHERE rid = ?').get(rid) as { deleted_at: string | null } | undefined)?.deleted_at;
  if (!deletedAt) return [];
  // Their files were never touched by the deletion: the counters hold; each collection reports its return.
  const restored = (stmt(db, 'UPDATE collections SET deleted_at = NULL, updated_at = ? WHERE namespace_rid = ? AND deleted_at = ? RETURNING rid').all(now, rid, deletedAt) as { rid: number }[]).map((r) => r.rid);
  for (const collectionRid of restored) appendEvent(db, 'collection.updated', collectionRid);
  stmt(db, 'UPDATE namespaces SET deleted_at = NULL, updated_at = ? WHERE rid = ?').run(now, rid);
  return restored.sort((a, b) => a - b);
}
