// The public event stream (GET /events with Accept: text/event-stream), read by `trove events tail
// --follow`, `trove research watch` and the TUI (when the operator socket cannot be used).
import { CliApiError, CliError, NO_DAEMON_EXIT } from './client.js';
import type { Connection } from './connection.js';

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

/** `open` once the daemon answered 200 (whatever happened before it must be read another way), then the messages. */
export type StreamMessage = { kind: 'open' } | ({ kind: 'event' } & SseMessage);

/**
 * Opens GET /events as a stream (from now, or after `after`) and yields its messages until the
 * daemon closes it or `signal` aborts. An API error (403 for a collection key, 400 for an unknown
 * event ID) is thrown as a CliApiError, as any other request's would be; a network error or a
 * stream that breaks off as a CliError `daemon_unreachable`.
 */
export async function* openEventStream(conn: Connection, options: { after?: string | undefined; signal: AbortSignal }): AsyncGenerator<StreamMessage> {
  const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${conn.key}` };
  if (options.after) headers['last-event-id'] = options.after;
  let response: Response;
  try {
    response = await fetch(`${conn.url}/events`, { headers, signal: options.signal });
  } catch (err) {
    if (options.signal.aborted) return;
    throw new CliError(`Cannot reach the daemon's event stream at ${conn.url}/events: ${errorText(err)}.`, NO_DAEMON_EXIT, 'daemon_unreachable');
  }
  if (!response.ok || !response.body) throw await streamError(response);
  yield { kind: 'open' };
  const parser = new SseParser();
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      for (const message of parser.push(decoder.decode(chunk, { stream: true }))) yield { kind: 'event', ...message };
    }
  } catch (err) {
    if (options.signal.aborted) return;
    throw new CliError(`The event stream from ${conn.url} broke off: ${errorText(err)}.`, NO_DAEMON_EXIT, 'daemon_unreachable');
  }
}

async function streamError(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string; request_id?: string; retryable?: boolean; details?: Record<string, unknown> } };
    return new CliApiError(error.code, error.message, error.request_id ?? response.headers.get('x-request-id'), response.status, error.retryable === true, error.details ?? {});
  } catch {
    return new CliError(`GET /events answered HTTP ${response.status} and no error envelope: is this a trove daemon?`);
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause as { code?: string; message?: string } | undefined;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}
