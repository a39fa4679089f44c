// API keys (retrieval-api.md: Key, POST /keys, GET /keys, Authentication; decisions.md §1-2):
// create with the scope rules, the secret shown once and stored hashed, list and get as the caller
// may administer, revoke, constant-time comparison, and no secret in the daemon's output.
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import t from 'tap';
import { authenticate } from '../src/domain/keys.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';
import { PATIENCE_MS } from './helpers/wait.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function makeKey(f: Fixture, name: string, scope: Record<string, unknown>, as?: string): Promise<any> {
  const r = await f.call('POST', '/keys', { name, scope }, as ? bearer(as) : {});
  if (r.status !== 201) throw new Error(`key ${name}: ${r.status} ${r.text}`);
  return r.body;
}

t.test('create: the secret once, the scope as sent, Location', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k1', 'docs');
  const r = await f.call('POST', '/keys', { name: 'reader', scope: { kind: 'namespace', namespace: 'k1', actions: ['read', 'search', 'read'] } });
  t.equal(r.status, 201);
  t.match(r.body, { id: /^key_/, name: 'reader', scope: { kind: 'namespace', namespace: 'k1', actions: ['read', 'search'] } }, 'duplicate actions collapse');
  t.equal(r.headers.location, `/keys/${r.body.id}`);
  t.match(r.body.secret, new RegExp(`^trove_${r.body.prefix}_[A-Za-z0-9_-]{40,}$`), 'trove_<prefix>_<random> (decisions.md §1)');
  t.notOk('revoked_at' in r.body, 'revoked_at is omitted while active');
  const byId = await f.call('POST', '/keys', { name: 'by-id', scope: { kind: 'namespace', namespace: (await f.call('GET', '/namespaces/k1')).body.id, actions: ['read'] } });
  t.equal(byId.body.scope.namespace, 'k1', 'a namespace given by ID is shown by name');

  const got = await f.call('GET', `/keys/${r.body.id}`);
  t.equal(got.status, 200);
  t.notOk('secret' in got.body, 'get never shows the secret');
  const list = await f.call('GET', '/keys');
  t.notOk(list.body.items.some((k: any) => 'secret' in k), 'lists never show secrets');
  t.ok(list.body.items.some((k: any) => k.id === r.body.id));

  // The new key works, with either header.
  t.equal((await f.call('GET', '/namespaces/k1', undefined, bearer(r.body.secret))).status, 200);
  t.equal((await f.call('GET', '/namespaces/k1', undefined, { authorization: undefined, 'x-api-key': r.body.secret })).status, 200, 'X-API-Key works too');
  t.equal((await f.call('GET', '/namespaces/k1', undefined, bearer(r.body.id))).status, 401, 'the key ID is not a secret');
  t.equal((await f.call('GET', '/namespaces/k1', undefined, bearer(r.body.secret.slice(0, -1) + (r.body.secret.endsWith('A') ? 'B' : 'A')))).status, 401, 'one changed character');

  t.equal((await f.call('POST', '/keys', { name: 'reader', scope: { kind: 'collection', namespace: 'k1', collections: ['docs'], actions: ['read'] } })).body.error.code, 'already_exists', 'a name taken in the namespace');
  t.equal((await f.call('POST', '/keys', { name: 'cluster', scope: { kind: 'cluster' } })).body.error.code, 'already_exists', "the daemon's own key's name is taken");
  const cluster2 = await f.call('POST', '/keys', { name: 'ops', scope: { kind: 'cluster' } });
  t.equal(cluster2.status, 201, 'a cluster key may create cluster keys');
  t.equal((await f.call('DELETE', '/namespaces/k1', { force: true }, bearer(cluster2.body.secret))).status, 202, 'and they can do everything');
});

t.test('create: bad requests', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k2', 'docs');
  const bad: [string, unknown, string][] = [
    ['no body', undefined, 'invalid_request'],
    ['no scope', { name: 'x' }, 'invalid_request'],
    ['bad name', { name: 'Upper Case', scope: { kind: 'cluster' } }, 'invalid_request'],
    ['name too long', { name: 'a'.repeat(64), scope: { kind: 'cluster' } }, 'invalid_request'],
    ['unknown kind', { name: 'x', scope: { kind: 'tenant' } }, 'invalid_request'],
    ['empty actions', { name: 'x', scope: { kind: 'namespace', namespace: 'k2', actions: [] } }, 'invalid_request'],
    ['unknown action', { name: 'x', scope: { kind: 'namespace', namespace: 'k2', actions: ['admin'] } }, 'invalid_request'],
    ['no collections', { name: 'x', scope: { kind: 'collection', namespace: 'k2', collections: [], actions: ['read'] } }, 'invalid_request'],
    ['extra field', { name: 'x', scope: { kind: 'cluster', actions: ['read'] } }, 'invalid_request'],
    ['unknown top field', { name: 'x', scope: { kind: 'cluster' }, expires_at: '2030-01-01T00:00:00Z' }, 'invalid_request'],
    ['missing namespace', { name: 'x', scope: { kind: 'namespace', namespace: 'nope', actions: ['read'] } }, 'not_found'],
    ['missing collection', { name: 'x', scope: { kind: 'collection', namespace: 'k2', collections: ['docs', 'nope'], actions: ['read'] } }, 'not_found'],
  ];
  for (const [what, body, code] of bad) {
    const r = await f.call('POST', '/keys', body);
    t.equal(r.body.error?.code, code, what);
  }
  t.equal((await f.call('GET', '/keys')).body.items.length, 1, 'nothing was created');
});

t.test('namespace keys issue collection keys in their namespace only, with a subset of their actions', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k3', 'docs');
  await seedCollection(f, 'k3', 'wiki');
  await seedCollection(f, 'k3other', 'docs');
  const admin = await makeKey(f, 'k3-admin', { kind: 'namespace', namespace: 'k3', actions: ['write', 'search'] });
  const col = (actions: string[], collections = ['docs'], namespace = 'k3') => ({ kind: 'collection', namespace, collections, actions });
  const as = (body: unknown) => f.call('POST', '/keys', body, bearer(admin.secret));

  const ok = await as({ name: 'docs-reader', scope: col(['read', 'search']) });
  t.equal(ok.status, 201, 'write includes read, so read is within write+search');
  t.equal((await as({ name: 'docs-writer', scope: col(['write']) })).status, 201);
  const q = await as({ name: 'docs-query', scope: col(['query']) });
  t.equal(q.body.error.code, 'forbidden', 'query is not within write+search');
  t.equal((await as({ name: 'ns2', scope: { kind: 'namespace', namespace: 'k3', actions: ['read'] } })).body.error.code, 'forbidden', 'no namespace keys');
  t.equal((await as({ name: 'c2', scope: { kind: 'cluster' } })).body.error.code, 'forbidden', 'no cluster keys');
  t.equal((await as({ name: 'other', scope: col(['read'], ['docs'], 'k3other') })).body.error.code, 'not_found', 'another namespace is not found');

  const reader = ok.body;
  t.equal((await f.call('POST', '/keys', { name: 'from-col', scope: col(['read']) }, bearer(reader.secret))).body.error.code, 'forbidden', 'a collection key cannot issue keys');
  t.equal((await f.call('GET', '/keys', undefined, bearer(reader.secret))).body.error.code, 'forbidden', 'nor list them');

  // What each key sees.
  const clusterList = await f.call('GET', '/keys');
  t.same(clusterList.body.items.map((k: any) => k.name), ['cluster', 'k3-admin', 'docs-reader', 'docs-writer'], 'a cluster key sees every key, oldest first');
  const nsList = await f.call('GET', '/keys', undefined, bearer(admin.secret));
  t.same(nsList.body.items.map((k: any) => k.name), ['docs-reader', 'docs-writer'], 'a namespace key sees the collection keys of its namespace');
  const foreign = await makeKey(f, 'foreign-col', { kind: 'collection', namespace: 'k3other', collections: ['docs'], actions: ['read'] });
  t.equal((await f.call('GET', `/keys/${foreign.id}`, undefined, bearer(admin.secret))).status, 404, "another namespace's key is 404");
  t.equal((await f.call('GET', `/keys/${admin.id}`, undefined, bearer(admin.secret))).status, 404, 'a namespace key does not administer namespace keys, itself included');
  t.equal((await f.call('POST', `/keys/${foreign.id}:revoke`, undefined, bearer(admin.secret))).status, 404);
  t.equal((await f.call('GET', `/keys/${reader.id}`, undefined, bearer(admin.secret))).status, 200);

  // Paging, and cursors bound to their key.
  const p1 = await f.call('GET', '/keys?limit=2');
  t.equal(p1.body.items.length, 2);
  const p2 = await f.call('GET', `/keys?limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
  t.same(p2.body.items.map((k: any) => k.name), ['docs-reader', 'docs-writer']);
  const p3 = await f.call('GET', `/keys?limit=2&cursor=${encodeURIComponent(p2.body.next_cursor)}`);
  t.same(p3.body.items.map((k: any) => k.name), ['foreign-col']);
  t.equal(p3.body.next_cursor, null);
  t.equal((await f.call('GET', `/keys?cursor=${encodeURIComponent(p1.body.next_cursor)}`, undefined, bearer(admin.secret))).body.error.code, 'invalid_cursor', "another key's cursor");
  t.equal((await f.call('GET', '/keys?limit=0')).status, 400);
  t.equal((await f.call('GET', '/keys?limit=101')).status, 400);

  // The scope holds: the reader sees docs, not wiki.
  t.equal((await f.call('GET', '/namespaces/k3/collections/docs', undefined, bearer(reader.secret))).status, 200);
  t.equal((await f.call('GET', '/namespaces/k3/collections/wiki', undefined, bearer(reader.secret))).status, 404);
  t.same((await f.call('GET', '/namespaces/k3/collections', undefined, bearer(reader.secret))).body.items.map((c: any) => c.name), ['docs']);
});

t.test('revoke', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k4', 'docs');
  const admin = await makeKey(f, 'k4-admin', { kind: 'namespace', namespace: 'k4', actions: ['read', 'write'] });
  const child = await makeKey(f, 'k4-child', { kind: 'collection', namespace: 'k4', collections: ['docs'], actions: ['read'] }, admin.secret);
  t.equal((await f.call('GET', '/namespaces/k4', undefined, bearer(child.secret))).status, 200);
  const r1 = await f.call('POST', `/keys/${child.id}:revoke`, undefined, bearer(admin.secret));
  t.equal(r1.status, 200, 'a namespace key revokes collection keys of its namespace');
  t.match(r1.body.revoked_at, /^\d{4}-\d\d-\d\dT/);
  const r2 = await f.call('POST', `/keys/${child.id}:revoke`);
  t.equal(r2.status, 200, 'repeating it is a no-op');
  t.equal(r2.body.revoked_at, r1.body.revoked_at, 'the first revocation time stands');
  const after = await f.call('GET', '/namespaces/k4', undefined, bearer(child.secret));
  t.equal(after.status, 401, 'a revoked key gets 401 on its next request');
  t.equal(after.body.error.code, 'unauthenticated');
  t.equal((await f.call('GET', `/keys/${child.id}`)).body.revoked_at, r1.body.revoked_at, 'listed with revoked_at');

  const clusterId = (await f.call('GET', '/keys')).body.items.find((k: any) => k.name === 'cluster').id;
  t.equal((await f.call('POST', `/keys/${clusterId}:revoke`)).status, 400, "the daemon's own cluster key is not revoked through the API");
  t.equal((await f.call('POST', '/keys/key_doesnotexist:revoke')).status, 404);
  t.equal((await f.call('POST', '/keys/not-a-key:revoke')).status, 400);
  // The keys a revoked key issued go with it (found by an attack: they kept full access).
  const issued = await makeKey(f, 'k4-issued', { kind: 'collection', namespace: 'k4', collections: ['docs'], actions: ['read', 'write'] }, admin.secret);
  t.equal((await f.call('GET', '/namespaces/k4/collections/docs/files', undefined, bearer(issued.secret))).status, 200);
  const bystander = await makeKey(f, 'k4-bystander', { kind: 'collection', namespace: 'k4', collections: ['docs'], actions: ['read'] });
  t.equal((await f.call('POST', `/keys/${admin.id}:revoke`)).status, 200);
  t.equal((await f.call('GET', '/keys', undefined, bearer(admin.secret))).status, 401, 'revoked namespace key');
  t.equal((await f.call('GET', '/namespaces/k4', undefined, bearer(child.secret))).status, 401);
  t.equal((await f.call('GET', '/namespaces/k4/collections/docs/files', undefined, bearer(issued.secret))).status, 401, 'a key it issued is revoked with it');
  t.match((await f.call('GET', `/keys/${issued.id}`)).body.revoked_at, /^\d{4}-/, 'and listed as revoked');
  t.equal((await f.call('GET', '/namespaces/k4/collections/docs/files', undefined, bearer(bystander.secret))).status, 200, "a key the cluster key issued is not touched");
  // Cluster keys a revoked cluster key issued go too, and what they issued (found by a review).
  const ops = await makeKey(f, 'k4-ops', { kind: 'cluster' });
  const ops2 = await makeKey(f, 'k4-ops2', { kind: 'cluster' }, ops.secret);
  const grandchild = await makeKey(f, 'k4-grandchild', { kind: 'namespace', namespace: 'k4', actions: ['read'] }, ops2.secret);
  t.equal((await f.call('POST', `/keys/${ops.id}:revoke`)).status, 200);
  t.equal((await f.call('GET', '/namespaces/k4', undefined, bearer(ops2.secret))).status, 401, 'the cluster key it issued');
  t.equal((await f.call('GET', '/namespaces/k4', undefined, bearer(grandchild.secret))).status, 401, 'and the key that one issued');
});

t.test('secrets are stored hashed', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k5', 'docs');
  const k = await makeKey(f, 'stored', { kind: 'namespace', namespace: 'k5', actions: ['read'] });
  const row = (await f.rt.services.store.keys.byId(k.id))!;
  t.notOk(Object.values(row).some((v) => JSON.stringify(v ?? null).includes(k.secret)), 'no field of the stored key holds the secret');
  t.same(row.secret_hash, crypto.createHash('sha256').update(k.secret).digest(), 'its SHA-256 is stored');
  // And no byte of the SQLite engine's files does, WAL included.
  f.rt.db.pragma('wal_checkpoint(FULL)');
  for (const name of readdirSync(f.rt.dataDir).filter((n) => n.includes('.db') || n.endsWith('-wal'))) {
    t.notOk(readFileSync(join(f.rt.dataDir, name)).includes(k.secret), `${name} does not contain the secret`);
  }
});

t.test('secrets are compared in constant time, even for unknown prefixes', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  // keys.ts imports timingSafeEqual by name: node:crypto's named exports follow its module object
  // once syncBuiltinESMExports runs, so a counting wrapper needs no module mocking (and tap runs
  // without its mock loader, which cost every test file about a second).
  const cryptoModule = createRequire(import.meta.url)('node:crypto') as typeof crypto;
  const original = cryptoModule.timingSafeEqual;
  let calls = 0;
  cryptoModule.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls++;
    return original(a, b);
  };
  syncBuiltinESMExports();
  t.teardown(() => {
    cryptoModule.timingSafeEqual = original;
    syncBuiltinESMExports();
  });
  const ok = await authenticate(f.rt.services.store, 'test-cluster-key-0123456789abcdef');
  t.equal(ok.name, 'cluster');
  t.equal(calls, 1, 'a right secret is compared with timingSafeEqual');
  await t.rejects(authenticate(f.rt.services.store, 'test-cluster-key-0123456789abcdeX'));
  await t.rejects(authenticate(f.rt.services.store, 'trove_0000000000_unknownunknownunknownunknown'));
  t.equal(calls, 3, 'wrong secrets and unknown prefixes too, so timing does not tell them apart');
});

t.test('no secret reaches the daemon output', async (t) => {
  const clusterKey = 'log-test-cluster-key-' + crypto.randomBytes(12).toString('hex');
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'trove'), 'daemon', 'start', '--ephemeral', '--port', '0', '--json'], {
    env: { ...process.env, TROVE_CLUSTER_KEY: clusterKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start: ${output}`)), PATIENCE_MS);
    child.stdout.on('data', () => {
      const m = /"url":"([^"]+)"/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  const call = async (method: string, path: string, secret: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  await call('POST', '/namespaces', clusterKey, { name: 'logs' });
  const made = await call('POST', '/keys', clusterKey, { name: 'logged', scope: { kind: 'namespace', namespace: 'logs', actions: ['read'] } });
  t.equal(made.status, 201);
  const secret: string = made.body.secret;
  t.equal((await call('GET', '/namespaces/logs', secret)).status, 200);
  t.equal((await call('GET', '/namespaces/logs', secret + 'x')).status, 401);
  t.equal((await call('POST', '/namespaces', secret, { name: 'nope' })).status, 403);
  t.equal((await call('POST', `/keys/${made.body.id}:revoke`, clusterKey)).status, 200);
  const revoked = await call('GET', '/namespaces/logs', secret);
  t.equal(revoked.status, 401);
  t.notOk(JSON.stringify(revoked.body).includes(secret), 'error bodies do not echo the secret');
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  t.ok(output.length > 0, 'the daemon wrote output');
  t.notOk(output.includes(secret), 'the minted secret is not in the output');
  t.notOk(output.includes(clusterKey), 'the cluster key is not in the output');
  t.notOk(output.includes(secret.split('_').at(-1)!), 'not even its random part');
});

t.test("a collection key's namespace usage counts its own collections only", async (t) => {
  // Found by an attack: a key scoped to one collection saw the namespace's totals move when a file
  // was added to a collection it cannot see, and learnt its exact size.
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k9', 'mine');
  await seedCollection(f, 'k9', 'hidden');
  await addInline(f, '/namespaces/k9/collections/mine', '/a.txt', 'one visible file');
  await addInline(f, '/namespaces/k9/collections/hidden', '/b.txt', 'one hidden file of some length');
  const narrow = await makeKey(f, 'k9-narrow', { kind: 'collection', namespace: 'k9', collections: ['mine'], actions: ['read'] });
  const usage = async (secret?: string) => {
    const one = await f.call('GET', '/namespaces/k9', undefined, secret ? bearer(secret) : {});
    const listed = (await f.call('GET', '/namespaces', undefined, secret ? bearer(secret) : {})).body.items.find((n: any) => n.name === 'k9');
    t.same(listed.usage, one.body.usage, 'the list and the GET agree');
    return one.body.usage;
  };
  const mine = await usage(narrow.secret);
  t.match(mine, { collections: 1, files: 1 }, 'the collection key: its collection and its file');
  t.match(await usage(), { collections: 2, files: 2 }, 'the cluster key: both');
  await addInline(f, '/namespaces/k9/collections/hidden', '/c.txt', 'another hidden file');
  t.same(await usage(narrow.secret), mine, 'a file added where the key cannot see changes nothing it is shown');
});

t.test('lastUsedAt: when a key last authenticated a request, to the minute', async (t) => {
  // A contract audit found it always null (workspace-api.md, Workspace API key: lastUsedAt).
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k10', 'docs');
  const k = await makeKey(f, 'k10-user', { kind: 'namespace', namespace: 'k10', actions: ['read', 'search'] });
  const shown = async () => (await f.call('PATCH', `/v1/workspaces/k10/api-keys/${k.id}`, { name: 'k10-user' })).body.lastUsedAt;
  t.equal(await shown(), null, 'never used yet');
  const before = Date.now();
  t.equal((await f.call('GET', '/namespaces/k10', undefined, bearer(k.secret))).status, 200);
  await f.rt.write(() => undefined);
  const first = await shown();
  t.ok(first && Date.parse(first) >= before - 1000 && Date.parse(first) <= Date.now(), `set by its first request (${first})`);
  t.equal((await f.call('GET', '/namespaces/k10', undefined, bearer(k.secret))).status, 200);
  await f.rt.write(() => undefined);
  t.equal(await shown(), first, 'a request within the minute writes nothing more');
  const { noteKeyUse } = await import('../src/domain/keys.js');
  const later = Date.now() + 61_000;
  noteKeyUse(f.rt.services.store, { id: k.id, name: k.name, scope: { kind: 'namespace', namespace_id: '', actions: ['read'] } }, later);
  await f.rt.write(() => undefined);
  t.equal(await shown(), new Date(later).toISOString(), 'a minute on, the next use is recorded');
  t.notOk('last_used_at' in (await f.call('GET', `/keys/${k.id}`)).body, 'the data-plane key resource keeps its documented fields');
});

t.test('key names are unique within a namespace, not across them', async (t) => {
  // Found by an attack: with one global index, a key in one tenant learnt from a 409 that a name
  // was taken in another (and a workspace rename told the same).
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'k11a', 'docs');
  await seedCollection(f, 'k11b', 'docs');
  const adminA = await makeKey(f, 'k11a-admin', { kind: 'namespace', namespace: 'k11a', actions: ['read', 'search'] });
  await makeKey(f, 'deploy', { kind: 'namespace', namespace: 'k11b', actions: ['read'] });
  const mine = await f.call('POST', '/keys', { name: 'deploy', scope: { kind: 'collection', namespace: 'k11a', collections: ['docs'], actions: ['read'] } }, bearer(adminA.secret));
  t.equal(mine.status, 201, "a name taken in another namespace is free in this one: nothing tells it was taken");
  const again = await f.call('POST', '/keys', { name: 'deploy', scope: { kind: 'collection', namespace: 'k11a', collections: ['docs'], actions: ['search'] } }, bearer(adminA.secret));
  t.equal(`${again.status} ${again.body.error?.code}`, '409 already_exists', 'taken in the same namespace: 409');
  const other = await makeKey(f, 'other', { kind: 'collection', namespace: 'k11a', collections: ['docs'], actions: ['read'] });
  const renamed = await f.call('PATCH', `/v1/workspaces/k11a/api-keys/${other.id}`, { name: 'k11a-admin' });
  t.equal(`${renamed.status} ${renamed.body.error?.code}`, '409 already_exists', 'a rename onto a name of the same workspace: 409');
  t.equal((await f.call('PATCH', `/v1/workspaces/k11a/api-keys/${other.id}`, { name: 'k11a-spare' })).status, 200);
  await makeKey(f, 'ops', { kind: 'cluster' });
  t.equal((await f.call('POST', '/keys', { name: 'ops', scope: { kind: 'cluster' } })).status, 409, 'cluster keys share one set of names');
  t.equal((await f.call('POST', '/keys', { name: 'ops', scope: { kind: 'namespace', namespace: 'k11b', actions: ['read'] } })).status, 201, 'which namespace keys do not share');
  t.equal((await f.call('POST', '/keys', { name: 'cluster', scope: { kind: 'namespace', namespace: 'k11b', actions: ['read'] } })).status, 409, "the daemon's own key's name stays reserved");
});
