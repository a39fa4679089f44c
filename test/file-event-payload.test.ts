// A file.* event's data is the file as `GET …/files/{id}` shows it in the same state (retrieval-api.md,
// File; decisions.md §6): no `error: null` where GET leaves the error out, the notes and the
// governing rule where GET has them. Checked for every file event type, in an open collection and in
// one that enforces access rules, through the event page (webhooks and the stream pass the same
// stored data on). For file.deleted, the state compared is the GET just before the delete, with
// the status and time the delete gave it.
import t, { type Test } from 'tap';
import { EVERYTHING } from '../src/domain/event-audience.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

/** The events after `after` (an event ID) about one file, oldest first, through GET /events. */
async function fileEvents(f: Fixture, fileId: string, after: string | undefined): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q: string[] = ['limit=100'];
    if (after) q.push(`after=${after}`);
    if (cursor) q.push(`cursor=${encodeURIComponent(cursor)}`);
    const r = await f.call('GET', `/events?${q.join('&')}`);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    out.push(...r.body.items);
    cursor = r.body.next_cursor;
  } while (cursor);
  return out.filter((e) => e.type.startsWith('file.') && e.data.id === fileId);
}

async function lastEventId(f: Fixture): Promise<string | undefined> {
  const store = f.rt.services.store;
  const [last] = await store.events.after({ afterRid: (await store.events.lastRid()) - 1, limit: 1, audience: EVERYTHING });
  return last?.id;
}

/** Runs a change and checks that each file event it wrote (of the expected types) equals GET now. */
async function step(t: Test, f: Fixture, base: string, file: () => string, name: string, types: string[], change: () => Promise<unknown>): Promise<any[]> {
  const after = await lastEventId(f);
  await change();
  const fileId = file();
  const events = await fileEvents(f, fileId, after);
  t.same(
    events.map((e) => e.type),
    types,
    `${name}: the file events`,
  );
  const got = await f.call('GET', `${base}/files/${fileId}`);
  t.equal(got.status, 200);
  for (const e of events) t.strictSame(e.data, got.body, `${name}: ${e.type} carries the file as GET shows it`);
  return events;
}

for (const access of ['off', 'enforced'] as const) {
  t.test(`file events equal GET of the same file (access_control ${access})`, async (t) => {
    const f = await startFixture({ indexer: false });
    t.teardown(() => f.close());
    const { base } = await seedCollection(f, 'fe', 'docs', { access_control: access });
    if (access === 'enforced') t.equal((await f.call('POST', `${base}/access-rules`, { folder: '/team/', readers: ['u1'] })).status, 201);
    const store = f.rt.services.store;
    const now = () => new Date().toISOString();

    let fileId = '';
    const file = () => fileId;
    await step(t, f, base, file, 'add', ['file.updated'], async () => {
      fileId = (await addInline(f, base, '/team/a.md', '# A\n\nlanterns', 'text/markdown', { tag: 'x' })).body.file.id;
    });
    const first = await f.call('GET', `${base}/files/${fileId}`);
    t.notOk('error' in first.body, 'a pending file has no error field');
    if (access === 'enforced') t.match(first.body.governing_rule, { folder: '/team/' }, 'the rule governs it');
    else t.notOk('governing_rule' in first.body);

    const col = (await store.collections.find((await store.namespaces.find('fe'))!.rid, 'docs'))!;
    const { rid, version_id: version } = (await store.files.findLiveById(col.rid, fileId))!;
    await step(t, f, base, file, 'indexing', ['file.updated'], () =>
      store.write(async (tx) => {
        await tx.jobs.claim(10, now());
        await tx.files.setStatus(rid, 'indexing', now());
      }),
    );
    await step(t, f, base, file, 'ready with notes', ['file.updated', 'file.ready'], () =>
      store.write((tx) => tx.files.markIndexed(rid, { versionId: version, contentType: 'text/markdown', notes: ['declared text/plain, read as text/markdown'] }, now())),
    );
    const ready = await f.call('GET', `${base}/files/${fileId}`);
    t.same(ready.body.notes, ['declared text/plain, read as text/markdown'], 'GET shows the notes the event carries');
    await step(t, f, base, file, 'failed', ['file.updated', 'file.failed'], () =>
      store.write((tx) => tx.files.setStatus(rid, 'failed', now(), { code: 'extraction_failed', message: 'no text' })),
    );
    await step(t, f, base, file, 'edited after failing', ['file.updated'], () => addInline(f, base, '/team/a.md', 'a third text', 'text/plain'));

    const before = await f.call('GET', `${base}/files/${fileId}`);
    const after = await lastEventId(f);
    t.equal((await f.call('DELETE', `${base}/files/${fileId}`)).status, 202);
    const deleted = await fileEvents(f, fileId, after);
    t.same(
      deleted.map((e) => e.type),
      ['file.updated', 'file.deleted'],
    );
    for (const e of deleted) {
      t.strictSame(e.data, { ...before.body, status: 'deleting', updated_at: e.data.updated_at }, `${e.type} carries the file as GET showed it before the delete`);
      t.ok(e.data.updated_at >= before.body.updated_at, 'at the time of the delete');
    }
  });
}

t.test('the indexing worker writes events that equal GET of the settled file', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'fw', 'docs', { access_control: 'enforced' });
  await f.call('POST', `${base}/access-rules`, { folder: '/', readers: ['u1'] });
  const good = await addInline(f, base, '/good.md', '# Good\n\nlanterns and tides');
  const bad = await addInline(f, base, '/bad.json', '{"x": ', 'application/json');
  await f.waitForIdle(ns, col);
  for (const [file, last] of [
    [good.body.file.id, 'file.ready'],
    [bad.body.file.id, 'file.failed'],
  ] as const) {
    const events = await fileEvents(f, file, undefined);
    t.equal(events.at(-1)?.type, last);
    const got = await f.call('GET', `${base}/files/${file}`);
    t.strictSame(events.at(-1).data, got.body, `${last} carries the file as GET shows it`);
    t.strictSame(events.at(-2).data, got.body, 'and so does the file.updated before it');
  }
});
