import type { Db } from './db.js';
import { createFtsTableSql } from './migrations.js';
import { stmt } from './statements.js';

export interface CollectionRow {
  rid: number;
  id: string;
  namespace_rid: number;
  name: string;
  display_name: string | null;
  processing: string;
  access_control: 'off' | 'enforced';
  generation: number;
  embedding_model: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export function insertCollection(db: Db, row: Omit<CollectionRow, 'rid' | 'deleted_at' | 'generation'>): CollectionRow {
  const created = stmt(
    db,
    `INSERT INTO collections (id, namespace_rid, name, display_name, processing, access_control, embedding_model, created_at, updated_at)
     VALUES (@id, @namespace_rid, @name, @display_name, @processing, @access_control, @embedding_model, @created_at, @updated_at) RETURNING *`,
  ).get(row) as CollectionRow;
  db.exec(createFtsTableSql(created.rid));
  return created;
}

export function findCollection(db: Db, namespaceRid: number, ref: string): CollectionRow | undefined {
  return stmt(db, 'SELECT * FROM collections WHERE namespace_rid = @ns AND (id = @ref OR name = @ref) AND deleted_at IS NULL').get({ ns: namespaceRid, ref }) as CollectionRow | undefined;
}

export function getCollectionByRid(db: Db, rid: number): CollectionRow | undefined {
  return stmt(db, 'SELECT * FROM collections WHERE rid = ?').get(rid) as CollectionRow | undefined;
}

export function listCollections(db: Db, opts: { namespaceRid: number; afterRid: number; limit: number; onlyNames?: string[] | undefined }): CollectionRow[] {
  if (opts.onlyNames) {
    return stmt(
      db,
      `SELECT * FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL AND rid > ? AND name IN (SELECT value FROM json_each(?)) ORDER BY rid LIMIT ?`,
    ).all(opts.namespaceRid, opts.afterRid, JSON.stringify(opts.onlyNames), opts.limit) as CollectionRow[];
  }
  return stmt(db, 'SELECT * FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?').all(
    opts.namespaceRid,
    opts.afterRid,
    opts.limit,
  ) as CollectionRow[];
}

export function liveCollectionRids(db: Db, namespaceRid: number): number[] {
  return (stmt(db, 'SELECT rid FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL').all(namespaceRid) as { rid: number }[]).map((r) => r.rid);
}

export function updateCollection(db: Db, rid: number, fields: { display_name: string | null; processing: string; access_control: string }, now: string): CollectionRow {
  return stmt(db, 'UPDATE collections SET display_name = ?, processing = ?, access_control = ?, updated_at = ? WHERE rid = ? RETURNING *').get(
    fields.display_name,
    fields.processing,
    fields.access_control,
    now,
    rid,
  ) as CollectionRow;
}

export function markCollectionDeleted(db: Db, rid: number, now: string): void {
  stmt(db, 'UPDATE collections SET deleted_at = ?, updated_at = ? WHERE rid = ?').run(now, now, rid);
}

export function bumpGeneration(db: Db, rid: number): void {
  stmt(db, 'UPDATE collections SET generation = generation + 1 WHERE rid = ?').run(rid);
}

export interface FileCounts {
  pending: number;
  indexing: number;
  ready: number;
  failed: number;
}

export function fileCounts(db: Db, collectionRid: number): FileCounts {
  const rows = stmt(db, 'SELECT status, count(*) AS n FROM files WHERE collection_rid = ? AND deleted_at IS NULL GROUP BY status').all(collectionRid) as {
    status: string;
    n: number;
  }[];
  const counts: FileCounts = { pending: 0, indexing: 0, ready: 0, failed: 0 };
  for (const r of rows) if (r.status in counts) counts[r.status as keyof FileCounts] = r.n;
  return counts;
}

/**
 * fileCounts for the search path, without a pass over every ready file: the other states are
 * counted exactly (few files outside of an ingest), `ready` is only 0 or 1 (whether any file is
 * ready), which is all a search's state rules and index generation ask of it.
 */
export function fileStatesForSearch(db: Db, collectionRid: number): FileCounts {
  const rows = stmt(
    db,
    "SELECT status, count(*) AS n FROM files WHERE collection_rid = ? AND deleted_at IS NULL AND status IN ('pending', 'indexing', 'failed') GROUP BY status",
  ).all(collectionRid) as { status: string; n: number }[];
  const anyReady = stmt(db, "SELECT EXISTS (SELECT 1 FROM files WHERE collection_rid = ? AND deleted_at IS NULL AND status = 'ready') AS r").get(collectionRid) as { r: number };
  const counts: FileCounts = { pending: 0, indexing: 0, ready: anyReady.r, failed: 0 };
  for (const r of rows) if (r.status in counts) counts[r.status as keyof FileCounts] = r.n;
  return counts;
}

/** Every collection of a namespace, deleted ones included (namespace deletion stops their work). */
export function allCollectionRids(db: Db, namespaceRid: number): number[] {
  return (stmt(db, 'SELECT rid FROM collections WHERE namespace_rid = ?').all(namespaceRid) as { rid: number }[]).map((r) => r.rid);
}

export function setEmbeddingModel(db: Db, rid: number, model: string | null): void {
  stmt(db, 'UPDATE collections SET embedding_model = ? WHERE rid = ?').run(model, rid);
}

/** The most recently deleted collection of a namespace with this ID or name. */
export function findDeletedCollection(db: Db, namespaceRid: number, ref: string): CollectionRow | undefined {
  return stmt(db, 'SELECT * FROM collections WHERE namespace_rid = @ns AND (id = @ref OR name = @ref) AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1').get({ ns: namespaceRid, ref }) as
    | CollectionRow
    | undefined;
}

export function restoreCollection(db: Db, rid: number, now: string): CollectionRow {
  return stmt(db, 'UPDATE collections SET deleted_at = NULL, updated_at = ? WHERE rid = ? RETURNING *').get(now, rid) as CollectionRow;
}
