// The outbox (src/store/migrations.ts v6): rows written by triggers, read here.
import type { Db } from './db.js';
import { stmt } from './statements.js';

export interface EventRow {
  rid: number;
  id: string;
  type: string;
  namespace_rid: number | null;
  collection_rid: number | null;
  data: string;
  created_at: string;
}

export function findEventRid(db: Db, id: string): number | undefined {
  return (stmt(db, 'SELECT rid FROM events WHERE id = ?').get(id) as { rid: number } | undefined)?.rid;
}

/** Events after `afterRid`, oldest first; `namespaceRid` narrows to one namespace's. */
export function eventsAfter(db: Db, opts: { afterRid: number; limit: number; namespaceRid?: number | undefined }): EventRow[] {
  return stmt(
    db,
    `SELECT * FROM events WHERE rid > @after AND (@ns IS NULL OR namespace_rid = @ns) ORDER BY rid LIMIT @limit`,
  ).all({ after: opts.afterRid, limit: opts.limit, ns: opts.namespaceRid ?? null }) as EventRow[];
}

export function lastEventRid(db: Db): number {
  return (stmt(db, 'SELECT coalesce(max(rid), 0) AS r FROM events').get() as { r: number }).r;
}

/** Retention: events older than the cutoff go. */
export function deleteEventsBefore(db: Db, cutoff: string): number {
  return stmt(db, 'DELETE FROM events WHERE created_at < ?').run(cutoff).changes;
}
