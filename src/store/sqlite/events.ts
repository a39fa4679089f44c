// The outbox (src/store/sqlite/migrations.ts v6, v11): one row per change of a job, file, collection or
// research run, written here by the store function that makes the change, in its transaction (so
// none is lost on a crash and none exists for a change that rolled back), and read here.
import type { EventAudience, EventReads, EventRow, EventType, EventWrites } from '../aggregates/events.js';
import type { Db } from './db.js';
import { fileResourceByRid } from './file-resource.js';
import { stmt } from './statements.js';

export type { EventAudience, EventRow, EventType } from '../aggregates/events.js';

export function sqliteEvents(db: Db): EventReads & EventWrites {
  return {
    findRid: async (id) => findEventRid(db, id),
    after: async (opts) => eventsAfter(db, opts),
    lastRid: async () => lastEventRid(db),
    deleteBefore: async (cutoff) => deleteEventsBefore(db, cutoff),
  };
}

/**
 * A collection's status from its row and file counters (src/domain/present.ts collectionStatus says
 * the same in TypeScript): deleted → deleting; no living files → empty; any pending or indexing →
 * indexing; otherwise ready, degraded (some failed) or failed (all failed).
 */
export function collectionStatusSql(c: string): string {
  return `CASE WHEN ${c}.deleted_at IS NOT NULL THEN 'deleting'
    WHEN ${c}.files_pending + ${c}.files_indexing + ${c}.files_ready + ${c}.files_failed = 0 THEN 'empty'
    WHEN ${c}.files_pending + ${c}.files_indexing > 0 THEN 'indexing'
    WHEN ${c}.files_failed = 0 THEN 'ready'
    WHEN ${c}.files_ready > 0 THEN 'degraded'
    ELSE 'failed' END`;
}

// 20 hex digits as before, now the time in ms (12) then 4 random bytes (8): ids that grow with time
// land at the end of the unique index, where random ones touched a different leaf page per event
// and made every indexing commit write hundreds of scattered pages (issue 15's ingest profile).
const EVENT_ID = "'evt_' || printf('%012x', CAST(unixepoch('subsec') * 1000 AS INTEGER)) || lower(hex(randomblob(4)))";
const EVENT_AT = "strftime('%Y-%m-%dT%H:%M:%fZ')";

// The data of each event: the resource as its GET shows it (the workspace object.* events their own
// fields), built from the one row that changed.
const JOB_EVENT_SQL = `INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT ${EVENT_ID}, @type, namespace_rid, collection_rid, json_object(
    'id', id, 'type', type, 'status', status, 'namespace', namespace, 'collection', collection, 'file_id', file_id,
    'error', CASE WHEN error_code IS NULL THEN NULL ELSE json_object('code', error_code, 'message', error_message) END,
    'created_at', created_at, 'updated_at', updated_at), ${EVENT_AT}
  FROM jobs WHERE rid = @rid`;

// A file event's data comes from the file serializer (src/contract/file-resource.ts), not from SQL, so it is the
// file's GET key for key (an error only when there is one, notes, the governing rule).
const FILE_EVENT_SQL = `INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  VALUES (${EVENT_ID}, @type, @namespace_rid, @collection_rid, @data, ${EVENT_AT})`;

const OBJECT_EVENT_SQL = `INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT ${EVENT_ID}, @type, c.namespace_rid, f.collection_rid,
    json_object('workspaceId', n.id, 'bucketId', c.id, 'key', f.path, 'versionId', f.version_id, 'fileId', f.id), ${EVENT_AT}
  FROM files f JOIN collections c ON c.rid = f.collection_rid JOIN namespaces n ON n.rid = c.namespace_rid WHERE f.rid = @rid`;

// The file counts come from the collection's counters (kept with every change of a file's status or
// deletion, src/store/sqlite/files.ts), never from a count over its files.
const COLLECTION_EVENT_SQL = `INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT ${EVENT_ID}, @type, c.namespace_rid, c.rid, json_object(
    'id', c.id, 'namespace', n.name, 'name', c.name, 'display_name', c.display_name,
    'status', ${collectionStatusSql('c')},
    'processing', json(c.processing), 'access_control', c.access_control,
    'index_generation', CASE WHEN c.files_ready > 0 THEN 'gen-' || c.generation ELSE NULL END,
    'file_counts', json_object('pending', c.files_pending, 'indexing', c.files_indexing, 'ready', c.files_ready, 'failed', c.files_failed),
    'created_at', c.created_at, 'updated_at', c.updated_at), ${EVENT_AT}
  FROM collections c JOIN namespaces n ON n.rid = c.namespace_rid WHERE c.rid = @rid`;

// Research events carry the key that created the run: only it (or a cluster key) may see them.
const RESEARCH_EVENT_SQL = `INSERT INTO events (id, type, namespace_rid, collection_rid, owner_key_id, data, created_at)
  SELECT ${EVENT_ID}, @type, namespace_rid, collection_rid, key_id, json_object(
    'id', id, 'namespace', namespace, 'collection', collection, 'status', status, 'mode', mode,
    'progress', json(progress), 'answer', answer, 'sources', json(sources), 'image_description', image_description,
    'usage', json(usage), 'error', json(error), 'created_at', created_at, 'updated_at', updated_at, 'completed_at', completed_at), ${EVENT_AT}
  FROM research_runs WHERE rid = @rid`;

function eventSql(type: EventType): string {
  if (type.startsWith('job.')) return JOB_EVENT_SQL;
  if (type.startsWith('object.')) return OBJECT_EVENT_SQL;
  if (type.startsWith('collection.')) return COLLECTION_EVENT_SQL;
  return RESEARCH_EVENT_SQL;
}

/**
 * Appends one event about the row `rid` of the table its type names (jobs, files, collections,
 * research_runs), as that row is now. Callers are the store functions that change those rows, inside
 * the caller's transaction; the order of calls is the order of the events.
 */
export function appendEvent(db: Db, type: EventType, rid: number): void {
  if (type.startsWith('file.')) {
    const file = fileResourceByRid(db, rid);
    if (file) stmt(db, FILE_EVENT_SQL).run({ type, namespace_rid: file.namespaceRid, collection_rid: file.collectionRid, data: JSON.stringify(file.resource) });
    return;
  }
  stmt(db, eventSql(type)).run({ type, rid });
}

export function findEventRid(db: Db, id: string): number | undefined {
  return (stmt(db, 'SELECT rid FROM events WHERE id = ?').get(id) as { rid: number } | undefined)?.rid;
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
