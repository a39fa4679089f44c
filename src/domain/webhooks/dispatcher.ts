// The webhook dispatcher: fans new outbox events out into one delivery per (webhook, event), then
// POSTs due deliveries, one event per request, signed, and applies the retry table
// (workspace-api.md, Limits). Everything it needs to resume lives in the database, so pending
// deliveries survive a restart.
import { newId, nowIso } from '../../contract/ids.js';
import {
  deleteDeliveriesBefore,
  dueDeliveries,
  enabledWebhooks,
  failPendingDeliveries,
  findDeliveryByRid,
  findWebhookByRid,
  insertDelivery,
  latestEventRid,
  nextDueMs,
  recordAttempt,
  updateDelivery,
  updateWebhook,
  type DeliveryRow,
  type WebhookRow,
} from '../../store/webhooks.js';
import { eventsAfter } from '../../store/events.js';
import { audienceOfWebhook } from '../event-audience.js';
import type { Services } from '../context.js';
import type { WebhookConfig } from './config.js';
import { signedHeaders } from './signing.js';
import { postOnce, type PostResult } from './transport.js';
import { liveSecrets } from './webhooks.js';

export const MAX_ATTEMPTS = 10;

/**
 * Wait before attempt n+1 after attempt n failed (index n-1), before the retry scale: 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h — ten attempts over about 75 hours and 35 minutes.
 */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000] as const;
export const MAX_RETRY_AFTER_MS = 24 * 3600_000;
export const AUTO_OFF_WINDOW_MS = 72 * 3600_000;
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600_000;

/** Beyond Services.webhooks, which the dispatcher reads at start, what it may be given in their place (tests). */
export interface DispatcherOptions extends Partial<WebhookConfig> {
  /** How often to look for new events when nothing wakes it (default 250 ms). */
  pollMs?: number;
  /** Deliveries in flight at once (default 8). */
  concurrency?: number;
  log?: { error(message: string, fields: Record<string, unknown>): void; warn?(message: string, fields?: Record<string, unknown>): void };
}

export interface WebhookDispatcher {
  wake(): void;
  /** Stops polling, cuts off the requests in flight (their deliveries stay pending) and waits for them. */
  stop(): Promise<void>;
  /** Resolves when nothing is due now and nothing is in flight (tests). */
  idle(): Promise<void>;
}

type Outcome = { kind: 'succeeded' } | { kind: 'failed'; disable: boolean } | { kind: 'retry'; retryAfterMs: number | undefined };

/** The retry table by receiver answer. */
export function classify(result: Pick<PostResult, 'status' | 'headers'>, nowMs = Date.now()): Outcome {
  const status = result.status;
  if (status === null) return { kind: 'retry', retryAfterMs: undefined };
  if (status >= 200 && status <= 299) return { kind: 'succeeded' };
  if (status === 429) return { kind: 'retry', retryAfterMs: parseRetryAfter(result.headers['retry-after'], nowMs) };
  if (status >= 500) return { kind: 'retry', retryAfterMs: undefined };
  if (status === 410) return { kind: 'failed', disable: true };
  // 1xx leftovers, 3xx (redirects are not followed) and other 4xx.
  return { kind: 'failed', disable: false };
}

export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The wait before the next attempt, before scaling; Retry-After is honoured when longer, up to 24 h. */
export function retryDelayMs(roundAttemptsDone: number, retryAfterMs: number | undefined): number {
  const scheduled = RETRY_SCHEDULE_MS[Math.min(roundAttemptsDone - 1, RETRY_SCHEDULE_MS.length - 1)]!;
  return retryAfterMs === undefined ? scheduled : Math.max(scheduled, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

function matches(w: WebhookRow, type: string, collectionId: string | null): boolean {
  if (w.event_types !== null && !(JSON.parse(w.event_types) as string[]).includes(type)) return false;
  if (w.bucket_ids !== null && (collectionId === null || !(JSON.parse(w.bucket_ids) as string[]).includes(collectionId))) return false;
  return true;
}

/** Turns new outbox events into deliveries. Returns how many deliveries were made. */
export async function fanOut(s: Services, batch = 500): Promise<number> {
  let made = 0;
  // A cheap look first, so an idle daemon does not take the write lock on every tick.
  const seen = latestEventRid(s.db);
  if (!enabledWebhooks(s.db).some((w) => w.cursor_rid < seen)) return 0;
  await s.write(() => {
      const upto = latestEventRid(s.db);
      const nowMs = Date.now();
      for (const w of enabledWebhooks(s.db)) {
        if (w.cursor_rid >= upto) continue;
        // The webhook receives only what the key that created it may read (src/domain/event-audience.ts).
        const rows = eventsAfter(s.db, { afterRid: w.cursor_rid, uptoRid: upto, limit: batch, audience: audienceOfWebhook(s, w) });
        for (const e of rows) {
          if (!matches(w, e.type, e.collection_id)) continue;
          const body = JSON.stringify({ id: e.id, type: e.type, timestamp: e.created_at, data: JSON.parse(e.data) as unknown });
          const now = nowIso();
          const inserted = insertDelivery(s.db, {
            id: newId('dlv'),
            webhook_rid: w.rid,
            event_id: e.id,
            event_type: e.type,
            event_at: e.created_at,
            body,
            status: 'pending',
            attempts: 0,
            round_attempts: 0,
            next_attempt_ms: nowMs,
            created_at: now,
            updated_at: now,
            event_collection_rid: e.collection_rid,
            event_owner_key_id: e.owner_key_id,
          });
          if (inserted) made++;
        }
        updateWebhook(s.db, w.rid, { cursor_rid: rows.length === batch ? rows.at(-1)!.rid : upto });
      }
    });
  return made;
}

export function startWebhookDispatcher(s: Services, options: DispatcherOptions = {}): WebhookDispatcher {
  const cfg: WebhookConfig = {
    allowInsecure: options.allowInsecure ?? s.webhooks.allowInsecure,
    retryScale: options.retryScale ?? s.webhooks.retryScale,
    timeoutMs: options.timeoutMs ?? s.webhooks.timeoutMs,
  };
  const pollMs = options.pollMs ?? 250;
  const concurrency = options.concurrency ?? 8;
  const log = options.log;
  const inflight = new Map<number, Promise<void>>();
  const shutdown = new AbortController();
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let lastSweep = 0;
  let idleWaiters: (() => void)[] = [];

  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  async function attempt(d: DeliveryRow): Promise<void> {
    const w = findWebhookByRid(s.db, d.webhook_rid);
    if (!w || w.enabled !== 1) return;
    const result = await postOnce(w.url, d.body, signedHeaders(d.event_id, d.body, liveSecrets(w)), { allowInsecure: cfg.allowInsecure, timeoutMs: cfg.timeoutMs, signal: shutdown.signal });
    // Cut short by stop(): not an attempt; the delivery stays pending and is sent again after a restart.
    if (shutdown.signal.aborted) return;
    await settle(d.rid, result);
  }

  async function settle(deliveryRid: number, result: PostResult): Promise<void> {
    await s.write(() => {
        const d = findDeliveryByRid(s.db, deliveryRid);
        if (!d) return; // deleted with its webhook meanwhile
        const nowMs = Date.now();
        const now = new Date(nowMs).toISOString();
        recordAttempt(s.db, { delivery_rid: d.rid, at: new Date(nowMs - result.durationMs).toISOString(), response_status: result.status, error: result.error, duration_ms: result.durationMs });
        const attempts = d.attempts + 1;
        const round = d.round_attempts + 1;
        // Turned off (or replayed to a new round) while in flight: the attempt is logged, the state stays.
        if (d.status !== 'pending') {
          updateDelivery(s.db, d.rid, { status: d.status, attempts, round_attempts: d.round_attempts, next_attempt_ms: d.next_attempt_ms, updated_at: now });
          return;
        }
        const outcome = classify(result, nowMs);
        const w = findWebhookByRid(s.db, d.webhook_rid);
        if (outcome.kind === 'succeeded') {
          updateDelivery(s.db, d.rid, { status: 'succeeded', attempts, round_attempts: round, next_attempt_ms: null, updated_at: now });
          if (w) updateWebhook(s.db, w.rid, { last_success_at: nowMs });
          return;
        }
        if (outcome.kind === 'retry' && round < MAX_ATTEMPTS) {
          const delay = retryDelayMs(round, outcome.retryAfterMs) * cfg.retryScale;
          updateDelivery(s.db, d.rid, { status: 'pending', attempts, round_attempts: round, next_attempt_ms: nowMs + Math.ceil(delay), updated_at: now });
        } else {
          updateDelivery(s.db, d.rid, { status: 'failed', attempts, round_attempts: round, next_attempt_ms: null, updated_at: now });
        }
        if (!w || w.enabled !== 1) return;
        // 410, or failing for 72 hours: the service turns the webhook off (workspace-api.md, States).
        const window = AUTO_OFF_WINDOW_MS * cfg.retryScale;
        const failing = nowMs - w.created_ms > window && (w.last_success_at === null || nowMs - w.last_success_at > window);
        if ((outcome.kind === 'failed' && outcome.disable) || failing) {
          updateWebhook(s.db, w.rid, { enabled: 0, disabled_reason: 'failing', updated_at: now });
          failPendingDeliveries(s.db, w.rid, now);
          log?.warn?.('webhook turned off', { webhook: w.id, reason: outcome.kind === 'failed' && outcome.disable ? 'receiver answered 410' : 'no 2xx answer for 72 hours' });
        }
      });
  }

  function launchDue(): void {
    if (inflight.size >= concurrency) return;
    const due = dueDeliveries(s.db, Date.now(), concurrency + inflight.size);
    for (const d of due) {
      if (inflight.size >= concurrency) break;
      if (inflight.has(d.rid)) continue;
      const p = attempt(d)
        .catch((err: unknown) => log?.error('webhook delivery failed unexpectedly', { delivery: d.id, cause: String((err as Error)?.stack ?? err) }))
        .finally(() => {
          inflight.delete(d.rid);
          wake();
        });
      inflight.set(d.rid, p);
    }
  }

  async function sweep(): Promise<void> {
    const nowMs = Date.now();
    if (nowMs - lastSweep < 3600_000) return;
    lastSweep = nowMs;
    await s.write(() => deleteDeliveriesBefore(s.db, new Date(nowMs - DELIVERY_RETENTION_MS).toISOString()));
  }

  function isIdle(): boolean {
    if (inflight.size > 0) return false;
    const next = nextDueMs(s.db);
    return next === undefined || next > Date.now();
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        if (s.ready()) {
          await fanOut(s);
          launchDue();
          await sweep();
          if (isIdle()) {
            const waiters = idleWaiters;
            idleWaiters = [];
            for (const resolve of waiters) resolve();
          }
        }
      } catch (err) {
        log?.error('webhook dispatcher tick failed', { cause: String((err as Error)?.stack ?? err) });
      }
      if (stopped) break;
      if (woken) {
        woken = false;
        continue;
      }
      let wait = pollMs;
      try {
        const next = s.ready() ? nextDueMs(s.db) : undefined;
        if (next !== undefined) wait = Math.max(1, Math.min(wait, next - Date.now()));
      } catch {
        // the store is closing
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
      woken = false;
    }
  })();

  return {
    wake,
    async stop() {
      stopped = true;
      shutdown.abort();
      wakeUp?.();
      await loop;
      await Promise.all(inflight.values());
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        wake();
      });
    },
  };
}
