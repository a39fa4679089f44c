// Webhook registration and the delivery log (workspace-api.md "Webhook", "States and transitions",
// "Other webhook operations"; decisions.md §5-6). A workspace is a namespace, a bucket a collection.
import { TroveError } from '../../contract/errors.js';
import { hasPrefix, newId, nowIso } from '../../contract/ids.js';
import type { DeliveryRow, NamespaceRow, StoreReads, WebhookChanges, WebhookRow } from '../../store/interface.js';
import type { Services } from '../context.js';
import { LIST_CURSOR_TTL_MS, readCursor, requestBinding, signCursor } from '../cursors.js';
import { EVENT_TYPES } from '../events.js';
import { audienceCovers, audienceOfKey, audienceOfWebhook } from '../event-audience.js';
import { ALL_ACTIONS, type AuthenticatedKey } from '../keys.js';
import { mintWebhookSecret, secretFingerprint, signedHeaders } from './signing.js';
import { checkReceiverUrl, postOnce } from './transport.js';

import type { z } from 'zod';
import { DEFAULT_ROTATION_OVERLAP_S, MAX_ROTATION_OVERLAP_S, type WebhookSchema } from '../../contract/schemas.js';

/** A webhook as the API shows it: the contract's schema is the one definition. */
export type WebhookView = z.infer<typeof WebhookSchema>;

export function presentWebhook(w: WebhookRow): WebhookView {
  return {
    id: w.id,
    name: w.name,
    url: w.url,
    eventTypes: w.event_types === null ? null : (JSON.parse(w.event_types) as string[]),
    bucketIds: w.bucket_ids === null ? null : (JSON.parse(w.bucket_ids) as string[]),
    enabled: w.enabled === 1,
    ownerKind: w.owner_kind,
    disabledReason: w.disabled_reason,
    signing: { secretFingerprint: secretFingerprint(w.secret) },
    createdAt: w.created_at,
    updatedAt: w.updated_at,
  };
}

export function presentDelivery(d: DeliveryRow) {
  return { id: d.id, eventId: d.event_id, eventType: d.event_type, status: d.status, attempts: d.attempts, createdAt: d.created_at, updatedAt: d.updated_at };
}

// ------------------------------------------------------------------ who sees what

/** The local user (decisions.md §5) holds the cluster key; a namespace key with every action is an admin. */
function isAdmin(key: AuthenticatedKey): boolean {
  if (key.scope.kind === 'cluster') return true;
  if (key.scope.kind !== 'namespace') return false;
  const actions = key.scope.actions;
  return ALL_ACTIONS.every((a) => actions.includes(a));
}

function visible(key: AuthenticatedKey, w: WebhookRow): boolean {
  return w.owner_kind === 'workspace' || isAdmin(key);
}

/**
 * Where a webhook's deliveries go (its URL), and the secret that proves they came from here, may
 * be changed only by a key that may see every event the webhook delivers. A webhook delivers what
 * its creator may see (event-audience.ts), research answers included, and any workspace key with
 * `write` may edit it (workspace-api.md, Webhook ownership): without this, such a key could point
 * another key's webhook at its own receiver, replay it, and read runs that only their creator and
 * cluster keys may read (decisions.md §6). Its filters are left out on purpose: a key that may move
 * the URL could widen them next. Name, filters, enabled, test, replay and delete send nothing to a
 * receiver the caller chose, and stay open to every key allowed to edit.
 */
async function assertMayRedirect(s: Services, key: AuthenticatedKey, w: WebhookRow, what: string): Promise<void> {
  if (audienceCovers(await audienceOfKey(s.store, key.id, key.scope), await audienceOfWebhook(s.store, w))) return;
  throw new TroveError('forbidden', `Changing this webhook's ${what} needs a key that may see every event it delivers: it was made by another key and may carry events (such as that key's research runs) this key may not read. Ask its creator or a cluster key, or make a webhook of your own.`, { webhook: w.id });
}

export async function resolveWebhook(s: Services, key: AuthenticatedKey, ns: NamespaceRow, id: string): Promise<WebhookRow> {
  const w = hasPrefix(id, 'whk') ? await s.store.webhooks.find(ns.rid, id) : undefined;
  if (!w || !visible(key, w)) throw new TroveError('not_found', `Webhook '${id}' not found in workspace '${ns.name}'.`);
  return w;
}

// ------------------------------------------------------------------ validation helpers

function checkEventTypes(types: string[] | null | undefined): string[] | null {
  if (types === undefined || types === null) return null;
  const known = new Set<string>(EVENT_TYPES);
  const unknown = types.filter((t) => !known.has(t));
  if (unknown.length > 0) throw new TroveError('invalid_request', `eventTypes: unknown event type(s): ${unknown.join(', ')}.`, { known: [...EVENT_TYPES] });
  return [...new Set(types)];
}

/** Bucket names or IDs → the collections' immutable `col_` IDs. */
async function checkBucketIds(store: StoreReads, ns: NamespaceRow, key: AuthenticatedKey, refs: string[] | null | undefined): Promise<string[] | null> {
  if (refs === undefined || refs === null) return null;
  const ids: string[] = [];
  for (const ref of refs) {
    const col = await store.collections.find(ns.rid, ref);
    if (!col || col.deleted_at) throw new TroveError('invalid_request', `bucketIds: no bucket '${ref}' in workspace '${ns.name}'.`, { bucket: ref });
    if (key.scope.kind === 'collection' && !key.scope.collections.includes(col.name)) throw new TroveError('invalid_request', `bucketIds: no bucket '${ref}' in workspace '${ns.name}'.`, { bucket: ref });
    ids.push(col.id);
  }
  return [...new Set(ids)];
}

// ------------------------------------------------------------------ operations

export interface CreateWebhookInput {
  name: string;
  url: string;
  eventTypes?: string[] | null | undefined;
  bucketIds?: string[] | null | undefined;
  owner?: 'me' | 'workspace' | undefined;
}

export async function createWebhook(s: Services, key: AuthenticatedKey, ns: NamespaceRow, input: CreateWebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
  const owner = input.owner ?? 'workspace';
  // Personal webhooks belong to the local user (decisions.md §5), who holds the cluster key.
  if (owner === 'me' && key.scope.kind !== 'cluster') throw new TroveError('forbidden', "owner 'me' makes a personal webhook of the local user; a workspace API key creates workspace webhooks (owner 'workspace').");
  const eventTypes = checkEventTypes(input.eventTypes);
  const bucketIds = await checkBucketIds(s.store, ns, key, input.bucketIds);
  await checkReceiverUrl(input.url, s.webhooks);
  const secret = mintWebhookSecret();
  const now = nowIso();
  const row = await s.store.write(async (tx) =>
      tx.webhooks.insert({
        id: newId('whk'),
        namespace_rid: ns.rid,
        name: input.name,
        url: input.url,
        event_types: eventTypes === null ? null : JSON.stringify(eventTypes),
        bucket_ids: bucketIds === null ? null : JSON.stringify(bucketIds),
        enabled: 1,
        owner_kind: owner,
        disabled_reason: null,
        secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        // A new webhook receives only events that happen after its creation.
        cursor_rid: await tx.events.lastRid(),
        last_success_at: null,
        created_at: now,
        created_ms: Date.parse(now),
        updated_at: now,
        // A webhook sees what its creator may read (src/domain/event-audience.ts).
        created_by_key_id: key.id,
      }),
    );
  return { webhook: presentWebhook(row), secret };
}

export async function listWorkspaceWebhooks(s: Services, key: AuthenticatedKey, ns: NamespaceRow, query: { cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'webhooks', ns.id]);
  let after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  const items: WebhookRow[] = [];
  let more = false;
  // Personal webhooks a key may not see are skipped, so a page may take more than one read.
  for (;;) {
    const rows = await s.store.webhooks.list(ns.rid, after, query.limit + 1);
    for (const r of rows) {
      after = r.rid;
      if (!visible(key, r)) continue;
      if (items.length === query.limit) {
        more = true;
        break;
      }
      items.push(r);
    }
    if (more || rows.length < query.limit + 1) break;
  }
  const last = items.at(-1);
  return { items: items.map(presentWebhook), next_cursor: more && last ? signCursor(s.cursorSecret, binding, last.rid, LIST_CURSOR_TTL_MS) : null };
}

export interface PatchWebhookInput {
  name?: string | undefined;
  url?: string | undefined;
  eventTypes?: string[] | null | undefined;
  bucketIds?: string[] | null | undefined;
  enabled?: boolean | undefined;
}

export async function patchWebhook(s: Services, key: AuthenticatedKey, ns: NamespaceRow, w: WebhookRow, input: PatchWebhookInput): Promise<WebhookView> {
  const changes: WebhookChanges = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.url !== undefined) {
    if (input.url !== w.url) {
      await assertMayRedirect(s, key, w, 'URL');
      // The key that sets where deliveries go becomes the one whose scope bounds them: covering the
      // creator today is no promise about what the creator may see tomorrow (found by a review: a
      // creator later given more would have sent it to the new receiver).
      if (w.owner_kind === 'workspace' && w.created_by_key_id !== key.id) changes.created_by_key_id = key.id;
    }
    await checkReceiverUrl(input.url, s.webhooks);
    changes.url = input.url;
  }
  if (Object.hasOwn(input, 'eventTypes') && input.eventTypes !== undefined) {
    const t = checkEventTypes(input.eventTypes);
    changes.event_types = t === null ? null : JSON.stringify(t);
  }
  if (Object.hasOwn(input, 'bucketIds') && input.bucketIds !== undefined) {
    const b = await checkBucketIds(s.store, ns, key, input.bucketIds);
    changes.bucket_ids = b === null ? null : JSON.stringify(b);
  }
  const now = nowIso();
  const row = await s.store.write(async (tx) => {
      const current = await tx.webhooks.find(ns.rid, w.id);
      if (!current) throw new TroveError('not_found', `Webhook '${w.id}' not found in workspace '${ns.name}'.`);
      if (input.enabled === false && current.enabled === 1) {
        changes.enabled = 0;
        changes.disabled_reason = null;
        await tx.webhooks.failPendingDeliveries(current.rid, now);
      } else if (input.enabled === true && current.enabled === 0) {
        changes.enabled = 1;
        changes.disabled_reason = null;
        // An off webhook records no events: it starts again from now.
        changes.cursor_rid = await tx.events.lastRid();
        // The 72-hour failing window starts again too.
        changes.last_success_at = Date.now();
      }
      changes.updated_at = now;
      await tx.webhooks.update(current.rid, changes);
      return (await tx.webhooks.find(ns.rid, w.id))!;
    });
  if (row.enabled === 1) s.wakeWebhookDispatcher();
  return presentWebhook(row);
}

export async function removeWebhook(s: Services, w: WebhookRow): Promise<void> {
  await s.store.write((tx) => tx.webhooks.delete(w.rid));
}

export async function rotateSecret(s: Services, key: AuthenticatedKey, w: WebhookRow, overlapSeconds: number = DEFAULT_ROTATION_OVERLAP_S): Promise<{ webhook: WebhookView; secret: string }> {
  await assertMayRedirect(s, key, w, 'signing secret');
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_ROTATION_OVERLAP_S) {
    throw new TroveError('invalid_request', `previousSecretExpiresInSeconds must be an integer from 0 to ${MAX_ROTATION_OVERLAP_S}.`);
  }
  const secret = mintWebhookSecret();
  const now = nowIso();
  const row = await s.store.write(async (tx) => {
      const current = await findWebhookOrThrow(tx, w);
      // The secret being replaced becomes the previous one; an older previous secret still in its
      // overlap stops at once (only two secrets are ever live).
      await tx.webhooks.update(current.rid, {
        secret,
        previous_secret: overlapSeconds > 0 ? current.secret : null,
        previous_secret_expires_at: overlapSeconds > 0 ? Date.now() + overlapSeconds * 1000 : null,
        updated_at: now,
      });
      return findWebhookOrThrow(tx, w);
    });
  return { webhook: presentWebhook(row), secret };
}

async function findWebhookOrThrow(store: StoreReads, w: WebhookRow): Promise<WebhookRow> {
  const row = await store.webhooks.find(w.namespace_rid, w.id);
  if (!row) throw new TroveError('not_found', `Webhook '${w.id}' not found.`);
  return row;
}

/** The secrets that sign now: the current one, and the previous one during its overlap. */
export function liveSecrets(w: WebhookRow, nowMs = Date.now()): string[] {
  const out = [w.secret];
  if (w.previous_secret && w.previous_secret_expires_at !== null && w.previous_secret_expires_at > nowMs) out.push(w.previous_secret);
  return out;
}

const webhookDisabled = () => new TroveError('webhook_disabled', 'The webhook is off; turn it on (PATCH enabled: true) before replaying.');

export interface ReplayInput {
  since?: string | undefined;
  until?: string | undefined;
  onlyFailed?: boolean | undefined;
  eventIds?: string[] | undefined;
}

/**
 * Sends logged deliveries again: same event ID and body, new timestamp and signature, a new round of
 * up to 10 attempts. A delivery still pending stays queued once (and counts as replayed).
 */
export async function replayWebhook(s: Services, w: WebhookRow, input: ReplayInput): Promise<{ replayed: number }> {
  // workspace-api.md, replay: "On a webhook that is off: 409 webhook_disabled; turn it on first",
  // whatever the body selects (checked again below, in the transaction that replays).
  if (w.enabled !== 1) throw webhookDisabled();
  // The document lists since, until, onlyFailed and event IDs without requiring any one of them, so
  // each alone selects (onlyFailed alone: every failed delivery in the log). An empty body, or
  // onlyFailed: false alone, would resend the whole 30-day log: that needs an explicit window.
  if (input.since === undefined && input.until === undefined && input.onlyFailed !== true && input.eventIds === undefined) {
    throw new TroveError('invalid_request', 'Select what to replay: `since` and/or `until`, `onlyFailed: true`, or `eventIds`.');
  }
  if (input.eventIds !== undefined && (input.since !== undefined || input.until !== undefined)) {
    throw new TroveError('invalid_request', '`eventIds` cannot be combined with `since` or `until`.');
  }
  if (input.since !== undefined && input.until !== undefined && Date.parse(input.until) <= Date.parse(input.since)) {
    throw new TroveError('invalid_request', '`until` must be later than `since`.');
  }
  const since = input.since === undefined ? undefined : new Date(input.since).toISOString();
  const until = input.until === undefined ? undefined : new Date(input.until).toISOString();
  const count = await s.store.write(async (tx) => {
      const current = await findWebhookOrThrow(tx, w);
      if (current.enabled !== 1) throw webhookDisabled();
      const rows = await tx.webhooks.replayCandidates(current.rid, { since, until, onlyFailed: input.onlyFailed ?? false, eventIds: input.eventIds, audience: await audienceOfWebhook(tx, current) });
      const now = nowIso();
      const nowMs = Date.now();
      for (const d of rows) {
        if (d.status === 'pending') continue;
        await tx.webhooks.updateDelivery(d.rid, { status: 'pending', attempts: d.attempts, round_attempts: 0, next_attempt_ms: nowMs, updated_at: now });
      }
      return rows.length;
    });
  s.wakeWebhookDispatcher();
  return { replayed: count };
}

/** One signed `webhook.test` event; no retries, not logged, works while the webhook is off. */
export async function testWebhook(s: Services, ns: NamespaceRow, w: WebhookRow): Promise<{ status: number | null; body: string; error?: string }> {
  const cfg = s.webhooks;
  const workspaceId = ns.id;
  const event = { id: newId('evt'), type: 'webhook.test', timestamp: nowIso(), data: { webhookId: w.id, workspaceId } };
  const body = JSON.stringify(event);
  const result = await postOnce(w.url, body, signedHeaders(event.id, body, liveSecrets(w)), { allowInsecure: cfg.allowInsecure, timeoutMs: cfg.timeoutMs });
  return result.error === null ? { status: result.status, body: result.body } : { status: result.status, body: result.body, error: result.error };
}

export async function listWebhookDeliveries(s: Services, key: AuthenticatedKey, w: WebhookRow, query: { status?: string | undefined; cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'webhook-deliveries', w.id, query.status ?? null]);
  const before = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  // The log holds event bodies: a caller sees the deliveries of events it may see itself, whoever made the webhook.
  const rows = await s.store.webhooks.listDeliveries(w.rid, { beforeRid: before, limit: query.limit + 1, status: query.status, audience: await audienceOfKey(s.store, key.id, key.scope) });
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  return { items: page.map(presentDelivery), next_cursor: more ? signCursor(s.cursorSecret, binding, page.at(-1)!.rid, LIST_CURSOR_TTL_MS) : null };
}

export async function getWebhookDelivery(s: Services, key: AuthenticatedKey, w: WebhookRow, deliveryId: string) {
  const d = hasPrefix(deliveryId, 'dlv') ? await s.store.webhooks.findDelivery(w.rid, deliveryId, await audienceOfKey(s.store, key.id, key.scope)) : undefined;
  if (!d) throw new TroveError('not_found', `Delivery '${deliveryId}' not found.`);
  return {
    ...presentDelivery(d),
    body: JSON.parse(d.body) as unknown,
    // `attempts` stays the count the list shows; every attempt is listed in `attemptLog`.
    attemptLog: (await s.store.webhooks.attemptsOf(d.rid)).map((a) => ({ at: a.at, responseStatus: a.response_status, error: a.error, durationMs: a.duration_ms })),
  };
}
