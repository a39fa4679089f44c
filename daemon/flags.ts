// Flag and environment values the daemon reads at start, parsed where the composition root and the
// CLI's `daemon start` (which passes its flags here) can both reach them.

/** Reads a retry scale from a flag value or TROVE_WEBHOOK_RETRY_SCALE; undefined when neither is set. */
export function parseRetryScale(value: string | undefined = process.env.TROVE_WEBHOOK_RETRY_SCALE): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--webhook-retry-scale / TROVE_WEBHOOK_RETRY_SCALE must be a positive number, got '${value}'`);
  return n;
}
