// The public event stream as the TUI consumes it (src/cli/event-stream.ts reads it): event records
// through callbacks, for when the operator socket cannot be reached (a remote daemon, or a data dir
// that is not this daemon's).
import type { Connection } from '../cli/connection.js';
import { openEventStream as readEventStream, type SseMessage } from '../cli/event-stream.js';
import type { TroveEvent } from './types.js';

/** The event record a message carries, or undefined for anything that is not one. */
export function eventFromMessage(message: SseMessage): TroveEvent | undefined {
  try {
    const parsed = JSON.parse(message.data) as Partial<TroveEvent>;
    if (typeof parsed.id !== 'string' || typeof parsed.type !== 'string' || typeof parsed.data !== 'object' || parsed.data === null) return undefined;
    return { id: parsed.id, type: parsed.type, timestamp: String(parsed.timestamp ?? ''), data: parsed.data as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

export interface SseConnection {
  /** Resolves when the server ends the stream; rejects on a network or HTTP error. */
  done: Promise<void>;
  close(): void;
}

/**
 * Opens the stream once, resuming after `lastEventId` when given. `onOpen` fires when the server
 * has answered 200. An HTTP error becomes a CliApiError (401, 403…), a network error a CliError.
 */
export function openEventStream(conn: Connection, lastEventId: string | undefined, handlers: { onOpen(): void; onEvent(event: TroveEvent): void }): SseConnection {
  const controller = new AbortController();
  const done = (async () => {
    for await (const message of readEventStream(conn, { after: lastEventId, signal: controller.signal })) {
      if (message.kind === 'open') handlers.onOpen();
      else {
        const event = eventFromMessage(message);
        if (event) handlers.onEvent(event);
      }
    }
  })();
  return { done, close: () => controller.abort() };
}
