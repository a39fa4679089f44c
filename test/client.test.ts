// The package's main export (`import { createClient } from 'trove'`): the typed HTTP client, against a
// real daemon started by the fixture, including the contract's error envelope as a TroveApiError.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, TroveApiError, type SearchInput } from '../src/index.js';
import { startTrove } from '../src/testing/index.js';
import { freePort } from './helpers/cli.js';

const trove = await startTrove();
t.teardown(() => trove.stop());
const client = createClient({ url: trove.url, key: trove.key });

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

/** The rejection of `promise`, which must be a TroveApiError. */
async function apiError(t: TestContext, promise: Promise<unknown>): Promise<TroveApiError> {
  try {
    await promise;
  } catch (err) {
    t.ok(err instanceof TroveApiError, `a TroveApiError (got ${String(err)})`);
    return err as TroveApiError;
  }
  t.fail('the call succeeded');
  throw new Error('unreachable');
}

t.test('health, info', async (t) => {
  t.same(await client.health(), { status: 'ok' });
  const info = await client.info();
  t.ok(info.search_modes.includes('semantic'), 'info is the parsed /info body');
  t.equal(info.embedding?.dimensions, 100);
});

t.test('namespaces, collections, files, search, jobs', async (t) => {
  const ns = await client.namespaces.create({ name: 'docs' });
  t.equal(ns.name, 'docs');
  t.same((await client.namespaces.list()).items.map((n) => n.name), ['docs']);
  t.equal((await client.namespaces.get('docs')).id, ns.id);

  const col = await client.collections.create('docs', { name: 'notes' });
  t.equal(col.name, 'notes');
  t.same((await client.collections.list('docs', { limit: 10 })).items.map((c) => c.name), ['notes']);

  const added = await client.files.add('docs', 'notes', {
    path: '/ops/limits.md',
    source: { type: 'inline', text: 'The gateway applies a rate limit of 100 requests per minute to every client.', content_type: 'text/markdown' },
  });
  t.equal(added.file.path, '/ops/limits.md');
  const job = await client.jobs.wait(added.job.id);
  t.equal(job.status, 'succeeded', 'jobs.wait returns the finished job');
  await client.jobs.wait((await client.files.add('docs', 'notes', { path: '/kitchen.txt', source: { type: 'inline', text: 'Bake the bread at two hundred degrees.' } })).job.id);

  t.same((await client.files.list('docs', 'notes', { prefix: '/ops/' })).items.map((f) => f.path), ['/ops/limits.md'], 'query parameters reach the daemon');
  t.equal((await client.files.get('docs', 'notes', '/ops/limits.md')).status, 'ready', 'a file by path');
  t.equal((await client.files.get('docs', 'notes', added.file.id)).path, '/ops/limits.md', 'a file by id');

  const semantic = await client.search('docs', 'notes', { query: 'throttling clients' });
  t.equal(semantic.execution.mode, 'semantic', 'the API default mode');
  t.equal(semantic.results[0]?.path, '/ops/limits.md');
  const body: SearchInput = { query: 'rate limit', mode: 'keyword', result_unit: 'passage' };
  const keyword = await client.search('docs', 'notes', body);
  t.same(keyword.results.map((r) => r.path), ['/ops/limits.md']);
  t.ok(keyword.results[0]?.evidence.length, 'evidence comes back');

  t.ok((await client.jobs.list('docs')).items.some((j) => j.id === added.job.id), 'the namespace job list');
  const deleted = await client.files.delete('docs', 'notes', '/kitchen.txt');
  t.equal((await client.jobs.wait(deleted.job.id)).status, 'succeeded');
  t.same((await client.files.list('docs', 'notes')).items.map((f) => f.path), ['/ops/limits.md']);
});

t.test('keys: a scoped key, its missing action as a typed error, revoked', async (t) => {
  const reader = await client.keys.create({ name: 'reader', scope: { kind: 'namespace', namespace: 'docs', actions: ['read'] } });
  t.type(reader.secret, 'string', 'the secret comes back once');
  t.ok((await client.keys.list()).items.some((k) => k.id === reader.id));
  const limited = createClient({ url: trove.url, key: reader.secret! });
  t.equal((await limited.files.list('docs', 'notes')).items.length, 1, 'read is allowed');
  const forbidden = await apiError(t, limited.search('docs', 'notes', { query: 'rate limit' }));
  t.equal(forbidden.code, 'forbidden');
  t.equal(forbidden.status, 403);
  t.match(forbidden.request_id, /^req_/, 'the request id of the failed call');
  t.type(forbidden.message, 'string');
  t.ok(forbidden.message.length > 0);
  t.equal((await client.keys.revoke(reader.id)).id, reader.id);
  t.equal((await apiError(t, limited.files.list('docs', 'notes'))).code, 'unauthenticated', 'a revoked key is refused');
});

t.test('contract errors: not found, invalid request, no key', async (t) => {
  const missing = await apiError(t, client.collections.get('docs', 'nope'));
  t.match(missing, { code: 'not_found', status: 404, retryable: false });
  t.match(missing.request_id, /^req_/);
  // The client sends what it is given; the daemon's validation answers (strict objects refuse unknown fields).
  const invalid = await apiError(t, client.search('docs', 'notes', { query: 'x', limit: 1000 }));
  t.match(invalid, { code: 'invalid_request', status: 400 });
  const anonymous = createClient({ url: trove.url });
  t.same(await anonymous.health(), { status: 'ok' }, '/health needs no key');
  t.match(await apiError(t, anonymous.namespaces.list()), { code: 'unauthenticated', status: 401 });
});

t.test('failures without an envelope', async (t) => {
  const port = await freePort();
  const down = await apiError(t, createClient({ url: `http://127.0.0.1:${port}`, key: 'k' }).health());
  t.match(down, { code: 'unreachable', status: 0, request_id: null });
  t.match(down.message, /cannot reach trove at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);

  const other = createServer((req, res) => {
    res.writeHead(req.url === '/health' ? 200 : 502, { 'content-type': 'text/html' });
    res.end('<html>not trove</html>');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => other.close());
  const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const notJson = await apiError(t, createClient({ url }).health());
  t.match(notJson, { code: 'bad_response', status: 200 });
  t.match(notJson.message, /not JSON/);
  t.match(await apiError(t, createClient({ url }).info()), { code: 'bad_response', status: 502, message: /no error envelope/ });

  t.throws(() => createClient({ url: 'localhost:7410' }), /createClient needs \{ url \} as an http\(s\) URL/);
});
