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

/**
 * One bounded step of merging a collection's keyword index into a single segment; true while there
 * is more to merge. Every ingest transaction adds a segment and FTS5 only merges them in fours, so
 * an index left as ingest built it has many (11 for SciFact through the API) and every query reads
 * all of them: ~10% of a query's time on SciFact (issue 15). A negative budget is FTS5's
 * "merge across levels" (as 'optimize' does, but `pages` leaf pages at a time, so other writers
 * wait one step at most); FTS5's documented test for work done is total_changes() growing by 2.
 * A collection whose index is gone (deleted meanwhile, or keyword search off) has nothing to merge.
 */
export function mergeKeywordIndexStep(db: Db, collectionRid: number, pages: number): boolean {
  const fts = ftsTableName(collectionRid);
  const totalChanges = stmt(db, 'SELECT total_changes() AS n');
  const before = (totalChanges.get() as { n: number }).n;
  try {
    stmt(db, `INSERT INTO ${fts}(${fts}, rank) VALUES('merge', ?)`).run(-Math.max(1, Math.floor(pages)));
  } catch (err) {
    if (/no such table/.test(String((err as Error).message))) return false;
    throw err;
  }
  return (totalChanges.get() as { n: number }).n - before >= 2;
}

/** Segments in a collection's keyword index (1 when fully merged; 0 when empty or absent). */
export function keywordIndexSegments(db: Db, collectionRid: number): number {
  const fts = ftsTableName(collectionRid);
  try {
    return (stmt(db, `SELECT count(DISTINCT segid) AS n FROM ${fts}_idx`).get() as { n: number }).n;
  } catch {
    return 0;
  }
}
