// The outbox (src/store/migrations.ts v6): rows written by triggers, read here.
import type { Db } from './db.js';
import { stmt } from './statements.js';

export interface EventRow {
  rid: number;
  id: string;
  type: string;
  namespace_rid: number | null;
  collection_rid: number | null;
  /** The key that created the research run a research event reports; null for other events. */
  owner_key_id: string | null;
  /** The collection's immutable ID (joined), for webhooks' bucket lists. */
  collection_id: string | null;
  data: string;
  created_at: string;
}

export function findEventRid(db: Db, id: string): number | undefined {
  return (stmt(db, 'SELECT rid FROM events WHERE id = ?').get(id) as { rid: number } | undefined)?.rid;
}

/**
 * Which events a reader may see, as plain data the domain decides (src/domain/event-audience.ts)
 * and every reader of the outbox applies in SQL: the event page and stream, webhook fan-out and the
 * delivery log. Filtering here, not after the read, keeps pages full and limits honest.
 */
export interface EventAudience {
  /** One namespace's events, or null for every namespace's. */
  namespaceRid: number | null;
  /** Only these collections' events (namespace-level events excluded), or null for all of them. */
  collectionRids: readonly number[] | null;
  /** Job, file, object and collection events (the reader holds `read`). */
  resources: boolean;
  /** Research events: all of them, those of runs one key created, or none. */
  research: 'all' | 'none' | { ownerKeyId: string };
}

/** The audience predicate over a table's columns; its parameters come from audienceParams. */
export function audienceClause(cols: { type: string; namespace: string | null; collection: string; owner: string }): string {
  const ns = cols.namespace === null ? '' : `(@aud_ns IS NULL OR ${cols.namespace} = @aud_ns) AND `;
  return `(${ns}(@aud_cols IS NULL OR ${cols.collection} IN (SELECT value FROM json_each(@aud_cols)))
    AND CASE WHEN ${cols.type} LIKE 'research.%' THEN (@aud_research_all = 1 OR ${cols.owner} = @aud_owner) ELSE @aud_resources = 1 END)`;
}

export function audienceParams(a: EventAudience): Record<string, string | number | null> {
  return {
    aud_ns: a.namespaceRid,
    aud_cols: a.collectionRids === null ? null : JSON.stringify(a.collectionRids),
    aud_resources: a.resources ? 1 : 0,
    aud_research_all: a.research === 'all' ? 1 : 0,
    aud_owner: typeof a.research === 'object' ? a.research.ownerKeyId : null,
  };
}

const EVENTS_AFTER_SQL = `SELECT e.*, c.id AS collection_id FROM events e LEFT JOIN collections c ON c.rid = e.collection_rid
  WHERE e.rid > @after AND (@upto IS NULL OR e.rid <= @upto)
    AND ${audienceClause({ type: 'e.type', namespace: 'e.namespace_rid', collection: 'e.collection_rid', owner: 'e.owner_key_id' })}
  ORDER BY e.rid LIMIT @limit`;

/** Events after `afterRid` (up to `uptoRid`), oldest first, that the audience may see. */
export function eventsAfter(db: Db, opts: { afterRid: number; uptoRid?: number | undefined; limit: number; audience: EventAudience }): EventRow[] {
  return stmt(db, EVENTS_AFTER_SQL).all({ after: opts.afterRid, upto: opts.uptoRid ?? null, limit: opts.limit, ...audienceParams(opts.audience) }) as EventRow[];
}

export function lastEventRid(db: Db): number {
  return (stmt(db, 'SELECT coalesce(max(rid), 0) AS r FROM events').get() as { r: number }).r;
}

/** Retention: events older than the cutoff go. */
export function deleteEventsBefore(db: Db, cutoff: string): number {
  return stmt(db, 'DELETE FROM events WHERE created_at < ?').run(cutoff).changes;
}
