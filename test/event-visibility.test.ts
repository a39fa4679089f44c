// Who sees which event (issue 13.2; decisions.md §2 GET /events, §6; src/domain/event-audience.ts):
// an event is visible to a key exactly when the resource it reports is readable by that key through
// its GET route. File, object, job and collection events need `read` in scope; research events go
// only to the key that created the run (or a cluster key), so answers and sources drawn under one
// key's principals never reach another key. The same rule holds for the event page, its stream,
// webhook fan-out (a webhook sees what its creator may see) and the delivery log.
import t from 'tap';
import { fanOut } from '../src/domain/webhooks/dispatcher.js';
import { CLUSTER_KEY, addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const RESOURCE = /^(file|object|job|collection)\./;

let f: Fixture;
const keys: Record<string, { secret: string; id: string }> = {};
/** Research runs by creating key label. */
const runs: Record<string, string> = {};

async function mk(label: string, scope: unknown, by = CLUSTER_KEY): Promise<void> {
  const r = await f.call('POST', '/keys', { name: label, scope }, bearer(by));
  if (r.status !== 201) throw new Error(`key ${label}: ${r.status} ${r.text}`);
  keys[label] = { secret: r.body.secret, id: r.body.id };
}

async function allEvents(secret: string): Promise<any[]> {
  const out: any[] = [];
  let url = '/events?limit=100';
  for (;;) {
    const r = await f.call('GET', url, undefined, bearer(secret));
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    out.push(...r.body.items);
    if (!r.body.next_cursor) return out;
    url = `/events?limit=100&cursor=${encodeURIComponent(r.body.next_cursor)}`;
  }
}

async function research(label: string, col: string, principals: string[] | undefined): Promise<string> {
  const body: Record<string, unknown> = { query: 'which harbour holds the secret ledger' };
  if (principals) body.principals = principals;
  const r = await f.call('POST', `/namespaces/vis/collections/${col}/research`, body, { ...bearer(keys[label]!.secret), 'idempotency-key': `idem-${label}-${col}` });
  if (r.status !== 202) throw new Error(`research by ${label}: ${r.status} ${r.text}`);
  for (;;) {
    const got = await f.call('GET', `/namespaces/vis/collections/${col}/research/${r.body.id}`, undefined, bearer(keys[label]!.secret));
    if (['succeeded', 'failed', 'canceled'].includes(got.body.status)) return r.body.id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.before(async () => {
  // No dispatcher: fanOut is called directly, and nothing is sent; receivers on http://127.0.0.1 are allowed.
  f = await startFixture({ webhookDispatcher: false, webhooks: { allowInsecure: true } });
  await seedCollection(f, 'vis', 'open');
  await seedCollection(f, 'vis', 'locked', { access_control: 'enforced' });
  await seedCollection(f, 'vis', 'side');
  await f.call('POST', '/namespaces/vis/collections/locked/access-rules', { folder: '/', readers: ['alice'] });
  await mk('search-only', { kind: 'namespace', namespace: 'vis', actions: ['search'] });
  await mk('query-a', { kind: 'namespace', namespace: 'vis', actions: ['search', 'query'] });
  await mk('query-b', { kind: 'namespace', namespace: 'vis', actions: ['search', 'query'] });
  await mk('reader', { kind: 'namespace', namespace: 'vis', actions: ['read'] });
  await mk('col-reader', { kind: 'collection', namespace: 'vis', collections: ['open'], actions: ['read'] });
  await mk('col-search', { kind: 'collection', namespace: 'vis', collections: ['open'], actions: ['search'] });
  await mk('write-only', { kind: 'namespace', namespace: 'vis', actions: ['write'] });
});
t.teardown(() => f?.close());

t.test('setup: webhooks by each key, then files and research runs', async (t) => {
  for (const label of ['search-only', 'query-a', 'reader', 'col-reader', 'col-search']) {
    const r = await f.call('POST', '/v1/workspaces/vis/webhooks', { name: `by-${label}`, url: `http://127.0.0.1:9/${label}` }, bearer(keys[label]!.secret));
    t.equal(r.status, 201, `${label} creates a workspace webhook: ${r.text.slice(0, 200)}`);
    keys[`hook-${label}`] = { secret: '', id: r.body.webhook.id };
  }
  const personal = await f.call('POST', '/v1/workspaces/vis/webhooks', { name: 'mine', url: 'http://127.0.0.1:9/mine', owner: 'me' });
  t.equal(personal.status, 201);
  keys['hook-operator'] = { secret: '', id: personal.body.webhook.id };

  for (const col of ['open', 'locked', 'side']) {
    const r = await addInline(f, `/namespaces/vis/collections/${col}`, `/private/${col}-ledger.txt`, `The secret ledger of ${col} is kept in the north harbour.`, 'text/plain', { owner: 'finance' });
    t.equal(r.status, 202);
    await f.waitForIdle('vis', col);
  }
  runs['query-a'] = await research('query-a', 'locked', ['alice']);
  runs['query-b'] = await research('query-b', 'open', undefined);
  keys.cluster = { secret: CLUSTER_KEY, id: '' };
  runs.cluster = await research('cluster', 'open', undefined);
  await fanOut(f.rt.services);
});

t.test('GET /events: a search-only key sees no file events and no research answers', async (t) => {
  const events = await allEvents(keys['search-only']!.secret);
  t.same(events, [], 'nothing it could read through a GET route (listing files is 403 for it)');
  const listing = await f.call('GET', '/namespaces/vis/collections/open/files', undefined, bearer(keys['search-only']!.secret));
  t.equal(listing.status, 403, 'its GET route for files is refused');
});

t.test("GET /events: research events only to the run's creator (and a cluster key)", async (t) => {
  const a = await allEvents(keys['query-a']!.secret);
  const b = await allEvents(keys['query-b']!.secret);
  const researchIds = (evs: any[]) => [...new Set(evs.filter((e) => e.type.startsWith('research.')).map((e) => e.data.id))];
  t.same(researchIds(a), [runs['query-a']], 'query-a sees only its own run');
  t.same(researchIds(b), [runs['query-b']], 'query-b sees only its own run');
  t.notOk(b.some((e) => JSON.stringify(e).includes('alice') || e.data?.id === runs['query-a']), "the principal-bound run of query-a never reaches query-b");
  t.notOk([...a, ...b].some((e) => RESOURCE.test(e.type)), 'no read action: no file, job or collection events');
  const finished = a.find((e) => e.type === 'research.updated' && e.data.status === 'succeeded');
  t.ok(finished, 'the creator does see its finished run');

  const cluster = await allEvents(CLUSTER_KEY);
  const all = researchIds(cluster);
  for (const id of [runs['query-a'], runs['query-b']]) t.ok(all.includes(id), `the cluster key sees run ${id}`);
});

t.test('GET /events: a key with read sees file events in its scope, no research events', async (t) => {
  const events = await allEvents(keys.reader!.secret);
  t.ok(events.some((e) => e.type === 'file.ready' && e.data.path === '/private/locked-ledger.txt'), 'file events of its namespace');
  t.notOk(events.some((e) => e.type.startsWith('research.')), 'no research events (it has no query, and made no run)');
  t.ok(events.every((e) => RESOURCE.test(e.type)));
});

t.test('the event stream applies the same filter', async (t) => {
  for (const [label, expectResearch] of [
    ['search-only', false],
    ['query-b', true],
  ] as const) {
    const res = await f.rt.app.handle({ method: 'GET', url: '/events?after=' + (await allEvents(CLUSTER_KEY))[0].id, headers: { ...bearer(keys[label]!.secret), accept: 'text/event-stream' }, body: null });
    t.equal(res.status, 200);
    const it = res.stream![Symbol.asyncIterator]();
    const chunks: string[] = [];
    // The backlog arrives at once; the first quiet 400 ms ends the read.
    for (let i = 0; i < 1000; i++) {
      const next = await Promise.race([it.next(), new Promise<{ done: true; value: undefined }>((r) => setTimeout(() => r({ done: true, value: undefined }), 400))]);
      if (next.done) break;
      chunks.push(String(next.value));
    }
    // Not awaited: the generator is parked in its poll and ends with the fixture.
    void it.return?.(undefined);
    const text = chunks.join('');
    t.notOk(/event: (file|object|job|collection)\./.test(text), `${label}: no resource events in the stream`);
    t.notOk(text.includes(runs['query-a']!), `${label}: never another key's run`);
    t.equal(text.includes(runs['query-b']!), expectResearch, `${label}: its own run ${expectResearch ? 'is' : 'is not'} there`);
  }
});

t.test('webhook fan-out: a webhook sees what the key that created it may see', async (t) => {
  const logOf = async (hook: string) => {
    const r = await f.call('GET', `/v1/workspaces/vis/webhooks/${keys[hook]!.id}/deliveries?limit=100`);
    t.equal(r.status, 200);
    return (r.body.items as any[]).map((d) => d.eventType as string);
  };
  t.same(await logOf('hook-search-only'), [], "a search-only key's webhook receives nothing it could not read");
  const qa = await logOf('hook-query-a');
  t.ok(qa.length > 0 && qa.every((type) => type.startsWith('research.')), "query-a's webhook: its own research events only");
  const rd = await logOf('hook-reader');
  t.ok(rd.includes('file.ready') && rd.every((type) => RESOURCE.test(type)), "reader's webhook: file events, no research");
  const cr = await f.call('GET', `/v1/workspaces/vis/webhooks/${keys['hook-col-reader']!.id}/deliveries?limit=100`);
  for (const d of cr.body.items) {
    const full = await f.call('GET', `/v1/workspaces/vis/webhooks/${keys['hook-col-reader']!.id}/deliveries/${d.id}`);
    const body = full.body.body;
    const col = body.data.bucketId ?? body.data.collection ?? body.data.id;
    t.notOk(JSON.stringify(body).includes('locked-ledger') || JSON.stringify(body).includes('side-ledger'), `col-reader's webhook: nothing from other buckets (${d.eventType} ${col})`);
  }
  t.ok(cr.body.items.length > 0, "col-reader's webhook does get its own bucket's events");
  t.same(await logOf('hook-col-search'), [], "col-search's webhook: nothing (no read)");
  const op = await logOf('hook-operator');
  t.ok(op.includes('file.ready') && op.includes('research.updated'), "the operator's personal webhook sees all");
});

t.test("the delivery log shows a caller only the events it may see, whoever made the webhook", async (t) => {
  const hook = keys['hook-operator']!.id;
  const asB = await f.call('GET', `/v1/workspaces/vis/webhooks`, undefined, bearer(keys['query-b']!.secret));
  t.notOk((asB.body.items as any[]).some((w) => w.id === hook), 'a personal webhook is not listed for a non-admin key');
  // A workspace webhook made by the cluster key receives everything in its workspace.
  const made = await f.call('POST', '/v1/workspaces/vis/webhooks', { name: 'cluster-made', url: 'http://127.0.0.1:9/c' });
  const id = made.body.webhook.id;
  const run = await research('query-a', 'open', undefined);
  await fanOut(f.rt.services);
  const all = (await f.call('GET', `/v1/workspaces/vis/webhooks/${id}/deliveries?limit=100`)).body.items as any[];
  const answer = all.find((d) => d.eventType === 'research.updated');
  t.ok(answer, 'the cluster-made webhook received the research event');
  const asReader = await f.call('GET', `/v1/workspaces/vis/webhooks/${id}/deliveries?limit=100`, undefined, bearer(keys['query-b']!.secret));
  t.equal(asReader.status, 200);
  t.notOk((asReader.body.items as any[]).some((d) => d.eventType.startsWith('research.') || RESOURCE.test(d.eventType)), "query-b sees none of it: another key's run, and no read");
  const direct = await f.call('GET', `/v1/workspaces/vis/webhooks/${id}/deliveries/${answer.id}`, undefined, bearer(keys['query-b']!.secret));
  t.equal(direct.status, 404, "reading another key's research delivery by ID is 404");
  const own = await f.call('GET', `/v1/workspaces/vis/webhooks/${id}/deliveries/${answer.id}`, undefined, bearer(keys['query-a']!.secret));
  t.equal(own.status, 200, 'the creator of the run may read that delivery');
  t.equal(own.body.body.data.id, run);
});

t.test("a key that may edit webhooks cannot point another key's webhook at a receiver of its own", async (t) => {
  // Found by an attack on the access rules: a namespace key with `write` redirected the cluster
  // key's webhook (and query-a's), replayed it, and received research answers it may not read.
  await mk('editor', { kind: 'namespace', namespace: 'vis', actions: ['read', 'write'] });
  const hookOf = (label: string) => `/v1/workspaces/vis/webhooks/${keys[`hook-${label}`]!.id}`;
  const made = await f.call('POST', '/v1/workspaces/vis/webhooks', { name: 'cluster-made-2', url: 'http://127.0.0.1:9/c2' });
  const clusterHook = `/v1/workspaces/vis/webhooks/${made.body.webhook.id}`;
  for (const [label, hook] of [['query-a', hookOf('query-a')], ['cluster', clusterHook]] as const) {
    for (const by of ['write-only', 'editor']) {
      const moved = await f.call('PATCH', hook, { url: 'http://127.0.0.1:9/stolen' }, bearer(keys[by]!.secret));
      t.equal(`${moved.status} ${moved.body.error?.code}`, '403 forbidden', `${by} may not move ${label}'s webhook`);
      const rotated = await f.call('POST', `${hook}/rotate-secret`, {}, bearer(keys[by]!.secret));
      t.equal(`${rotated.status} ${rotated.body.error?.code}`, '403 forbidden', `${by} may not take ${label}'s webhook's secret`);
    }
    t.notOk((await f.call('GET', hook)).body.url.includes('stolen'), `${label}'s webhook still delivers where it did`);
  }
  // What sends nothing to a receiver the caller chose stays open to it.
  const renamed = await f.call('PATCH', hookOf('query-a'), { name: 'renamed', url: 'http://127.0.0.1:9/query-a' }, bearer(keys['write-only']!.secret));
  t.equal(renamed.status, 200, 'a rename (the same URL sent again) is allowed');
  // A key that sees everything a webhook delivers may move it: the reader's webhook carries file events only.
  const ok = await f.call('PATCH', hookOf('reader'), { url: 'http://127.0.0.1:9/moved' }, bearer(keys.editor!.secret));
  t.equal(ok.status, 200, 'editor (read) covers the reader-made webhook');
  t.equal((await f.call('PATCH', hookOf('reader'), { url: 'http://127.0.0.1:9/moved-2' }, bearer(keys['write-only']!.secret))).status, 200, 'so does write-only: write includes read');
  const own = await f.call('PATCH', hookOf('query-a'), { url: 'http://127.0.0.1:9/query-a-2' }, bearer(keys['query-a']!.secret));
  t.equal(own.status, 403, 'query-a lacks write: editing is refused before coverage');
  t.equal((await f.call('PATCH', hookOf('query-a'), { url: 'http://127.0.0.1:9/query-a-3' })).status, 200, 'the cluster key may move any webhook');
  t.equal((await f.call('POST', `${hookOf('query-a')}/rotate-secret`, {})).status, 200, 'and rotate its secret');
});

t.test('revoking a key ends its open event stream', async (t) => {
  // Found by an attack: a revoked key's stream, opened before, went on receiving new events.
  await mk('streamer', { kind: 'namespace', namespace: 'vis', actions: ['read'] });
  const res = await f.rt.app.handle({ method: 'GET', url: '/events', headers: { ...bearer(keys.streamer!.secret), accept: 'text/event-stream' }, body: null });
  t.equal(res.status, 200);
  const it = res.stream![Symbol.asyncIterator]();
  // A next() still unanswered when a read goes quiet is kept for the following read.
  let pending: Promise<IteratorResult<unknown>> | null = null;
  const read = async (quietMs: number): Promise<{ text: string; ended: boolean }> => {
    const chunks: string[] = [];
    for (;;) {
      pending ??= it.next();
      const next = await Promise.race([pending, new Promise<'quiet'>((r) => setTimeout(() => r('quiet'), quietMs))]);
      if (next === 'quiet') return { text: chunks.join(''), ended: false };
      pending = null;
      if (next.done) return { text: chunks.join(''), ended: true };
      chunks.push(String(next.value));
    }
  };
  t.match((await read(300)).text, /trove events/, 'the stream opens (from now)');
  await addInline(f, '/namespaces/vis/collections/open', '/before-revoke.txt', 'Written while the key is active.');
  await f.waitForIdle('vis', 'open');
  const live = await read(600);
  t.ok(live.text.includes('/before-revoke.txt'), 'events reach the stream while the key is active');
  t.equal((await f.call('POST', `/keys/${keys.streamer!.id}:revoke`)).status, 200);
  await addInline(f, '/namespaces/vis/collections/open', '/after-revoke.txt', 'Written after the key was revoked.');
  await f.waitForIdle('vis', 'open');
  const after = await read(2000);
  t.ok(after.ended, 'the stream ends');
  t.notOk(after.text.includes('/after-revoke.txt'), 'no event after the revocation reaches it');
  t.match(after.text, /revoked/, 'its last line says why');
});

t.test('a stream asked to start after an unknown event is a 400, not an empty 200', async (t) => {
  // Found by a bad-input attack: the 200 went out first and the stream then closed with no body.
  const stream = { ...bearer(keys.reader!.secret), accept: 'text/event-stream' };
  for (const [what, url, headers] of [
    ['after=', '/events?after=evt_00000000000000000000', stream],
    ['Last-Event-ID', '/events', { ...stream, 'last-event-id': 'evt_00000000000000000000' }],
    ['after= that is no event ID', '/events?after=garbage', stream],
  ] as const) {
    const r = await f.call('GET', url, undefined, headers);
    t.equal(`${r.status} ${r.body?.error?.code}`, '400 invalid_request', what);
  }
});

t.test('the key that moves a webhook becomes the one whose scope bounds it', async (t) => {
  // Found by a review: covering the creator at the moment of the move promised nothing about later.
  // Given `query` afterwards, the creator's research answers went to the mover's receiver.
  await mk('creator-c', { kind: 'namespace', namespace: 'vis', actions: ['read', 'write'] });
  await mk('mover-k', { kind: 'namespace', namespace: 'vis', actions: ['read', 'write'] });
  const made = await f.call('POST', '/v1/workspaces/vis/webhooks', { name: 'by-c', url: 'http://127.0.0.1:9/c' }, bearer(keys['creator-c']!.secret));
  const hook = `/v1/workspaces/vis/webhooks/${made.body.webhook.id}`;
  t.equal((await f.call('PATCH', hook, { url: 'http://127.0.0.1:9/k' }, bearer(keys['mover-k']!.secret))).status, 200, 'K covers C today: the move is allowed');
  const raised = await f.call('PATCH', `/v1/workspaces/vis/api-keys/${keys['creator-c']!.id}`, { role: 'editor' });
  t.equal(raised.status, 200, 'C is then given search and query');
  const run = await research('creator-c', 'open', undefined);
  await fanOut(f.rt.services);
  const delivered = (await f.call('GET', `${hook}/deliveries?limit=100`)).body.items as any[];
  t.notOk(delivered.some((d) => d.eventType.startsWith('research.')), `none of C's research (${run}) goes to K's receiver`);
  const replayed = await f.call('POST', `${hook}/replay`, { since: '2020-01-01T00:00:00Z' }, bearer(keys['mover-k']!.secret));
  t.equal(replayed.status, 202);
  const after = (await f.call('GET', `${hook}/deliveries?limit=100`)).body.items as any[];
  t.notOk(after.some((d) => d.eventType.startsWith('research.')), 'nor by a replay');
});
