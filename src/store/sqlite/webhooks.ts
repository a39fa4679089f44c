// Webhooks, their delivery log and every attempt (workspace-api.md "Webhook"; decisions.md §6).
// WEBHOOK_MIGRATION_SQL is appended to src/store/sqlite/migrations.ts as a new version.
import type { AttemptRow, DeliveryChanges, DeliveryRow, NewWebhook, WebhookChanges, WebhookReads, WebhookRow, WebhookWrites } from '../aggregates/webhooks.js';
import type { Db } from './db.js';
import { audienceClause, audienceParams, type EventAudience } from './events.js';
import { stmt } from './statements.js';

export type { AttemptRow, DeliveryRow, NewWebhook, WebhookChanges, WebhookRow } from '../aggregates/webhooks.js';

export function sqliteWebhooks(db: Db): WebhookReads & WebhookWrites {
  return {
    find: async (namespaceRid, id) => findWebhook(db, namespaceRid, id),
    byRid: async (rid) => findWebhookByRid(db, rid),
    list: async (namespaceRid, afterRid, limit) => listWebhooks(db, namespaceRid, afterRid, limit),
    enabled: async () => enabledWebhooks(db),
    findDelivery: async (webhookRid, id, audience) => findDelivery(db, webhookRid, id, audience),
    deliveryByRid: async (rid) => findDeliveryByRid(db, rid),
    listDeliveries: async (webhookRid, opts) => listDeliveries(db, webhookRid, opts),
    attemptsOf: async (deliveryRid) => attemptsOf(db, deliveryRid),
    dueDeliveries: async (nowMs, limit) => dueDeliveries(db, nowMs, limit),
    nextDueMs: async () => nextDueMs(db),
    replayCandidates: async (webhookRid, opts) => replayCandidates(db, webhookRid, opts),
    insert: async (w) => insertWebhook(db, w),
    update: async (rid, changes) => updateWebhook(db, rid, changes),
    delete: async (rid) => deleteWebhook(db, rid),
    insertDelivery: async (d) => insertDelivery(db, d),
    recordAttempt: async (a) => recordAttempt(db, a),
    updateDelivery: async (rid, changes) => updateDelivery(db, rid, changes),
    failPendingDeliveries: async (webhookRid, now) => failPendingDeliveries(db, webhookRid, now),
    deleteDeliveriesBefore: async (cutoff) => deleteDeliveriesBefore(db, cutoff),
  };
}

export const WEBHOOK_MIGRATION_SQL = `
CREATE TABLE webhooks (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  namespace_rid INTEGER NOT NULL REFERENCES namespaces(rid) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  event_types TEXT,                    -- JSON array, NULL = every type
  bucket_ids TEXT,                     -- JSON array of col_ IDs, NULL = every bucket
  enabled INTEGER NOT NULL DEFAULT 1,
  owner_kind TEXT NOT NULL,            -- 'me' | 'workspace'
  disabled_reason TEXT,
  secret TEXT NOT NULL,                -- whsec_…; kept to sign (never shown again)
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,  -- ms since epoch
  cursor_rid INTEGER NOT NULL,         -- last events.rid fanned out to this webhook
  last_success_at INTEGER,             -- ms since epoch of the last 2xx answer
  created_at TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_namespace ON webhooks(namespace_rid);

CREATE TABLE webhook_deliveries (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  webhook_rid INTEGER NOT NULL REFERENCES webhooks(rid) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  event_at TEXT NOT NULL,
  body TEXT NOT NULL,                  -- the exact JSON sent, identical for retries and replays
  status TEXT NOT NULL,                -- pending | succeeded | failed
  attempts INTEGER NOT NULL DEFAULT 0, -- every attempt, all rounds
  round_attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER,             -- when a pending delivery is due
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (webhook_rid, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_ms);

CREATE TABLE webhook_attempts (
  rid INTEGER PRIMARY KEY,
  delivery_rid INTEGER NOT NULL REFERENCES webhook_deliveries(rid) ON DELETE CASCADE,
  at TEXT NOT NULL,
  response_status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_rid);
`;

export function insertWebhook(db: Db, w: NewWebhook): WebhookRow {
  const info = stmt(
    db,
    `INSERT INTO webhooks (id, namespace_rid, name, url, event_types, bucket_ids, enabled, owner_kind, disabled_reason, secret,
       previous_secret, previous_secret_expires_at, cursor_rid, last_success_at, created_at, created_ms, updated_at, created_by_key_id)
     VALUES (@id, @namespace_rid, @name, @url, @event_types, @bucket_ids, @enabled, @owner_kind, @disabled_reason, @secret,
       @previous_secret, @previous_secret_expires_at, @cursor_rid, @last_success_at, @created_at, @created_ms, @updated_at, @created_by_key_id)`,
  ).run(w);
  return { ...w, rid: Number(info.lastInsertRowid) };
}

export function findWebhook(db: Db, namespaceRid: number, id: string): WebhookRow | undefined {
  return stmt(db, 'SELECT * FROM webhooks WHERE namespace_rid = ? AND id = ?').get(namespaceRid, id) as WebhookRow | undefined;
}

export function findWebhookByRid(db: Db, rid: number): WebhookRow | undefined {
  return stmt(db, 'SELECT * FROM webhooks WHERE rid = ?').get(rid) as WebhookRow | undefined;
}

export function listWebhooks(db: Db, namespaceRid: number, afterRid: number, limit: number): WebhookRow[] {
  return stmt(db, 'SELECT * FROM webhooks WHERE namespace_rid = ? AND rid > ? ORDER BY rid LIMIT ?').all(namespaceRid, afterRid, limit) as WebhookRow[];
}

export function enabledWebhooks(db: Db): WebhookRow[] {
  return stmt(db, 'SELECT * FROM webhooks WHERE enabled = 1 ORDER BY rid').all() as WebhookRow[];
}

const UPDATABLE = ['name', 'url', 'event_types', 'bucket_ids', 'enabled', 'disabled_reason', 'secret', 'previous_secret', 'previous_secret_expires_at', 'cursor_rid', 'last_success_at', 'updated_at', 'created_by_key_id'] as const satisfies readonly (keyof WebhookChanges)[];

export function updateWebhook(db: Db, rid: number, changes: WebhookChanges): void {
  const keys = UPDATABLE.filter((k) => Object.hasOwn(changes, k));
  if (keys.length === 0) return;
  stmt(db, `UPDATE webhooks SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE rid = @rid`).run({ ...changes, rid });
}

export function deleteWebhook(db: Db, rid: number): void {
  // Explicit, so the log goes even on a connection without foreign_keys.
  stmt(db, 'DELETE FROM webhook_attempts WHERE delivery_rid IN (SELECT rid FROM webhook_deliveries WHERE webhook_rid = ?)').run(rid);
  stmt(db, 'DELETE FROM webhook_deliveries WHERE webhook_rid = ?').run(rid);
  stmt(db, 'DELETE FROM webhooks WHERE rid = ?').run(rid);
}

// ------------------------------------------------------------------ deliveries

export function insertDelivery(db: Db, d: Omit<DeliveryRow, 'rid'>): boolean {
  const info = stmt(
    db,
    `INSERT OR IGNORE INTO webhook_deliveries (id, webhook_rid, event_id, event_type, event_at, body, status, attempts, round_attempts, next_attempt_ms, created_at, updated_at,
       event_collection_rid, event_owner_key_id)
     VALUES (@id, @webhook_rid, @event_id, @event_type, @event_at, @body, @status, @attempts, @round_attempts, @next_attempt_ms, @created_at, @updated_at,
       @event_collection_rid, @event_owner_key_id)`,
  ).run(d);
  return info.changes > 0;
}

const DELIVERY_AUDIENCE = audienceClause({ type: 'event_type', namespace: null, collection: 'event_collection_rid', owner: 'event_owner_key_id' });

/** One delivery of the log, if the audience may see its event (the webhook is already the caller's). */
export function findDelivery(db: Db, webhookRid: number, id: string, audience: EventAudience): DeliveryRow | undefined {
  return stmt(db, `SELECT * FROM webhook_deliveries WHERE webhook_rid = @w AND id = @id AND ${DELIVERY_AUDIENCE}`).get({ w: webhookRid, id, ...audienceParams(audience) }) as
    | DeliveryRow
    | undefined;
}

export function findDeliveryByRid(db: Db, rid: number): DeliveryRow | undefined {
  return stmt(db, 'SELECT * FROM webhook_deliveries WHERE rid = ?').get(rid) as DeliveryRow | undefined;
}

/** Newest first; `beforeRid` 0 means from the newest; only deliveries of events the audience may see. */
export function listDeliveries(db: Db, webhookRid: number, opts: { beforeRid: number; limit: number; status?: string | undefined; audience: EventAudience }): DeliveryRow[] {
  return stmt(
    db,
    `SELECT * FROM webhook_deliveries WHERE webhook_rid = @w AND (@before = 0 OR rid < @before) AND (@status IS NULL OR status = @status)
       AND ${DELIVERY_AUDIENCE}
     ORDER BY rid DESC LIMIT @limit`,
  ).all({ w: webhookRid, before: opts.beforeRid, status: opts.status ?? null, limit: opts.limit, ...audienceParams(opts.audience) }) as DeliveryRow[];
}

export function attemptsOf(db: Db, deliveryRid: number): AttemptRow[] {
  return stmt(db, 'SELECT * FROM webhook_attempts WHERE delivery_rid = ? ORDER BY rid').all(deliveryRid) as AttemptRow[];
}

export function dueDeliveries(db: Db, nowMs: number, limit: number): DeliveryRow[] {
  return stmt(
    db,
    `SELECT d.* FROM webhook_deliveries d JOIN webhooks w ON w.rid = d.webhook_rid
     WHERE d.status = 'pending' AND w.enabled = 1 AND d.next_attempt_ms <= ? ORDER BY d.next_attempt_ms, d.rid LIMIT ?`,
  ).all(nowMs, limit) as DeliveryRow[];
}

export function nextDueMs(db: Db): number | undefined {
  const row = stmt(
    db,
    `SELECT min(d.next_attempt_ms) AS m FROM webhook_deliveries d JOIN webhooks w ON w.rid = d.webhook_rid WHERE d.status = 'pending' AND w.enabled = 1`,
  ).get() as { m: number | null };
  return row.m ?? undefined;
}

export function recordAttempt(db: Db, a: Omit<AttemptRow, 'rid'>): void {
  stmt(db, 'INSERT INTO webhook_attempts (delivery_rid, at, response_status, error, duration_ms) VALUES (@delivery_rid, @at, @response_status, @error, @duration_ms)').run(a);
}

export function updateDelivery(db: Db, rid: number, changes: DeliveryChanges): void {
  stmt(
    db,
    'UPDATE webhook_deliveries SET status = @status, attempts = @attempts, round_attempts = @round_attempts, next_attempt_ms = @next_attempt_ms, updated_at = @updated_at WHERE rid = @rid',
  ).run({ ...changes, rid });
}

/** Turning a webhook off ends its pending deliveries as failed (workspace-api.md, States). */
export function failPendingDeliveries(db: Db, webhookRid: number, now: string): number {
  return stmt(db, "UPDATE webhook_deliveries SET status = 'failed', next_attempt_ms = NULL, updated_at = ? WHERE webhook_rid = ? AND status = 'pending'").run(now, webhookRid).changes;
}

/** Deliveries a replay selects. */
export function replayCandidates(
  db: Db,
  webhookRid: number,
  opts: { since?: string | undefined; until?: string | undefined; onlyFailed: boolean; eventIds?: string[] | undefined; audience: EventAudience },
): DeliveryRow[] {
  // Only what the webhook may deliver now: a delivery logged under an earlier owner or scope is
  // not sent again to a receiver that may no longer have it.
  const rows = stmt(
    db,
    `SELECT * FROM webhook_deliveries WHERE webhook_rid = @w AND (@since IS NULL OR event_at >= @since) AND (@until IS NULL OR event_at < @until)
       AND (@onlyFailed = 0 OR status <> 'succeeded') AND ${DELIVERY_AUDIENCE} ORDER BY rid`,
  ).all({ w: webhookRid, since: opts.since ?? null, until: opts.until ?? null, onlyFailed: opts.onlyFailed ? 1 : 0, ...audienceParams(opts.audience) }) as DeliveryRow[];
  if (!opts.eventIds) return rows;
  const wanted = new Set(opts.eventIds);
  return rows.filter((r) => wanted.has(r.event_id));
}

/** Delivery log retention (workspace-api.md, Limits: 30 days); pending deliveries stay. */
export function deleteDeliveriesBefore(db: Db, cutoff: string): number {
  stmt(db, `DELETE FROM webhook_attempts WHERE delivery_rid IN (SELECT rid FROM webhook_deliveries WHERE created_at < ? AND status <> 'pending')`).run(cutoff);
  return stmt(db, "DELETE FROM webhook_deliveries WHERE created_at < ? AND status <> 'pending'").run(cutoff).changes;
}

export function latestEventRid(db: Db): number {
  return (stmt(db, 'SELECT coalesce(max(rid), 0) AS r FROM events').get() as { r: number }).r;
}
