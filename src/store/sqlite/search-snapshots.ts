// Search snapshots: the ranking a search's first page saw, kept for its later pages (migration 21).
// Rows expire with the cursors that name them and are bounded in number; see docs/decisions.md.
// Their writes leave the reads cached until a write (read-cache.ts) in place: no cached read looks at them.
import type { SearchSnapshotReads, SearchSnapshotRow, SearchSnapshotWrites, SnapshotBounds } from '../aggregates/search-snapshots.js';
import type { Db } from './db.js';
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
