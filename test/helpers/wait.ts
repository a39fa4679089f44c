// Waiting in tests: a test waits for the event or condition it needs, never for a fixed time, and
// the only bound on a wait is how long something may take before it counts as a hang.

/**
 * How long a test waits for something that will happen before calling it a hang. It is not a
 * performance bound: on a 2-core machine whose cores another process keeps busy, a daemon took over
 * 30 s to print "listening" and a 90-file collection over 40 s to index, so every wait shares this
 * one generous bound (TROVE_TEST_PATIENCE_MS overrides it), and tap's per-file timeout stays above it.
 */
export const PATIENCE_MS = Number(process.env.TROVE_TEST_PATIENCE_MS) > 0 ? Number(process.env.TROVE_TEST_PATIENCE_MS) : 300_000;

/** Resolves with the probe's first value that is neither undefined nor false; fails after timeoutMs. */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = PATIENCE_MS, everyMs = 25): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Rejects after PATIENCE_MS with `what` in the message (for races against an event that never comes); never keeps the process alive. */
export function hangAfter(what: string, ms = PATIENCE_MS): Promise<never> {
  return new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref());
}
