// The node:http(s) adapter: IncomingMessage → AppRequest → ServerResponse. Request behaviour lives
// in the Router; this file owns the connections: requests Node's parser refuses, request bodies the
// app stopped reading, and the shutdown drain (docs/decisions.md, "Stopping").
import { createServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { PassThrough, type Duplex } from 'node:stream';
import type { App } from './app.js';
import { errorResponse, newRequestId, requestIdOf, type AppResponse, type Logger } from './router.js';
import { asTroveError, TroveError } from '../contract/errors.js';
import { shutdownError } from '../domain/context.js';

export interface HttpServerOptions {
  log: Logger;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: Buffer; key: Buffer } | null;
  /** In place of CONNECTION_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<ConnectionTimeouts>;
}

export interface ConnectionTimeouts {
  /** How long an idle keep-alive connection is kept after its last response. */
  keepAliveMs: number;
  /** How long a client has to send a request's headers. */
  headersMs: number;
  /** How long a client has to send a whole request. */
  requestMs: number;
}

/** The same for HTTP and HTTPS: one server serves either, so TLS cannot escape them. */
export const CONNECTION_TIMEOUTS: Readonly<ConnectionTimeouts> = { keepAliveMs: 5000, headersMs: 30000, requestMs: 15 * 60 * 1000 };

export interface HttpServer {
  server: Server;
  /**
   * Stops the server (docs/decisions.md, "Stopping"): no new connections, event streams end now,
   * idle keep-alive connections close; requests in flight get `drainMs` to finish. Then
   * `onDrainOver` runs (the domain abandons its work), every request still unanswered is answered
   * 503 `temporarily_unavailable` (reason "shutdown"), and every connection closes. Resolves once
   * the last connection is gone.
   */
  shutdown(options: { drainMs: number; onDrainOver?: () => void }): Promise<void>;
}

/**
 * How long a connection is kept open after its answer to read (and drop) the rest of a request
 * body, or what a client sends after a malformed request, before it is closed anyway.
 */
const LINGER_MS = 30_000;
/** After the drain, how long the 503 answers have to reach their sockets before every connection is cut. */
const FLUSH_MS = 1_000;

/** One request and its response, from arrival until the response is done. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** What the app reads the body from (null without a body); see `detachedBody`. */
  body: PassThrough | null;
  /** Set once an answer is chosen (the app's, the shutdown's or a parser error's): any other is dropped. */
  answered: boolean;
  /** Ends an event stream (set while one is being sent). */
  endStream?: () => void;
}

export function createHttpServer(app: App, options: HttpServerOptions): HttpServer {
  const { log } = options;
  const exchanges = new Set<Exchange>();
  /** The exchange in flight on a connection, for parser errors that arrive in the middle of it. */
  const onSocket = new WeakMap<Duplex, Exchange>();
  /** Connections already answered for a parser error: llhttp repeats its error for every later chunk. */
  const refused = new WeakSet<Duplex>();
  let draining = false;
  let stopped: Promise<void> | null = null;

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    // Chosen here, once, so an answer written by the shutdown carries the same ID the Router uses.
    const requestId = requestIdOf(headers);
    headers['x-request-id'] = requestId;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const ex: Exchange = { req, res, requestId, body: hasBody ? detachedBody(req) : null, answered: false };
    exchanges.add(ex);
    onSocket.set(req.socket, ex);
    res.once('close', () => {
      exchanges.delete(ex);
      if (onSocket.get(req.socket) === ex) onSocket.delete(req.socket);
      // While stopping, a connection whose response is done is not kept alive for another.
      if (draining) server.closeIdleConnections();
    });
    // Node's own check answered a bare 400 with no body (found by a bad-input attack); it is off
    // (requireHostHeader: false below) so that this one answers in the envelope.
    const missingHost = req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
    (missingHost
      ? Promise.resolve(errorResponse(new TroveError('invalid_request', 'An HTTP/1.1 request needs a Host header (RFC 9112 §3.2).', { reason: 'missing_host' }), requestId, { connection: 'close' }))
      : app.handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body: ex.body })
    )
      .catch((err: unknown) => errorResponse(asTroveError(err), requestId))
      .then((out) => respond(ex, out))
      .catch((err: unknown) => {
        log.error('sending a response failed', { request_id: requestId, cause: String((err as Error)?.stack ?? err) });
        res.destroy();
      });
  };

  const server: Server = options.tls
    ? (createHttpsServer({ ...options.tls, requireHostHeader: false }, handler) as unknown as Server)
    : createServer({ requireHostHeader: false }, handler);
  const timeouts = { ...CONNECTION_TIMEOUTS, ...options.timeouts };
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;

  async function respond(ex: Exchange, out: AppResponse): Promise<void> {
    if (ex.answered) return;
    ex.answered = true;
    const { req, res } = ex;
    const headers = draining ? { ...out.headers, connection: 'close' } : out.headers;
    if (out.stream) return sendStream(ex, out.status, headers, out.stream);
    const bytes = out.body === null ? Buffer.alloc(0) : Buffer.isBuffer(out.body) ? out.body : Buffer.from(out.body);
    // A length, not chunks: a client that gets its answer while still sending knows it has all of it.
    res.writeHead(out.status, out.status === 204 || out.status === 304 ? headers : { ...headers, 'content-length': String(bytes.length) });
    if (!ex.body || req.complete) {
      res.end(bytes);
      return;
    }
    // The app answered before reading the whole body (413, or an error found first). Closing now
    // would reset the connection while the client is still sending, and the client may lose this
    // answer (RFC 9112 §9.6); so the answer goes out at once, the rest of the body is read and
    // dropped, and the response ends (closing the connection after a 413) once the body is in.
    res.write(bytes);
    req.unpipe(ex.body);
    req.resume();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      res.end();
    };
    const timer = setTimeout(end, LINGER_MS);
    req.once('end', end);
    req.once('close', end);
  }

  async function sendStream(ex: Exchange, status: number, headers: Record<string, string>, stream: AsyncIterable<string>): Promise<void> {
    const { res } = ex;
    res.writeHead(status, headers);
    res.flushHeaders();
    // Until the client goes away or the daemon stops; then the generator is closed.
    const iterator = stream[Symbol.asyncIterator]();
    let open = true;
    const end = () => {
      if (!open) return;
      open = false;
      iterator.return?.().catch(() => undefined);
      res.end();
    };
    ex.endStream = end;
    res.on('close', end);
    if (draining) end();
    try {
      while (open) {
        const next = await iterator.next();
        if (next.done || !open) break;
        res.write(next.value);
      }
    } finally {
      end();
    }
  }

  // An Expect other than 100-continue: Node would answer a bare 417. The code table has no 417, so
  // it is 400 invalid_request in the envelope, as for the parser's refusals below.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const expect = String(req.headers.expect ?? '').slice(0, 100);
    const out = errorResponse(new TroveError('invalid_request', `Expect: ${expect} is not supported; send the request without it (or with Expect: 100-continue).`, { reason: 'expectation_failed' }), newRequestId(), { connection: 'close' });
    const body = out.body ?? '';
    res.writeHead(out.status, { ...out.headers, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });

  // Requests Node's parser refuses (a request line or headers over the limit, a malformed request
  // line, a timeout) never reach the Router; they are answered here with the same envelope and an
  // x-request-id (retrieval-api.md "Conventions", "Errors"), then the connection closes.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    // Node's default, unless the daemon is started with --max-http-header-size.
    const error = parserError(err, maxHeaderSize);
    const inFlight = onSocket.get(socket);
    // Socket errors (a reset) have no one to answer, and a response already begun cannot be replaced.
    if (!error || !socket.writable || inFlight?.res.headersSent) {
      socket.destroy();
      return;
    }
    if (inFlight) inFlight.answered = true;
    socket.end(rawResponse(errorResponse(error, newRequestId(), { connection: 'close' })));
    // As after a 413: read what the client still sends until it closes (RFC 9112 §9.6), bounded.
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
  });

  return {
    server,
    shutdown: ({ drainMs, onDrainOver }) =>
      (stopped ??= new Promise<void>((resolve) => {
        draining = true;
        server.close(() => resolve());
        for (const ex of exchanges) ex.endStream?.();
        server.closeIdleConnections();
        const timer = setTimeout(() => {
          onDrainOver?.();
          // After a turn, so that work which gave up on `onDrainOver` answers through the Router
          // first (its own message); whatever is left gets the generic answer here.
          setImmediate(() => {
            const closed = [...exchanges].map((ex) => {
              answerUnavailable(ex);
              // Every exchange still listed has not closed yet (it leaves the list on 'close').
              return new Promise<void>((done) => ex.res.once('close', () => done()));
            });
            const flushed = new Promise<void>((done) => setTimeout(done, FLUSH_MS).unref());
            void Promise.race([Promise.all(closed), flushed]).then(() => server.closeAllConnections());
          });
        }, drainMs);
        server.once('close', () => clearTimeout(timer));
      })),
  };

  /** The 503 for a request still running when the drain ends (respond adds `connection: close` while draining). */
  function answerUnavailable(ex: Exchange): void {
    void respond(ex, errorResponse(shutdownError(), ex.requestId));
  }
}

/**
 * What the app reads a request body from: a stream of its own, so that an app which stops reading
 * early (and destroys its stream, as `for await` does) leaves the request itself intact, for this
 * adapter to drain. A client that goes away shows as an error on it.
 */
function detachedBody(req: IncomingMessage): PassThrough {
  const body = new PassThrough();
  req.on('error', (err) => body.destroy(err));
  // An app that answered without reading the body has no listener: the error is not an uncaught
  // one then. A reader (`for await`) still gets it.
  body.on('error', () => undefined);
  req.pipe(body);
  return body;
}

/**
 * Node's parser errors in the contract's terms. The code table (retrieval-api.md "Errors") has no
 * 431 or 408: `request_too_large` is the JSON body over a route limit, and every other size limit
 * of the contract (query text, path, filter) is `invalid_request`. So a request line or headers
 * over Node's limit (its own answer would be 431) is 400 `invalid_request` with
 * `details.reason: "headers_too_large"`, a timeout 400 `invalid_request` with "request_timeout",
 * and anything else the parser refuses 400 `invalid_request` with "malformed_request".
 */
function parserError(err: NodeJS.ErrnoException, headerLimit: number): TroveError | null {
  const code = err.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new TroveError('invalid_request', `The request line and headers are larger than ${headerLimit} bytes; send long parameters in a JSON body.`, { reason: 'headers_too_large', limit_bytes: headerLimit });
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new TroveError('invalid_request', 'The request did not arrive in time.', { reason: 'request_timeout' });
  if (code.startsWith('HPE_')) {
    const why = (err as { reason?: unknown }).reason;
    return new TroveError('invalid_request', `The request is not valid HTTP/1.1${typeof why === 'string' && why ? ` (${why})` : ''}.`, { reason: 'malformed_request', parser_code: code });
  }
  return null;
}

/** A whole HTTP/1.1 response as bytes, for a connection the parser gave up on (no ServerResponse exists). */
function rawResponse(out: AppResponse): Buffer {
  const body = Buffer.from(out.body ?? '');
  const head = [`HTTP/1.1 ${out.status} ${STATUS_CODES[out.status] ?? ''}`];
  for (const [name, value] of Object.entries({ ...out.headers, 'content-length': String(body.length) })) head.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), body]);
}
