// Search snapshots: the ranking a search's first page saw, kept for its later pages (migration 21).
// Rows expire with the cursors that name them and are bounded in number; see docs/decisions.md.
// Their writes leave the reads cached until a write (read-cache.ts) in place: no cached read looks at them.
import type { SearchSnapshotReads, SearchSnapshotRow, SearchSnapshotWrites, SnapshotBounds } from '../aggregates/search-snapshots.js';
import type { Db } from './db.js';
import { keywordIndexOf } from './keyword-index.js';
import { keywordPostings, liveFiles } from './keyword-postings.js';
import { unseenByCaches } from './read-cache.js';
import { rowsByRid, stmt } from './statements.js';

export type { SearchSnapshotRow, SnapshotBounds } from '../aggregates/search-snapshots.js';

export function sqliteSearchSnapshots(db: Db): SearchSnapshotReads & SearchSnapshotWrites {
  return {
    exists: async (id) => searchSnapshotExists(db, id),
    get: async (id, now) => getSearchSnapshot(db, id, now),
    liveReadyFiles: async (collectionRid, fileRids) => liveReadyFiles(db, collectionRid, fileRids),
    passageFiles: async (passageRids) => passageFiles(db, passageRids),
    passagesOfFile: async (fileRid) => passageRidsOfFile(db, fileRid),
    keywordPassagesOfFile: async (collectionRid, phrases, fileRid, weights) => keywordPassagesOfFile(db, collectionRid, phrases, fileRid, weights),
    insert: async (row, now, bounds) => insertSearchSnapshot(db, row, now, bounds),
    extend: async (id, expectedCount, longer, bytesBudget) => extendSearchSnapshot(db, id, expectedCount, longer, bytesBudget),
    keepUntil: async (id, expiresAt) => keepSearchSnapshotUntil(db, id, expiresAt),
    deleteExpired: async (now) => deleteExpiredSearchSnapshots(db, now),
  };
}

/** As stored: `complete` is 0 or 1. */
type StoredSnapshot = Omit<SearchSnapshotRow, 'complete'> & { complete: 0 | 1 };

/**
 * Keeps a snapshot. Expired ones go first, then, past the bounds, the oldest, so the table stays
 * bounded however many searches run and whether or not the sweeper has run.
 */
export function insertSearchSnapshot(db: Db, row: SearchSnapshotRow, now: number, bounds: SnapshotBounds): void {
  unseenByCaches(db, () => insertSnapshotRow(db, row, now, bounds));
}

function insertSnapshotRow(db: Db, row: SearchSnapshotRow, now: number, bounds: SnapshotBounds): void {
  deleteExpiredRows(db, now);
  const rid = Number(
    stmt(
      db,
      `INSERT INTO search_snapshots (id, collection_rid, binding, page_one, bytes, entries, entry_count, complete, expires_at)
       VALUES (@id, @collection_rid, @binding, @page_one, @bytes, @entries, @entry_count, @complete, @expires_at)`,
    ).run({ ...row, complete: row.complete ? 1 : 0, bytes: row.entries.length }).lastInsertRowid,
  );
  stmt(db, 'DELETE FROM search_snapshots WHERE rid <= ? - ?').run(rid, bounds.rows);
  // Summing the bytes reads every row (5,000 at the bound): once per BYTES_CHECK_EVERY snapshots,
  // or for a large one, is enough, since a first page keeps 5-25 kB and the budget is 64 MiB.
  if (rid % BYTES_CHECK_EVERY === 0 || row.entries.length * BYTES_CHECK_EVERY > bounds.bytes / 4) keepWithinBytes(db, bounds.bytes);
}

/**
 * How often an insert checks the byte budget. Between checks the table may pass it by at most
 * BYTES_CHECK_EVERY small first pages (each under a 4·BYTES_CHECK_EVERY-th of the budget: 1 MiB).
 */
const BYTES_CHECK_EVERY = 16;

/** Past the byte budget, the oldest snapshots go until the rest fit (the newest always stays). */
function keepWithinBytes(db: Db, budget: number): void {
  const total = (stmt(db, 'SELECT coalesce(sum(bytes), 0) AS n FROM search_snapshots').get() as { n: number }).n;
  if (total <= budget) return;
  stmt(
    db,
    `DELETE FROM search_snapshots WHERE rid <= (
       SELECT rid FROM (SELECT rid, sum(bytes) OVER (ORDER BY rid DESC) AS newer FROM search_snapshots)
       WHERE newer > ? AND rid < (SELECT max(rid) FROM search_snapshots) ORDER BY rid DESC LIMIT 1)`,
  ).run(budget);
}

/** Whether a snapshot row exists at all, expired or not. */
export function searchSnapshotExists(db: Db, id: string): boolean {
  return stmt(db, 'SELECT 1 FROM search_snapshots WHERE id = ?').get(id) !== undefined;
}

/** A snapshot that has not expired, or undefined. */
export function getSearchSnapshot(db: Db, id: string, now: number): SearchSnapshotRow | undefined {
  const row = stmt(db, 'SELECT id, collection_rid, binding, page_one, entries, entry_count, complete, expires_at FROM search_snapshots WHERE id = ? AND expires_at >= ?').get(id, now) as
    | StoredSnapshot
    | undefined;
  return row && { ...row, complete: row.complete === 1 };
}

/**
 * Replaces a snapshot's entries with a longer list, unless another request extended it first
 * (its count is no longer `expectedCount`): false then, and the caller reads it again.
 */
export function extendSearchSnapshot(db: Db, id: string, expectedCount: number, longer: Pick<SearchSnapshotRow, 'entries' | 'entry_count' | 'complete'>, bytesBudget: number): boolean {
  return unseenByCaches(db, () => {
    const done =
      stmt(db, 'UPDATE search_snapshots SET entries = ?, bytes = ?, entry_count = ?, complete = ? WHERE id = ? AND entry_count = ?').run(
        longer.entries,
        longer.entries.length,
        longer.entry_count,
        longer.complete ? 1 : 0,
        id,
        expectedCount,
      ).changes === 1;
    if (done) keepWithinBytes(db, bytesBudget);
    return done;
  });
}

/** A snapshot lives as long as the last cursor that names it. */
export function keepSearchSnapshotUntil(db: Db, id: string, expiresAt: number): void {
  unseenByCaches(db, () => stmt(db, 'UPDATE search_snapshots SET expires_at = max(expires_at, ?) WHERE id = ?').run(expiresAt, id));
}

export function deleteExpiredSearchSnapshots(db: Db, now: number): number {
  return unseenByCaches(db, () => deleteExpiredRows(db, now));
}

function deleteExpiredRows(db: Db, now: number): number {
  return stmt(db, 'DELETE FROM search_snapshots WHERE expires_at < ?').run(now).changes;
}

/** Of these files, those of the collection that are live and ready: what a search may still show. */
export function liveReadyFiles(db: Db, collectionRid: number, fileRids: readonly number[]): Set<number> {
  if (fileRids.length === 0) return new Set();
  const rows = rowsByRid<{ rid: number; collection_rid: number; status: string; deleted_at: string | null }>(db, 'files', fileRids, 'rid, collection_rid, status, deleted_at');
  return new Set(rows.filter((r) => r.collection_rid === collectionRid && r.status === 'ready' && r.deleted_at === null).map((r) => r.rid));
}

/** Which of these passages exist, and the file each belongs to. */
export function passageFiles(db: Db, passageRids: readonly number[]): Map<number, number> {
  return new Map(rowsByRid<{ rid: number; file_rid: number }>(db, 'passages', passageRids, 'rid, file_rid').map((r) => [r.rid, r.file_rid]));
}

/** A file's passages, in order. */
export function passageRidsOfFile(db: Db, fileRid: number): number[] {
  return (stmt(db, 'SELECT rid FROM passages WHERE file_rid = ? ORDER BY rid').all(fileRid) as { rid: number }[]).map((r) => r.rid);
}

/**
 * A file's passages that match the query's phrases, best first: which of them an edited file shows
 * as evidence. Only the order within the one file matters here (its place comes from the snapshot).
 * It is FTS5's bm25() with these column weights, over a table of the collection's own; in the shared
 * table that function would count every tenant's rows, so there the same formula runs over the
 * collection's live passages (fts5Bm25Order).
 */
export function keywordPassagesOfFile(db: Db, collectionRid: number, phrases: readonly string[], fileRid: number, weights: { heading: number; body: number }): number[] {
  const index = keywordIndexOf(db, collectionRid);
  if (index.shared) return fts5Bm25Order(db, collectionRid, phrases, fileRid, weights);
  const fts = index.table;
  const rows = stmt(
    db,
    `SELECT rowid AS rid FROM ${fts} WHERE ${fts} MATCH ? AND rowid IN (SELECT rid FROM passages WHERE file_rid = ?)
     ORDER BY bm25(${fts}, ?, ?), rowid`,
  ).all(phrases.join(' OR '), fileRid, weights.heading, weights.body) as { rid: number }[];
  return rows.map((r) => r.rid);
}

/** FTS5's bm25() (fts5_aux.c: k1 1.2, b 0.75, its IDF floored at 1e-6), its statistics the collection's live passages'. */
function fts5Bm25Order(db: Db, collectionRid: number, phrases: readonly string[], fileRid: number, weights: { heading: number; body: number }): number[] {
  const id = (stmt(db, 'SELECT id FROM collections WHERE rid = ?').get(collectionRid) as { id: string } | undefined)?.id;
  if (id === undefined) return [];
  const { passages, phrases: postings } = keywordPostings(db, { collectionRid, collectionId: id, phrases, files: liveFiles(db, collectionRid) });
  const n = passages.rids.length;
  const average = passages.totalLength / Math.max(n, 1);
  const scores = new Map<number, number>();
  for (const phrase of postings) {
    const hits = phrase.passages.length;
    const idf = Math.log((n - hits + 0.5) / (hits + 0.5));
    for (let i = 0; i < hits; i++) {
      const at = phrase.passages[i]!;
      if (passages.fileRids[at] !== fileRid) continue;
      const f = weights.heading * phrase.heading[i]! + weights.body * phrase.body[i]!;
      const score = (idf <= 0 ? 1e-6 : idf) * ((f * 2.2) / (f + 1.2 * (0.25 + (0.75 * passages.lengths[at]!) / average)));
      scores.set(passages.rids[at]!, (scores.get(passages.rids[at]!) ?? 0) + score);
    }
  }
  return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([rid]) => rid);
}
