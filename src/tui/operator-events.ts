// Live events over the operator socket of the local daemon (decisions.md §1): no API key, every
// namespace. Used only when that socket belongs to the daemon the TUI talks HTTP to; otherwise the
// caller falls back to the public SSE stream and shows why.
import { connectOperator, describeOperatorError, type OperatorConnection } from '../rpc/client.js';
import type { EventSource } from './backend.js';
import type { TroveEvent } from './types.js';

const STATUS_TIMEOUT_MS = 3000;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/** Whether the daemon behind the socket (its `http_url`) is the one at `url`. */
export function sameDaemon(httpUrl: string | null | undefined, url: string): boolean {
  if (!httpUrl) return false;
  let theirs: URL;
  let ours: URL;
  try {
    theirs = new URL(httpUrl);
    ours = new URL(url);
  } catch {
    return false;
  }
  const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
  if (port(theirs) !== port(ours)) return false;
  if (theirs.hostname === ours.hostname) return true;
  // A daemon listening on every address, or on loopback under another name, is still this one.
  return WILDCARD.has(theirs.hostname) || (LOOPBACK.has(theirs.hostname) && LOOPBACK.has(ours.hostname));
}

/** The errno behind a WebSocket failure (" (ECONNREFUSED)"), which says more than tRPC's own message. */
function errnoOf(err: unknown): string {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return ` (${code})`;
    current = (current as { cause?: unknown }).cause;
  }
  return '';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * The operator channel as an event source, or the reason it is not used: no socket for the data
 * dir, a socket nobody answers on, or a socket of another daemon than the one at `url`.
 */
export async function connectOperatorEvents(dataDir: string, url: string): Promise<{ source: EventSource } | { reason: string }> {
  let conn: OperatorConnection;
  try {
    conn = connectOperator(dataDir);
  } catch {
    return { reason: `no operator socket in ${dataDir}` };
  }
  let httpUrl: string | null;
  try {
    httpUrl = (await withTimeout(conn.client.status.query(), STATUS_TIMEOUT_MS)).http_url;
  } catch (err) {
    conn.close();
    return { reason: `operator socket of ${dataDir}: ${describeOperatorError(err).message}` };
  }
  if (!sameDaemon(httpUrl, url)) {
    conn.close();
    return { reason: `the operator socket in ${dataDir} belongs to ${httpUrl ?? 'a daemon without HTTP'}, not ${url}` };
  }
  return {
    source: {
      channel: 'operator',
      open(lastEventId, handlers) {
        const subscription = conn.client.events.subscribe(
          { lastEventId: lastEventId ?? null },
          {
            onStarted: () => handlers.onOpen(),
            onData: (envelope) => handlers.onEvent(envelope.data as TroveEvent),
            // The WebSocket link reconnects by itself (and resumes after the last event): a drop
            // is an interruption here, not an end. Open means the daemon started the subscription
            // (not merely that the socket connected), so nothing after it is missed.
            onConnectionStateChange: (state) => {
              if (state.state === 'connecting' && state.error) handlers.onInterrupted(new Error(`lost the operator socket of ${dataDir}${errnoOf(state.error)}; reconnecting`));
            },
            onError: (err) => handlers.onEnd(err, describeOperatorError(err).code === 'invalid_request'),
            onComplete: () => handlers.onEnd(),
          },
        );
        return { close: () => subscription.unsubscribe() };
      },
      dispose: () => conn.close(),
    },
  };
}
