// Requests the HTTP layer refuses before any route sees them, on raw sockets: what Node's parser
// rejects (a request line or headers over its limit, a malformed request line) gets the contract's
// envelope and an x-request-id like every other error (retrieval-api.md "Conventions", "Errors");
// an oversize body always gets its 413 before the connection closes, never a reset, even for a
// client that reads only after sending everything; a client that abandons its body is one info
// line in the log, not an internal error.
import './helpers/plain-children.js';
import t from 'tap';
import { connect } from 'node:net';
import { startDaemon } from '../daemon/main.js';
import { ERROR_TABLE, type ErrorCode } from '../src/contract/errors.js';
import { DEFAULT_BODY_LIMIT } from '../src/domain/limits.js';

const KEY = 'client-errors-test-cluster-key-0123456789abcdef';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const lines: { level: 'info' | 'warn' | 'error'; message: string; fields: Record<string, unknown> }[] = [];
const log = {
  info: (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level: 'info', message, fields }),
  warn: (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level: 'warn', message, fields }),
  error: (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level: 'error', message, fields }),
};
const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY, operator: false, log });
t.teardown(() => d.stop());
const port = Number(new URL(d.url).port);

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  raw: string;
}

function parseResponse(raw: string): RawResponse | null {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const [statusLine, ...headerLines] = raw.slice(0, split).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let text = raw.slice(split + 4);
  if (headers['content-length'] !== undefined) text = text.slice(0, Number(headers['content-length']));
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status, headers, body, raw };
}

/** Sends `request` as written, then reads until the server closes. */
function rawRequest(request: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

function checkEnvelope(t: TestContext, res: RawResponse | null, code: ErrorCode, what: string): void {
  if (!res) return void t.fail(`${what}: no HTTP response`);
  t.equal(res.status, ERROR_TABLE[code].status, `${what}: status ${ERROR_TABLE[code].status} (got ${res.raw.slice(0, 120)})`);
  t.match(res.headers['content-type'], /^application\/json/, `${what}: a JSON body`);
  t.same(Object.keys(res.body ?? {}), ['error'], `${what}: the body is the error envelope`);
  const e = (res.body as { error?: Record<string, unknown> })?.error ?? {};
  t.same(Object.keys(e).sort(), ['code', 'details', 'message', 'request_id', 'retryable'], `${what}: envelope fields`);
  t.equal(e.code, code, `${what}: code ${code}`);
  t.equal(e.retryable, ERROR_TABLE[code].retryable, `${what}: retryable`);
  t.match(res.headers['x-request-id'], /^req_\w+$/, `${what}: an x-request-id header`);
  t.equal(e.request_id, res.headers['x-request-id'], `${what}: error.request_id equals x-request-id`);
}

t.test('what the HTTP parser refuses is answered with the envelope and an x-request-id', async (t) => {
  const long = parseResponse(await rawRequest(`GET /info?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: trove\r\nAuthorization: Bearer ${KEY}\r\n\r\n`));
  checkEnvelope(t, long, 'invalid_request', 'a 20 KB query string');
  t.match((long?.body as any)?.error?.details, { reason: 'headers_too_large', limit_bytes: Number }, 'details say the request line and headers were too large');
  t.equal(long?.headers.connection, 'close', 'and the connection closes');

  for (const [what, request] of [
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
    ['a bad protocol version', 'GET /health HTTP/9.x\r\nHost: trove\r\n\r\n'],
    ['a space in the path', 'GET /he alth HTTP/1.1\r\nHost: trove\r\n\r\n'],
    ['a header line without a colon', 'GET /health HTTP/1.1\r\nHost trove\r\n\r\n'],
  ] as const) {
    const res = parseResponse(await rawRequest(request));
    checkEnvelope(t, res, 'invalid_request', what);
    t.match((res?.body as any)?.error?.details, { reason: 'malformed_request', parser_code: /^HPE_/ }, `${what}: details name the parser's code`);
    t.equal(res?.headers.connection, 'close', `${what}: the connection closes`);
  }
});

/**
 * POSTs `size` bytes the way curl and most HTTP libraries do: the whole body is written before
 * anything is read, so an answer sent early is read only after the last byte went out. A reset
 * while writing (the server closed with bytes unread) loses the answer: the result is then empty.
 */
function postThenRead(path: string, size: number, chunked: boolean): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const chunks: Buffer[] = [];
    let closed = false;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    // Each wait takes its listeners off again: a 'close' listener left per drain passed Node's
    // limit of 10 on a large body (MaxListenersExceededWarning in every CI log).
    const write = (data: string | Buffer) => (closed || socket.write(data) ? Promise.resolve() : new Promise<void>((done) => {
      const settle = () => {
        socket.off('drain', settle);
        socket.off('close', settle);
        done();
      };
      socket.once('drain', settle);
      socket.once('close', settle);
    }));
    void (async () => {
      await write(`POST ${path} HTTP/1.1\r\nHost: trove\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`}\r\n\r\n`);
      const piece = Buffer.alloc(256 * 1024, 0x20);
      for (let left = size; left > 0 && !closed; left -= piece.length) {
        const part = piece.subarray(0, Math.min(left, piece.length));
        await write(chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part);
      }
      if (chunked && !closed) await write('0\r\n\r\n');
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.resume();
    })();
  });
}

t.test('an oversize body is answered 413 before the connection closes, every time (with and without Content-Length)', async (t) => {
  const limit = DEFAULT_BODY_LIMIT;
  const sizes = [limit + 1, limit + 100_000, 3 * 1024 * 1024, 8 * 1024 * 1024, 24 * 1024 * 1024];
  const outcomes = new Map<string, number>();
  for (let i = 0; i < 50; i++) {
    const size = sizes[i % sizes.length]!;
    const chunked = Math.floor(i / sizes.length) % 2 === 1;
    const res = parseResponse(await postThenRead('/namespaces', size, chunked));
    const ok = res?.status === 413 && (res.body as any)?.error?.code === 'request_too_large' && res.headers['x-request-id'] === (res.body as any)?.error?.request_id;
    const key = `${size} bytes ${chunked ? 'chunked' : 'with Content-Length'}: ${ok ? '413' : res ? `${res.status} ${res.raw.slice(0, 80)}` : 'no response (reset)'}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const failures = [...outcomes].filter(([key]) => !key.endsWith(': 413'));
  t.same(failures, [], `50 oversize bodies, each answered 413 request_too_large: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  const after = parseResponse(await rawRequest(`GET /health HTTP/1.1\r\nHost: trove\r\nConnection: close\r\n\r\n`));
  t.equal(after?.status, 200, 'the daemon keeps serving');
});

/** Sends a request's head and part of its body, closes the connection, and returns the log lines that follow. */
async function linesAfterAbandoning(head: string, part: Buffer): Promise<typeof lines> {
  const before = lines.length;
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      socket.write(part, () => socket.destroy());
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
  const started = Date.now();
  while (lines.length === before && Date.now() - started < 60_000) await new Promise((resolve) => setTimeout(resolve, 25));
  return lines.slice(before);
}

t.test('a client that abandons its body mid-upload is one info line, not an internal error', async (t) => {
  const logged = await linesAfterAbandoning(
    `POST /namespaces HTTP/1.1\r\nHost: trove\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    Buffer.alloc(50_000, 0x20),
  );
  t.same(
    logged.filter((l) => l.level === 'error'),
    [],
    'no error-level line (no internal_error with a stack)',
  );
  t.equal(logged.length, 1, `one line: ${JSON.stringify(logged)}`);
  t.match(logged[0], { level: 'info', message: /client closed the connection/, fields: { method: 'POST', path: '/namespaces', request_id: /^req_/ } });
  t.notOk(
    logged.some((l) => Object.values(l.fields).some((v) => typeof v === 'string' && /\n\s+at /.test(v))),
    'no stack trace',
  );
});

t.test('an upload abandoned mid-body logs its path without the signed URL token', async (t) => {
  // Found by an attack: the token in /uploads/<token> is a live credential for an hour, and the
  // info line printed it whole; anyone reading the daemon's log could finish the upload.
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body) });
    return (await res.json()) as any;
  };
  await api('POST', '/namespaces', { name: 'uploads' });
  await api('POST', '/namespaces/uploads/collections', { name: 'docs' });
  const added = await api('POST', '/namespaces/uploads/collections/docs/files', { path: '/big.txt', source: { type: 'upload', content_type: 'text/plain', bytes: 100000 } });
  const url = new URL(added.upload.url as string);
  const token = url.pathname.split('/').pop()!;
  t.ok(token.length > 20, 'a signed upload URL');
  const logged = await linesAfterAbandoning(`PUT ${url.pathname} HTTP/1.1\r\nHost: trove\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n`, Buffer.alloc(1000, 0x61));
  t.match(logged[0], { level: 'info', message: /client closed the connection/, fields: { method: 'PUT', path: '/uploads/[token]' } });
  t.notOk(JSON.stringify(logged).includes(token), 'the token appears in no log line');
});

t.test('no Host header on HTTP/1.1, or an Expect the server cannot meet: 400 in the envelope, not a bare status', async (t) => {
  // Found by a bad-input attack: Node answered these itself, a bare 400 with an empty body and a
  // bare 417 (a code the contract's table does not have).
  const noHost = parseResponse(await rawRequest(`GET /health HTTP/1.1\r\nConnection: close\r\n\r\n`));
  t.equal(noHost?.status, 400);
  t.match(noHost?.body, { error: { code: 'invalid_request', details: { reason: 'missing_host' }, request_id: /^req_/ } });
  const http10 = parseResponse(await rawRequest(`GET /health HTTP/1.0\r\n\r\n`));
  t.equal(http10?.status, 200, 'HTTP/1.0 needs no Host');
  const expect = parseResponse(await rawRequest(`GET /health HTTP/1.1\r\nHost: trove\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n`));
  t.equal(expect?.status, 400);
  t.match(expect?.body, { error: { code: 'invalid_request', details: { reason: 'expectation_failed' } } });
  t.ok(expect?.headers['x-request-id'], 'with its x-request-id');
  const after = parseResponse(await rawRequest(`GET /health HTTP/1.1\r\nHost: trove\r\nConnection: close\r\n\r\n`));
  t.equal(after?.status, 200, 'the daemon keeps serving');
});
