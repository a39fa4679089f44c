import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { deleteFileVectors } from './vectors.js';
import { rowsByRid, stmt } from './statements.js';

export interface NewPassage {
  ordinal: number;
  evidence_kind: string;
  heading: string;
  text: string;
  char_start: number;
  char_end: number;
  /** JSON: the evidence location; a JSON passage's also holds `json_spans`, where each value lies in the text (src/domain/ingest/json-path.ts relativeSpans). */
  location: string | null;
}

export interface PassageRow extends NewPassage {
  rid: number;
  file_rid: number;
}

/**
 * Replacing many files' passages, first half in one transaction: their old passages (rows,
 * FTS rows, vectors) go and the new rows are written, without their FTS rows; returns each file's
 * new rids in order. The caller writes what else it has (vectors, …) and then indexPassageText,
 * last: every write statement after an FTS5 insert in the same transaction makes FTS5 flush its
 * pending terms into a new segment (its savepoint hook), so interleaving them cost ~70 µs per
 * file and grew with the index (issue 15's ingest profile).
 */
export function replacePassageRows(db: Db, collectionRid: number, files: { fileRid: number; passages: readonly NewPassage[] }[]): number[][] {
  for (const f of files) deletePassages(db, collectionRid, f.fileRid);
  const insertPassage = stmt(
    db,
    'INSERT INTO passages (file_rid, ordinal, evidence_kind, heading, text, char_start, char_end, location) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rid',
  );
  return files.map((f) => f.passages.map((p) => (insertPassage.get(f.fileRid, p.ordinal, p.evidence_kind, p.heading, p.text, p.char_start, p.char_end, p.location) as { rid: number }).rid));
}

/** The passages' text into the collection's FTS5 table: the last write of its transaction (see replacePassageRows). */
export function indexPassageText(db: Db, collectionRid: number, rows: readonly { rid: number; heading: string; text: string }[]): void {
  const insertFts = stmt(db, `INSERT INTO ${ftsTableName(collectionRid)} (rowid, heading, body) VALUES (?, ?, ?)`);
  for (const r of rows) insertFts.run(r.rid, r.heading, r.text);
}

export function deletePassages(db: Db, collectionRid: number, fileRid: number): void {
  // A new file has none: one lookup instead of a vector, an FTS and a passage delete per file.
  if (!stmt(db, 'SELECT 1 FROM passages WHERE file_rid = ? LIMIT 1').get(fileRid)) return;
  const fts = ftsTableName(collectionRid);
  deleteFileVectors(db, collectionRid, fileRid);
  stmt(db, `DELETE FROM ${fts} WHERE rowid IN (SELECT rid FROM passages WHERE file_rid = ?)`).run(fileRid);
  stmt(db, 'DELETE FROM passages WHERE file_rid = ?').run(fileRid);
}

export function getPassages(db: Db, rids: number[]): PassageRow[] {
  return rowsByRid<PassageRow>(db, 'passages', rids);
}
