// Restores (workspace-api.md: POST .../buckets/{bucketId}/restore and POST .../restore; decisions.md
// §5): a deleted bucket comes back whole, without reindexing, within its recovery window; workspace
// restore belongs to the operator channel, so every API key gets 403.
import t from 'tap';
import { addInline, seedCollection, startFixture } from './helpers/trove.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

t.test('a deleted bucket is restored whole, within its recovery window', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'rs1', 'docs');
  await addInline(f, base, '/a.md', '# A\n\nrestorable harbour notes');
  await f.waitForIdle(ns, col);
  const before = (await f.call('GET', base)).body;
  t.equal((await f.call('DELETE', base)).status, 202);
  t.equal((await f.call('GET', base)).status, 404, 'deleted: hidden at once');

  const reader = (await f.call('POST', '/keys', { name: 'rs1-read', scope: { kind: 'namespace', namespace: 'rs1', actions: ['read'] } })).body.secret;
  t.equal((await f.call('POST', '/v1/workspaces/rs1/buckets/docs/restore', undefined, bearer(reader))).status, 403, 'a viewer cannot restore');
  const other = (await f.call('POST', '/keys', { name: 'rs1-other', scope: { kind: 'namespace', namespace: (await seedCollection(f, 'rs1other', 'x')).ns, actions: ['write'] } })).body.secret;
  t.equal((await f.call('POST', '/v1/workspaces/rs1/buckets/docs/restore', undefined, bearer(other))).status, 404, 'another workspace is out of scope');

  const restored = await f.call('POST', `/v1/workspaces/rs1/buckets/${before.id}/restore`);
  t.equal(restored.status, 200);
  t.match(restored.body, { id: before.id, name: 'docs', status: 'ready', index_generation: before.index_generation }, 'the same collection, index untouched');
  const r = await f.call('POST', `${base}:search`, { query: 'restorable harbour', mode: 'keyword' });
  t.equal(r.body.results[0]?.path, '/a.md', 'searchable again without reindexing');
  t.equal((await f.call('POST', '/v1/workspaces/rs1/buckets/docs/restore')).status, 404, 'nothing left to restore');

  // A live bucket took the name: restoring would clash.
  await f.call('DELETE', base);
  await seedCollection(f, 'rs1', 'docs');
  t.equal((await f.call('POST', `/v1/workspaces/rs1/buckets/${before.id}/restore`)).body.error.code, 'already_exists');

  // Past the recovery window it is gone for restores.
  const { base: old } = await seedCollection(f, 'rs1', 'old');
  await f.call('DELETE', old);
  await f.rt.write(() => f.rt.db.prepare("UPDATE collections SET deleted_at = ? WHERE name = 'old'").run(new Date(Date.now() - 8 * 86_400_000).toISOString()));
  t.equal((await f.call('POST', '/v1/workspaces/rs1/buckets/old/restore')).status, 404, 'older than 7 days');
});

t.test('files waiting to index when the bucket was deleted are indexed after the restore', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'rs2', 'docs');
  await addInline(f, base, '/late.md', 'indexed after the restore');
  await f.call('DELETE', base);
  // The delete job cancels the file's index job when it runs; do what it does here (no indexer).
  await f.rt.write(() => f.rt.db.prepare("UPDATE jobs SET status = 'canceled' WHERE type = 'index_file'").run());
  t.equal((await f.call('POST', '/v1/workspaces/rs2/buckets/docs/restore')).status, 200);
  const queued = f.rt.db.prepare("SELECT count(*) AS n FROM jobs WHERE type = 'index_file' AND status = 'queued'").get() as { n: number };
  t.equal(queued.n, 1, 'its index job is queued again');
});

t.test('workspace restore is refused to every API key (operator channel only)', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns } = await seedCollection(f, 'rs3', 'docs');
  await f.call('DELETE', `/namespaces/${ns}`, { force: true });
  const asCluster = await f.call('POST', '/v1/workspaces/rs3/restore');
  t.equal(`${asCluster.status} ${asCluster.body.error.code}`, '403 forbidden', 'even the cluster key');
  t.match(asCluster.body.error.message, /operator channel/);
  t.equal((await f.call('POST', '/v1/workspaces/rs3/restore', undefined, { authorization: undefined })).status, 401, 'no key: 401');
  t.equal((await f.call('POST', '/v1/workspaces/rs3/restore', undefined, bearer('trove_nope_xxxxxxxxxxxxxxxxxxxxxxxxx'))).status, 401);
});

t.test('PATCH a workspace API key: name, role within the caller\'s, bucket list, never the kind', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'wk', 'docs');
  await seedCollection(f, 'wk', 'wiki');
  const docsId = (await f.call('GET', '/namespaces/wk/collections/docs')).body.id;
  const nsKey = (await f.call('POST', '/keys', { name: 'wk-editor', scope: { kind: 'namespace', namespace: 'wk', actions: ['write', 'search', 'query'] } })).body;
  const colKey = (await f.call('POST', '/keys', { name: 'wk-col', scope: { kind: 'collection', namespace: 'wk', collections: ['docs'], actions: ['read'] } })).body;
  const patch = (id: string, body: unknown, as?: string) => f.call('PATCH', `/v1/workspaces/wk/api-keys/${id}`, body, as ? bearer(as) : {});

  const renamed = await patch(colKey.id, { name: 'wk-reader', role: 'viewer' });
  t.equal(renamed.status, 200);
  t.match(renamed.body, { id: colKey.id, name: 'wk-reader', role: 'viewer', kind: 'collection', bucketScope: { mode: 'selected', bucketIds: [docsId] }, accessKeyId: colKey.prefix, revision: 2, revokedAt: null });
  const moved = await patch(colKey.id, { bucketScope: { mode: 'selected', bucketIds: ['wiki', docsId] } });
  t.equal(moved.body.bucketScope.bucketIds.length, 2, 'the bucket list is replaced (IDs or names)');
  t.same((await f.call('GET', `/keys/${colKey.id}`)).body.scope.collections, ['wiki', 'docs'], 'the /keys view agrees');
  t.equal((await patch(colKey.id, { bucketScope: { mode: 'all' } })).body.error.code, 'invalid_request', 'a collection key cannot become a namespace key');
  t.equal((await patch(nsKey.id, { bucketScope: { mode: 'selected', bucketIds: ['docs'] } })).body.error.code, 'invalid_request', 'nor the reverse');
  t.equal((await patch(colKey.id, { bucketScope: { mode: 'selected', bucketIds: ['nope'] } })).status, 404);
  t.equal((await patch(colKey.id, { name: 'Bad Name' })).status, 400);
  t.equal((await patch(colKey.id, { name: 'wk-editor' })).body.error.code, 'already_exists');

  // An editor (namespace key) may edit its workspace's collection keys up to its own role.
  t.equal((await patch(colKey.id, { role: 'editor' }, nsKey.secret)).status, 200);
  const tooHigh = await patch(colKey.id, { role: 'admin' }, nsKey.secret);
  t.equal(`${tooHigh.status} ${tooHigh.body.error.code}`, '403 forbidden', "not beyond the caller's role");
  t.equal((await patch(nsKey.id, { name: 'x-y' }, nsKey.secret)).status, 404, 'a namespace key does not edit namespace keys');
  t.equal((await patch(colKey.id, { name: 'x-y' }, colKey.secret)).status, 403, 'a collection key edits no key');
  const otherNs = await seedCollection(f, 'wk2', 'docs');
  t.equal((await f.call('PATCH', `/v1/workspaces/${otherNs.ns}/api-keys/${colKey.id}`, { name: 'zz' })).status, 404, "another workspace's key is not found");
  t.equal((await f.call('GET', `/keys/${colKey.id}`)).body.name, 'wk-reader', 'refused edits changed nothing');
});

t.test('after the recovery window the sweeper purges deleted data for good', async (t) => {
  const { purgeExpired } = await import('../src/domain/restore.js');
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'pg', 'docs');
  const keep = await seedCollection(f, 'pg', 'keep');
  await addInline(f, base, '/a.md', '# A\n\npurged words');
  const up = await f.call('POST', `${base}/files`, { path: '/up.txt', source: { type: 'upload', content_type: 'text/plain' } });
  const put = await f.raw('PUT', new URL(up.body.upload.url).pathname, 'uploaded purged bytes', { 'content-type': 'text/plain', authorization: undefined });
  t.equal(put.status, 200);
  await addInline(f, keep.base, '/k.md', 'kept words');
  await f.waitForIdle(ns, col);
  await f.waitForIdle(keep.ns, keep.col);
  const colRid = (f.rt.db.prepare("SELECT rid FROM collections WHERE name = 'docs'").get() as { rid: number }).rid;
  const sha = (f.rt.db.prepare('SELECT blob_sha256 AS b FROM file_versions WHERE blob_sha256 IS NOT NULL').get() as { b: string }).b;
  t.ok(await f.rt.services.blobs.exists(sha), 'the uploaded bytes are stored');
  // Both collections' keyword rows and vectors are keyed rows of the shared tables.
  const keepRid = (f.rt.db.prepare("SELECT rid FROM collections WHERE name = ?").get(keep.col) as { rid: number }).rid;
  const indexed = (rid: number) => ({
    keyword: (f.rt.db.prepare("SELECT count(*) AS n FROM fts_shared_instances WHERE term >= ? AND term < ?").get(`${rid}:`, `${rid};`) as { n: number }).n,
    lengths: (f.rt.db.prepare('SELECT count(*) AS n FROM fts_shared_docsize WHERE id IN (SELECT p.rid FROM passages p JOIN files f ON f.rid = p.file_rid WHERE f.collection_rid = ?)').get(rid) as { n: number }).n,
    vectors: (f.rt.db.prepare('SELECT count(*) AS n FROM vec_shared WHERE collection_rid = ?').get(rid) as { n: number }).n,
  });
  const keptBefore = indexed(keepRid);
  t.ok(indexed(colRid).keyword > 0 && indexed(colRid).lengths > 0 && indexed(colRid).vectors > 0, 'the collection has keyword rows and vectors');
  t.ok(keptBefore.keyword > 0 && keptBefore.vectors > 0, 'so has the other one');
  const schema = f.rt.db.pragma('schema_version', { simple: true });
  await f.call('DELETE', base);

  t.same(await purgeExpired(f.rt.services), { collections: 0, namespaces: 0 }, 'inside the window nothing is purged');
  await f.rt.write(() => f.rt.db.prepare('UPDATE collections SET deleted_at = ? WHERE rid = ?').run(new Date(Date.now() - 8 * 86_400_000).toISOString(), colRid));
  t.same(await purgeExpired(f.rt.services), { collections: 1, namespaces: 0 });
  const count = (sql: string) => (f.rt.db.prepare(sql).get(colRid) as { n: number }).n;
  t.equal(count('SELECT count(*) AS n FROM collections WHERE rid = ?'), 0, 'the collection row is gone');
  t.equal(count('SELECT count(*) AS n FROM files WHERE collection_rid = ?'), 0, 'its files');
  t.same(indexed(colRid), { keyword: 0, lengths: 0, vectors: 0 }, 'its keyword rows and vectors');
  t.same(indexed(keepRid), keptBefore, "and only its: the other collection's are all there");
  t.equal(f.rt.db.pragma('schema_version', { simple: true }), schema, 'a purge drops no table');
  t.notOk(await f.rt.services.blobs.exists(sha), 'and the bytes no other file uses');
  t.equal((await f.call('POST', '/v1/workspaces/pg/buckets/docs/restore')).status, 404, 'no longer restorable');
  const kept = await f.call('POST', `${keep.base}:search`, { query: 'kept words', mode: 'keyword' });
  t.equal(kept.body.results[0]?.path, '/k.md', 'other collections are untouched');

  // A whole namespace past its window goes too, with its collections.
  await f.call('DELETE', '/namespaces/pg', { force: true });
  await f.rt.write(() => f.rt.db.prepare("UPDATE namespaces SET deleted_at = ? WHERE name = 'pg'").run(new Date(Date.now() - 8 * 86_400_000).toISOString()));
  t.same(await purgeExpired(f.rt.services), { collections: 1, namespaces: 1 });
  t.equal((f.rt.db.prepare("SELECT count(*) AS n FROM namespaces WHERE name = 'pg'").get() as { n: number }).n, 0);
});

t.test("a purge keeps uploaded bytes another collection's file still uses, and removes them with the last", async (t) => {
  const { purgeExpired } = await import('../src/domain/restore.js');
  const f = await startFixture();
  t.teardown(() => f.close());
  const first = await seedCollection(f, 'sb', 'first');
  const second = await seedCollection(f, 'sb', 'second');
  for (const { base } of [first, second]) {
    const up = await f.call('POST', `${base}/files`, { path: '/same.txt', source: { type: 'upload', content_type: 'text/plain' } });
    t.equal((await f.raw('PUT', new URL(up.body.upload.url).pathname, 'the same uploaded bytes', { 'content-type': 'text/plain', authorization: undefined })).status, 200);
  }
  await f.waitForIdle(first.ns, first.col);
  await f.waitForIdle(second.ns, second.col);
  const store = f.rt.services.store;
  // The conformance suite cannot make file versions; their blob is read here, on SQLite.
  const shas = f.rt.db.prepare('SELECT DISTINCT blob_sha256 AS b FROM file_versions WHERE blob_sha256 IS NOT NULL').all() as { b: string }[];
  t.equal(shas.length, 1, 'both files keep one blob');
  const sha = shas[0]!.b;
  t.equal(await store.retention.blobInUse(sha), true, 'in use');
  const expire = (name: string) => f.rt.write(() => f.rt.db.prepare('UPDATE collections SET deleted_at = ? WHERE name = ?').run(new Date(Date.now() - 8 * 86_400_000).toISOString(), name));
  const passagesOf = (name: string) => (f.rt.db.prepare('SELECT count(*) AS n FROM passages p JOIN files f ON f.rid = p.file_rid JOIN collections c ON c.rid = f.collection_rid WHERE c.name = ?').get(name) as { n: number }).n;
  t.ok(passagesOf('first') > 0 && passagesOf('second') > 0, 'both files were indexed');

  await f.call('DELETE', first.base);
  await expire('first');
  t.same(await purgeExpired(f.rt.services), { collections: 1, namespaces: 0 });
  t.equal(passagesOf('first'), 0, "the purged collection's passages are gone");
  t.ok(passagesOf('second') > 0, "the other collection's stay");
  t.equal(await store.retention.blobInUse(sha), true, 'the other file still uses the bytes');
  t.ok(await f.rt.services.blobs.exists(sha), 'so they stay');

  await f.call('DELETE', second.base);
  await expire('second');
  t.same(await purgeExpired(f.rt.services), { collections: 1, namespaces: 0 });
  t.equal(await store.retention.blobInUse(sha), false, 'no version uses them now');
  t.notOk(await f.rt.services.blobs.exists(sha), 'and they are removed');
});

t.test('a deleted workspace is restored whole by the operator-side function', async (t) => {
  const { restoreWorkspace } = await import('../src/domain/restore.js');
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'rw', 'docs');
  await addInline(f, base, '/a.md', 'workspace words');
  await f.waitForIdle(ns, col);
  const id = (await f.call('GET', '/namespaces/rw')).body.id;
  await f.call('DELETE', '/namespaces/rw', { force: true });
  t.equal((await f.call('GET', '/namespaces/rw')).status, 404);
  t.equal((await f.call('POST', `/v1/workspaces/${id}/restore`)).status, 403, 'never through an API key');
  t.same(await restoreWorkspace(f.rt.services, 'rw'), { id }, 'the same workspace ID');
  t.equal((await f.call('GET', '/namespaces/rw/collections/docs')).body.status, 'ready', 'with its collections, unindexed nothing');
  const r = await f.call('POST', `${base}:search`, { query: 'workspace words', mode: 'keyword' });
  t.equal(r.body.results[0]?.path, '/a.md');
  await t.rejects(() => restoreWorkspace(f.rt.services, 'rw'), { code: 'not_found' }, 'nothing left to restore');
});
