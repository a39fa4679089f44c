import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { deleteFileVectors } from './vectors.js';
import { stmt } from './statements.js';

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

/** Replaces a file's passages, their FTS rows and vectors; call inside a transaction. Returns the new rids in order. */
export function replacePassages(db: Db, collectionRid: number, fileRid: number, passages: NewPassage[]): number[] {
  deletePassages(db, collectionRid, fileRid);
  const fts = ftsTableName(collectionRid);
  const insertPassage = stmt(
    db,
    'INSERT INTO passages (file_rid, ordinal, evidence_kind, heading, text, char_start, char_end, location) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rid',
  );
  const insertFts = stmt(db, `INSERT INTO ${fts} (rowid, heading, body) VALUES (?, ?, ?)`);
  const rids: number[] = [];
  for (const p of passages) {
    const { rid } = insertPassage.get(fileRid, p.ordinal, p.evidence_kind, p.heading, p.text, p.char_start, p.char_end, p.location) as { rid: number };
    insertFts.run(rid, p.heading, p.text);
    rids.push(rid);
  }
  return rids;
}

export function deletePassages(db: Db, collectionRid: number, fileRid: number): void {
  const fts = ftsTableName(collectionRid);
  deleteFileVectors(db, collectionRid, fileRid);
  stmt(db, `DELETE FROM ${fts} WHERE rowid IN (SELECT rid FROM passages WHERE file_rid = ?)`).run(fileRid);
  stmt(db, 'DELETE FROM passages WHERE file_rid = ?').run(fileRid);
}

export function getPassages(db: Db, rids: number[]): PassageRow[] {
  if (rids.length === 0) return [];
  return stmt(db, 'SELECT * FROM passages WHERE rid IN (SELECT value FROM json_each(?))').all(JSON.stringify(rids)) as PassageRow[];
}
