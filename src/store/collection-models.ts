// A collection's own semantic model and its files' vectors in it (migration 14). The model is
// stored as the opaque bytes src/domain/search/collection-model.ts makes; this layer only keeps them.
import type { Db } from './db.js';
import { rowsByRid, stmt } from './statements.js';

export interface StoredCollectionModel {
  version: number;
  /** Ready files when it was trained. */
  files: number;
  model: Buffer;
}

/** The model's version alone: what a reader checks against its cached copy at every search. */
export function collectionModelVersion(db: Db, collectionRid: number): number | null {
  const row = stmt(db, 'SELECT version FROM collection_models WHERE collection_rid = ?').get(collectionRid) as { version: number } | undefined;
  return row?.version ?? null;
}

export function getCollectionModel(db: Db, collectionRid: number): StoredCollectionModel | null {
  return (stmt(db, 'SELECT version, files, model FROM collection_models WHERE collection_rid = ?').get(collectionRid) as StoredCollectionModel | undefined) ?? null;
}

/** Replaces the collection's model; returns its new version. */
export function putCollectionModel(db: Db, collectionRid: number, files: number, model: Buffer, now: string): number {
  const row = stmt(
    db,
    `INSERT INTO collection_models (collection_rid, version, files, model, trained_at) VALUES (?, 1, ?, ?, ?)
     ON CONFLICT (collection_rid) DO UPDATE SET version = version + 1, files = excluded.files, model = excluded.model, trained_at = excluded.trained_at
     RETURNING version`,
  ).get(collectionRid, files, model, now) as { version: number };
  return row.version;
}

/** Writes files' vectors (replacing any they had). */
export function putFileTopics(db: Db, rows: readonly { fileRid: number; vector: Buffer }[]): void {
  const put = stmt(db, 'INSERT OR REPLACE INTO file_topics (file_rid, vector) VALUES (?, ?)');
  for (const r of rows) put.run(r.fileRid, r.vector);
}

/** Files' vectors by file rid; a file without one is absent. */
export function getFileTopics(db: Db, fileRids: readonly number[]): Map<number, Buffer> {
  const rows = rowsByRid<{ file_rid: number; vector: Buffer }>(db, 'file_topics', fileRids, 'file_rid, vector');
  return new Map(rows.map((r) => [r.file_rid, r.vector]));
}

/** Ready files of a collection, in rid order from `after`, up to `limit`. */
export function readyFileRids(db: Db, collectionRid: number, after: number, limit: number): number[] {
  const rows = stmt(db, "SELECT rid FROM files WHERE collection_rid = ? AND status = 'ready' AND deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?").all(collectionRid, after, limit) as { rid: number }[];
  return rows.map((r) => r.rid);
}

/**
 * Each file's text as the model reads it (its passages' headings and text, in order), for the
 * given files. Passages stored as offsets into their inline source are cut from it.
 */
export function fileTexts(db: Db, fileRids: readonly number[]): Map<number, string> {
  const parts = new Map<number, string[]>();
  const sources = new Map<number, string | null>();
  const source = (versionRid: number): string | null => {
    if (!sources.has(versionRid)) sources.set(versionRid, (stmt(db, 'SELECT inline_text AS t FROM file_versions WHERE rowid = ?').get(versionRid) as { t: string | null } | undefined)?.t ?? null);
    return sources.get(versionRid)!;
  };
  const read = stmt(db, 'SELECT heading, text, char_start, char_end, source_version_rid FROM passages WHERE file_rid = ? ORDER BY ordinal');
  for (const rid of fileRids) {
    const out: string[] = [];
    for (const p of read.all(rid) as { heading: string; text: string; char_start: number; char_end: number; source_version_rid: number | null }[]) {
      const text = p.source_version_rid === null ? p.text : (source(p.source_version_rid)?.slice(p.char_start, p.char_end) ?? '');
      out.push(p.heading ? `${p.heading}\n${text}` : text);
    }
    parts.set(rid, out);
  }
  return new Map([...parts].map(([rid, texts]) => [rid, texts.join('\n')]));
}

/** Files' paths by rid. */
export function filePaths(db: Db, fileRids: readonly number[]): Map<number, string> {
  return new Map(rowsByRid<{ rid: number; path: string }>(db, 'files', fileRids, 'rid, path').map((r) => [r.rid, r.path]));
}
