// GET /events (decisions.md §2, §6): the outbox as a page, or as a server-sent-event stream. A key
// sees the events whose resource it could read through its GET route (src/domain/event-audience.ts);
// collection keys are refused (403) by the route. Events are kept 30 days.
import { TroveError } from '../contract/errors.js';
import { hasPrefix } from '../contract/ids.js';
import type { EventRow } from '../store/interface.js';
import type { Services } from './context.js';
import { audienceOfKey } from './event-audience.js';
import { readCursor, requestBinding, signCursor, LIST_CURSOR_TTL_MS } from './cursors.js';
import type { AuthenticatedKey } from './keys.js';

export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** decisions.md §6: the event types this cluster emits (GET /info lists them). */
export const EVENT_TYPES = [
  'job.updated',
  'file.updated',
  'file.ready',
  'file.failed',
  'file.deleted',
  'collection.updated',
  'research.updated',
  'research.progress',
  'object.indexed',
  'object.indexing_failed',
  'webhook.test',
] as const;

export interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  data: unknown;
}

export const presentEvent = (e: EventRow): EventBody => ({ id: e.id, type: e.type, timestamp: e.created_at, data: JSON.parse(e.data) as unknown });

async function startAfter(s: Services, after: string | undefined): Promise<number> {
  if (after === undefined) return 0;
  if (!hasPrefix(after, 'evt')) throw new TroveError('invalid_request', "'after' takes an event ID (evt_…).");
  const rid = await s.store.events.findRid(after);
  if (rid === undefined) throw new TroveError('invalid_request', `No event '${after}' (events are kept 30 days); start without 'after'.`);
  return rid;
}

export async function listEvents(s: Services, key: AuthenticatedKey, query: { after?: string | undefined; cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'events', query.after ?? null]);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : await startAfter(s, query.after);
  const rows = await s.store.events.after({ afterRid: after, limit: query.limit + 1, audience: await audienceOfKey(s.store, key.id, key.scope) });
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  return { items: page.map(presentEvent), next_cursor: more ? signCursor(s.cursorSecret, binding, page[page.length - 1]!.rid, LIST_CURSOR_TTL_MS) : null };
}

/**
 * The live stream: every event the key may see after `after` (or from now), as `text/event-stream`
 * messages (`id`, `event`, `data`), with a comment every 15 s to keep proxies open.
 */
export async function streamEvents(s: Services, key: AuthenticatedKey, after: string | undefined, pollMs = 200): Promise<AsyncGenerator<string>> {
  // Read before the 200 goes out: an unknown `after` (or Last-Event-ID) is a 400 in the envelope,
  // as on the page, not a 200 that closes empty (found by a bad-input attack; a browser's
  // EventSource would reconnect in a loop without ever seeing why).
  const cursor = after === undefined ? await s.store.events.lastRid() : await startAfter(s, after);
  return eventStream(s, key, cursor, pollMs);
}

async function* eventStream(s: Services, key: AuthenticatedKey, from: number, pollMs: number): AsyncGenerator<string> {
  let cursor = from;
  let quiet = 0;
  yield ': trove events\n\n';
  while (s.ready()) {
    // The key as it is now, not as it was when the stream opened: a key revoked meanwhile ends its
    // stream (its next request would be 401), and one whose scope was narrowed sees less from here
    // on. Found by an attack: a revoked key's open stream kept receiving events.
    const current = await s.store.keys.byId(key.id);
    if (!current || current.revoked_at) {
      yield ': the API key was revoked; the stream ends\n\n';
      return;
    }
    const audience = await audienceOfKey(s.store, key.id, current.scope);
    const rows = await s.store.events.after({ afterRid: cursor, limit: 500, audience });
    for (const row of rows) {
      cursor = row.rid;
      yield `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(presentEvent(row))}\n\n`;
    }
    if (rows.length === 500) continue;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    quiet += pollMs;
    if (quiet >= 15_000) {
      quiet = 0;
      yield ': keep-alive\n\n';
    }
  }
}

export async function sweepEvents(s: Services, now = Date.now()): Promise<number> {
  return s.store.write((tx) => tx.events.deleteBefore(new Date(now - EVENT_RETENTION_MS).toISOString()));
}
