// `trove events tail`: the public event log (GET /events), as a page or, with --follow, the
// server-sent-event stream. Also the stream reader `trove research watch` uses.
import { CliApiError, CliError, type ApiClient, type Page } from '../client.js';
import type { Connection, GlobalOptions } from '../connection.js';
import { write, writeJson } from '../output.js';
import { connect, parseIntegerFlag, runCommand, type JsonOption } from './resource-common.js';

export interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** One message of a text/event-stream; `comment` for the stream's own comment lines (the first one says it is open). */
export type StreamMessage = { kind: 'event'; id: string | undefined; event: string | undefined; data: string } | { kind: 'comment'; text: string };

/**
 * Opens GET /events as a stream (from now, or after `after`) and yields its messages until the
 * daemon closes it or `signal` aborts. An API error (403 for a collection key, 400 for an unknown
 * event ID) is thrown as a CliApiError, as any other request's would be.
 */
export async function* openEventStream(conn: Connection, options: { after?: string | undefined; signal: AbortSignal }): AsyncGenerator<StreamMessage> {
  const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${conn.key}` };
  if (options.after !== undefined) headers['last-event-id'] = options.after;
  let response: Response;
  try {
    response = await fetch(`${conn.url}/events`, { headers, signal: options.signal });
  } catch (err) {
    if (options.signal.aborted) return;
    throw new CliError(`Cannot reach the daemon at ${conn.url}: ${(err as Error).message}.`, 1, 'daemon_unreachable');
  }
  if (!response.ok || !response.body) throw await streamError(response);
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (options.signal.aborted) return;
        throw err;
      }
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const message = parseBlock(block);
        if (message) yield message;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function parseBlock(block: string): StreamMessage | null {
  let id: string | undefined;
  let event: string | undefined;
  const data: string[] = [];
  const comments: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(':')) {
      comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length > 0) return { kind: 'event', id, event, data: data.join('\n') };
  return comments.length > 0 ? { kind: 'comment', text: comments.join('\n') } : null;
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

// ---------------------------------------------------------------- trove events tail

export interface EventsTailOptions extends JsonOption {
  follow?: boolean;
  after?: string;
  type?: string[];
  limit?: string;
}

const DEFAULT_TAIL = 20;

/** `--type file.ready` matches that type; `--type 'file.*'` every type under it. */
function typeMatcher(types: string[] | undefined): (type: string) => boolean {
  if (!types || types.length === 0) return () => true;
  const exact = new Set(types.filter((t) => !t.endsWith('.*')));
  const prefixes = types.filter((t) => t.endsWith('.*')).map((t) => t.slice(0, -1));
  return (type) => exact.has(type) || prefixes.some((p) => type.startsWith(p));
}

/** One line per event: when, what, and the resource it is about. */
export function eventLine(e: EventBody): string {
  const d = e.data;
  const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
  const progress = d.progress as { stage?: string; step?: number; total_steps?: number } | null | undefined;
  const parts = [
    str(d.id) ?? str(d.fileId),
    str(d.path) ?? str(d.key),
    str(d.type),
    str(d.status),
    e.type === 'research.progress' && progress ? `${progress.step}/${progress.total_steps} ${progress.stage}` : undefined,
    str((d.error as { code?: unknown } | null | undefined)?.code),
  ].filter((p): p is string => p !== undefined && p !== '');
  return `${e.timestamp}  ${e.id}  ${e.type.padEnd(22)} ${parts.join('  ')}`.trimEnd();
}

/** Every event after `after` (from the start without it), following cursors; returns the ones that match, and the last ID seen. */
async function readLog(client: ApiClient, after: string | undefined, matches: (type: string) => boolean, keep: number): Promise<{ events: EventBody[]; lastId: string | undefined }> {
  const events: EventBody[] = [];
  let lastId = after;
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: '100' });
    if (cursor) params.set('cursor', cursor);
    else if (after !== undefined) params.set('after', after);
    const page: Page<EventBody> = await client.request<Page<EventBody>>('GET', `/events?${params}`);
    for (const e of page.items) {
      lastId = e.id;
      if (!matches(e.type)) continue;
      events.push(e);
      if (events.length > keep) events.shift();
    }
    cursor = page.next_cursor;
  } while (cursor);
  return { events, lastId };
}

export function runEventsTail(globalOpts: GlobalOptions, opts: EventsTailOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const keep = opts.limit !== undefined ? parseIntegerFlag(opts.limit, '--limit', 1, 100_000) : opts.after !== undefined ? Number.POSITIVE_INFINITY : DEFAULT_TAIL;
    const matches = typeMatcher(opts.type);
    const print = (e: EventBody) => (json ? writeJson(e) : write(eventLine(e) + '\n'));
    const { client, conn } = await connect(globalOpts);
    const { events, lastId } = await readLog(client, opts.after, matches, keep);
    for (const e of events) print(e);
    if (!opts.follow) {
      if (!json && events.length === 0) process.stderr.write('No events.\n');
      return 0;
    }
    // Resume right after the last event read, so nothing falls between the page and the stream.
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      for await (const message of openEventStream(conn, { after: lastId, signal: controller.signal })) {
        if (message.kind !== 'event') continue;
        const e = JSON.parse(message.data) as EventBody;
        if (matches(e.type)) print(e);
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    if (controller.signal.aborted) return 0;
    throw new CliError('The daemon closed the event stream (it stopped or restarted); run the command again with --after <last event ID> to resume.');
  });
}
