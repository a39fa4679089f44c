// What the operator channel (src/rpc) reads and keeps: cluster-wide counts for `status`, and the
// file:// roots the operator granted at run time (kept in `meta`, so they survive restarts).
import type { ClusterCounts, GrantedRoot, OperatorReads, OperatorWrites } from '../aggregates/operator.js';
import type { Db } from './db.js';
import { collectionStatusSql } from './events.js';
import { stmt } from './statements.js';

export type { ClusterCounts, GrantedRoot } from '../aggregates/operator.js';

export function sqliteOperator(db: Db): OperatorReads & OperatorWrites {
  return {
    clusterCounts: async () => clusterCounts(db),
    grantedFileRoots: async () => grantedFileRoots(db),
    saveGrantedFileRoots: async (roots) => saveGrantedFileRoots(db, roots),
  };
}

const tally = (rows: { k: string; n: number }[]): Record<string, number> => Object.fromEntries(rows.map((r) => [r.k, r.n]));

export function clusterCounts(db: Db): ClusterCounts {
  const ns = stmt(db, 'SELECT count(*) FILTER (WHERE deleted_at IS NULL) AS live, count(*) FILTER (WHERE deleted_at IS NOT NULL) AS deleted FROM namespaces').get() as {
    live: number;
    deleted: number;
  };
  // A collection counts as living only while its namespace is living too.
  const cols = stmt(
    db,
    `SELECT count(*) FILTER (WHERE c.deleted_at IS NULL AND n.deleted_at IS NULL) AS live,
            count(*) FILTER (WHERE c.deleted_at IS NOT NULL OR n.deleted_at IS NOT NULL) AS deleted
     FROM collections c JOIN namespaces n ON n.rid = c.namespace_rid`,
  ).get() as { live: number; deleted: number };
  // Both from the collections' file counters (migration v11), not a pass over every file.
  const byStatus = stmt(
    db,
    `SELECT ${collectionStatusSql('c')} AS k, count(*) AS n FROM collections c JOIN namespaces n ON n.rid = c.namespace_rid
     WHERE c.deleted_at IS NULL AND n.deleted_at IS NULL GROUP BY k`,
  ).all() as { k: string; n: number }[];
  const fileTotals = stmt(
    db,
    `SELECT coalesce(sum(c.files_failed), 0) AS failed, coalesce(sum(c.files_indexing), 0) AS indexing, coalesce(sum(c.files_pending), 0) AS pending, coalesce(sum(c.files_ready), 0) AS ready
     FROM collections c JOIN namespaces n ON n.rid = c.namespace_rid WHERE c.deleted_at IS NULL AND n.deleted_at IS NULL`,
  ).get() as Record<string, number>;
  const files = Object.entries(fileTotals)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => ({ k, n }));
  const jobs = stmt(db, 'SELECT status AS k, count(*) AS n FROM jobs GROUP BY status').all() as { k: string; n: number }[];
  const queued = stmt(db, "SELECT type AS k, count(*) AS n FROM jobs WHERE status = 'queued' GROUP BY type").all() as { k: string; n: number }[];
  const research = stmt(db, 'SELECT status AS k, count(*) AS n FROM research_runs GROUP BY status').all() as { k: string; n: number }[];
  return {
    namespaces: { live: ns.live, deleted: ns.deleted },
    collections: { live: cols.live, deleted: cols.deleted, by_status: tally(byStatus) },
    files: tally(files),
    jobs: tally(jobs),
    queued_jobs_by_type: tally(queued),
    research_runs: tally(research),
  };
}

const GRANTED_ROOTS_KEY = 'operator_file_roots';

export function grantedFileRoots(db: Db): GrantedRoot[] {
  const row = stmt(db, 'SELECT value FROM meta WHERE key = ?').get(GRANTED_ROOTS_KEY) as { value: string } | undefined;
  if (!row) return [];
  const parsed = JSON.parse(row.value) as unknown;
  return Array.isArray(parsed) ? (parsed as GrantedRoot[]).filter((r) => typeof r?.path === 'string' && typeof r?.granted_at === 'string') : [];
}

export function saveGrantedFileRoots(db: Db, roots: readonly GrantedRoot[]): void {
  stmt(db, 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(GRANTED_ROOTS_KEY, JSON.stringify(roots));
}
