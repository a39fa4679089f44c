// Research runs (see src/domain/answer/research.ts).
import type { NewResearch, ResearchReads, ResearchRow, ResearchWrites } from '../aggregates/research.js';
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { stmt } from './statements.js';

export type { NewResearch, ResearchRow, ResearchStatus } from '../aggregates/research.js';

export function sqliteResearch(db: Db): ResearchReads & ResearchWrites {
  return {
    findByIdempotency: async (keyId, idempotencyKey) => findResearchByIdempotency(db, keyId, idempotencyKey),
    find: async (collectionRid, id) => getResearch(db, collectionRid, id),
    byRid: async (rid) => getResearchByRid(db, rid),
    list: async (opts) => listResearch(db, opts),
    insert: async (row) => insertResearch(db, row),
    expireIdempotencyKeys: async (createdBefore) => expireIdempotencyKeys(db, createdBefore),
    claim: async (now) => claimResearch(db, now),
    setProgress: async (rid, progress, now) => setResearchProgress(db, rid, progress, now),
    finish: async (rid, fields) => finishResearch(db, rid, fields),
    requeueInterrupted: async (now) => requeueInterruptedResearch(db, now),
  };
}

export function insertResearch(db: Db, row: NewResearch): ResearchRow {
  const run = stmt(
    db,
    `INSERT INTO research_runs (id, namespace_rid, collection_rid, namespace, collection, key_id, idempotency_key, body_hash, request, status, mode, image_description, image_text, deadline_at, created_at, updated_at)
     VALUES (@id, @namespace_rid, @collection_rid, @namespace, @collection, @key_id, @idempotency_key, @body_hash, @request, 'queued', @mode, @image_description, @image_text, @deadline_at, @created_at, @created_at)
     RETURNING *`,
  ).get(row) as ResearchRow;
  appendEvent(db, 'research.updated', run.rid);
  return run;
}

export function findResearchByIdempotency(db: Db, keyId: string, idempotencyKey: string): ResearchRow | undefined {
  return stmt(db, 'SELECT * FROM research_runs WHERE key_id = ? AND idempotency_key = ?').get(keyId, idempotencyKey) as ResearchRow | undefined;
}

/** Idempotency records stay 24 hours (retrieval-api.md, Limits); after that the key may name a new run. */
export function expireIdempotencyKeys(db: Db, createdBefore: string): void {
  stmt(db, 'UPDATE research_runs SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND created_at < ?').run(createdBefore);
}

export function getResearch(db: Db, collectionRid: number, id: string): ResearchRow | undefined {
  return stmt(db, 'SELECT * FROM research_runs WHERE collection_rid = ? AND id = ?').get(collectionRid, id) as ResearchRow | undefined;
}

export function getResearchByRid(db: Db, rid: number): ResearchRow | undefined {
  return stmt(db, 'SELECT * FROM research_runs WHERE rid = ?').get(rid) as ResearchRow | undefined;
}

/** Newest first; `keyId` narrows to one key's runs. */
export function listResearch(db: Db, opts: { collectionRid: number; beforeRid: number | null; limit: number; keyId?: string | undefined }): ResearchRow[] {
  return stmt(
    db,
    `SELECT * FROM research_runs WHERE collection_rid = @c AND (@before IS NULL OR rid < @before) AND (@key IS NULL OR key_id = @key) ORDER BY rid DESC LIMIT @limit`,
  ).all({ c: opts.collectionRid, before: opts.beforeRid, limit: opts.limit, key: opts.keyId ?? null }) as ResearchRow[];
}

/** The next queued run, marked running; undefined when none waits. */
export function claimResearch(db: Db, now: string): ResearchRow | undefined {
  const run = stmt(
    db,
    `UPDATE research_runs SET status = 'running', updated_at = ? WHERE rid = (SELECT rid FROM research_runs WHERE status = 'queued' ORDER BY rid LIMIT 1) RETURNING *`,
  ).get(now) as ResearchRow | undefined;
  if (run) appendEvent(db, 'research.updated', run.rid);
  return run;
}

/** Each new stage is reported (research.progress); the same progress again is not. */
export function setResearchProgress(db: Db, rid: number, progress: string, now: string): boolean {
  const before = stmt(db, 'SELECT progress FROM research_runs WHERE rid = ?').get(rid) as { progress: string | null } | undefined;
  const changed = stmt(db, "UPDATE research_runs SET progress = ?, updated_at = ? WHERE rid = ? AND status = 'running'").run(progress, now, rid).changes === 1;
  if (changed && before?.progress !== progress) appendEvent(db, 'research.progress', rid);
  return changed;
}

/** Ends a run that is still unfinished; a run already ended (canceled meanwhile) stays as it is. */
export function finishResearch(
  db: Db,
  rid: number,
  fields: { status: 'succeeded' | 'failed' | 'canceled'; answer?: string | null; sources?: string | null; usage?: string | null; error?: string | null; now: string },
): boolean {
  const changed =
    stmt(
      db,
      `UPDATE research_runs SET status = @status, answer = @answer, sources = @sources, usage = @usage, error = @error, updated_at = @now, completed_at = @now
       WHERE rid = @rid AND status IN ('queued', 'running')`,
    ).run({ rid, status: fields.status, answer: fields.answer ?? null, sources: fields.sources ?? null, usage: fields.usage ?? null, error: fields.error ?? null, now: fields.now }).changes === 1;
  if (changed) appendEvent(db, 'research.updated', rid);
  return changed;
}

/** After a restart: runs left running start over (their deadline still holds). */
export function requeueInterruptedResearch(db: Db, now: string): number {
  const rows = stmt(db, "UPDATE research_runs SET status = 'queued', progress = NULL, updated_at = ? WHERE status = 'running' RETURNING rid").all(now) as { rid: number }[];
  for (const r of rows) appendEvent(db, 'research.updated', r.rid);
  return rows.length;
}
