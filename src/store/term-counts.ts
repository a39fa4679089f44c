// How many of the passages a reader may read hold each of some words: the collection statistics an
// answer weighs a question's words by (src/domain/answer/support.ts). Counted over the reader's
// passages only, so that nothing a reader may not read changes what it is answered.
import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { untilWrite } from './read-cache.js';
import { stmt } from './statements.js';

export interface TermCounts {
  /** Passages of ready files the reader may read. */
  passages: number;
  /** Per word, in the order given: how many of those passages hold it (as the keyword index matches it). */
  counts: number[];
}

/** `readableFiles` null: the reader reads every file (access control off). */
export function passageTermCounts(db: Db, collectionRid: number, words: readonly string[], readableFiles: readonly number[] | null): TermCounts {
  const fts = ftsTableName(collectionRid);
  const files = readableFiles === null ? null : JSON.stringify(readableFiles);
  const passages = untilWrite(db, `passages:${collectionRid}:${files ?? '*'}`, () =>
    files === null
      ? (stmt(db, `SELECT count(*) AS n FROM passages p JOIN files f ON f.rid = p.file_rid WHERE f.collection_rid = ? AND f.status = 'ready' AND f.deleted_at IS NULL`).get(collectionRid) as { n: number }).n
      : (stmt(db, 'SELECT count(*) AS n FROM passages p WHERE p.file_rid IN (SELECT value FROM json_each(?))').get(files) as { n: number }).n,
  );
  const counts = words.map((word) => {
    const phrase = `"${word.replaceAll('"', '""')}"`;
    const row =
      files === null
        ? stmt(db, `SELECT count(*) AS n FROM ${fts} m JOIN passages p ON p.rid = m.rowid JOIN files f ON f.rid = p.file_rid WHERE ${fts} MATCH ? AND f.status = 'ready' AND f.deleted_at IS NULL`).get(phrase)
        : stmt(db, `SELECT count(*) AS n FROM ${fts} m JOIN passages p ON p.rid = m.rowid WHERE ${fts} MATCH ? AND p.file_rid IN (SELECT value FROM json_each(?))`).get(phrase, files);
    return Math.min((row as { n: number }).n, passages);
  });
  return { passages, counts };
}
