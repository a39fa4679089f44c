// A collection's own semantic model and its files' vectors in it (migration 14). The model is
// stored as the opaque bytes src/domain/search/collection-model.ts makes; this layer only keeps them.
import type { Db } from './db.js';
import { rowsByRid, stmt } from './statements.js';
import type { CollectionModelHeader, CollectionModelReads, CollectionModelWrites, StoredCollectionModel, TrainedModel } from '../aggregates/collection-models.js';

export function sqliteCollectionModels(db: Db): CollectionModelReads & CollectionModelWrites {
  return {
    header: async (collectionRid) => collectionModelHeader(db, collectionRid),
    get: async (collectionRid) => getCollectionModel(db, collectionRid),
    fileTopics: async (fileRids) => getFileTopics(db, fileRids),
    readyFileVersions: async (collectionRid, afterRid, limit) => readyFileVersions(db, collectionRid, afterRid, limit),
    put: async (collectionRid, trained, now) => putCollectionModel(db, collectionRid, trained, now),
    putFileTopics: async (rows) => putFileTopics(db, rows),
  };
}

/** The model's row without its bytes: what a reader checks against its cached copy at every search. */
export function collectionModelHeader(db: Db, collectionRid: number): CollectionModelHeader | null {
  return (
    (stmt(db, 'SELECT version, files, semantic_weight, semantic_model FROM collection_models WHERE collection_rid = ?').get(collectionRid) as
      | CollectionModelHeader
      | undefined) ?? null
  );
}

export function getCollectionModel(db: Db, collectionRid: number): StoredCollectionModel | null {
  return (
    (stmt(db, 'SELECT version, files, model, semantic_weight, semantic_model FROM collection_models WHERE collection_rid = ?').get(collectionRid) as StoredCollectionModel | undefined) ?? null
  );
}

/**
 * Replaces the collection's model; returns its new version. Versions come from one counter for the
 * whole data dir, never reused: readers cache models by collection rid and version, and a purged
 * collection's rid comes back (rids are not AUTOINCREMENT), so a per-collection count restarting at
 * 1 would let a new collection's first model pass for the purged one's.
 */
export function putCollectionModel(
  db: Db,
  collectionRid: number,
  trained: TrainedModel,
  now: string,
): number {
  const next = stmt(
    db,
    `INSERT INTO meta (key, value) VALUES ('collection_model_version', (SELECT coalesce(max(version), 0) + 1 FROM collection_models))
     ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
     RETURNING CAST(value AS INTEGER) AS version`,
  ).get() as { version: number };
  const row = stmt(
    db,
    `INSERT INTO collection_models (collection_rid, version, files, model, trained_at, semantic_weight, semantic_model) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (collection_rid) DO UPDATE SET version = excluded.version, files = excluded.files, model = excluded.model, trained_at = excluded.trained_at,
       semantic_weight = excluded.semantic_weight, semantic_model = excluded.semantic_model
     RETURNING version`,
  ).get(collectionRid, next.version, trained.files, trained.model, now, trained.semanticWeight, trained.semanticModel) as { version: number };
  return row.version;
}

/**
 * Writes files' vectors (replacing any they had). A file without passages gets none: its passages
 * may have gone (a rejected upload, on the HTTP thread) since the vector was computed, and
 * deletePassages, which removes a file's vector, will not run for it again.
 */
export function putFileTopics(db: Db, rows: readonly { fileRid: number; vector: Buffer }[]): void {
  const put = stmt(db, 'INSERT OR REPLACE INTO file_topics (file_rid, vector) SELECT ?, ? WHERE EXISTS (SELECT 1 FROM passages WHERE file_rid = ?)');
  for (const r of rows) put.run(r.fileRid, r.vector, r.fileRid);
}

/** Files' vectors by file rid; a file without one is absent. */
export function getFileTopics(db: Db, fileRids: readonly number[]): Map<number, Buffer> {
  const rows = rowsByRid<{ file_rid: number; vector: Buffer }>(db, 'file_topics', fileRids, 'file_rid, vector');
  return new Map(rows.map((r) => [r.file_rid, r.vector]));
}

/** Ready files of a collection with the versions their passages are of, in rid order from `after`, up to `limit`. */
export function readyFileVersions(db: Db, collectionRid: number, after: number, limit: number): { rid: number; version_id: string }[] {
  return stmt(db, "SELECT rid, indexed_version_id AS version_id FROM files WHERE collection_rid = ? AND status = 'ready' AND deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?").all(collectionRid, after, limit) as { rid: number; version_id: string }[];
}
