// Purging what was deleted once its recovery window has passed (decisions.md §5): every row and
// index of a collection, and a namespace once its collections are gone.
import type { RetentionReads, RetentionWrites } from '../aggregates/retention.js';
import { dropVectors } from './vectors.js';
import type { Db } from './sqlite.js';
import { purgeKeywordIndex } from './keyword-index.js';
import { stmt } from './statements.js';

export function sqliteRetention(db: Db): RetentionReads & RetentionWrites {
  return {
    collectionsDeletedBefore: async (cutoff) => collectionsDeletedBefore(db, cutoff),
    namespacesDeletedBefore: async (cutoff) => namespacesDeletedBefore(db, cutoff),
    blobInUse: async (sha256) => blobInUse(db, sha256),
    purgeCollection: async (rid) => purgeCollection(db, rid),
    purgeNamespace: async (rid) => purgeNamespace(db, rid),
  };
}

export function collectionsDeletedBefore(db: Db, cutoff: string): number[] {
  return (stmt(db, 'SELECT rid FROM collections WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY rid').all(cutoff) as { rid: number }[]).map((r) => r.rid);
}

export function namespacesDeletedBefore(db: Db, cutoff: string): number[] {
  return (stmt(db, 'SELECT rid FROM namespaces WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY rid').all(cutoff) as { rid: number }[]).map((r) => r.rid);
}

/** Removes a collection and everything in it; returns the blob hashes its file versions used. */
export function purgeCollection(db: Db, collectionRid: number): string[] {
  const blobs = (stmt(db, 'SELECT DISTINCT v.blob_sha256 AS b FROM file_versions v JOIN files f ON f.rid = v.file_rid WHERE f.collection_rid = ? AND v.blob_sha256 IS NOT NULL').all(collectionRid) as { b: string }[]).map((r) => r.b);
  // Its keyword rows and vectors first: in the shared tables they are found through its passages.
  purgeKeywordIndex(db, collectionRid);
  dropVectors(db, collectionRid);
  stmt(db, 'DELETE FROM passages WHERE file_rid IN (SELECT rid FROM files WHERE collection_rid = ?)').run(collectionRid);
  stmt(db, 'DELETE FROM file_topics WHERE file_rid IN (SELECT rid FROM files WHERE collection_rid = ?)').run(collectionRid);
  stmt(db, 'DELETE FROM collection_models WHERE collection_rid = ?').run(collectionRid);
  stmt(db, 'DELETE FROM file_versions WHERE file_rid IN (SELECT rid FROM files WHERE collection_rid = ?)').run(collectionRid);
  stmt(db, 'DELETE FROM files WHERE collection_rid = ?').run(collectionRid);
  stmt(db, 'DELETE FROM access_rule_readers WHERE rule_rid IN (SELECT rid FROM access_rules WHERE collection_rid = ?)').run(collectionRid);
  stmt(db, 'DELETE FROM access_rules WHERE collection_rid = ?').run(collectionRid);
  stmt(db, 'DELETE FROM research_runs WHERE collection_rid = ?').run(collectionRid);
  stmt(db, 'DELETE FROM jobs WHERE collection_rid = ?').run(collectionRid);
  stmt(db, 'DELETE FROM collections WHERE rid = ?').run(collectionRid);
  return blobs;
}

export function purgeNamespace(db: Db, namespaceRid: number): void {
  stmt(db, 'DELETE FROM jobs WHERE namespace_rid = ?').run(namespaceRid);
  stmt(db, 'DELETE FROM namespaces WHERE rid = ?').run(namespaceRid);
}

export function blobInUse(db: Db, sha256: string): boolean {
  return stmt(db, 'SELECT 1 FROM file_versions WHERE blob_sha256 = ? LIMIT 1').get(sha256) !== undefined;
}
