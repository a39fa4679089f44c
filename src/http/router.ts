// A route table and the request pipeline every route goes through: match → authenticate →
// resolve the namespace/collection in the path (404 outside the key's scope) → authorize (403) →
// read and validate the body and query → handler. Transport-free: `handle` takes and returns plain
// objects, so tests run requests in-process without opening a port.
import { randomHex } from '../contract/ids.js';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { asTroveError, TroveError } from '../contract/errors.js';
import { describedSentence, describeIssues } from '../contract/issues.js';
import type { Services } from '../domain/context.js';
import { authenticate, authorize, noteKeyUse, type AuthenticatedKey, type Permission } from '../domain/keys.js';
import { resolveCollection, resolveNamespace } from '../domain/resolve.js';
import type { CollectionRow } from '../store/interface.js';
import type { NamespaceRow } from '../store/interface.js';
import { DEFAULT_BODY_LIMIT } from '../domain/limits.js';

export interface AppRequest {
  method: string;
  /** Path and query string, as sent. */
  url: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  body: Buffer | Readable | null;
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string | null;
  /** A server-sent-event stream instead of a body (GET /events with Accept: text/event-stream). */
  stream?: AsyncIterable<string>;
}

/**
 * The names of a path's `{param}` segments, as Hono derives `ParamKeys<Path>`:
 * '/namespaces/{namespace}/jobs/{job}' → 'namespace' | 'job'.
 */
export type ParamKeys<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? K | ParamKeys<Rest> : never;

/** What the pipeline resolved before the handler runs, typed from the route's path and permission. */
type Resolved<P extends string, Perm extends Permission> = Perm extends { kind: 'none' }
  ? { key: null }
  : { key: AuthenticatedKey } & ('namespace' extends ParamKeys<P> ? { ns: NamespaceRow } : unknown) & ('collection' extends ParamKeys<P> ? { col: CollectionRow } : unknown);

export type RouteContext<B, Q, P extends string = string, Perm extends Permission = Permission> = {
  s: Services;
  requestId: string;
  params: Record<ParamKeys<P>, string>;
  body: B;
  query: Q;
  /** What the route's `target` hook resolved (e.g. a job), visible to the key. */
  target: unknown;
  req: AppRequest;
} & Resolved<P, Perm>;

/** The context as the router builds it for any route; `route()` narrows it to the route's own. */
interface AnyRouteContext {
  s: Services;
  requestId: string;
  params: Record<string, string>;
  body: unknown;
  query: unknown;
  target: unknown;
  req: AppRequest;
  key: AuthenticatedKey | null;
  ns: NamespaceRow | undefined;
  col: CollectionRow | undefined;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw bytes instead of JSON (signed downloads). */
  raw?: { bytes: Buffer; contentType: string };
  /** Server-sent events instead of JSON. */
  stream?: AsyncIterable<string>;
}

interface RouteFields<B extends z.ZodType, Q extends z.ZodType, P extends string, Perm extends Permission> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: P;
  summary: string;
  permission: Perm;
  body?: B;
  /** Shown in /openapi.json instead of `body` when validation is split (search filters). */
  docBody?: z.ZodType;
  query?: Q;
  /** JSON body limit in bytes (retrieval-api.md, Limits). */
  bodyLimit?: number;
  /**
   * Resolves a target the path names by ID (a job), with the key's visibility (404 outside its
   * scope), before the permission check, so an out-of-scope target is 404 and never 403.
   */
  target?: (s: Services, key: AuthenticatedKey, params: Record<ParamKeys<P>, string>) => unknown;
  /** The handler reads the body stream itself (signed upload PUT). */
  streamBody?: boolean;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

/** A route as one route's author writes it: the handler's context is typed from its path, permission, body and query. */
export interface TypedRouteDef<B extends z.ZodType, Q extends z.ZodType, P extends string, Perm extends Permission> extends RouteFields<B, Q, P, Perm> {
  handler: (ctx: RouteContext<z.output<B>, z.output<Q>, P, Perm>) => Reply | Promise<Reply>;
}

/** A route as the router holds it, whatever its path and schemas. */
export interface RouteDef extends RouteFields<z.ZodType, z.ZodType, string, Permission> {
  handler: (ctx: AnyRouteContext) => Reply | Promise<Reply>;
}

export { DEFAULT_BODY_LIMIT } from '../domain/limits.js';

/**
 * Erases a route's own types for the table. Sound because dispatch() builds the context from the
 * same path and permission: `key` is set whenever the permission is not `none`, `ns` whenever the
 * path names `{namespace}` and `col` whenever it names `{collection}` (both resolved under the key),
 * and `params` holds every `{param}` of the matched path.
 */
export function route<B extends z.ZodType = z.ZodNever, Q extends z.ZodType = z.ZodNever, const P extends string = string, const Perm extends Permission = Permission>(
  def: TypedRouteDef<B, Q, P, Perm>,
): RouteDef {
  return def as unknown as RouteDef;
}

interface CompiledRoute {
  def: RouteDef;
  segments: { literal?: string; param?: string; verb?: string }[];
}

function compile(def: RouteDef): CompiledRoute {
  const segments = def.path
    .split('/')
    .slice(1)
    .map((seg) => {
      const m = /^(?:\{(\w+)\}|([\w.-]+))(?::(\w+))?$/.exec(seg);
      if (!m) throw new Error(`bad route segment ${seg} in ${def.path}`);
      const out: { literal?: string; param?: string; verb?: string } = {};
      if (m[1]) out.param = m[1];
      if (m[2]) out.literal = m[2];
      if (m[3]) out.verb = m[3];
      return out;
    });
  return { def, segments };
}

function matchSegments(route: CompiledRoute, raw: string[]): Record<string, string> | null {
  if (route.segments.length !== raw.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < raw.length; i++) {
    const seg = route.segments[i]!;
    let value = raw[i]!;
    if (seg.verb) {
      if (!value.endsWith(`:${seg.verb}`)) return null;
      value = value.slice(0, -(seg.verb.length + 1));
    }
    if (seg.literal !== undefined) {
      if (value !== seg.literal) return null;
    } else {
      if (value === '') return null;
      params[seg.param!] = decodeSegment(value);
    }
  }
  return params;
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new TroveError('invalid_request', `The URL path segment '${raw.slice(0, 100)}' is not valid percent-encoding.`);
  }
}

/**
 * `{}` sent as JSON to a route without a body: many clients send it on every POST, and it holds no
 * unknown field, which is all the contract refuses ("Unknown request fields are rejected").
 */
function isEmptyJsonObject(bytes: Buffer, contentType: string | undefined): boolean {
  if (bytes.length > 64 || (contentType !== undefined && !isJsonContentType(contentType))) return false;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
  } catch {
    return false;
  }
}

/** JSON nesting accepted in a body; deeper is refused before validation recurses into it. */
export const MAX_JSON_DEPTH = 512;

/** Refuses nesting deeper than MAX_JSON_DEPTH, iteratively: validators recurse and would overflow the stack. */
export function checkJsonShape(value: unknown): void {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) throw new TroveError('invalid_request', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
    if (Array.isArray(v)) {
      for (const item of v) stack.push({ v: item, depth: depth + 1 });
      continue;
    }
    for (const item of Object.values(v)) stack.push({ v: item, depth: depth + 1 });
  }
}

const REQUEST_ID_SHAPE = /^[\x21-\x7e]{1,200}$/;

/**
 * Lets the requests that arrived with this one run first. A file POST that awaits this does its
 * write (and all after it) in the event loop's check phase, so a search that came in the same poll
 * no longer waits behind every POST ahead of it; the POSTs' writes still commit together. During a
 * 16-client ingest, search p95 went from 2.24× idle to 1.76–2.0×; ingest time stayed within the
 * bench's spread (issue 15, `npm run bench -- --only load` and `--only ingest`).
 */
export function yieldToReads(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function newRequestId(): string {
  return `req_${randomHex(12)}`;
}

/**
 * Headers on every response. `nosniff`: a browser must take each Content-Type as given and never
 * guess a more active one (signed downloads serve caller-stored bytes from this origin; see downloads.ts).
 */
export function commonHeaders(requestId: string): Record<string, string> {
  return { 'x-request-id': requestId, 'x-content-type-options': 'nosniff' };
}

/** retrieval-api.md "Conventions": the client's X-Request-Id when it is a sane token, else a new one. */
export function requestIdOf(headers: AppRequest['headers']): string {
  const sent = headers['x-request-id'];
  return sent && REQUEST_ID_SHAPE.test(sent) ? sent : newRequestId();
}

const CLIENT_GONE_CODES = new Set(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * The client closed the connection before its body was complete: the body stream was destroyed
 * unfinished, with Node's "aborted" (ECONNRESET) or a premature close. Not a failure of the daemon.
 */
function clientWentAway(req: AppRequest, err: unknown): boolean {
  const body = req.body;
  if (body === null || Buffer.isBuffer(body) || !body.destroyed || body.readableEnded) return false;
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if ((code && CLIENT_GONE_CODES.has(code)) || e.message === 'aborted') return true;
  }
  return false;
}

function jsonReply(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): AppResponse {
  // The store is async: a handler that forgot an await would otherwise answer `{}` with a 200.
  if (typeof (body as PromiseLike<unknown> | null)?.then === 'function') throw new Error('A route handler answered with a promise as its body; it must await it.');
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...commonHeaders(requestId), ...headers },
    body: status === 204 ? null : JSON.stringify(body),
  };
}

export function errorResponse(err: TroveError, requestId: string, headers: Record<string, string> = {}): AppResponse {
  return jsonReply(err.status, err.toBody(requestId), requestId, headers);
}

/** The whole body, refused with 413 `request_too_large` (saying `what` was too large) past `limit` bytes. */
export async function readBody(body: AppRequest['body'], limit: number, what = "The JSON body is larger than this route's limit of"): Promise<Buffer> {
  const tooLarge = () => new TroveError('request_too_large', `${what} ${limit} bytes.`, { limit_bytes: limit });
  if (body === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) {
    if (body.length > limit) throw tooLarge();
    return body;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A failed parse as the error envelope's message and details: each issue as a sentence naming the
 * field (src/contract/issues.ts); the message holds the first three. `details.issues[].path` keeps its
 * `body.a.b` form; the code, status and envelope are the contract's (retrieval-api.md "Errors").
 */
function zodIssues(error: z.ZodError, where: string, schema: z.ZodType, input: unknown): { message: string; details: Record<string, unknown> } {
  const options = { schema, input, root: where === 'body' ? 'the request body' : where === 'query' ? 'the query string' : where };
  const described = describeIssues(error.issues, options);
  const issues = described.map((d) => ({
    path: d.path.length ? `${where}.${d.path.map(String).join('.')}` : where,
    message: d.message,
  }));
  return { message: issues.length ? describedSentence(described, options) : `${options.root} is invalid.`, details: { issues } };
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { message, details } = zodIssues(result.error, where, schema, value);
    throw new TroveError('invalid_request', message, details);
  }
  return result.data;
}

function isJsonContentType(ct: string | undefined): boolean {
  if (!ct) return false;
  const bare = ct.split(';')[0]!.trim().toLowerCase();
  return bare === 'application/json' || (bare.startsWith('application/') && bare.endsWith('+json'));
}

export interface Logger {
  /** Events that are no failure of the daemon (a client that went away); optional for tests' loggers. */
  info?(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

/**
 * A request's path as the log may show it: without its query, and with the token of a signed
 * upload or download URL cut out. That token is a live credential for an hour (retrieval-api.md,
 * upload sources), and secrets are never logged.
 */
export function loggablePath(url: string): string {
  const path = url.split('?')[0]!;
  return (SIGNED_PATH.test(path) ? path.replace(SIGNED_PATH, '/$1/[token]') : path).slice(0, 200);
}
const SIGNED_PATH = /^\/(uploads|downloads)\/[^/]+/;

export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(
    readonly routes: RouteDef[],
    private readonly s: Services,
    private readonly log: Logger,
  ) {
    // Verb routes (`{collection}:search`) first, so a verb is never read as part of a name.
    this.compiled = routes.map(compile).sort((a, b) => Number(Boolean(b.segments.at(-1)?.verb)) - Number(Boolean(a.segments.at(-1)?.verb)));
  }

  async handle(req: AppRequest): Promise<AppResponse> {
    const requestId = requestIdOf(req.headers);
    try {
      return await this.dispatch(req, requestId);
    } catch (err) {
      if (clientWentAway(req, err)) {
        // Nobody reads this answer; one line says what happened, without a stack.
        this.log.info?.('client closed the connection before sending the whole body', { request_id: requestId, method: req.method, path: loggablePath(req.url) });
        return errorResponse(new TroveError('invalid_request', 'The connection closed before the whole request body arrived.'), requestId);
      }
      const e = asTroveError(err);
      if (e.code === 'internal_error') this.log.error('request failed', { request_id: requestId, method: req.method, cause: String((err as Error)?.stack ?? err) });
      // The operator is the one who can free space: the log says why requests are being refused.
      else if (e.details.reason === 'insufficient_storage') this.log.error('request refused: the disk is full', { request_id: requestId, method: req.method, cause: String((err as Error)?.message ?? err) });
      return errorResponse(e, requestId, e.code === 'request_too_large' ? { connection: 'close' } : {});
    }
  }

  private async dispatch(req: AppRequest, requestId: string): Promise<AppResponse> {
    const qIndex = req.url.indexOf('?');
    const pathname = qIndex < 0 ? req.url : req.url.slice(0, qIndex);
    const search = qIndex < 0 ? '' : req.url.slice(qIndex + 1);
    const raw = pathname.split('/').slice(1);
    if (!pathname.startsWith('/')) throw new TroveError('not_found', 'No such route.');

    let candidates = this.compiled.flatMap((route) => {
      const params = matchSegments(route, raw);
      return params ? [{ route, params }] : [];
    });
    // A path that ends in a known :verb belongs to the verb's routes, never to a name with a colon.
    if (candidates.some((c) => c.route.segments.at(-1)?.verb)) candidates = candidates.filter((c) => c.route.segments.at(-1)?.verb);
    const matched = candidates.find((c) => c.route.def.method === req.method.toUpperCase());
    const allowed = new Set(candidates.map((c) => c.route.def.method));
    if (!matched) {
      if (allowed.size > 0) {
        const err = new TroveError('method_not_allowed', `${req.method} is not allowed here; use ${[...allowed].join(', ')}.`);
        return errorResponse(err, requestId, { allow: [...allowed].join(', ') });
      }
      throw new TroveError('not_found', `No route for ${req.method} ${pathname}.`);
    }

    const { def } = matched.route;
    if (!this.s.ready() && def.permission.kind !== 'none') throw new TroveError('temporarily_unavailable', 'The daemon is starting or stopping.');
    let key: AuthenticatedKey | null = null;
    let ns: NamespaceRow | undefined;
    let col: CollectionRow | undefined;
    let target: unknown = undefined;
    if (def.permission.kind !== 'none') {
      key = await authenticate(this.s.store, bearer(req.headers));
      noteKeyUse(this.s.store, key);
      if (matched.params.collection !== undefined && matched.params.namespace !== undefined) {
        ({ ns, col } = await resolveCollection(this.s.store, key, matched.params.namespace, matched.params.collection));
      } else if (matched.params.namespace !== undefined) {
        ns = await resolveNamespace(this.s.store, key, matched.params.namespace);
      }
      if (def.target) target = await def.target(this.s, key, matched.params);
      authorize(key, def.permission);
    }

    let query: unknown = undefined;
    if (def.query) query = parseWith(def.query, Object.fromEntries(new URLSearchParams(search)), 'query');
    else if (search && new URLSearchParams(search).size > 0) throw new TroveError('invalid_request', 'This route takes no query parameters.');

    let body: unknown = undefined;
    if (!def.streamBody) {
      const bytes = await readBody(req.body, def.bodyLimit ?? DEFAULT_BODY_LIMIT);
      if (def.body) {
        let value: unknown = {};
        if (bytes.length > 0) {
          if (!isJsonContentType(req.headers['content-type'])) throw new TroveError('invalid_request', 'Send the body as JSON with "Content-Type: application/json".');
          try {
            value = JSON.parse(bytes.toString('utf8'));
          } catch (err) {
            throw new TroveError('invalid_request', `The body is not valid JSON: ${(err as Error).message}`);
          }
          checkJsonShape(value);
        }
        body = parseWith(def.body, value, 'body');
      } else if (bytes.length > 0 && !isEmptyJsonObject(bytes, req.headers['content-type'])) {
        throw new TroveError('invalid_request', 'This route takes no request body.');
      }
    }

    const reply = await def.handler({ s: this.s, requestId, key, params: matched.params, body, query, ns, col, target, req });
    if (reply.stream) {
      return { status: reply.status, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...commonHeaders(requestId) }, body: null, stream: reply.stream };
    }
    if (reply.raw) {
      return { status: reply.status, headers: { 'content-type': reply.raw.contentType, ...commonHeaders(requestId), ...reply.headers }, body: reply.raw.bytes };
    }
    return jsonReply(reply.status, reply.body, requestId, reply.headers);
  }
}

function bearer(headers: AppRequest['headers']): string | undefined {
  const auth = headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1] ?? '';
  }
  return headers['x-api-key']?.trim() || undefined;
}
