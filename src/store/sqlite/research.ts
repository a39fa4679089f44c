// Research runs (see src/domain/answer/research.ts).
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { stmt } from './statements.js';

export type ResearchStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

export interface ResearchRow {
  rid: number;
  id: string;
  namespace_rid: number;
  collection_rid: number;
  namespace: string;
  collection: string;
  key_id: string;
  idempotency_key: string | null;
  body_hash: string;
  request: string;
  status: ResearchStatus;
  mode: string;
  progress: string | null;
  answer: string | null;
  sources: string | null;
  image_description: string | null;
  image_text: string | null;
  usage: string | null;
  error: string | null;
  deadline_at: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export type NewResearch = Pick<
  ResearchRow,
  'id' | 'namespace_rid' | 'collection_rid' | 'namespace' | 'collection' | 'key_id' | 'idempotency_key' | 'body_hash' | 'request' | 'mode' | 'image_description' | 'image_text' | 'deadline_at' | 'created_at'
>;

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
