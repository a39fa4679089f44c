// Purging what was deleted once its recovery window has passed (decisions.md §5): every row and
// index of a collection, and a namespace once its collections are gone.
import { dropVectors } from './vectors.js';
import type { Db } from './sqlite.js';
import { appendEvent } from './events.js';
import { purgeKeywordIndex } from './keyword-index.js';
import { stmt } from './statements.js';

export function collectionsDeletedBefore(db: Db, cutoff: string): { rid: number; namespace_rid: number }[] {
  return stmt(db, 'SELECT rid, namespace_rid FROM collections WHERE deleted_at IS NOT NULL AND deleted_at < ?').all(cutoff) as { rid: number; namespace_rid: number }[];
}

export function namespacesDeletedBefore(db: Db, cutoff: string): number[] {
  return (stmt(db, 'SELECT rid FROM namespaces WHERE deleted_at IS NOT NULL AND deleted_at < ?').all(cutoff) as { rid: number }[]).map((r) => r.rid);
}

export function collectionRidsOf(db: Db, namespaceRid: number): number[] {
  return (stmt(db, 'SELECT rid FROM collections WHERE namespace_rid = ?').all(namespaceRid) as { rid: number }[]).map((r) => r.rid);
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

/** The most recently deleted namespace with this ID or name. */
export function findDeletedNamespace(db: Db, ref: string): { rid: number; id: string; name: string; deleted_at: string } | undefined {
  return stmt(db, 'SELECT rid, id, name, deleted_at FROM namespaces WHERE (id = @ref OR name = @ref) AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1').get({ ref }) as
    | { rid: number; id: string; name: string; deleted_at: string }
    | undefined;
}

export function liveNamespaceNamed(db: Db, name: string): boolean {
  return stmt(db, 'SELECT 1 FROM namespaces WHERE name = ? AND deleted_at IS NULL').get(name) !== undefined;
}

/** Undeletes a namespace and the collections its deletion took with it (same deletion time); returns those collections. */
export function undeleteNamespace(db: Db, rid: number, deletedAt: string, now: string): number[] {
  const cols = (stmt(db, 'SELECT rid FROM collections WHERE namespace_rid = ? AND deleted_at = ?').all(rid, deletedAt) as { rid: number }[]).map((r) => r.rid);
  // Their files were never touched by the deletion: the counters hold; each collection reports its return.
  const restored = stmt(db, 'UPDATE collections SET deleted_at = NULL, updated_at = ? WHERE namespace_rid = ? AND deleted_at = ? RETURNING rid').all(now, rid, deletedAt) as { rid: number }[];
  for (const r of restored) appendEvent(db, 'collection.updated', r.rid);
  stmt(db, 'UPDATE namespaces SET deleted_at = NULL, updated_at = ? WHERE rid = ?').run(now, rid);
  return cols;
}
