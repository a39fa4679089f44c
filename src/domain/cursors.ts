// Opaque, HMAC-signed cursors that expire and are bound to the key and the request
// (retrieval-api.md, Pagination; DESIGN.md "Cursors and IDs are opaque and signed").
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { TroveError } from '../contract/errors.js';

export const LIST_CURSOR_TTL_MS = 60 * 60 * 1000;
export const SEARCH_CURSOR_TTL_MS = 40 * 60 * 1000;

interface CursorPayload {
  /** binding: hash of (key, route, request values) */
  b: string;
  /** expiry, ms since epoch */
  e: number;
  /** position: last row id for lists, offset for search */
  p: number;
}

export function requestBinding(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

export function signCursor(secret: Buffer, binding: string, position: number, ttlMs: number, now = Date.now()): string {
  const body = Buffer.from(JSON.stringify({ b: binding, e: now + ttlMs, p: position } satisfies CursorPayload)).toString('base64url');
  const mac = createHmac('sha256', secret).update(body).digest('base64url');
  return `${body}.${mac}`;
}

export const invalidCursor = (why: string) => new TroveError('invalid_cursor', `The cursor ${why}; restart from the first page.`);

export function readCursor(secret: Buffer, cursor: string, binding: string, now = Date.now()): number {
  return verifiedPayload(secret, cursor, binding, now).p;
}

/**
 * A search cursor names the snapshot of the first page's ranking (src/domain/search/snapshot.ts),
 * the next entry of it to read, and how many results the pages before it showed.
 */
export interface SearchPosition {
  snapshot: string;
  entry: number;
  shown: number;
  /** When the cursor expires (epoch ms), as signed in it; set by readSearchCursor. */
  expiresAt?: number;
}

export function signSearchCursor(secret: Buffer, binding: string, at: SearchPosition, expiresAt: number): string {
  const body = Buffer.from(JSON.stringify({ b: binding, e: expiresAt, p: at.entry, s: at.snapshot, r: at.shown } satisfies SearchCursorPayload)).toString('base64url');
  const mac = createHmac('sha256', secret).update(body).digest('base64url');
  return `${body}.${mac}`;
}

export function readSearchCursor(secret: Buffer, cursor: string, binding: string, now = Date.now()): SearchPosition {
  const payload = verifiedPayload(secret, cursor, binding, now) as Partial<SearchCursorPayload>;
  if (typeof payload.s !== 'string' || !Number.isSafeInteger(payload.r) || payload.r! < 0) throw invalidCursor('is not valid');
  return { snapshot: payload.s, entry: payload.p!, shown: payload.r!, expiresAt: payload.e };
}

interface SearchCursorPayload extends CursorPayload {
  /** snapshot id */
  s: string;
  /** results shown before this page */
  r: number;
}

function verifiedPayload(secret: Buffer, cursor: string, binding: string, now: number): CursorPayload {
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw invalidCursor('is malformed');
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor('is not valid');
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalidCursor('is malformed');
  }
  if (typeof payload.e !== 'number' || payload.e < now) throw invalidCursor('has expired');
  if (payload.b !== binding) throw invalidCursor('belongs to another request or key');
  if (!Number.isSafeInteger(payload.p) || payload.p < 0) throw invalidCursor('is not valid');
  return payload;
}
