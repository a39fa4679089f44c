import { isDeepStrictEqual } from 'node:util';
import type { Processing } from '../../contract/schemas.js';
import type { CollectionReads, CollectionRow, CollectionWrites, FileCounts } from '../aggregates/collections.js';
import type { Db } from './sqlite.js';
import { appendEvent } from './events.js';
import { stmt } from './statements.js';

export type { CollectionRow, FileCounts } from '../aggregates/collections.js';

export function sqliteCollections(db: Db): CollectionReads & CollectionWrites {
  return {
    find: async (namespaceRid, ref) => findCollection(db, namespaceRid, ref),
    byRid: async (rid) => getCollectionByRid(db, rid),
    findDeleted: async (namespaceRid, ref) => findDeletedCollection(db, namespaceRid, ref),
    list: async (opts) => listCollections(db, opts),
    liveRids: async (namespaceRid) => liveCollectionRids(db, namespaceRid),
    allRids: async (namespaceRid) => allCollectionRids(db, namespaceRid),
    fileCounts: async (collectionRid) => fileCounts(db, collectionRid),
    insert: async (row) => insertCollection(db, row),
    update: async (rid, fields, now) => updateCollection(db, rid, fields, now),
    markDeleted: async (rid, now) => markCollectionDeleted(db, rid, now),
    restore: async (rid, now) => restoreCollection(db, rid, now),
    bumpGeneration: async (rid) => bumpGeneration(db, rid),
    setEmbeddingModel: async (rid, model) => setEmbeddingModel(db, rid, model),
  };
}

/** The row as stored: `processing` is JSON text. */
type StoredCollection = Omit<CollectionRow, 'processing'> & { processing: string };

function collectionOf(stored: StoredCollection): CollectionRow;
function collectionOf(stored: StoredCollection | undefined): CollectionRow | undefined;
function collectionOf(stored: StoredCollection | undefined): CollectionRow | undefined {
  return stored && { ...stored, processing: JSON.parse(stored.processing) as Processing };
}

export function insertCollection(db: Db, row: Omit<CollectionRow, 'rid' | 'deleted_at' | 'generation'>): CollectionRow {
  const created = collectionOf(
    stmt(
      db,
      `INSERT INTO collections (id, namespace_rid, name, display_name, processing, access_control, embedding_model, created_at, updated_at)
       VALUES (@id, @namespace_rid, @name, @display_name, @processing, @access_control, @embedding_model, @created_at, @updated_at) RETURNING *`,
    ).get({ ...row, processing: JSON.stringify(row.processing) }) as StoredCollection,
  );
  // No table of its own: its keyword rows and vectors go to the shared tables (keyword-index.ts).
  appendEvent(db, 'collection.updated', created.rid);
  return created;
}

export function findCollection(db: Db, namespaceRid: number, ref: string): CollectionRow | undefined {
  return collectionOf(stmt(db, 'SELECT * FROM collections WHERE namespace_rid = @ns AND (id = @ref OR name = @ref) AND deleted_at IS NULL').get({ ns: namespaceRid, ref }) as StoredCollection | undefined);
}

export function getCollectionByRid(db: Db, rid: number): CollectionRow | undefined {
  return collectionOf(stmt(db, 'SELECT * FROM collections WHERE rid = ?').get(rid) as StoredCollection | undefined);
}

export function listCollections(db: Db, opts: { namespaceRid: number; afterRid: number; limit: number; onlyNames?: readonly string[] | undefined }): CollectionRow[] {
  if (opts.onlyNames) {
    return (stmt(
      db,
      `SELECT * FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL AND rid > ? AND name IN (SELECT value FROM json_each(?)) ORDER BY rid LIMIT ?`,
    ).all(opts.namespaceRid, opts.afterRid, JSON.stringify(opts.onlyNames), opts.limit) as StoredCollection[]).map((c) => collectionOf(c));
  }
  return (
    stmt(db, 'SELECT * FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?').all(opts.namespaceRid, opts.afterRid, opts.limit) as StoredCollection[]
  ).map((c) => collectionOf(c));
}

export function liveCollectionRids(db: Db, namespaceRid: number): number[] {
  return (stmt(db, 'SELECT rid FROM collections WHERE namespace_rid = ? AND deleted_at IS NULL').all(namespaceRid) as { rid: number }[]).map((r) => r.rid);
}

/** Reports the change (collection.updated) when a field its resource shows changed. */
export function updateCollection(db: Db, rid: number, fields: { display_name: string | null; processing: Processing; access_control: string }, now: string): CollectionRow {
  const before = stmt(db, 'SELECT display_name, processing, access_control FROM collections WHERE rid = ?').get(rid) as Pick<StoredCollection, 'display_name' | 'processing' | 'access_control'> | undefined;
  const stored = stmt(db, 'UPDATE collections SET display_name = ?, processing = ?, access_control = ?, updated_at = ? WHERE rid = ? RETURNING *').get(
    fields.display_name,
    JSON.stringify(fields.processing),
    fields.access_control,
    now,
    rid,
  ) as StoredCollection;
  const updated = collectionOf(stored);
  // Processing compared as data: the same settings written with their keys in another order are no change.
  const processingChanged = before !== undefined && !isDeepStrictEqual(JSON.parse(before.processing), updated.processing);
  if (before && (before.display_name !== stored.display_name || processingChanged || before.access_control !== stored.access_control)) {
    appendEvent(db, 'collection.updated', rid);
  }
  return updated;
}

export function markCollectionDeleted(db: Db, rid: number, now: string): void {
  const before = getCollectionByRid(db, rid);
  stmt(db, 'UPDATE collections SET deleted_at = ?, updated_at = ? WHERE rid = ?').run(now, now, rid);
  if (before && before.deleted_at !== now) appendEvent(db, 'collection.updated', rid);
}

/** A new index generation (each indexing batch): reported, as the collection's resource changed. */
export function bumpGeneration(db: Db, rid: number): void {
  if (stmt(db, 'UPDATE collections SET generation = generation + 1 WHERE rid = ?').run(rid).changes === 1) appendEvent(db, 'collection.updated', rid);
}

/**
 * A collection's living files by status, from its counters (migration v11): kept by every change of
 * a file's status or deletion (moveFileCount), never counted over the files.
 */
export function fileCounts(db: Db, collectionRid: number): FileCounts {
  const row = stmt(db, 'SELECT files_pending AS pending, files_indexing AS indexing, files_ready AS ready, files_failed AS failed FROM collections WHERE rid = ?').get(collectionRid) as
    | FileCounts
    | undefined;
  return row ?? { pending: 0, indexing: 0, ready: 0, failed: 0 };
}

/**
 * Moves one living file between the counters: out of `from` (its status before, null: it was not
 * living, or is new), into `to` (its status now, null: it is no longer living). A status without a
 * counter ('deleting') counts nowhere. Returns the collection's busy files (pending + indexing) after.
 */
export function moveFileCount(db: Db, collectionRid: number, from: string | null, to: string | null): number {
  const row = stmt(
    db,
    `UPDATE collections SET
       files_pending = files_pending + (@to IS 'pending') - (@from IS 'pending'),
       files_indexing = files_indexing + (@to IS 'indexing') - (@from IS 'indexing'),
       files_ready = files_ready + (@to IS 'ready') - (@from IS 'ready'),
       files_failed = files_failed + (@to IS 'failed') - (@from IS 'failed')
     WHERE rid = @rid RETURNING files_pending + files_indexing AS busy`,
  ).get({ rid: collectionRid, from, to }) as { busy: number } | undefined;
  return row?.busy ?? 0;
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
  return collectionOf(
    stmt(db, 'SELECT * FROM collections WHERE namespace_rid = @ns AND (id = @ref OR name = @ref) AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1').get({ ns: namespaceRid, ref }) as
      | StoredCollection
      | undefined,
  );
}

/** Its files were never touched by the deletion, so its counters hold as they were. */
export function restoreCollection(db: Db, rid: number, now: string): CollectionRow {
  const before = getCollectionByRid(db, rid);
  const restored = collectionOf(stmt(db, 'UPDATE collections SET deleted_at = NULL, updated_at = ? WHERE rid = ? RETURNING *').get(now, rid) as StoredCollection);
  if (before && before.deleted_at !== null) appendEvent(db, 'collection.updated', rid);
  return restored;
}
