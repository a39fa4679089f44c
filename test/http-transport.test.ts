// The HTTP transport on real sockets: body limits (413 answered, not reset), JSON and content-type
// checks, request ids, the OpenAPI document, unauthenticated health/ready, the signed upload and
// download URLs end to end, and a graceful stop that lets an in-flight request finish.
// Contract: retrieval-api.md "Conventions", "Limits", "Errors"; decisions.md §1-3.
import './helpers/plain-children.js';
import t from 'tap';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { ERROR_TABLE, type ErrorCode } from '../src/contract/errors.js';
import { dataPlaneRoutes } from '../src/http/routes.js';
import { PATIENCE_MS } from './helpers/wait.js';

const KEY = 'transport-test-cluster-key-0123456789abcdef';
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_CT = { 'content-type': 'application/json' };

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: any;
}

interface SendOptions {
  method?: string;
  headers?: Record<string, string | number>;
  /** Sent in one piece with a Content-Length. */
  body?: string | Buffer;
  /** Sent as chunked transfer encoding, one write per chunk. */
  chunks?: Buffer[];
  /** Called once the server has answered `Expect: 100-continue`; the body is written after it resolves. */
  onContinue?: () => Promise<void>;
}

/** One request on a fresh connection (no keep-alive), so each case stands alone. */
function send(baseUrl: string, path: string, opts: SendOptions = {}): Promise<Res> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...opts.headers };
    if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json: unknown = undefined;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, json });
      });
    });
    req.on('error', reject);
    const writeBody = () => {
      if (opts.chunks) {
        for (const c of opts.chunks) req.write(c);
        req.end();
      } else {
        req.end(opts.body);
      }
    };
    if (opts.onContinue) {
      req.on('continue', () => {
        opts.onContinue!().then(writeBody, reject);
      });
      req.flushHeaders();
    } else {
      writeBody();
    }
  });
}

function checkEnvelope(tt: Tap, res: Res, code: ErrorCode, what: string): void {
  tt.equal(res.status, ERROR_TABLE[code].status, `${what}: status ${ERROR_TABLE[code].status} (got ${res.status} ${res.text.slice(0, 200)})`);
  tt.match(res.headers['content-type'], /^application\/json/, `${what}: JSON error body`);
  tt.same(Object.keys(res.json ?? {}), ['error'], `${what}: the body is the error envelope`);
  const e = res.json?.error ?? {};
  tt.same(Object.keys(e).sort(), ['code', 'details', 'message', 'request_id', 'retryable'], `${what}: envelope fields`);
  tt.equal(e.code, code, `${what}: code ${code}`);
  tt.equal(e.retryable, ERROR_TABLE[code].retryable, `${what}: retryable`);
  tt.ok(typeof res.headers['x-request-id'] === 'string' && res.headers['x-request-id'].length > 0, `${what}: x-request-id header`);
  tt.equal(e.request_id, res.headers['x-request-id'], `${what}: error.request_id equals x-request-id`);
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const d: RunningDaemon = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY });
t.teardown(() => d.stop());
const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  send(d.url, path, { method, headers: { ...AUTH, ...(body === undefined ? {} : JSON_CT), ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

// A collection with one ready file, so searches can answer 200.
assert.equal((await call('POST', '/namespaces', { name: 'demo' })).status, 201, 'setup: namespace');
assert.equal((await call('POST', '/namespaces/demo/collections', { name: 'notes' })).status, 201, 'setup: collection');
assert.equal((await call('POST', '/namespaces/demo/collections/notes/files', { path: '/a.md', source: { type: 'inline', text: 'the quick brown fox', content_type: 'text/markdown' } })).status, 202, 'setup: file');
await until('the setup file to be indexed', async () => {
  const c = (await call('GET', '/namespaces/demo/collections/notes')).json;
  return c.file_counts.ready === 1 ? true : undefined;
});

t.test('a body over 1,048,576 bytes on POST /namespaces is answered 413 request_too_large, not reset', async (tt) => {
  const limit = 1_048_576;
  const just = Buffer.alloc(limit + 1, 0x20);
  just.write('{"name":"', 0);
  just.write('"}', limit - 1);
  const r1 = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body: just });
  checkEnvelope(tt, r1, 'request_too_large', `${limit + 1} bytes with Content-Length`);

  // Far over the limit, so the server answers long before the client has sent everything.
  const r2 = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body: Buffer.alloc(8 * limit, 0x20) });
  checkEnvelope(tt, r2, 'request_too_large', '8 MiB with Content-Length');

  const chunks = Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x20));
  const r3 = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, chunks });
  checkEnvelope(tt, r3, 'request_too_large', '2.5 MiB chunked, no Content-Length');

  // Exactly at the limit is read and judged on its content (not 413).
  const at = Buffer.alloc(limit, 0x20);
  at.write('{"name":"', 0);
  at.write('"}', limit - 2);
  const r4 = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body: at });
  checkEnvelope(tt, r4, 'invalid_request', 'exactly 1,048,576 bytes');

  const after = await call('POST', '/namespaces', { name: 'after-413' });
  tt.equal(after.status, 201, 'the daemon keeps serving after refusing large bodies');
});

t.test('search bodies: over 4,194,304 bytes → 413; 2 MB → served', async (tt) => {
  const over = Buffer.alloc(4_194_305, 0x20);
  over.write('{"query":"', 0);
  over.write('"}', over.length - 2);
  const r1 = await send(d.url, '/namespaces/demo/collections/notes:search', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body: over });
  checkEnvelope(tt, r1, 'request_too_large', 'a 4,194,305-byte search body');

  const filter = { or: Array.from({ length: 80 }, (_, i) => ({ field: 'path', op: 'eq', value: `/${i}${'x'.repeat(25_000)}` })) };
  filter.or.push({ field: 'path', op: 'eq', value: '/a.md' });
  const body = JSON.stringify({ query: 'quick', mode: 'keyword', filter });
  tt.ok(body.length > 2_000_000 && body.length < 2_200_000, `the search body is about 2 MB (${body.length} bytes)`);
  const r2 = await send(d.url, '/namespaces/demo/collections/notes:search', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body });
  tt.not(r2.status, 413, 'a 2 MB search body is within the search limit');
  tt.equal(r2.status, 200, `and is served (${r2.text.slice(0, 200)})`);
  tt.same(
    r2.json?.results?.map((r: { path: string }) => r.path),
    ['/a.md'],
    'the filter in the large body was applied',
  );
});

t.test('malformed JSON and a body without Content-Type → 400 invalid_request', async (tt) => {
  for (const bad of ['{"name":', '{name: "x"}', '{"name":"x"}}', '\u0000']) {
    const r = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, ...JSON_CT }, body: bad });
    checkEnvelope(tt, r, 'invalid_request', `malformed JSON ${JSON.stringify(bad)}`);
  }
  const noType = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH }, body: '{"name":"no-content-type"}' });
  checkEnvelope(tt, noType, 'invalid_request', 'a JSON body without Content-Type');
  const textPlain = await send(d.url, '/namespaces', { method: 'POST', headers: { ...AUTH, 'content-type': 'text/plain' }, body: '{"name":"text-plain"}' });
  checkEnvelope(tt, textPlain, 'invalid_request', 'a JSON body sent as text/plain');
  const listed = await call('GET', '/namespaces?limit=100');
  const names = listed.json.items.map((n: { name: string }) => n.name);
  tt.notOk(names.includes('no-content-type') || names.includes('text-plain'), 'neither refused body created a namespace');
});

t.test('x-request-id: echoed when sent, generated otherwise, on success and on error', async (tt) => {
  const ok = await send(d.url, '/health', { headers: { 'x-request-id': 'transport-req-42' } });
  tt.equal(ok.status, 200);
  tt.equal(ok.headers['x-request-id'], 'transport-req-42', 'echoed on 200');
  const missing = await send(d.url, '/namespaces/does-not-exist', { headers: { ...AUTH, 'x-request-id': 'transport-req-43' } });
  checkEnvelope(tt, missing, 'not_found', 'an unknown namespace');
  tt.equal(missing.headers['x-request-id'], 'transport-req-43', 'echoed on 404');
  const generated = await send(d.url, '/info', { headers: AUTH });
  tt.equal(generated.status, 200);
  tt.ok(generated.headers['x-request-id'], 'generated when not sent');
  const unauth = await send(d.url, '/info', { headers: { 'x-request-id': 'transport-req-44' } });
  checkEnvelope(tt, unauth, 'unauthenticated', '/info without a key');
  tt.equal(unauth.headers['x-request-id'], 'transport-req-44', 'echoed on 401');
});

t.test('GET /openapi.json: OpenAPI 3.1 with a path for every route, no key needed', async (tt) => {
  const r = await send(d.url, '/openapi.json');
  tt.equal(r.status, 200);
  tt.match(r.headers['content-type'], /^application\/json/);
  let doc: any;
  tt.doesNotThrow(() => {
    doc = JSON.parse(r.text);
  }, 'the document is valid JSON');
  tt.match(doc?.openapi, /^3\.1\.\d+$/, 'openapi 3.1.x');
  tt.type(doc?.info?.title, 'string');
  for (const route of [...dataPlaneRoutes(), { method: 'GET', path: '/openapi.json' }]) {
    tt.ok(doc?.paths?.[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path} is documented`);
  }
});

t.test('/health and /ready answer 200 without a key', async (tt) => {
  const health = await send(d.url, '/health');
  tt.equal(health.status, 200);
  tt.same(health.json, { status: 'ok' });
  const ready = await send(d.url, '/ready');
  tt.equal(ready.status, 200);
  tt.same(ready.json, { status: 'ready' });
  const info = await send(d.url, '/info');
  tt.equal(info.status, 401, 'while a keyed route refuses the same request');
});

t.test('signed upload: PUT the bytes, index to ready, download the same bytes', async (tt) => {
  const bytes = Buffer.from('# Uploaded\n\nzanzibar marmalade — ünïcødé ✓ bytes\n', 'utf8');
  const added = await call('POST', '/namespaces/demo/collections/notes/files', {
    path: '/uploads/doc.md',
    source: { type: 'upload', content_type: 'text/markdown', bytes: bytes.length, checksum: `sha256:${sha256(bytes)}` },
  });
  tt.equal(added.status, 202, `add an upload source (${added.text.slice(0, 200)})`);
  const upload = added.json.upload;
  tt.equal(upload?.method, 'PUT');
  tt.ok(String(upload?.url).startsWith(`${d.url}/`), 'the upload URL points at this daemon');
  tt.equal(upload?.headers?.['content-type'], 'text/markdown');
  tt.equal(added.json.file.status, 'pending', 'the file waits for its bytes');

  const early = await call('GET', `/namespaces/demo/collections/notes/files/${added.json.file.id}/content`);
  checkEnvelope(tt, early, 'operation_in_progress', 'content before the upload');

  // The signed URL is the credential: no API key.
  const put = await send(upload.url, upload.url, { method: 'PUT', headers: { ...upload.headers }, body: bytes });
  tt.equal(put.status, 200, `PUT the bytes (${put.text.slice(0, 200)})`);

  const file = await until('the uploaded file to finish indexing', async () => {
    const f = (await call('GET', `/namespaces/demo/collections/notes/files/${added.json.file.id}`)).json;
    return f.status === 'ready' || f.status === 'failed' ? f : undefined;
  });
  tt.equal(file.status, 'ready', `the upload indexed to ready (${JSON.stringify(file.error ?? null)})`);
  const found = await call('POST', '/namespaces/demo/collections/notes:search', { query: 'zanzibar marmalade', mode: 'keyword' });
  tt.equal(found.status, 200);
  tt.same(found.json.results.map((r: { path: string }) => r.path), ['/uploads/doc.md'], 'search finds the uploaded text');

  const content = await call('GET', `/namespaces/demo/collections/notes/files/${encodeURIComponent('/uploads/doc.md')}/content`);
  tt.equal(content.status, 200);
  tt.ok(String(content.json.url).startsWith(`${d.url}/`), 'the content URL points at this daemon');
  tt.ok(Date.parse(content.json.expires_at) > Date.now(), 'expires_at is in the future');
  const download = await send(content.json.url, content.json.url);
  tt.equal(download.status, 200);
  tt.ok(download.body.equals(bytes), 'the download returns exactly the uploaded bytes');
  tt.match(download.headers['content-type'], /^text\/markdown/, 'with the file content type');

  const reuse = await send(upload.url, upload.url, { method: 'PUT', headers: { ...upload.headers }, body: bytes });
  tt.ok(reuse.status >= 400 && reuse.status < 500, `the single-use upload URL is refused the second time (${reuse.status})`);
});

t.test('graceful stop: a request in flight during stop() completes', async (tt) => {
  const d2 = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY });
  let stopped: Promise<void> | undefined;
  // Expect: 100-continue makes the server confirm it has the request before the body is written;
  // stop() is called then, and the body follows.
  const inflight = send(d2.url, '/namespaces', {
    method: 'POST',
    headers: { ...AUTH, ...JSON_CT, expect: '100-continue', 'content-length': Buffer.byteLength('{"name":"in-flight"}') },
    chunks: [Buffer.from('{"name":"in-flight"}')],
    onContinue: async () => {
      stopped = d2.stop();
    },
  });
  const res = await inflight;
  tt.ok(stopped, 'stop() was called while the request was in flight');
  tt.equal(res.status, 201, `the in-flight request completed (${res.text.slice(0, 200)})`);
  tt.equal(res.json?.name, 'in-flight');
  await stopped;
  await tt.rejects(send(d2.url, '/health'), { code: 'ECONNREFUSED' }, 'after stop() resolves, new connections are refused');
});
