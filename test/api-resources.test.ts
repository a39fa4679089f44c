// Conformance of namespaces, collections, files and jobs to retrieval-api.md and decisions.md §2-3:
// success shapes and statuses, error codes, state rules, cursors.
import t from 'tap';
import { z } from 'zod';
import * as S from '../src/contract/schemas.js';
import { signCursor } from '../src/domain/cursors.js';
import { computeChecksum } from '../src/domain/ingest/checksum.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

function conforms(tt: { ok: (value: unknown, message: string) => unknown }, schema: z.ZodType, value: unknown, what: string) {
  const r = schema.safeParse(value);
  tt.ok(r.success, `${what} matches the contract${r.success ? '' : ': ' + JSON.stringify(r.error.issues.slice(0, 3))}`);
}


let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

t.test('namespaces: create, exist_ok, conflict, get by id and name, patch, list, delete', async (t) => {
  const created = await f.call('POST', '/namespaces', { name: 'alpha', display_name: 'Alpha' });
  t.equal(created.status, 201);
  t.equal(created.headers.location, `/namespaces/${created.body.id}`);
  conforms(t, S.NamespaceSchema, created.body, 'namespace');
  t.match(created.body, { name: 'alpha', display_name: 'Alpha', usage: { collections: 0, files: 0, source_bytes: '0', index_bytes: '0' } });

  const again = await f.call('POST', '/namespaces', { name: 'alpha', exist_ok: true });
  t.equal(again.status, 200, 'exist_ok returns the existing namespace with 200');
  t.equal(again.body.id, created.body.id);
  const conflict = await f.call('POST', '/namespaces', { name: 'alpha' });
  t.equal(conflict.status, 409);
  t.equal(conflict.body.error.code, 'already_exists');

  for (const ref of [created.body.id, 'alpha']) {
    const got = await f.call('GET', `/namespaces/${ref}`);
    t.equal(got.status, 200);
    t.equal(got.body.id, created.body.id);
  }
  const patched = await f.call('PATCH', '/namespaces/alpha', { display_name: null });
  t.equal(patched.status, 200);
  t.equal(patched.body.display_name, null);
  t.equal((await f.call('PATCH', '/namespaces/alpha', { display_name: 'x', name: 'beta' })).body.error.code, 'invalid_request', 'name is immutable: unknown field');
  t.equal((await f.call('PATCH', '/namespaces/alpha', {})).body.error.code, 'invalid_request', 'display_name is required');

  for (const bad of ['Alpha', 'a'.repeat(64), '-x', 'ns_abc', 'has space', '']) {
    const r = await f.call('POST', '/namespaces', { name: bad });
    t.equal(r.body.error?.code, 'invalid_request', `name ${JSON.stringify(bad)} is refused`);
  }

  await f.call('POST', '/namespaces', { name: 'gamma' });
  const page1 = await f.call('GET', '/namespaces?limit=1');
  t.equal(page1.status, 200);
  t.equal(page1.body.items.length, 1);
  t.type(page1.body.next_cursor, 'string');
  const page2 = await f.call('GET', `/namespaces?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
  t.equal(page2.status, 200);
  t.not(page2.body.items[0].id, page1.body.items[0].id, 'the cursor moves on');

  await f.call('POST', '/namespaces/gamma/collections', { name: 'c1' });
  const refused = await f.call('DELETE', '/namespaces/gamma');
  t.equal(refused.status, 400, 'a namespace with collections needs force');
  const deleted = await f.call('DELETE', '/namespaces/gamma', { force: true });
  t.equal(deleted.status, 202);
  t.match(deleted.body.job, { type: 'delete_namespace', namespace: 'gamma' });
  t.equal((await f.call('GET', '/namespaces/gamma')).status, 404, 'a deleted namespace is gone at once');
  t.equal((await f.call('GET', '/namespaces/gamma/collections/c1')).status, 404);
  t.equal((await f.call('POST', '/namespaces', { name: 'gamma' })).status, 201, 'the name can be reused');
});

t.test('collections: defaults, processing validation, patch, reindex, delete', async (t) => {
  await f.call('POST', '/namespaces', { name: 'cols' });
  const created = await f.call('POST', '/namespaces/cols/collections', { name: 'docs' });
  t.equal(created.status, 201);
  t.equal(created.headers.location, `/namespaces/${(await f.call('GET', '/namespaces/cols')).body.id}/collections/${created.body.id}`);
  conforms(t, S.CollectionSchema, created.body, 'collection');
  t.match(created.body, {
    namespace: 'cols',
    status: 'empty',
    access_control: 'off',
    index_generation: null,
    processing: { keyword: true, semantic: true, ocr: true },
    file_counts: { pending: 0, indexing: 0, ready: 0, failed: 0 },
  });
  t.equal((await f.call('POST', '/namespaces/cols/collections', { name: 'docs', exist_ok: true })).status, 200);
  // exist_ok never hands an open collection to a caller who asked for access rules (found by a
  // bad-input attack: it answered 200 with access_control off); the safe way round is fine.
  await f.call('POST', '/namespaces', { name: 'cols-exist' });
  await f.call('POST', '/namespaces/cols-exist/collections', { name: 'open-one' });
  const enforcedAsked = await f.call('POST', '/namespaces/cols-exist/collections', { name: 'open-one', exist_ok: true, access_control: 'enforced' });
  t.equal(`${enforcedAsked.status} ${enforcedAsked.body.error?.code}`, '409 already_exists', 'enforced asked, open found: 409');
  t.match(enforcedAsked.body.error.message, /access_control 'off'/);
  await f.call('POST', '/namespaces/cols-exist/collections', { name: 'closed-one', access_control: 'enforced' });
  const openAsked = await f.call('POST', '/namespaces/cols-exist/collections', { name: 'closed-one', exist_ok: true });
  t.equal(openAsked.status, 200, 'open asked, enforced found: the stricter collection is returned');
  t.equal(openAsked.body.access_control, 'enforced');
  t.equal((await f.call('POST', '/namespaces/cols/collections', { name: 'docs' })).body.error.code, 'already_exists');
  t.equal((await f.call('POST', '/namespaces/cols/collections', { name: 'x', processing: { colour: 'red' } })).body.error.code, 'invalid_request', 'unknown processing field');
  t.equal((await f.call('POST', '/namespaces/cols/collections', { name: 'x', processing: { chunk_tokens: 10 } })).body.error.code, 'invalid_request', 'chunk_tokens below 64');
  t.equal((await f.call('POST', '/namespaces/cols/collections', { name: 'x', access_control: 'sometimes' })).body.error.code, 'invalid_request');
  t.equal((await f.call('POST', '/namespaces/nope/collections', { name: 'x' })).status, 404);

  const label = await f.call('PATCH', '/namespaces/cols/collections/docs', { display_name: 'Docs' });
  t.equal(label.status, 200);
  t.equal(label.body.display_name, 'Docs');
  const rechunk = await f.call('PATCH', '/namespaces/cols/collections/docs', { processing: { chunk_tokens: 128 } });
  t.equal(rechunk.status, 202, 'a chunking change needs a reindex');
  t.equal(rechunk.body.job.type, 'reindex_collection');
  t.equal(rechunk.body.collection.processing.chunk_tokens, 128);
  // A PATCH changes the processing fields it sends; the others keep their values (a contract audit
  // found `{chunk_overlap}` alone turning keyword and OCR back on and dropping chunk_tokens).
  await f.call('POST', '/namespaces/cols-exist/collections', { name: 'proc', processing: { keyword: false, semantic: true, ocr: false, chunk_tokens: 200 } });
  const partial = await f.call('PATCH', '/namespaces/cols-exist/collections/proc', { processing: { chunk_overlap: 10 } });
  t.equal(partial.status, 202, 'an overlap change needs a reindex');
  t.same(partial.body.collection.processing, { keyword: false, semantic: true, ocr: false, chunk_tokens: 200, chunk_overlap: 10 }, 'only chunk_overlap changed');
  const tooWide = await f.call('PATCH', '/namespaces/cols-exist/collections/proc', { processing: { chunk_overlap: 300 } });
  t.match(tooWide.body.error, { code: 'invalid_request', message: /chunk_overlap must be smaller than chunk_tokens/ }, 'checked against the chunk_tokens it keeps');
  t.equal((await f.call('PATCH', '/namespaces/cols-exist/collections/proc', { processing: { colour: 'red' } })).body.error?.code, 'invalid_request', 'an unknown field is still refused');
  const label2 = await f.call('PATCH', '/namespaces/cols-exist/collections/proc', { processing: { ocr: true } });
  t.same(label2.body.processing ?? label2.body.collection?.processing, { keyword: false, semantic: true, ocr: true, chunk_tokens: 200, chunk_overlap: 10 });

  const reindex = await f.call('POST', `/namespaces/cols/collections/${created.body.id}:reindex`);
  t.equal(reindex.status, 202);
  // An empty JSON object holds no unknown field: a route without a body takes it (many SDKs send
  // `{}` on every POST; a contract audit found it refused). Anything in it is still refused.
  t.equal((await f.call('POST', `/namespaces/cols/collections/${created.body.id}:reindex`, {})).status, 202, 'an empty JSON object as the body');
  t.equal((await f.raw('POST', `/namespaces/cols/collections/${created.body.id}:reindex`, ' { } ', { 'content-type': 'application/json' })).status, 202, 'with spaces');
  t.equal((await f.call('POST', `/namespaces/cols/collections/${created.body.id}:reindex`, { force: true })).body.error?.code, 'invalid_request', 'a field in it is still refused');
  t.equal((await f.raw('POST', `/namespaces/cols/collections/${created.body.id}:reindex`, '{}', { 'content-type': 'text/plain' })).body.error?.code, 'invalid_request', 'and so is `{}` sent as something else than JSON');
  t.equal(reindex.body.job.type, 'reindex_collection');

  const list = await f.call('GET', '/namespaces/cols/collections');
  t.equal(list.status, 200);
  t.same(list.body.items.map((c: { name: string }) => c.name), ['docs']);

  const del = await f.call('DELETE', '/namespaces/cols/collections/docs');
  t.equal(del.status, 202);
  t.equal(del.body.job.type, 'delete_collection');
  t.equal((await f.call('GET', '/namespaces/cols/collections/docs')).status, 404);
  const job = await waitForJob(f, del.body.job.id);
  t.equal(job.status, 'succeeded');
});

async function waitForJob(fx: Fixture, id: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await fx.call('GET', `/jobs/${id}`);
    if (['succeeded', 'failed', 'canceled'].includes(r.body.status)) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job ${id} did not finish`);
}

t.test('files: sources, statuses, get by id and path, patch, delete, content', async (t) => {
  const { base } = await seedCollection(f, 'files', 'docs');
  const added = await addInline(f, base, '/guide/intro.md', '# Intro\n\nTrove keeps files.', 'text/markdown', { team: 'core' });
  t.equal(added.status, 202);
  conforms(t, z.object({ file: S.FileSchema, job: S.JobSchema }), added.body, 'add-file response');
  t.match(added.body.file, { path: '/guide/intro.md', status: 'pending', source: { type: 'inline', content_type: 'text/markdown', bytes: 27 }, metadata: { team: 'core' } });
  t.notOk('text' in added.body.file.source, 'inline text is never returned');
  t.match(added.body.job, { type: 'index_file', status: 'queued', namespace: 'files', collection: 'docs', file_id: added.body.file.id });

  const col = await f.waitForIdle('files', 'docs');
  t.equal(col.status, 'ready');
  t.equal(col.file_counts.ready, 1);
  t.type(col.index_generation, 'string');

  const byId = await f.call('GET', `${base}/files/${added.body.file.id}`);
  const byPath = await f.call('GET', `${base}/files/${encodeURIComponent('/guide/intro.md')}`);
  t.equal(byId.status, 200);
  t.equal(byId.body.status, 'ready');
  t.same(byPath.body, byId.body, 'a file is reachable by ID and by encoded path');
  t.equal((await f.call('GET', `${base}/files/${encodeURIComponent('/missing.md')}`)).status, 404);
  t.equal((await f.call('GET', `${base}/files/fil_doesnotexist`)).status, 404);

  const job = await f.call('GET', `/jobs/${added.body.job.id}`);
  t.equal(job.body.status, 'succeeded');
  conforms(t, S.JobSchema, job.body, 'job');

  const meta = await f.call('PATCH', `${base}/files/${added.body.file.id}`, { metadata: { team: 'docs', rank: 2 } });
  t.equal(meta.status, 200, 'a metadata change is synchronous');
  t.same(meta.body.metadata, { team: 'docs', rank: 2 });
  const resourced = await f.call('PATCH', `${base}/files/${added.body.file.id}`, { source: { type: 'inline', text: 'Replaced text about otters.' } });
  t.equal(resourced.status, 202, 'a source change reindexes');
  t.equal(resourced.body.job.type, 'index_file');
  await f.waitForIdle('files', 'docs');
  const found = await f.call('POST', `${base}:search`, { query: 'otters', mode: 'keyword' });
  t.equal(found.body.results[0]?.path, '/guide/intro.md', 'the new version is searchable');
  const stale = await f.call('POST', `${base}:search`, { query: 'keeps', mode: 'keyword' });
  t.equal(stale.body.results.length, 0, 'the old version is not');

  const content = await f.call('GET', `${base}/files/${added.body.file.id}/content`);
  t.equal(content.status, 200);
  conforms(t, S.FileContentResponse, content.body, 'content response');
  const token = new URL(content.body.url).pathname;
  const download = await f.raw('GET', token, null, { authorization: undefined });
  t.equal(download.status, 200);
  t.equal(download.text, 'Replaced text about otters.');
  t.equal((await f.raw('GET', token + 'x', null)).status, 404, 'a tampered signed URL is refused');

  const upsert = await addInline(f, base, '/guide/intro.md', 'Third version.');
  t.equal(upsert.body.file.id, added.body.file.id, 'adding to a taken path makes a new version of the same file');

  const del = await f.call('DELETE', `${base}/files/${added.body.file.id}`);
  t.equal(del.status, 202);
  t.equal(del.body.job.type, 'delete_file');
  t.equal((await f.call('GET', `${base}/files/${added.body.file.id}`)).status, 404);
  const listed = await f.call('GET', `${base}/files`);
  t.equal(listed.body.items.length, 0, 'files being deleted are omitted from lists');
});

t.test('files: upload sources, checksums and size checks', async (t) => {
  const { base } = await seedCollection(f, 'uploads', 'docs');
  const bytes = 'Uploaded bytes mention zeppelins.';
  const sha = (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
  const added = await f.call('POST', `${base}/files`, { path: '/u.txt', source: { type: 'upload', content_type: 'text/plain', bytes: bytes.length, checksum: `sha256:${sha}` } });
  t.equal(added.status, 202);
  conforms(t, S.UploadInstructions, added.body.upload, 'upload instructions');
  t.equal(added.body.upload.method, 'PUT');
  const pending = await f.call('GET', `${base}/files/${added.body.file.id}/content`);
  t.equal(pending.body.error.code, 'operation_in_progress', 'a pending upload has no content yet');
  t.equal(pending.body.error.retryable, true);

  // Mismatched bytes fail the file (the next test); these are the right ones.
  const url = new URL(added.body.upload.url).pathname;
  const ok = await f.raw('PUT', url, bytes, { authorization: undefined });
  t.equal(ok.status, 200, 'the declared bytes are accepted');
  t.equal((await f.raw('PUT', url, bytes, { authorization: undefined })).status, 400, 'a signed upload URL is single use');
  await f.waitForIdle('uploads', 'docs');
  const r = await f.call('POST', `${base}:search`, { query: 'zeppelins', mode: 'keyword' });
  t.equal(r.body.results[0]?.path, '/u.txt');

  // An inline checksum cannot be declared, but a uri source's can: a mismatch fails the file.
  const dir = (await import('node:fs')).mkdtempSync((await import('node:path')).join((await import('node:os')).tmpdir(), 'trove-src-'));
  (await import('node:fs')).writeFileSync(`${dir}/a.txt`, 'file source text');
  const g = await startFixture({ fileRoots: [dir] });
  t.teardown(() => g.close());
  const gb = (await seedCollection(g, 'n', 'c')).base;
  const good = await g.call('POST', `${gb}/files`, { path: '/a.txt', source: { type: 'uri', uri: `file://${dir}/a.txt` } });
  t.equal(good.status, 202);
  const bad = await g.call('POST', `${gb}/files`, { path: '/b.txt', source: { type: 'uri', uri: `file://${dir}/a.txt`, checksum: `md5:${'0'.repeat(32)}` } });
  t.equal(bad.status, 202);
  const badSize = await g.call('POST', `${gb}/files`, { path: '/e.txt', source: { type: 'uri', uri: `file://${dir}/a.txt`, bytes: 3 } });
  t.equal(badSize.status, 202);
  const outside = await g.call('POST', `${gb}/files`, { path: '/c.txt', source: { type: 'uri', uri: 'file:///etc/passwd' } });
  t.equal(outside.body.error.code, 'invalid_request', 'file:// outside an allowed root is refused');
  const ftp = await g.call('POST', `${gb}/files`, { path: '/d.txt', source: { type: 'uri', uri: 'ftp://example.com/x' } });
  t.equal(ftp.body.error.code, 'invalid_request');
  const col = await g.waitForIdle('n', 'c');
  t.equal(col.status, 'degraded', 'one ready and one failed file: degraded');
  const failed = await g.call('GET', `${gb}/files/${bad.body.file.id}`);
  t.match(failed.body, { status: 'failed', error: { code: 'source_mismatch' } });
  t.match((await g.call('GET', `/jobs/${bad.body.job.id}`)).body, { status: 'failed', error: { code: 'source_mismatch' } }, 'and its job');
  t.match((await g.call('GET', `${gb}/files/${badSize.body.file.id}`)).body, { status: 'failed', error: { code: 'source_mismatch' } }, 'a uri source of another size than declared');
  const ext = await g.call('GET', `${gb}/files/${good.body.file.id}/content`);
  t.equal(ext.body.error.code, 'external_source');
});

t.test('files: an upload whose bytes contradict the declared checksum or size fails the file with source_mismatch', async (t) => {
  // retrieval-api.md, File.source.checksum: "A mismatch fails processing with code source_mismatch";
  // decisions.md §2: the PUT verifies size and checksum. The file must not stay pending.
  const { ns, col, base } = await seedCollection(f, 'mismatch', 'docs');
  const declare = (algorithm: 'sha256' | 'md5' | 'crc32c') => ({ checksum: `${algorithm}:${computeChecksum(Buffer.from('abc'), algorithm)}` });
  const cases: { name: string; source: Record<string, unknown>; body: string; headers?: Record<string, string> }[] = [
    { name: 'sha256', source: declare('sha256'), body: 'abd' },
    { name: 'md5', source: declare('md5'), body: 'abd' },
    { name: 'crc32c', source: declare('crc32c'), body: 'abd' },
    { name: 'bytes, larger', source: { bytes: 3 }, body: 'abcd' },
    { name: 'bytes, smaller', source: { bytes: 3 }, body: 'ab' },
    { name: 'bytes, by content-length', source: { bytes: 3 }, body: 'abcd', headers: { 'content-length': '4' } },
    { name: 'bytes and sha256, right size', source: { bytes: 3, ...declare('sha256') }, body: 'abd' },
  ];
  for (const [i, c] of cases.entries()) {
    const path = `/m${i}.txt`;
    const added = await f.call('POST', `${base}/files`, { path, source: { type: 'upload', content_type: 'text/plain', ...c.source } });
    t.equal(added.status, 202, c.name);
    const url = new URL(added.body.upload.url).pathname;
    const put = await f.raw('PUT', url, c.body, { authorization: undefined, 'content-type': 'text/plain', ...c.headers });
    t.equal(put.status, 400, `${c.name}: the PUT is answered 400`);
    t.match(put.body.error, { code: 'invalid_request', details: { file_id: added.body.file.id, file_error: { code: 'source_mismatch' } } }, `${c.name}: the error names the file and its error`);
    const file = await f.call('GET', `${base}/files/${added.body.file.id}`);
    t.match(file.body, { status: 'failed', error: { code: 'source_mismatch' } }, `${c.name}: the file failed`);
    const job = await f.call('GET', `/jobs/${added.body.job.id}`);
    t.match(job.body, { status: 'failed', error: { code: 'source_mismatch' } }, `${c.name}: its job failed`);
    // Single use: the URL is spent; sending the bytes again takes a new version of the file.
    const retry = await f.raw('PUT', url, 'abc', { authorization: undefined, 'content-type': 'text/plain' });
    t.equal(retry.status, 400, `${c.name}: the used URL refuses even the right bytes`);
    t.match(retry.text, /add the file again/, `${c.name}: and says how to upload again`);
    t.equal((await f.call('GET', `${base}/files/${added.body.file.id}`)).body.status, 'failed', `${c.name}: the retry changes nothing`);
    // Its content will never come: not a retryable 409 a client would wait on forever (contract audit).
    const content = await f.call('GET', `${base}/files/${added.body.file.id}/content`);
    t.match(content.body.error, { code: 'not_found', retryable: false, message: /upload was refused/ }, `${c.name}: no content, and why`);
  }
  const events: { type: string; data: { id?: string; fileId?: string; error?: { code: string } } }[] = [];
  for (let page = await f.call('GET', '/events?limit=100'); ; page = await f.call('GET', `/events?limit=100&cursor=${encodeURIComponent(page.body.next_cursor)}`)) {
    events.push(...page.body.items);
    if (!page.body.next_cursor) break;
  }
  const fileIds = (await f.call('GET', `${base}/files`)).body.items.map((x: { id: string }) => x.id) as string[];
  for (const id of fileIds) {
    t.ok(events.some((e) => e.type === 'file.failed' && e.data.id === id && e.data.error?.code === 'source_mismatch'), `file.failed for ${id}`);
    t.ok(events.some((e) => e.type === 'object.indexing_failed' && e.data.fileId === id), `object.indexing_failed for ${id}`);
  }
  t.equal((await f.waitForIdle(ns, col)).status, 'failed', 'the collection settles instead of waiting for bytes');
  const { existsSync, readdirSync } = await import('node:fs');
  t.notOk(await f.rt.services.blobs.exists(computeChecksum(Buffer.from('abd'), 'sha256')), 'rejected bytes are not kept in blobs');
  const receiving = `${f.rt.dataDir}/blobs/tmp`;
  t.same(existsSync(receiving) ? readdirSync(receiving) : [], [], 'nor left in its temporary folder');

  // Adding the path again is the retry: a new version with a new URL.
  const again = await f.call('POST', `${base}/files`, { path: '/m0.txt', source: { type: 'upload', content_type: 'text/plain', ...declare('sha256') } });
  t.equal(again.body.file.id, fileIds[0], 'the same file, a new version');
  t.equal((await f.raw('PUT', new URL(again.body.upload.url).pathname, 'abc', { authorization: undefined, 'content-type': 'text/plain' })).status, 200);
  await f.waitForIdle(ns, col);
  t.match((await f.call('GET', `${base}/files/${fileIds[0]}`)).body, { status: 'ready', error: undefined });
});

t.test('file lists: path, prefix, status, limits and cursors bound to key and request', async (t) => {
  const { base } = await seedCollection(f, 'lists', 'docs');
  for (let i = 0; i < 7; i++) await addInline(f, base, `/d${i % 2}/f${i}.txt`, `file number ${i}`);
  await f.waitForIdle('lists', 'docs');
  const exact = await f.call('GET', `${base}/files?path=${encodeURIComponent('/d0/f2.txt')}`);
  t.same(exact.body.items.map((x: { path: string }) => x.path), ['/d0/f2.txt']);
  const prefix = await f.call('GET', `${base}/files?prefix=${encodeURIComponent('/d1/')}`);
  t.same(prefix.body.items.map((x: { path: string }) => x.path), ['/d1/f1.txt', '/d1/f3.txt', '/d1/f5.txt'], 'oldest first');
  t.equal((await f.call('GET', `${base}/files?path=/a&prefix=/a`)).body.error.code, 'invalid_request', 'path and prefix together');
  t.equal((await f.call('GET', `${base}/files?status=ready&limit=3`)).body.items.length, 3);
  for (const bad of ['0', '101', 'x', '-1']) t.equal((await f.call('GET', `${base}/files?limit=${bad}`)).status, 400, `limit=${bad}`);
  t.equal((await f.call('GET', `${base}/files?status=gone`)).status, 400);

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const r: { body: { items: { path: string }[]; next_cursor: string | null } } = await f.call('GET', `${base}/files?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    seen.push(...r.body.items.map((x) => x.path));
    cursor = r.body.next_cursor;
  } while (cursor);
  t.equal(seen.length, 7, 'paging visits every file once');
  t.equal(new Set(seen).size, 7);

  const first = await f.call('GET', `${base}/files?limit=2`);
  const c = encodeURIComponent(first.body.next_cursor);
  t.equal((await f.call('GET', `${base}/files?limit=2&cursor=${c}&status=ready`)).body.error.code, 'invalid_cursor', 'a cursor is bound to its request');
  t.equal((await f.call('GET', `/namespaces/lists/collections?cursor=${c}`)).body.error.code, 'invalid_cursor', 'and to its route');
  t.equal((await f.call('GET', `${base}/files?cursor=${c.slice(0, -3)}abc`)).body.error.code, 'invalid_cursor', 'a forged cursor is refused');
  const key = await f.call('GET', '/info');
  t.equal(key.status, 200);
  const expired = signCursor(f.rt.services.cursorSecret, 'anything', 5, -1000);
  t.equal((await f.call('GET', `${base}/files?cursor=${encodeURIComponent(expired)}`)).body.error.code, 'invalid_cursor', 'an expired cursor is refused');
});

t.test('jobs: list, filter, cancel', async (t) => {
  const { base } = await seedCollection(f, 'jobs', 'docs');
  const up = await f.call('POST', `${base}/files`, { path: '/waiting.txt', source: { type: 'upload', content_type: 'text/plain' } });
  const queued = await f.call('GET', `/jobs/${up.body.job.id}`);
  t.equal(queued.body.status, 'queued', 'an upload job waits for its bytes');
  const canceled = await f.call('POST', `/jobs/${up.body.job.id}:cancel`);
  t.equal(canceled.status, 200);
  t.equal(canceled.body.status, 'canceled');
  const again = await f.call('POST', `/jobs/${up.body.job.id}:cancel`);
  t.equal(again.body.status, 'canceled', 'canceling a finished job returns it unchanged');
  const file = await f.call('GET', `${base}/files/${up.body.file.id}`);
  t.equal(file.body.status, 'failed', 'a never-indexed file whose job was canceled fails visibly');
  t.equal(file.body.error.code, 'canceled');

  await addInline(f, base, '/a.txt', 'alpha');
  await f.waitForIdle('jobs', 'docs');
  const all = await f.call('GET', '/namespaces/jobs/jobs?type=index_file');
  t.equal(all.status, 200);
  t.equal(all.body.items.length, 2);
  const succeeded = await f.call('GET', '/namespaces/jobs/jobs?status=succeeded&collection=docs');
  t.equal(succeeded.body.items.length, 1);
  t.equal((await f.call('GET', '/namespaces/jobs/jobs?collection=nope')).status, 404);
  t.equal((await f.call('GET', '/jobs/job_unknown')).status, 404);
});

t.test('info, health, ready, auth', async (t) => {
  const health = await f.call('GET', '/health', undefined, { authorization: undefined });
  t.same(health.body, { status: 'ok' });
  const ready = await f.call('GET', '/ready', undefined, { authorization: undefined });
  t.same(ready.body, { status: 'ready' });
  const info = await f.call('GET', '/info');
  conforms(t, S.InfoResponse, info.body, 'info');
  t.ok(info.body.search_modes.includes('keyword'));
  t.same(info.body.uri_schemes, ['file', 'http', 'https']);

  t.equal((await f.call('GET', '/info', undefined, { authorization: undefined })).status, 401, 'no key');
  t.equal((await f.call('GET', '/info', undefined, { authorization: 'Bearer wrong' })).status, 401, 'wrong key');
  t.equal((await f.call('GET', '/info', undefined, { authorization: 'Basic abc' })).status, 401, 'wrong scheme');
  const viaHeader = await f.call('GET', '/info', undefined, { authorization: undefined, 'x-api-key': 'test-cluster-key-0123456789abcdef' });
  t.equal(viaHeader.status, 200, 'X-API-Key works too');
  const r = await f.call('GET', '/info', undefined, { 'x-request-id': 'my-trace-1' });
  t.equal(r.headers['x-request-id'], 'my-trace-1', 'X-Request-Id is echoed');
  const gen = await f.call('GET', '/nope');
  t.match(gen.headers['x-request-id'], /^req_/, 'one is generated otherwise');
  t.equal(gen.body.error.request_id, gen.headers['x-request-id']);
});

t.test('a file whose upload never arrives fails when its URL expires', async (t) => {
  const g = await startFixture({ uploadTtlMs: 300 });
  t.teardown(() => g.close());
  const { base } = await seedCollection(g, 'late', 'docs');
  const added = await g.call('POST', `${base}/files`, { path: '/never.txt', source: { type: 'upload', content_type: 'text/plain' } });
  t.equal(added.status, 202);
  const col = await g.waitForIdle('late', 'docs');
  t.equal(col.status, 'failed', 'the collection no longer waits for it');
  const file = await g.call('GET', `${base}/files/${added.body.file.id}`);
  t.match(file.body, { status: 'failed', error: { code: 'upload_expired' } });
  const job = await g.call('GET', `/jobs/${added.body.job.id}`);
  t.match(job.body, { status: 'failed', error: { code: 'upload_expired' } });
  const late = await g.raw('PUT', new URL(added.body.upload.url).pathname, 'too late', { authorization: undefined });
  t.equal(late.status, 404, 'the expired URL is refused');
  const again = await g.call('POST', `${base}/files`, { path: '/never.txt', source: { type: 'inline', text: 'arrived after all' } });
  t.equal(again.body.file.id, added.body.file.id);
  t.equal((await g.waitForIdle('late', 'docs')).status, 'ready', 'adding the path again starts over');
});
