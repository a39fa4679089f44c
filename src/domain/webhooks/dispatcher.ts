// The webhook dispatcher: fans new outbox events out into one delivery per (webhook, event), then
// POSTs due deliveries, one event per request, signed, and applies the retry table
// (workspace-api.md, Limits). Everything it needs to resume lives in the database, so pending
// deliveries survive a restart.
import { newId, nowIso } from '../../contract/ids.js';
import type { DeliveryRow, WebhookRow } from '../../store/interface.js';
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

export type Outcome = { kind: 'succeeded' } | { kind: 'failed'; disable: boolean } | { kind: 'retry'; retryAfterMs: number | undefined };

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
  const seen = await s.store.events.lastRid();
  if (!(await s.store.webhooks.enabled()).some((w) => w.cursor_rid < seen)) return 0;
  await s.store.write(async (tx) => {
      const upto = await tx.events.lastRid();
      const nowMs = Date.now();
      for (const w of await tx.webhooks.enabled()) {
        if (w.cursor_rid >= upto) continue;
        // The webhook receives only what the key that created it may read (src/domain/event-audience.ts).
        const rows = await tx.events.after({ afterRid: w.cursor_rid, uptoRid: upto, limit: batch, audience: await audienceOfWebhook(tx, w) });
        for (const e of rows) {
          if (!matches(w, e.type, e.collection_id)) continue;
          const body = JSON.stringify({ id: e.id, type: e.type, timestamp: e.created_at, data: JSON.parse(e.data) as unknown });
          const now = nowIso();
          const inserted = await tx.webhooks.insertDelivery({
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
        await tx.webhooks.update(w.rid, { cursor_rid: rows.length === batch ? rows.at(-1)!.rid : upto });
      }
    });
  return made;
}

/** A delivery after one more attempt: what its row becomes. */
export interface DeliveryProgress {
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  round_attempts: number;
  next_attempt_ms: number | null;
}

/**
 * The retry table applied to one attempt of a pending delivery: succeeded; due again after the
 * scheduled wait (times `retryScale`) while the round has attempts left; else failed.
 */
export function progressAfterAttempt(d: Pick<DeliveryRow, 'attempts' | 'round_attempts'>, outcome: Outcome, nowMs: number, retryScale: number): DeliveryProgress {
  const attempts = d.attempts + 1;
  const round = d.round_attempts + 1;
  if (outcome.kind === 'succeeded') return { status: 'succeeded', attempts, round_attempts: round, next_attempt_ms: null };
  if (outcome.kind === 'retry' && round < MAX_ATTEMPTS) {
    return { status: 'pending', attempts, round_attempts: round, next_attempt_ms: nowMs + Math.ceil(retryDelayMs(round, outcome.retryAfterMs) * retryScale) };
  }
  return { status: 'failed', attempts, round_attempts: round, next_attempt_ms: null };
}

/**
 * Why the service turns a webhook off after a failed attempt (workspace-api.md, States), or null:
 * its receiver answered 410, or nothing but failures for the auto-off window (72 hours, scaled).
 */
export function turnOffReason(w: Pick<WebhookRow, 'created_ms' | 'last_success_at'>, outcome: Outcome, nowMs: number, retryScale: number): string | null {
  if (outcome.kind === 'failed' && outcome.disable) return 'receiver answered 410';
  const window = AUTO_OFF_WINDOW_MS * retryScale;
  const failing = nowMs - w.created_ms > window && (w.last_success_at === null || nowMs - w.last_success_at > window);
  return failing ? 'no 2xx answer for 72 hours' : null;
}

export type DispatcherLog = NonNullable<DispatcherOptions['log']>;

/** Records one attempt's result, in one write: the attempt log, the delivery's next state and, when due, the webhook turned off. */
export async function settleAttempt(s: Services, deliveryRid: number, result: PostResult, retryScale: number, log?: DispatcherLog): Promise<void> {
  await s.store.write(async (tx) => {
    const d = await tx.webhooks.deliveryByRid(deliveryRid);
    if (!d) return; // deleted with its webhook meanwhile
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    await tx.webhooks.recordAttempt({ delivery_rid: d.rid, at: new Date(nowMs - result.durationMs).toISOString(), response_status: result.status, error: result.error, duration_ms: result.durationMs });
    // Turned off (or replayed to a new round) while in flight: the attempt is logged, the state stays.
    if (d.status !== 'pending') {
      await tx.webhooks.updateDelivery(d.rid, { status: d.status, attempts: d.attempts + 1, round_attempts: d.round_attempts, next_attempt_ms: d.next_attempt_ms, updated_at: now });
      return;
    }
    const outcome = classify(result, nowMs);
    await tx.webhooks.updateDelivery(d.rid, { ...progressAfterAttempt(d, outcome, nowMs, retryScale), updated_at: now });
    const w = await tx.webhooks.byRid(d.webhook_rid);
    if (!w) return;
    if (outcome.kind === 'succeeded') {
      await tx.webhooks.update(w.rid, { last_success_at: nowMs });
      return;
    }
    if (w.enabled !== 1) return;
    const reason = turnOffReason(w, outcome, nowMs, retryScale);
    if (reason === null) return;
    await tx.webhooks.update(w.rid, { enabled: 0, disabled_reason: 'failing', updated_at: now });
    await tx.webhooks.failPendingDeliveries(w.rid, now);
    log?.warn?.('webhook turned off', { webhook: w.id, reason });
  });
}

/** How often delivered and failed deliveries past their retention are deleted. */
const RETENTION_SWEEP_MS = 3600_000;

/**
 * One loop, woken by new work or its poll: fans new events out into deliveries, starts the due
 * ones (up to `concurrency` in flight), and now and then deletes deliveries past their retention.
 */
class Dispatcher implements WebhookDispatcher {
  private readonly inflight = new Map<number, Promise<void>>();
  /** Cuts off the requests in flight when stopping. */
  private readonly cutOff = new AbortController();
  private stopped = false;
  private woken = false;
  /** Ends the current wait early. */
  private interruptWait: (() => void) | undefined;
  private lastRetentionSweepMs = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly loop: Promise<void>;

  constructor(
    private readonly s: Services,
    private readonly cfg: WebhookConfig,
    private readonly pollMs: number,
    private readonly concurrency: number,
    private readonly log: DispatcherLog | undefined,
  ) {
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    this.interruptWait?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cutOff.abort();
    this.interruptWait?.();
    await this.loop;
    await Promise.all(this.inflight.values());
    this.releaseIdleWaiters();
  }

  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.wake();
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.tick();
      if (this.stopped) break;
      // Woken while working: there may be more to do at once.
      if (this.woken) {
        this.woken = false;
        continue;
      }
      await this.wait(await this.nextWaitMs());
      this.woken = false;
    }
  }

  private async tick(): Promise<void> {
    try {
      if (!this.s.ready()) return;
      await fanOut(this.s);
      await this.launchDue();
      await this.sweepRetention();
      if (await this.isIdle()) this.releaseIdleWaiters();
    } catch (err) {
      this.log?.error('webhook dispatcher tick failed', { cause: String((err as Error)?.stack ?? err) });
    }
  }

  /** The poll, or less when a delivery falls due sooner. */
  private async nextWaitMs(): Promise<number> {
    try {
      const next = this.s.ready() ? await this.s.store.webhooks.nextDueMs() : undefined;
      return next === undefined ? this.pollMs : Math.max(1, Math.min(this.pollMs, next - Date.now()));
    } catch {
      return this.pollMs; // the store is closing
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.interruptWait = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (this.interruptWait = undefined));
  }

  private async launchDue(): Promise<void> {
    if (this.inflight.size >= this.concurrency) return;
    for (const d of await this.s.store.webhooks.dueDeliveries(Date.now(), this.concurrency + this.inflight.size)) {
      if (this.inflight.size >= this.concurrency) break;
      if (this.inflight.has(d.rid)) continue;
      const attempt = this.attempt(d)
        .catch((err: unknown) => this.log?.error('webhook delivery failed unexpectedly', { delivery: d.id, cause: String((err as Error)?.stack ?? err) }))
        .finally(() => {
          this.inflight.delete(d.rid);
          this.wake();
        });
      this.inflight.set(d.rid, attempt);
    }
  }

  private async attempt(d: DeliveryRow): Promise<void> {
    const w = await this.s.store.webhooks.byRid(d.webhook_rid);
    if (!w || w.enabled !== 1) return;
    const result = await postOnce(w.url, d.body, signedHeaders(d.event_id, d.body, liveSecrets(w)), { allowInsecure: this.cfg.allowInsecure, timeoutMs: this.cfg.timeoutMs, signal: this.cutOff.signal });
    // Cut short by stop(): not an attempt; the delivery stays pending and is sent again after a restart.
    if (this.cutOff.signal.aborted) return;
    await settleAttempt(this.s, d.rid, result, this.cfg.retryScale, this.log);
  }

  private async sweepRetention(): Promise<void> {
    const nowMs = Date.now();
    if (nowMs - this.lastRetentionSweepMs < RETENTION_SWEEP_MS) return;
    this.lastRetentionSweepMs = nowMs;
    await this.s.store.write((tx) => tx.webhooks.deleteDeliveriesBefore(new Date(nowMs - DELIVERY_RETENTION_MS).toISOString()));
  }

  /** Nothing in flight and nothing due now. */
  private async isIdle(): Promise<boolean> {
    if (this.inflight.size > 0) return false;
    const next = await this.s.store.webhooks.nextDueMs();
    return next === undefined || next > Date.now();
  }

  private releaseIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** Starts the dispatcher with Services.webhooks, or the settings `options` gives in their place. */
export function startWebhookDispatcher(s: Services, options: DispatcherOptions = {}): WebhookDispatcher {
  const cfg: WebhookConfig = {
    allowInsecure: options.allowInsecure ?? s.webhooks.allowInsecure,
    retryScale: options.retryScale ?? s.webhooks.retryScale,
    timeoutMs: options.timeoutMs ?? s.webhooks.timeoutMs,
  };
  return new Dispatcher(s, cfg, options.pollMs ?? 250, options.concurrency ?? 8, options.log);
}
