// `trove events tail`: the public event log (GET /events), as a page or, with --follow, the
// server-sent-event stream (src/cli/event-stream.ts).
import type { z } from 'zod';
import type { EventSchema } from '../../contract/schemas.js';
import { CliError, type ApiClient, type Page } from '../client.js';
import { openEventStream } from '../event-stream.js';
import type { GlobalOptions } from '../connection.js';
import { write, writeJson } from '../output.js';
import { errOut } from '../io.js';
import { connect, parseIntegerFlag, runCommand, type JsonOption } from './resource-common.js';

/** One record of the event log (the contract's Event). */
export type EventBody = z.infer<typeof EventSchema>;

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
      if (!json && events.length === 0) errOut().write('No events.\n');
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
