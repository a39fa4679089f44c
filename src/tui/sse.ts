// The public event stream (GET /events with Accept: text/event-stream), for when the operator
// socket cannot be reached: a remote daemon, or a data dir that is not this daemon's.
import { CliApiError, CliError } from '../cli/client.js';
import type { TroveEvent } from './types.js';

export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * An incremental text/event-stream parser: feed it chunks of text as they arrive; it returns the
 * messages completed so far (a message ends at a blank line; comment lines start with ':').
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private id: string | undefined;
  private event: string | undefined;

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (width === 1 && this.buffer[newline] === '\r' && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      if (line === '') {
        if (this.data.length > 0) {
          messages.push({ ...(this.id === undefined ? {} : { id: this.id }), ...(this.event === undefined ? {} : { event: this.event }), data: this.data.join('\n') });
        }
        this.data = [];
        this.event = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
    }
    return messages;
  }
}

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
export function openEventStream(
  baseUrl: string,
  key: string,
  lastEventId: string | undefined,
  handlers: { onOpen(): void; onEvent(event: TroveEvent): void },
): SseConnection {
  const controller = new AbortController();
  const done = (async () => {
    const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${key}` };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/events`, { headers, signal: controller.signal });
    } catch (err) {
      if (controller.signal.aborted) return;
      throw new CliError(`Cannot reach the daemon's event stream at ${baseUrl}/events: ${errorText(err)}.`, 1, 'daemon_unreachable');
    }
    if (!response.ok) throw await httpError(response);
    handlers.onOpen();
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
          const event = eventFromMessage(message);
          if (event) handlers.onEvent(event);
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      throw new CliError(`The event stream from ${baseUrl} broke off: ${errorText(err)}.`, 1, 'daemon_unreachable');
    }
  })();
  return { done, close: () => controller.abort() };
}

async function httpError(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  try {
    const envelope = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
    if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
      return new CliApiError(envelope.code, envelope.message, typeof envelope.request_id === 'string' ? envelope.request_id : null, response.status, envelope.retryable === true);
    }
  } catch {
    // Not an error envelope: fall through to the plain message.
  }
  return new CliError(`GET /events answered HTTP ${response.status}: is this a trove daemon?`);
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause as { code?: string; message?: string } | undefined;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}
