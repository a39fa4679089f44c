import type { FileErrorCode } from '../../contract/errors.js';
import { newId } from '../../contract/ids.js';
import type { JobReads, JobRow, JobStatus, JobWrites, NewJob } from '../aggregates/jobs.js';
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { resetIndexingFiles, resetInterruptedFiles } from './files.js';
import { stmt } from './statements.js';

export type { JobRow, JobStatus, JobType, NewJob } from '../aggregates/jobs.js';

export function sqliteJobs(db: Db): JobReads & JobWrites {
  return {
    byId: async (id) => getJob(db, id),
    status: async (rid) => jobStatus(db, rid),
    list: async (opts) => listJobs(db, opts),
    queuedSourceFetches: async (limit) => queuedSourceFetches(db, limit),
    hasQueuedIndexJobs: async (collectionRid) => hasQueuedIndexJobs(db, collectionRid),
    insert: async (job) => insertJob(db, job),
    claim: async (limit, now, fetched) => claimJobs(db, limit, now, fetched),
    finish: async (rid, status, now, error) => finishJob(db, rid, status, now, error ?? null),
    makeRunnable: async (versionId, now) => makeRunnable(db, versionId, now),
    countWorkerDeath: async () => countWorkerDeath(db),
    requeueInterruptedWork: async (now) => requeueInterruptedWork(db, now),
    cancelQueuedFileJobs: async (fileRid, now, message) => cancelQueuedFileJobs(db, fileRid, now, message),
    cancelCollectionJobs: async (collectionRid, now, exceptRid) => cancelCollectionJobs(db, collectionRid, now, exceptRid),
    failVersionJobs: async (versionId, now, error) => failVersionJobs(db, versionId, now, error),
    requeueCollectionFiles: async (collectionRid, now) => requeueCollectionFiles(db, collectionRid, now),
  };
}

/** Each job a statement created or moved to another status reports it (job.updated), in the statement's order. */
function reportJobs(db: Db, rows: { rid: number }[]): number {
  for (const r of rows) appendEvent(db, 'job.updated', r.rid);
  return rows.length;
}

export function insertJob(db: Db, job: NewJob): JobRow {
  const row = stmt(
    db,
    `INSERT INTO jobs (id, type, status, namespace_rid, collection_rid, namespace, collection, file_rid, file_id, version_id, runnable, created_at, updated_at)
     VALUES (@id, @type, 'queued', @namespace_rid, @collection_rid, @namespace, @collection, @file_rid, @file_id, @version_id, @runnable, @created_at, @created_at)
     RETURNING *`,
  ).get(job) as JobRow;
  appendEvent(db, 'job.updated', row.rid);
  return row;
}

export function getJob(db: Db, id: string): JobRow | undefined {
  return stmt(db, 'SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
}

export function listJobs(
  db: Db,
  opts: { namespaceRid: number; afterRid: number; limit: number; status?: string | undefined; type?: string | undefined; collectionRids?: readonly number[] | undefined },
): JobRow[] {
  return stmt(
    db,
    `SELECT * FROM jobs WHERE namespace_rid = @ns AND rid > @after
       AND (@status IS NULL OR status = @status) AND (@type IS NULL OR type = @type)
       AND (@cols IS NULL OR collection_rid IN (SELECT value FROM json_each(@cols)))
     ORDER BY rid LIMIT @limit`,
  ).all({
    ns: opts.namespaceRid,
    after: opts.afterRid,
    limit: opts.limit,
    status: opts.status ?? null,
    type: opts.type ?? null,
    cols: opts.collectionRids ? JSON.stringify(opts.collectionRids) : null,
  }) as JobRow[];
}

/**
 * Claims up to `limit` runnable queued jobs, oldest first, so two claimers never share a job. A job
 * claimed before that never finished (a worker or daemon died holding it) is claimed alone: if it
 * is what killed the worker, it takes down only itself the next time, not the files batched with it.
 */
export function claimJobs(db: Db, limit: number, now: string, fetched: readonly number[] = []): JobRow[] {
  // Index jobs of http(s) sources are claimed only once their bytes are in (`fetched`, their rids):
  // the worker fetches them beside the indexing while they wait here (src/domain/ingest/fetch-ahead.ts).
  const waits = `(type = 'index_file' AND rid NOT IN (SELECT value FROM json_each(@fetched)) AND EXISTS (${HTTP_SOURCE}))`;
  const params = { fetched: JSON.stringify(fetched) };
  const head = stmt(db, `SELECT attempts FROM jobs WHERE status = 'queued' AND runnable = 1 AND NOT ${waits} ORDER BY rid LIMIT 1`).get(params) as { attempts: number } | undefined;
  if (!head) return [];
  const retried = head.attempts > 0;
  const jobs = stmt(
    db,
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = @now
     WHERE rid IN (SELECT rid FROM jobs WHERE status = 'queued' AND runnable = 1 AND NOT ${waits} AND (attempts > 0) = @retried ORDER BY rid LIMIT @limit)
     RETURNING *`,
  ).all({ ...params, now, retried: retried ? 1 : 0, limit: retried ? 1 : limit }) as JobRow[];
  reportJobs(db, jobs);
  return jobs;
}

/** The job's file version comes from an http(s) source (a correlated subquery on `jobs`). */
const HTTP_FILE = "f.source_type = 'uri' AND (f.uri LIKE 'http:%' OR f.uri LIKE 'https:%')";
const HTTP_SOURCE = `SELECT 1 FROM files f WHERE f.rid = jobs.file_rid AND f.version_id = jobs.version_id AND ${HTTP_FILE}`;

/** Queued, runnable index jobs whose file comes from an http(s) source, oldest first, with the source. */
export function queuedSourceFetches(db: Db, limit: number): (JobRow & { uri: string })[] {
  return stmt(
    db,
    // From the URI files (a partial index, migration 20; CROSS JOIN keeps them the outer loop) to
    // their queued jobs: not the whole queue.
    `SELECT jobs.*, f.uri AS uri FROM files f INDEXED BY files_uri_sources
       CROSS JOIN jobs ON jobs.file_rid = f.rid AND jobs.version_id = f.version_id AND jobs.status = 'queued'
     WHERE ${HTTP_FILE} AND jobs.runnable = 1 AND jobs.type = 'index_file'
     ORDER BY jobs.rid LIMIT ?`,
  ).all(limit) as (JobRow & { uri: string })[];
}

/** Jobs claimed and not finished, each counted one more worker death: when no worker runs, those a dead one held. */
export function countWorkerDeath(db: Db): JobRow[] {
  return stmt(db, "UPDATE jobs SET worker_deaths = worker_deaths + 1 WHERE status = 'running' RETURNING *").all() as JobRow[];
}

export function finishJob(db: Db, rid: number, status: 'succeeded' | 'failed' | 'canceled', now: string, error: { code: FileErrorCode; message: string } | null = null): boolean {
  // Only a job still running (or queued, for cancel) can finish: a canceled job stays canceled.
  const r = stmt(db, "UPDATE jobs SET status = ?, error_code = ?, error_message = ?, updated_at = ? WHERE rid = ? AND status IN ('queued','running')").run(
    status,
    error?.code ?? null,
    error?.message ?? null,
    now,
    rid,
  );
  if (r.changes === 1) appendEvent(db, 'job.updated', rid);
  return r.changes === 1;
}

export function jobStatus(db: Db, rid: number): JobStatus | undefined {
  return (stmt(db, 'SELECT status FROM jobs WHERE rid = ?').get(rid) as { status: JobStatus } | undefined)?.status;
}

export function makeRunnable(db: Db, versionId: string, now: string): void {
  stmt(db, "UPDATE jobs SET runnable = 1, updated_at = ? WHERE version_id = ? AND status = 'queued'").run(now, versionId);
}

/** Jobs left running by a daemon that died go back to the queue (DESIGN.md: "Jobs are rows"). */
export function requeueInterruptedJobs(db: Db, now: string): number {
  return reportJobs(db, stmt(db, "UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'running' RETURNING rid").all(now) as { rid: number }[]);
}

/**
 * What a runner that died left: its jobs back to the queue and their files back to pending. At a
 * daemon's start, and when a new indexing worker replaces one that died (src/domain/ingest/pipeline.ts).
 */
export function requeueInterruptedWork(db: Db, now: string): { jobs: number; files: number } {
  return { jobs: requeueInterruptedJobs(db, now), files: resetInterruptedFiles(db, now) };
}

/** Superseded work: a newer version or a delete makes older queued index jobs pointless. */
export function cancelQueuedFileJobs(db: Db, fileRid: number, now: string, message: string): void {
  reportJobs(
    db,
    stmt(db, "UPDATE jobs SET status = 'canceled', error_code = 'superseded', error_message = ?, updated_at = ? WHERE file_rid = ? AND type = 'index_file' AND status IN ('queued','running') RETURNING rid").all(
      message,
      now,
      fileRid,
    ) as { rid: number }[],
  );
}

/** True while the collection has index work queued that could run now (not uploads still waiting for bytes). */
export function hasQueuedIndexJobs(db: Db, collectionRid: number): boolean {
  return stmt(db, "SELECT 1 FROM jobs WHERE status = 'queued' AND runnable = 1 AND collection_rid = ? AND type IN ('index_file', 'reindex_collection') LIMIT 1").get(collectionRid) !== undefined;
}

export function cancelCollectionJobs(db: Db, collectionRid: number, now: string, exceptRid: number): void {
  reportJobs(
    db,
    stmt(
      db,
      "UPDATE jobs SET status = 'canceled', error_code = 'superseded', error_message = 'The collection was deleted.', updated_at = ? WHERE collection_rid = ? AND rid != ? AND status IN ('queued','running') RETURNING rid",
    ).all(now, collectionRid, exceptRid) as { rid: number }[],
  );
}


export function failVersionJobs(db: Db, versionId: string, now: string, error: { code: FileErrorCode; message: string }): void {
  reportJobs(
    db,
    stmt(db, "UPDATE jobs SET status = 'failed', error_code = ?, error_message = ?, updated_at = ? WHERE version_id = ? AND status IN ('queued','running') RETURNING rid").all(
      error.code,
      error.message,
      now,
      versionId,
    ) as { rid: number }[],
  );
}

/**
 * After a collection is restored: its files that were waiting to be indexed when the delete job
 * canceled their jobs get a new index job each (an upload still waiting for its bytes stays unrunnable).
 */
export function requeueCollectionFiles(db: Db, collectionRid: number, now: string): number {
  resetIndexingFiles(db, collectionRid, now);
  const waiting = stmt(
    db,
    `SELECT c.namespace_rid, c.rid AS collection_rid, n.name AS namespace, c.name AS collection, f.rid AS file_rid, f.id AS file_id, f.version_id,
            CASE WHEN v.upload_state = 'waiting' THEN 0 ELSE 1 END AS runnable
     FROM files f JOIN collections c ON c.rid = f.collection_rid JOIN namespaces n ON n.rid = c.namespace_rid
     LEFT JOIN file_versions v ON v.id = f.version_id
     WHERE f.collection_rid = @col AND f.deleted_at IS NULL AND f.status = 'pending'
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.file_rid = f.rid AND j.status IN ('queued', 'running'))
     ORDER BY f.rid`,
  ).all({ col: collectionRid }) as Omit<NewJob, 'id' | 'type' | 'created_at'>[];
  for (const job of waiting) insertJob(db, { ...job, id: newId('job'), type: 'index_file', created_at: now });
  return waiting.length;
}
