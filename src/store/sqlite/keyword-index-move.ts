// Moving a collection out of the shared keyword table (keyword-index.ts says when and why). Its own
// module: the move reads passages' text (passages.ts), and passages.ts writes through keyword-index.ts.
import { keywordIndexText } from '../../contract/cjk.js';
import { keywordIndexOf, keywordIndexOutgrown, OWN_INDEX_AT } from './keyword-index.js';
import { createFtsTableSql, ftsTableName } from './migrations.js';
import { getPassages } from './passages.js';
import { sqlite, type Db } from './sqlite.js';
import { stmt } from './statements.js';

/**
 * Moves a collection that outgrew the shared table to a table of its own, in the caller's write
 * transaction; false when it stays (not shared, or not grown). Every row the collection has there
 * (its passages with a length record, deleted files' included until their job removes them) is made
 * again from the passage's text as the ingest made it, so terms, offsets and lengths, and every
 * score, stay. keywordIndexText is what the ingest applies (to every passage of a file with Han or
 * kana; other text it leaves as it is): a change to it needs the collections in the shared table
 * reindexed before they move.
 */
export function moveKeywordIndexToOwnTable(db: Db, collectionRid: number, threshold = OWN_INDEX_AT): boolean {
  if (!keywordIndexOutgrown(db, collectionRid, threshold)) return false;
  const shared = keywordIndexOf(db, collectionRid);
  const rids = (
    stmt(db, `SELECT p.rid FROM passages p JOIN ${shared.table}_docsize d ON d.id = p.rid WHERE p.file_rid IN (SELECT rid FROM files WHERE collection_rid = ?) ORDER BY p.rid`)
      .raw()
      .all(collectionRid) as [number][]
  ).map((r) => r[0]);
  sqlite(db).exec(createFtsTableSql(collectionRid));
  stmt(db, 'DELETE FROM keyword_versions WHERE collection_rid = ?').run(collectionRid);
  const remove = stmt(db, `DELETE FROM ${shared.table} WHERE rowid = ?`);
  for (const rid of rids) remove.run(rid);
  // The inserts last: a write after an FTS5 insert in the same transaction makes it flush a segment.
  const insert = stmt(db, `INSERT INTO ${ftsTableName(collectionRid)} (rowid, heading, body) VALUES (?, ?, ?)`);
  for (let from = 0; from < rids.length; from += 500) {
    for (const p of getPassages(db, rids.slice(from, from + 500))) insert.run(p.rid, keywordIndexText(p.heading), keywordIndexText(p.text));
  }
  return true;
}
