// Daemon-wide webhook settings (resolved at start by daemon/config.ts, held by Services.webhooks;
// routes and the dispatcher read them). Defaults are the secure ones.

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

export const DEFAULT_WEBHOOK_CONFIG: Readonly<WebhookConfig> = { allowInsecure: false, retryScale: 1, timeoutMs: 15_000 };
