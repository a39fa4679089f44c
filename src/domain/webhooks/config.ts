// Daemon-wide webhook settings, attached to the running Services (set by startWebhookDispatcher or
// configureWebhooks; routes read them). Defaults are the secure ones.
import type { Services } from '../context.js';

export interface WebhookConfig {
  /** --allow-insecure-webhooks: http:// and loopback receivers. */
  allowInsecure: boolean;
  /**
   * --webhook-retry-scale / TROVE_WEBHOOK_RETRY_SCALE: multiplies every retry wait, Retry-After and
   * the 72-hour auto-off window (1 in production; tests compress time with e.g. 0.0001).
   */
  retryScale: number;
  /** How long a receiver has to answer (15 s). */
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfig = { allowInsecure: false, retryScale: 1, timeoutMs: 15_000 };

const configs = new WeakMap<Services, WebhookConfig>();

export function configureWebhooks(s: Services, config: Partial<WebhookConfig>): WebhookConfig {
  const merged = { ...DEFAULT_WEBHOOK_CONFIG, ...configs.get(s), ...stripUndefined(config) };
  if (!(merged.retryScale > 0) || !Number.isFinite(merged.retryScale)) throw new Error(`webhook retry scale must be a positive number, got ${merged.retryScale}`);
  configs.set(s, merged);
  return merged;
}

export function webhookConfig(s: Services): WebhookConfig {
  return configs.get(s) ?? DEFAULT_WEBHOOK_CONFIG;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
