// Webhooks and their delivery log.
import type { EventAudience } from './events.js';

export interface WebhookRow {
  rid: number;
  id: string;
  namespace_rid: number;
  name: string;
  url: string;
  event_types: string | null;
  bucket_ids: string | null;
  enabled: number;
  owner_kind: 'me' | 'workspace';
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  cursor_rid: number;
  last_success_at: number | null;
  created_at: string;
  created_ms: number;
  updated_at: string;
  /** The key that created it (schema v10); its scope bounds what the webhook receives. Null: the operator's, or older. */
  created_by_key_id: string | null;
}

export interface DeliveryRow {
  rid: number;
  id: string;
  webhook_rid: number;
  event_id: string;
  event_type: string;
  event_at: string;
  body: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  round_attempts: number;
  next_attempt_ms: number | null;
  created_at: string;
  updated_at: string;
  /** Copied from the event (schema v10), so the log is filtered by who may see the event. */
  event_collection_rid: number | null;
  event_owner_key_id: string | null;
}

export interface AttemptRow {
  rid: number;
  delivery_rid: number;
  at: string;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

export type NewWebhook = Omit<WebhookRow, 'rid'>;

/** The fields a change of a webhook may set. */
export type WebhookChanges = Partial<
  Pick<
    WebhookRow,
    'name' | 'url' | 'event_types' | 'bucket_ids' | 'enabled' | 'disabled_reason' | 'secret' | 'previous_secret' | 'previous_secret_expires_at' | 'cursor_rid' | 'last_success_at' | 'updated_at' | 'created_by_key_id'
  >
>;

export type DeliveryChanges = Pick<DeliveryRow, 'status' | 'attempts' | 'round_attempts' | 'next_attempt_ms' | 'updated_at'>;

export interface WebhookReads {
  find(namespaceRid: number, id: string): Promise<WebhookRow | undefined>;
  byRid(rid: number): Promise<WebhookRow | undefined>;
  list(namespaceRid: number, afterRid: number, limit: number): Promise<WebhookRow[]>;
  enabled(): Promise<WebhookRow[]>;
  /**
   * One delivery of the log, if the audience may see its event. The delivery reads (this,
   * listDeliveries, replayCandidates) are of one webhook the caller already resolved in its
   * namespace, so the audience's namespace is not checked again; its collections and research are.
   */
  findDelivery(webhookRid: number, id: string, audience: EventAudience): Promise<DeliveryRow | undefined>;
  deliveryByRid(rid: number): Promise<DeliveryRow | undefined>;
  /** Newest first; `beforeRid` 0 means from the newest; only deliveries of events the audience may see. */
  listDeliveries(webhookRid: number, opts: { beforeRid: number; limit: number; status?: string | undefined; audience: EventAudience }): Promise<DeliveryRow[]>;
  attemptsOf(deliveryRid: number): Promise<AttemptRow[]>;
  /** Pending deliveries of enabled webhooks due by `nowMs`, the earliest first. */
  dueDeliveries(nowMs: number, limit: number): Promise<DeliveryRow[]>;
  /** When the next pending delivery of an enabled webhook is due. */
  nextDueMs(): Promise<number | undefined>;
  /** Deliveries a replay selects: only those the audience may be sent now. */
  replayCandidates(
    webhookRid: number,
    opts: { since?: string | undefined; until?: string | undefined; onlyFailed: boolean; eventIds?: string[] | undefined; audience: EventAudience },
  ): Promise<DeliveryRow[]>;
}

export interface WebhookWrites {
  insert(w: NewWebhook): Promise<WebhookRow>;
  update(rid: number, changes: WebhookChanges): Promise<void>;
  /** With its delivery log. */
  delete(rid: number): Promise<void>;
  /** False when the webhook already has a delivery of this event. */
  insertDelivery(d: Omit<DeliveryRow, 'rid'>): Promise<boolean>;
  recordAttempt(a: Omit<AttemptRow, 'rid'>): Promise<void>;
  updateDelivery(rid: number, changes: DeliveryChanges): Promise<void>;
  /** Ends a webhook's pending deliveries as failed; how many. */
  failPendingDeliveries(webhookRid: number, now: string): Promise<number>;
  /** Log retention: delivered or failed deliveries older than the cutoff go; how many. */
  deleteDeliveriesBefore(cutoff: string): Promise<number>;
}


