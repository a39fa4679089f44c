// The event log (decisions.md §2, §6): every status change of a job, file, collection and research
// run is an event written in the same transaction as the change; GET /events pages them as the key
// may see them, or streams them as server-sent events; they are kept 30 days.
import t from 'tap';
import { sweepEvents } from '../src/domain/events.js';
import { enqueue } from '../src/domain/jobs.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function allEvents(f: Fixture, headers = {}, after?: string): Promise<any[]> {
  const out: any[] = [];
  let url = `/events?limit=100${after ? `&after=${after}` : ''}`;
  for (;;) {
    const r = await f.call('GET', url, undefined, headers);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    out.push(...r.body.items);
    if (!r.body.next_cursor) return out;
    url = `/events?limit=100${after ? `&after=${after}` : ''}&cursor=${encodeURIComponent(r.body.next_cursor)}`;
  }
}

t.test('a file, its job and its collection report each status change', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const info = await f.call('GET', '/info');
  t.same(info.body.event_types, ['job.updated', 'file.updated', 'file.ready', 'file.failed', 'file.deleted', 'collection.updated', 'research.updated', 'research.progress', 'object.indexed', 'object.indexing_failed', 'webhook.test']);
  const { ns, col, base } = await seedCollection(f, 'ev1', 'docs');
  const added = await addInline(f, base, '/a.md', '# A\n\nhello events');
  await addInline(f, base, '/bad.json', '{"x": ', 'application/json');
  await f.waitForIdle(ns, col);
  const events = await allEvents(f);
  for (const e of events) t.match(e, { id: /^evt_/, type: String, timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, data: Object });
  const about = (id: string) => events.filter((e) => e.data.id === id || e.data.fileId === id).map((e) => `${e.type}:${e.data.status ?? ''}`);
  t.same(about(added.body.file.id), ['file.updated:pending', 'file.updated:indexing', 'file.updated:ready', 'file.ready:ready', 'object.indexed:'], 'the file: pending, indexing, ready');
  t.same(about(added.body.job.id), ['job.updated:queued', 'job.updated:running', 'job.updated:succeeded'], 'its job');
  const failedFile = events.find((e) => e.type === 'file.failed');
  t.match(failedFile.data, { path: '/bad.json', status: 'failed', error: { code: 'extraction_failed' } });
  const object = events.find((e) => e.type === 'object.indexed');
  t.match(object.data, { workspaceId: /^ns_/, bucketId: /^col_/, key: '/a.md', versionId: /^ver_/, fileId: added.body.file.id }, 'object.* events carry the workspace fields');
  const colStates = events.filter((e) => e.type === 'collection.updated').map((e) => e.data.status);
  t.equal(colStates[0], 'empty', 'a new collection');
  t.equal(colStates.at(-1), 'degraded', 'and where it settled');
  t.ok(colStates.includes('indexing'));
  const job = (await f.call('GET', `/jobs/${added.body.job.id}`)).body;
  t.same(events.filter((e) => e.data.id === job.id).at(-1).data, { ...job, namespace: 'ev1', collection: 'docs', file_id: added.body.file.id }, "an event's data is the resource as GET shows it");

  // Deleting the file reports it.
  const del = await f.call('DELETE', `${base}/files/${added.body.file.id}`);
  t.equal(del.status, 202);
  const after = await allEvents(f, {}, events.at(-1).id);
  t.ok(after.some((e) => e.type === 'file.deleted' && e.data.id === added.body.file.id), 'file.deleted');
  t.notOk(after.some((e) => events.some((old) => old.id === e.id)), "'after' returns only newer events");
});

t.test('an event exists only for a change that committed', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'ev2', 'docs');
  const count = () => (f.rt.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  const before = count();
  await t.rejects(
    f.rt.services.store.write(async (tx) => {
      await enqueue(tx.jobs, { type: 'reindex_collection', namespace_rid: null, collection_rid: null, namespace: null, collection: null, file_rid: null, file_id: null, version_id: null });
      t.equal(count(), before + 1, 'the event is written inside the transaction');
      throw new Error('roll back');
    }),
  );
  t.equal(count(), before, 'and is gone with the rolled-back change');
  const bad = await f.call('POST', '/namespaces/ev2/collections/docs/files', { path: 'no-slash', source: { type: 'inline', text: 'x' } });
  t.equal(bad.status, 400);
  t.equal(count(), before, 'a refused request writes no event');
});

t.test('research runs report their status and each stage', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'ev3', 'docs');
  await addInline(f, base, '/tides.md', '# Tides\n\nTides are caused by the pull of the moon and the sun.');
  await f.waitForIdle(ns, col);
  const last = (await allEvents(f)).at(-1).id;
  const run = await f.call('POST', `${base}/research`, { query: 'what causes tides?', mode: 'ultra' }, { 'idempotency-key': 'ev3' });
  await waitFor('the research run', async () => (await f.call('GET', `${base}/research/${run.body.id}`)).body.status === 'succeeded');
  const events = (await allEvents(f, {}, last)).filter((e) => e.data.id === run.body.id);
  t.same(events.filter((e) => e.type === 'research.updated').map((e) => e.data.status), ['queued', 'running', 'succeeded'], 'research.updated on each status change');
  t.same(events.filter((e) => e.type === 'research.progress').map((e) => `${e.data.progress.step}/${e.data.progress.total_steps} ${e.data.progress.stage}`), ['1/5 plan', '2/5 retrieve', '3/5 read', '4/5 synthesize', '5/5 verify'], 'research.progress on each stage');
  t.match(events.at(-1).data, { status: 'succeeded', answer: /moon/ });
});

t.test('who sees which events', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const a = await seedCollection(f, 'ev4a', 'docs');
  const b = await seedCollection(f, 'ev4b', 'docs');
  await addInline(f, a.base, '/a.txt', 'in a');
  await addInline(f, b.base, '/b.txt', 'in b');
  await f.waitForIdle(a.ns, a.col);
  await f.waitForIdle(b.ns, b.col);
  const nsKey = (await f.call('POST', '/keys', { name: 'ev4-ns', scope: { kind: 'namespace', namespace: 'ev4a', actions: ['read'] } })).body.secret;
  const colKey = (await f.call('POST', '/keys', { name: 'ev4-col', scope: { kind: 'collection', namespace: 'ev4a', collections: ['docs'], actions: ['read', 'write', 'search', 'query'] } })).body.secret;
  const mine = await allEvents(f, bearer(nsKey));
  t.ok(mine.length > 0);
  t.notOk(JSON.stringify(mine).includes('ev4b') || JSON.stringify(mine).includes('/b.txt'), "a namespace key sees only its namespace's events");
  t.ok(mine.some((e) => e.data.path === '/a.txt'));
  const all = await allEvents(f);
  t.ok(all.some((e) => e.data.path === '/b.txt') && all.some((e) => e.data.path === '/a.txt'), 'a cluster key sees all');
  t.equal((await f.call('GET', '/events', undefined, bearer(colKey))).status, 403, 'collection keys cannot read the event log');
  t.equal((await f.call('GET', '/events?after=evt_doesnotexist')).status, 400);
  t.equal((await f.call('GET', '/events?after=nope')).status, 400);
  const page = await f.call('GET', '/events?limit=2');
  t.equal(page.body.items.length, 2);
  t.equal((await f.call('GET', `/events?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`, undefined, bearer(nsKey))).body.error.code, 'invalid_cursor', "another key's cursor");
});

t.test('the stream delivers new events as they happen', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'ev5', 'docs');
  const res = await f.rt.app.handle({ method: 'GET', url: '/events', headers: { authorization: 'Bearer test-cluster-key-0123456789abcdef', accept: 'text/event-stream' }, body: null });
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^text\/event-stream/);
  const iterator = res.stream![Symbol.asyncIterator]();
  t.match((await iterator.next()).value, /^: trove events/, 'the stream opens with a comment');
  const added = await addInline(f, base, '/live.txt', 'live words');
  const seen: string[] = [];
  while (!seen.some((m) => m.includes('event: file.ready'))) {
    const next = await iterator.next();
    if (next.done) break;
    seen.push(next.value);
  }
  await iterator.return?.();
  const first = seen.find((m) => m.includes('event: file.updated'))!;
  t.match(first, /^id: evt_\w+\nevent: file\.updated\ndata: \{.*\}\n\n$/s, 'id, event and data lines');
  t.equal(JSON.parse(first.split('data: ')[1]!).data.id, added.body.file.id);
  t.ok(seen.some((m) => m.includes('event: collection.updated')), 'the collection started indexing');
  t.ok(seen.some((m) => m.includes('event: job.updated')));
  await f.waitForIdle(ns, col);
});

t.test('events are kept 30 days', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await seedCollection(f, 'ev6', 'docs');
  const count = () => (f.rt.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  await f.rt.write(() => f.rt.db.prepare("INSERT INTO events (id, type, data, created_at) VALUES ('evt_old', 'job.updated', '{}', ?)").run(new Date(Date.now() - 31 * 86400_000).toISOString()));
  await f.rt.write(() => f.rt.db.prepare("INSERT INTO events (id, type, data, created_at) VALUES ('evt_recent', 'job.updated', '{}', ?)").run(new Date(Date.now() - 29 * 86400_000).toISOString()));
  const before = count();
  t.equal(await sweepEvents(f.rt.services), 1, 'one event was older than 30 days');
  t.equal(count(), before - 1);
  t.ok(f.rt.db.prepare("SELECT 1 FROM events WHERE id = 'evt_recent'").get(), 'the 29-day-old one stays');
});
