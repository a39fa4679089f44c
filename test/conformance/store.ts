// The store's contract (src/store/interface.ts and its aggregates), written against the interface
// only: every engine runs it (test/store-conformance.test.ts). Each test opens a fresh, empty store.
// Times the caller passes are fixed strings; times the engine stamps (an event's created_at) are
// only compared with each other.
import type { Test } from 'tap';
import { at, newJob } from './rows.js';
import type {
  DeliveryRow,
  EventAudience,
  EventRow,
  NamespaceRow,
  NewKey,
  NewResearch,
  NewWebhook,
  Store,
  StoredScope,
  StoreTx,
} from '../../src/store/interface.js';
import type { Processing } from '../../src/contract/schemas.js';
import { bm25LiveConformance } from './store-bm25-live.js';
import { storeFilesConformance } from './store-files.js';
import { storeIngestConformance } from './store-ingest.js';
import { retentionConformance } from './store-retention.js';
import { storeVectorsConformance } from './store-vectors.js';

export interface StoreUnderTest {
  /** Fresh and empty. */
  store: Store;
  close(): Promise<void>;
}


/** Every event: a cluster key's view. */
const EVERYTHING: EventAudience = { namespaceRid: null, collectionRids: null, resources: true, research: 'all' };
const audience = (over: Partial<EventAudience>): EventAudience => ({ ...EVERYTHING, ...over });

const PROCESSING: Processing = { keyword: true, semantic: false, chunk_tokens: 256, chunk_overlap: 32, ocr: false };

const newNamespace = (id: string, name: string, display_name: string | null = null) => ({ id, name, display_name, created_at: at(0), updated_at: at(0) });

const newCollection = (namespaceRid: number, id: string, name: string, processing: Processing = PROCESSING) => ({
  id,
  namespace_rid: namespaceRid,
  name,
  display_name: null,
  processing,
  access_control: 'off' as const,
  embedding_model: null,
  created_at: at(1),
  updated_at: at(1),
});

const newKey = (id: string, name: string, scope: StoredScope, created_by: string | null = null): NewKey => ({
  id,
  name,
  prefix: `pfx_${id}`,
  secret_hash: Buffer.from(`hash of ${id}`),
  scope,
  created_by,
  created_at: at(2),
});

const newWebhook = (id: string, namespaceRid: number, over: Partial<NewWebhook> = {}): NewWebhook => ({
  id,
  namespace_rid: namespaceRid,
  name: `hook ${id}`,
  url: `https://receiver.example/${id}`,
  event_types: null,
  bucket_ids: null,
  enabled: 1,
  owner_kind: 'workspace',
  disabled_reason: null,
  secret: `whsec_${id}`,
  previous_secret: null,
  previous_secret_expires_at: null,
  cursor_rid: 0,
  last_success_at: null,
  created_at: at(3),
  created_ms: 1_735_689_603_000,
  updated_at: at(3),
  created_by_key_id: null,
  ...over,
});

const newDelivery = (id: string, webhookRid: number, eventId: string, over: Partial<Omit<DeliveryRow, 'rid'>> = {}): Omit<DeliveryRow, 'rid'> => ({
  id,
  webhook_rid: webhookRid,
  event_id: eventId,
  event_type: 'collection.updated',
  event_at: at(4),
  body: JSON.stringify({ id: eventId }),
  status: 'pending',
  attempts: 0,
  round_attempts: 0,
  next_attempt_ms: 1_000,
  created_at: at(4),
  updated_at: at(4),
  event_collection_rid: null,
  event_owner_key_id: null,
  ...over,
});

const newResearch = (id: string, ns: NamespaceRow, col: { rid: number; name: string }, keyId: string, over: Partial<NewResearch> = {}): NewResearch => ({
  id,
  namespace_rid: ns.rid,
  collection_rid: col.rid,
  namespace: ns.name,
  collection: col.name,
  key_id: keyId,
  idempotency_key: null,
  body_hash: `body of ${id}`,
  request: JSON.stringify({ query: `question ${id}` }),
  mode: 'standard',
  image_description: null,
  image_text: null,
  deadline_at: 1_900_000_000_000,
  created_at: at(5),
  ...over,
});

const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id);
const sortedIds = (rows: readonly { id: string }[]) => ids(rows).sort();
/** A key row with its hash as hex, so rows compare as plain data. */
const plainKey = <K extends { secret_hash: Buffer }>(k: K | undefined) => k && { ...k, secret_hash: k.secret_hash.toString('hex') };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function storeConformance(t: Test, open: () => Promise<StoreUnderTest>): void {
  /** A test of `parent` on a store of its own. */
  const on = (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) =>
    parent.test(name, async (t) => {
      const under = await open();
      t.teardown(() => under.close());
      await fn(t, under.store);
    });

  /** Events after `afterRid` that everyone sees. */
  const eventsSince = (store: Store, afterRid: number) => store.events.after({ afterRid, limit: 1000, audience: EVERYTHING });
  const namespace = (store: Store, id: string, name = id) => store.write((tx) => tx.namespaces.insert(newNamespace(id, name)));
  const collection = (store: Store, namespaceRid: number, id: string, name = id) => store.write((tx) => tx.collections.insert(newCollection(namespaceRid, id, name)));
  /** Namespace `alpha` with collections `docs` and `other`. */
  const twoCollections = async (store: Store) => {
    const ns = await namespace(store, 'ns_1', 'alpha');
    const col = await collection(store, ns.rid, 'col_1', 'docs');
    const other = await collection(store, ns.rid, 'col_2', 'other');
    return { ns, col, other };
  };

  // ------------------------------------------------------------------ transactions

  t.test('transactions', async (t) => {
    const test = on(t);
    test('a change reads its own writes; write resolves with its value, then visible outside', async (t, store) => {
      const result = await store.write(async (tx) => {
        const ns = await tx.namespaces.insert(newNamespace('ns_1', 'alpha'));
        t.same(await tx.namespaces.find('alpha'), ns, 'the namespace it inserted, by name');
        const col = await tx.collections.insert(newCollection(ns.rid, 'col_1', 'docs'));
        t.same(await tx.collections.find(ns.rid, 'docs'), col, 'the collection it inserted');
        t.same(await tx.collections.liveRids(ns.rid), [col.rid]);
        const events = await tx.events.after({ afterRid: 0, limit: 10, audience: EVERYTHING });
        t.same(events.map((e) => [e.type, e.collection_rid]), [['collection.updated', col.rid]], 'the event its insert appended');
        return { ns: ns.rid, col: col.rid, marker: 'the value' };
      });
      t.equal(result.marker, 'the value', "write resolves with the change's value");
      t.equal((await store.namespaces.byRid(result.ns))?.name, 'alpha', 'committed: the namespace is visible to store reads');
      t.equal((await store.collections.byRid(result.col))?.name, 'docs', 'and the collection');
      t.equal(await store.events.lastRid(), (await eventsSince(store, 0))[0]?.rid, 'and its event');
    });

    test('a change that throws writes nothing and rejects with its own error', async (t, store) => {
      const kept = await namespace(store, 'ns_kept', 'kept');
      const lastRid = await store.events.lastRid();
      const boom = new Error('the change fails');
      let caught: unknown;
      await store
        .write(async (tx) => {
          const ns = await tx.namespaces.insert(newNamespace('ns_doomed', 'doomed'));
          await tx.collections.insert(newCollection(ns.rid, 'col_doomed', 'docs'));
          await tx.collections.insert(newCollection(kept.rid, 'col_doomed2', 'docs'));
          await tx.keys.insert(newKey('key_doomed', 'doomed', { kind: 'cluster' }));
          await tx.namespaces.updateDisplayName(kept.rid, 'changed', at(9));
          throw boom;
        })
        .then(
          () => t.fail('the write resolved'),
          (err: unknown) => (caught = err),
        );
      t.equal(caught, boom, 'rejects with the very error the change threw');
      t.equal(await store.namespaces.byId('ns_doomed'), undefined, 'the namespace inserted before the throw is gone');
      t.equal(await store.collections.find(kept.rid, 'docs'), undefined, 'the collection too');
      t.same(await store.collections.allRids(kept.rid), [], 'no collection of the kept namespace');
      t.equal(await store.keys.byId('key_doomed'), undefined, 'the key too');
      t.equal((await store.namespaces.byRid(kept.rid))?.display_name, null, 'an update of a committed row is undone');
      t.equal(await store.events.lastRid(), lastRid, 'and the events its inserts appended');

      // A change that throws before returning a promise: the write still rejects, it does not throw.
      const sync = new Error('thrown at once');
      const failing = store.write((() => {
        throw sync;
      }) as (tx: StoreTx) => Promise<void>);
      await failing.then(
        () => t.fail('the write resolved'),
        (err: unknown) => t.equal(err, sync, 'a synchronous throw rejects the write with that error'),
      );

      // The names are free again: nothing of the failed change holds them.
      const again = await store.write(async (tx) => {
        const ns = await tx.namespaces.insert(newNamespace('ns_doomed', 'doomed'));
        await tx.keys.insert(newKey('key_doomed', 'doomed', { kind: 'cluster' }));
        return ns;
      });
      t.equal((await store.namespaces.find('doomed'))?.rid, again.rid, 'the same rows insert after the rollback');
    });

    test('concurrent writes all commit; one that fails among them is undone alone', async (t, store) => {
      const [a, b] = await Promise.all([
        store.write(async (tx) => (await tx.namespaces.insert(newNamespace('ns_a', 'a'))).rid),
        store.write(async (tx) => (await tx.namespaces.insert(newNamespace('ns_b', 'b'))).rid),
      ]);
      t.not(a, b, 'distinct rids');
      t.same(sortedIds(await store.namespaces.list({ afterRid: 0, limit: 10 })), ['ns_a', 'ns_b'], 'both committed');

      const boom = new Error('the middle one fails');
      const outcomes = await Promise.allSettled([
        store.write(async (tx) => (await tx.namespaces.insert(newNamespace('ns_c', 'c'))).id),
        store.write(async (tx) => {
          await tx.namespaces.insert(newNamespace('ns_d', 'd'));
          throw boom;
        }),
        store.write(async (tx) => (await tx.namespaces.insert(newNamespace('ns_e', 'e'))).id),
      ]);
      t.same(
        outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason)),
        ['ns_c', boom, 'ns_e'],
        'each write settles with its own outcome',
      );
      t.same(sortedIds(await store.namespaces.list({ afterRid: 0, limit: 10 })), ['ns_a', 'ns_b', 'ns_c', 'ns_e'], 'the others committed, the failed one wrote nothing');
    });

    test('concurrent read-then-write changes see each other: one queued run is claimed once', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const col = await collection(store, ns.rid, 'col_1');
      await store.write((tx) => tx.research.insert(newResearch('res_1', ns, col, 'key_1')));
      const claims = await Promise.all([store.write((tx) => tx.research.claim(at(10))), store.write((tx) => tx.research.claim(at(11)))]);
      t.same(
        claims.map((c) => c?.id ?? null).sort(),
        [null, 'res_1'],
        'one change claims it, the other finds nothing left',
      );
    });
  });

  // ------------------------------------------------------------------ reads kept until a write

  t.test('untilChanged', async (t) => {
    const test = on(t);
    test('keeps a value per key until anything is written, then computes again', async (t, store) => {
      let computed = 0;
      const count = () => store.untilChanged('namespaces', async () => (computed++, (await store.namespaces.list({ afterRid: 0, limit: 10 })).length));
      t.equal(await count(), 0, 'computed');
      t.equal(await count(), 0, 'kept');
      t.equal(computed, 1, 'computed once while nothing was written');
      t.equal(await store.untilChanged('another key', async () => 'other'), 'other', 'each key has its own value');
      await namespace(store, 'ns_1', 'alpha');
      t.equal(await count(), 1, 'a write makes it compute again, and see the write');
      t.equal(computed, 2);
      await store.write(async (tx) => tx.namespaces.updateDisplayName((await tx.namespaces.find('alpha'))!.rid, 'Alpha', at(3)));
      await count();
      t.equal(computed, 3, 'any write does, not only one that changes the answer');
    });
    test('a value computed while a write lands is not kept', async (t, store) => {
      let computed = 0;
      const slow = () =>
        store.untilChanged('slow', async () => {
          computed++;
          const before = (await store.namespaces.list({ afterRid: 0, limit: 10 })).length;
          if (computed === 1) await namespace(store, 'ns_1', 'alpha');
          return before;
        });
      t.equal(await slow(), 0, 'the first computation saw no namespace');
      t.equal(await slow(), 1, 'the next call computes again, after the write that landed meanwhile');
      t.equal(computed, 2);
    });
    test('a failed computation is not kept', async (t, store) => {
      let calls = 0;
      const flaky = () => store.untilChanged('flaky', async () => {
        if (calls++ === 0) throw new Error('first call fails');
        return 'second';
      });
      await t.rejects(flaky(), /first call fails/);
      t.equal(await flaky(), 'second');
    });
  });

  // ------------------------------------------------------------------ keys

  t.test('keys', async (t) => {
    const test = on(t);
    test('insert, then find by ID, prefix and name', async (t, store) => {
      const nsScope: StoredScope = { kind: 'namespace', namespace_id: 'ns_1', actions: ['read', 'search'] };
      const colScope: StoredScope = { kind: 'collection', namespace_id: 'ns_2', collections: ['col_a', 'col_b'], actions: ['query'] };
      const { root, reader, other } = await store.write(async (tx) => ({
        root: await tx.keys.insert(newKey('key_root', 'root', { kind: 'cluster' })),
        reader: await tx.keys.insert(newKey('key_r1', 'reader', nsScope, 'key_root')),
        other: await tx.keys.insert(newKey('key_r2', 'reader', colScope, 'key_root')),
      }));
      t.match(
        plainKey(root),
        { id: 'key_root', name: 'root', prefix: 'pfx_key_root', scope: { kind: 'cluster' }, created_by: null, created_at: at(2), revoked_at: null, namespace_id: null, last_used_at: null },
        'insert returns the row',
      );
      t.equal(typeof root.rid, 'number');
      t.equal(typeof root.revision, 'number');
      t.ok(Buffer.isBuffer(root.secret_hash) && root.secret_hash.equals(Buffer.from('hash of key_root')), 'the hash comes back as the same bytes');
      t.same(reader.scope, nsScope, "a namespace key's scope comes back as data");
      t.equal(typeof reader.scope, 'object', 'not as JSON text');
      t.same(other.scope, colScope, "a collection key's scope too");
      t.equal(reader.namespace_id, 'ns_1', "a namespace key's namespace is its scope's");
      t.equal(other.namespace_id, 'ns_2', "a collection key's namespace is its scope's");
      t.equal(reader.created_by, 'key_root');

      t.same(plainKey(await store.keys.byId('key_r1')), plainKey(reader), 'byId');
      t.same(plainKey(await store.keys.byPrefix('pfx_key_r1')), plainKey(reader), 'byPrefix');
      t.same(plainKey(await store.keys.byName('ns_1', 'reader')), plainKey(reader), 'byName in its namespace');
      t.same(plainKey(await store.keys.byName('ns_2', 'reader')), plainKey(other), 'the same name in another namespace is another key');
      t.same(plainKey(await store.keys.byName(null, 'root')), plainKey(root), 'a cluster key by name: namespace null');
      t.equal(await store.keys.byName(null, 'reader'), undefined, 'no cluster key of that name');
      t.equal(await store.keys.byName('ns_1', 'root'), undefined, "a cluster key is not a namespace's");
      t.equal(await store.keys.byId('key_nope'), undefined, 'unknown ID');
      t.equal(await store.keys.byPrefix('pfx_nope'), undefined, 'unknown prefix');
      t.equal(await store.keys.byName('ns_1', 'nope'), undefined, 'unknown name');

      const cluster = await store.write((tx) => tx.keys.insert(newKey('key_c2', 'reader', { kind: 'cluster' })));
      t.equal(cluster.namespace_id, null, 'a cluster key may take a name namespace keys use');
      t.equal((await store.keys.byName(null, 'reader'))?.id, 'key_c2');

      await t.rejects(
        store.write((tx) => tx.keys.insert(newKey('key_dup', 'reader', { kind: 'namespace', namespace_id: 'ns_1', actions: ['read'] }))),
        'a second key of the same name in one namespace is refused',
      );
      await t.rejects(store.write((tx) => tx.keys.insert(newKey('key_dup2', 'root', { kind: 'cluster' }))), 'and a second cluster key of the same name');
      t.equal(await store.keys.byId('key_dup'), undefined, 'the refused key is not stored');
      t.equal((await store.keys.byName('ns_1', 'reader'))?.id, 'key_r1', 'the name still names the first key');
    });

    test('list in creation order, by cursor and limit, and one namespace\'s collection keys', async (t, store) => {
      const col = (ns: string): StoredScope => ({ kind: 'collection', namespace_id: ns, collections: ['c'], actions: ['read'] });
      const rows = await store.write(async (tx) => [
        await tx.keys.insert(newKey('key_5', 'k5', { kind: 'cluster' })),
        await tx.keys.insert(newKey('key_4', 'k4', { kind: 'namespace', namespace_id: 'ns_1', actions: ['read'] }, 'key_5')),
        await tx.keys.insert(newKey('key_3', 'k3', col('ns_1'), 'key_5')),
        await tx.keys.insert(newKey('key_2', 'k2', col('ns_2'), 'key_4')),
        await tx.keys.insert(newKey('key_1', 'k1', col('ns_1'), 'key_5')),
      ]);
      t.ok(rows.every((r, i) => i === 0 || r.rid > rows[i - 1]!.rid), 'rids grow in creation order');
      t.same(ids(await store.keys.list({ afterRid: 0, limit: 100 })), ['key_5', 'key_4', 'key_3', 'key_2', 'key_1'], 'creation order, not ID order');
      t.same(ids(await store.keys.list({ afterRid: rows[1]!.rid, limit: 2 })), ['key_3', 'key_2'], 'after a cursor, up to the limit');
      t.same(ids(await store.keys.list({ afterRid: rows[4]!.rid, limit: 10 })), [], 'nothing after the last');
      t.same(ids(await store.keys.list({ afterRid: 0, limit: 100, collectionKeysOf: 'ns_1' })), ['key_3', 'key_1'], "only ns_1's collection keys (not its namespace key)");
      t.same(ids(await store.keys.list({ afterRid: rows[2]!.rid, limit: 100, collectionKeysOf: 'ns_1' })), ['key_1'], 'with a cursor');
      t.same(ids(await store.keys.list({ afterRid: 0, limit: 100, collectionKeysOf: 'ns_none' })), [], 'a namespace with none');

      t.same(ids(await store.keys.createdBy('key_5')), ['key_4', 'key_3', 'key_1'], 'the keys a key issued, in creation order');
      t.same(ids(await store.keys.createdBy('key_4')), ['key_2']);
      t.same(ids(await store.keys.createdBy('key_1')), [], 'a key that issued none');
      t.same(ids(await store.keys.createdBy('key_nope')), [], 'an unknown key');
    });

    test('revocation, edits, uses and new secrets', async (t, store) => {
      const scope: StoredScope = { kind: 'namespace', namespace_id: 'ns_1', actions: ['read'] };
      const key = await store.write((tx) => tx.keys.insert(newKey('key_1', 'first', scope)));
      await store.write((tx) => tx.keys.insert(newKey('key_2', 'second', scope)));

      const revoked = await store.write((tx) => tx.keys.markRevoked('key_1', at(10)));
      t.equal(revoked.revoked_at, at(10), 'markRevoked returns the revoked row');
      const again = await store.write((tx) => tx.keys.markRevoked('key_1', at(20)));
      t.equal(again.revoked_at, at(10), 'a second revocation keeps the first time');
      t.equal((await store.keys.byId('key_1'))?.revoked_at, at(10));
      t.equal((await store.keys.byId('key_2'))?.revoked_at, null, 'another key is untouched');

      const narrowed: StoredScope = { kind: 'collection', namespace_id: 'ns_1', collections: ['col_x'], actions: ['search', 'query'] };
      const edited = await store.write((tx) => tx.keys.updateNameAndScope('key_1', 'renamed', narrowed));
      t.equal(edited.revision, key.revision + 1, 'an edit bumps the revision');
      t.equal(edited.name, 'renamed');
      t.same(edited.scope, narrowed, 'the new scope, as data');
      t.same((await store.keys.byId('key_1'))?.scope, narrowed, 'stored');
      t.equal((await store.keys.byName('ns_1', 'renamed'))?.id, 'key_1', 'found by its new name');
      t.equal(await store.keys.byName('ns_1', 'first'), undefined, 'not by its old one');
      const twice = await store.write((tx) => tx.keys.updateNameAndScope('key_1', 'renamed', narrowed));
      t.equal(twice.revision, key.revision + 2, 'every edit bumps it');

      await store.write((tx) => tx.keys.touchUse('key_1', at(30)));
      const used = await store.keys.byId('key_1');
      t.equal(used?.last_used_at, at(30), 'a use is recorded');
      t.equal(used?.revision, key.revision + 2, 'a use is not an edit');
      t.equal((await store.keys.byId('key_2'))?.last_used_at, null, "another key's use is not");

      await store.write((tx) => tx.keys.replaceSecret('key_1', 'pfx_new', Buffer.from('new hash')));
      const replaced = await store.keys.byId('key_1');
      t.equal(replaced?.revoked_at, null, 'a new secret makes the key live again');
      t.equal(replaced?.prefix, 'pfx_new');
      t.ok(replaced?.secret_hash.equals(Buffer.from('new hash')), 'the new hash');
      t.equal((await store.keys.byPrefix('pfx_new'))?.id, 'key_1', 'filed under the new prefix');
      t.equal(await store.keys.byPrefix('pfx_key_1'), undefined, 'not under the old one');
    });
  });

  // ------------------------------------------------------------------ namespaces

  t.test('namespaces', async (t) => {
    const test = on(t);
    test('insert, find, list, rename and delete', async (t, store) => {
      const a = await store.write((tx) => tx.namespaces.insert(newNamespace('ns_a', 'alpha', 'Alpha')));
      const b = await namespace(store, 'ns_b', 'beta');
      const c = await namespace(store, 'ns_c', 'gamma');
      t.match(a, { id: 'ns_a', name: 'alpha', display_name: 'Alpha', created_at: at(0), updated_at: at(0), deleted_at: null }, 'insert returns the row');
      t.ok(a.rid < b.rid && b.rid < c.rid, 'rids grow in creation order');

      t.same(await store.namespaces.find('ns_a'), a, 'find by ID');
      t.same(await store.namespaces.find('alpha'), a, 'find by name');
      t.same(await store.namespaces.byId('ns_b'), b, 'byId');
      t.same(await store.namespaces.byRid(c.rid), c, 'byRid');
      t.equal(await store.namespaces.find('nope'), undefined, 'unknown ref');
      t.equal(await store.namespaces.byId('alpha'), undefined, 'byId takes an ID, not a name');
      t.equal(await store.namespaces.byRid(c.rid + 1000), undefined, 'unknown rid');

      t.same(ids(await store.namespaces.list({ afterRid: 0, limit: 10 })), ['ns_a', 'ns_b', 'ns_c'], 'list in creation order');
      t.same(ids(await store.namespaces.list({ afterRid: a.rid, limit: 1 })), ['ns_b'], 'after a cursor, up to the limit');
      t.same(ids(await store.namespaces.list({ afterRid: 0, limit: 10, onlyRids: [c.rid, a.rid] })), ['ns_a', 'ns_c'], 'onlyRids narrows, in creation order');
      t.same(ids(await store.namespaces.list({ afterRid: a.rid, limit: 10, onlyRids: [c.rid, a.rid] })), ['ns_c'], 'onlyRids with a cursor');
      t.same(await store.namespaces.list({ afterRid: 0, limit: 10, onlyRids: [] }), [], 'an empty onlyRids lists none');

      const renamed = await store.write((tx) => tx.namespaces.updateDisplayName(b.rid, 'Beta', at(7)));
      t.match(renamed, { rid: b.rid, name: 'beta', display_name: 'Beta', updated_at: at(7), created_at: at(0) }, 'updateDisplayName returns the row');
      t.same(await store.namespaces.byRid(b.rid), renamed, 'stored');
      t.equal((await store.write((tx) => tx.namespaces.updateDisplayName(b.rid, null, at(8)))).display_name, null, 'the display name can be cleared');

      await store.write((tx) => tx.namespaces.markDeleted(c.rid, at(9)));
      t.equal(await store.namespaces.find('ns_c'), undefined, 'a deleted namespace is not found by ID');
      t.equal(await store.namespaces.find('gamma'), undefined, 'nor by name');
      t.equal((await store.namespaces.byId('ns_c'))?.deleted_at, at(9), 'byId still finds it, deleted');
      t.equal((await store.namespaces.byRid(c.rid))?.deleted_at, at(9), 'byRid too');
      t.same(ids(await store.namespaces.list({ afterRid: 0, limit: 10 })), ['ns_a', 'ns_b'], 'list leaves it out');
      t.same(await store.namespaces.list({ afterRid: 0, limit: 10, onlyRids: [c.rid] }), [], 'even when named in onlyRids');

      const reborn = await namespace(store, 'ns_c2', 'gamma');
      t.equal((await store.namespaces.find('gamma'))?.rid, reborn.rid, "a deleted namespace's name may be taken again");
      await t.rejects(namespace(store, 'ns_dup', 'alpha'), 'a living name may not');
      t.equal(await store.namespaces.byId('ns_dup'), undefined);
    });

    test('usage counts living collections, all or by name', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const other = await namespace(store, 'ns_2');
      const zero = await store.namespaces.usage(ns.rid);
      t.same(zero, { collections: 0, files: 0, source_bytes: 0n }, 'an empty namespace');
      await collection(store, ns.rid, 'col_x', 'x');
      await collection(store, ns.rid, 'col_y', 'y');
      const z = await collection(store, ns.rid, 'col_z', 'z');
      await collection(store, other.rid, 'col_o', 'x');
      await store.write((tx) => tx.collections.markDeleted(z.rid, at(9)));

      const usage = await store.namespaces.usage(ns.rid);
      t.same(usage, { collections: 2, files: 0, source_bytes: 0n }, 'living collections only, and no files');
      t.equal(typeof usage.source_bytes, 'bigint', 'bytes as a bigint');
      t.equal((await store.namespaces.usage(ns.rid, ['x', 'z', 'nope'])).collections, 1, 'onlyCollections by name (a deleted one does not count)');
      t.equal((await store.namespaces.usage(ns.rid, [])).collections, 0, 'an empty onlyCollections counts none');
      t.equal((await store.namespaces.usage(other.rid)).collections, 1, "another namespace's own");
    });
  });

  // ------------------------------------------------------------------ collections

  t.test('collections', async (t) => {
    const test = on(t);
    test('insert and find within a namespace', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const other = await namespace(store, 'ns_2');
      const docs = await collection(store, ns.rid, 'col_docs', 'docs');
      t.match(docs, { id: 'col_docs', namespace_rid: ns.rid, name: 'docs', display_name: null, access_control: 'off', embedding_model: null, created_at: at(1), updated_at: at(1), deleted_at: null }, 'insert returns the row');
      t.same(docs.processing, PROCESSING, 'processing comes back as data');
      t.equal(typeof docs.processing, 'object', 'not as JSON text');
      t.equal(typeof docs.generation, 'number');

      t.same(await store.collections.find(ns.rid, 'docs'), docs, 'by name');
      t.same(await store.collections.find(ns.rid, 'col_docs'), docs, 'by ID');
      t.same(await store.collections.byRid(docs.rid), docs, 'byRid');
      t.equal(await store.collections.find(other.rid, 'docs'), undefined, "not by name in another namespace");
      t.equal(await store.collections.find(other.rid, 'col_docs'), undefined, 'not by ID in another namespace');
      t.equal(await store.collections.find(ns.rid, 'nope'), undefined, 'unknown ref');
      t.equal(await store.collections.byRid(docs.rid + 1000), undefined, 'unknown rid');
      t.same(await store.collections.fileCounts(docs.rid), { pending: 0, indexing: 0, ready: 0, failed: 0 }, 'a new collection has no files');

      const twin = await collection(store, other.rid, 'col_twin', 'docs');
      t.equal((await store.collections.find(other.rid, 'docs'))?.rid, twin.rid, 'the same name in another namespace is another collection');
      await t.rejects(collection(store, ns.rid, 'col_dup', 'docs'), 'a second living collection of one name in a namespace is refused');
      t.same(ids(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10 })), ['col_docs'], 'and not stored');
    });

    test('list, live and all rids', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const other = await namespace(store, 'ns_2');
      const a = await collection(store, ns.rid, 'col_3', 'a');
      const b = await collection(store, ns.rid, 'col_2', 'b');
      const c = await collection(store, ns.rid, 'col_1', 'c');
      const o = await collection(store, other.rid, 'col_o', 'a');
      t.same(ids(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10 })), ['col_3', 'col_2', 'col_1'], 'creation order, one namespace');
      t.same(ids(await store.collections.list({ namespaceRid: ns.rid, afterRid: a.rid, limit: 1 })), ['col_2'], 'after a cursor, up to the limit');
      t.same(ids(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10, onlyNames: ['c', 'a', 'nope'] })), ['col_3', 'col_1'], 'onlyNames narrows');
      t.same(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10, onlyNames: [] }), [], 'an empty onlyNames lists none');

      await store.write((tx) => tx.collections.markDeleted(b.rid, at(9)));
      t.same(ids(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10 })), ['col_3', 'col_1'], 'a deleted collection is not listed');
      t.same(await store.collections.list({ namespaceRid: ns.rid, afterRid: 0, limit: 10, onlyNames: ['b'] }), [], 'even by name');
      t.same([...(await store.collections.liveRids(ns.rid))].sort((x, y) => x - y), [a.rid, c.rid], 'liveRids: living ones');
      t.same([...(await store.collections.allRids(ns.rid))].sort((x, y) => x - y), [a.rid, b.rid, c.rid], 'allRids: deleted ones too');
      t.same(await store.collections.allRids(other.rid), [o.rid], "another namespace's own");
      t.same(await store.collections.liveRids(ns.rid + other.rid + 1000), [], 'an unknown namespace has none');
    });

    test('delete, find deleted, restore', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const first = await collection(store, ns.rid, 'col_1', 'docs');
      await store.write((tx) => tx.collections.markDeleted(first.rid, at(10)));
      t.equal(await store.collections.find(ns.rid, 'docs'), undefined, 'a deleted collection is not found');
      t.equal((await store.collections.byRid(first.rid))?.deleted_at, at(10), 'byRid finds it, deleted');
      t.equal((await store.collections.findDeleted(ns.rid, 'docs'))?.rid, first.rid, 'findDeleted by name');
      t.equal((await store.collections.findDeleted(ns.rid, 'col_1'))?.rid, first.rid, 'findDeleted by ID');

      const second = await collection(store, ns.rid, 'col_2', 'docs');
      t.equal((await store.collections.find(ns.rid, 'docs'))?.rid, second.rid, "a deleted collection's name may be taken again");
      t.equal(await store.collections.findDeleted(ns.rid, 'col_2'), undefined, 'findDeleted does not find a living one');
      await store.write((tx) => tx.collections.markDeleted(second.rid, at(20)));
      t.equal((await store.collections.findDeleted(ns.rid, 'docs'))?.rid, second.rid, 'findDeleted by name: the most recently deleted');
      t.equal((await store.collections.findDeleted(ns.rid, 'col_1'))?.rid, first.rid, 'by ID: that one');
      t.equal(await store.collections.findDeleted(ns.rid, 'nope'), undefined, 'unknown ref');

      const restored = await store.write((tx) => tx.collections.restore(first.rid, at(30)));
      t.match(restored, { rid: first.rid, name: 'docs', deleted_at: null, updated_at: at(30) }, 'restore returns the living row');
      t.same(restored.processing, PROCESSING, 'its settings as they were');
      t.equal((await store.collections.find(ns.rid, 'docs'))?.rid, first.rid, 'found again');
      t.same(await store.collections.fileCounts(first.rid), { pending: 0, indexing: 0, ready: 0, failed: 0 }, 'its counters as they were');
      t.equal((await store.collections.findDeleted(ns.rid, 'docs'))?.rid, second.rid, 'the other stays deleted');
    });

    test('update, generation and embedding model', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const col = await collection(store, ns.rid, 'col_1', 'docs');
      const other = await collection(store, ns.rid, 'col_2', 'other');
      const processing: Processing = { keyword: false, semantic: true, ocr: true };
      const updated = await store.write((tx) => tx.collections.update(col.rid, { display_name: 'Docs', processing, access_control: 'enforced' }, at(40)));
      t.match(updated, { rid: col.rid, name: 'docs', display_name: 'Docs', access_control: 'enforced', updated_at: at(40), created_at: at(1) }, 'update returns the row');
      t.same(updated.processing, processing, 'the new processing, as data');
      t.same(await store.collections.byRid(col.rid), updated, 'stored');

      await store.write((tx) => tx.collections.bumpGeneration(col.rid));
      t.equal((await store.collections.byRid(col.rid))?.generation, col.generation + 1, 'bumpGeneration: +1');
      await store.write(async (tx) => {
        await tx.collections.bumpGeneration(col.rid);
        await tx.collections.bumpGeneration(col.rid);
      });
      t.equal((await store.collections.byRid(col.rid))?.generation, col.generation + 3, 'each bump counts');
      t.equal((await store.collections.byRid(other.rid))?.generation, other.generation, "another collection's generation stays");

      await store.write((tx) => tx.collections.setEmbeddingModel(col.rid, 'model-x'));
      t.equal((await store.collections.byRid(col.rid))?.embedding_model, 'model-x', 'setEmbeddingModel');
      t.equal((await store.collections.byRid(other.rid))?.embedding_model, null, 'only that collection');
      await store.write((tx) => tx.collections.setEmbeddingModel(col.rid, null));
      t.equal((await store.collections.byRid(col.rid))?.embedding_model, null, 'and cleared');
    });

    test('changes are reported as collection.updated, the resource as it is now', async (t, store) => {
      const ns = await namespace(store, 'ns_1', 'alpha');
      t.equal(await store.events.lastRid(), 0, 'a namespace is not reported');
      const col = await collection(store, ns.rid, 'col_1', 'docs');
      const [created, ...none] = await eventsSince(store, 0);
      t.same(none, [], 'one event for an insert');
      t.match(created, { type: 'collection.updated', namespace_rid: ns.rid, collection_rid: col.rid, collection_id: 'col_1', owner_key_id: null }, 'about the collection');
      const data = JSON.parse(created!.data) as Record<string, unknown>;
      t.match(data, { id: 'col_1', name: 'docs', namespace: 'alpha', status: 'empty', access_control: 'off', file_counts: { pending: 0, indexing: 0, ready: 0, failed: 0 } }, 'its data: the collection as its GET shows it');
      t.same(data.processing, PROCESSING, 'processing as an object in the data');

      let last = await store.events.lastRid();
      await store.write((tx) => tx.collections.update(col.rid, { display_name: 'Docs', processing: PROCESSING, access_control: 'off' }, at(50)));
      const afterUpdate = await eventsSince(store, last);
      t.same(afterUpdate.map((e) => e.type), ['collection.updated'], 'an update that changes a field is reported');
      t.equal((JSON.parse(afterUpdate[0]!.data) as { display_name: unknown }).display_name, 'Docs', 'with the new value');

      last = await store.events.lastRid();
      await store.write((tx) => tx.collections.update(col.rid, { display_name: 'Docs', processing: { ...PROCESSING }, access_control: 'off' }, at(51)));
      t.same(await eventsSince(store, last), [], 'an update that changes nothing shown is not');
      const reordered = Object.fromEntries(Object.entries(PROCESSING).reverse()) as Processing;
      await store.write((tx) => tx.collections.update(col.rid, { display_name: 'Docs', processing: reordered, access_control: 'off' }, at(51)));
      t.same(await eventsSince(store, last), [], 'nor one that writes the same processing with its keys in another order');

      last = await store.events.lastRid();
      await store.write((tx) => tx.collections.markDeleted(col.rid, at(52)));
      const deleted = await eventsSince(store, last);
      t.same(deleted.map((e) => [e.type, e.collection_rid]), [['collection.updated', col.rid]], 'a deletion is reported');
      t.equal((JSON.parse(deleted[0]!.data) as { status: unknown }).status, 'deleting', 'as deleting');

      last = await store.events.lastRid();
      await store.write((tx) => tx.collections.restore(col.rid, at(53)));
      const restored = await eventsSince(store, last);
      t.same(restored.map((e) => [e.type, e.collection_rid]), [['collection.updated', col.rid]], 'a restore is reported');
      t.equal((JSON.parse(restored[0]!.data) as { status: unknown }).status, 'empty', 'living again');
    });
  });

  storeFilesConformance(t, { on, twoCollections, eventsSince, at });
  bm25LiveConformance(t, { on, at });
  storeIngestConformance(t, { on, twoCollections, at });
  storeVectorsConformance(t, { on, twoCollections, at });

  // ------------------------------------------------------------------ events

  t.test('events', async (t) => {
    const test = on(t);
    test('the outbox read by cursor, up to a rid, and by audience', async (t, store) => {
      t.equal(await store.events.lastRid(), 0, 'an empty outbox: lastRid 0');
      t.same(await eventsSince(store, 0), [], 'and no events');
      const a = await namespace(store, 'ns_a');
      const b = await namespace(store, 'ns_b');
      const a1 = await collection(store, a.rid, 'col_a1');
      const a2 = await collection(store, a.rid, 'col_a2');
      const b1 = await collection(store, b.rid, 'col_b1');
      await store.write((tx) => tx.research.insert(newResearch('res_1', a, a1, 'key_1')));
      await store.write((tx) => tx.research.insert(newResearch('res_2', a, a1, 'key_2')));

      const all = await eventsSince(store, 0);
      const label = (rows: EventRow[]) =>
        rows.map((e) => (e.type.startsWith('research.') ? `${e.type}:${(JSON.parse(e.data) as { id: string }).id}` : `${e.type}:${e.collection_id}`));
      t.same(label(all), ['collection.updated:col_a1', 'collection.updated:col_a2', 'collection.updated:col_b1', 'research.updated:res_1', 'research.updated:res_2'], 'every event, oldest first');
      t.ok(all.every((e, i) => i === 0 || e.rid > all[i - 1]!.rid), 'rids grow');
      t.equal(await store.events.lastRid(), all[4]!.rid, 'lastRid: the newest');
      for (const e of all) t.equal(await store.events.findRid(e.id), e.rid, `findRid ${e.type}`);
      t.equal(await store.events.findRid('evt_nope'), undefined, 'findRid of an unknown ID');

      const rids = all.map((e) => e.rid);
      const page = (opts: { afterRid?: number; uptoRid?: number; limit?: number; audience?: Partial<EventAudience> }) =>
        store.events.after({ afterRid: opts.afterRid ?? 0, uptoRid: opts.uptoRid, limit: opts.limit ?? 100, audience: audience(opts.audience ?? {}) }).then(label);
      t.same(await page({ afterRid: rids[0]!, uptoRid: rids[2]! }), label(all.slice(1, 3)), 'after a rid, up to another (inclusive)');
      t.same(await page({ limit: 2 }), label(all.slice(0, 2)), 'up to the limit');
      t.same(await page({ afterRid: rids[4]! }), [], 'nothing after the newest');

      t.same(await page({ audience: { namespaceRid: a.rid } }), label([all[0]!, all[1]!, all[3]!, all[4]!]), "one namespace's events");
      t.same(await page({ audience: { namespaceRid: b.rid } }), label([all[2]!]), "the other's");
      t.same(await page({ audience: { collectionRids: [a2.rid, b1.rid] } }), label([all[1]!, all[2]!]), "a list of collections: those collections' events");
      t.same(await page({ audience: { collectionRids: [a1.rid] } }), label([all[0]!, all[3]!, all[4]!]), "research events are their collection's");
      t.same(await page({ audience: { collectionRids: [] } }), [], 'an empty list of collections sees nothing');
      t.same(await page({ audience: { namespaceRid: b.rid, collectionRids: [a1.rid] } }), [], 'namespace and collections both apply');
      t.same(await page({ audience: { resources: false } }), label(all.slice(3)), 'without resources: research events only');
      t.same(await page({ audience: { research: 'none' } }), label(all.slice(0, 3)), "research 'none': resource events only");
      t.same(await page({ audience: { research: { ownerKeyId: 'key_2' } } }), label([...all.slice(0, 3), all[4]!]), "research of one owner: that key's runs only");
      t.same(await page({ audience: { resources: false, research: { ownerKeyId: 'key_1' } } }), label([all[3]!]), 'and nothing else without resources');
      t.same(await page({ audience: { resources: false, research: 'none' } }), [], 'neither: nothing');
      t.same(await page({ afterRid: rids[0]!, limit: 1, audience: { namespaceRid: b.rid } }), label([all[2]!]), 'the limit counts only what the audience sees');
      t.equal(all[3]!.owner_key_id, 'key_1', 'a research event carries its owner');
      t.equal(all[3]!.collection_id, 'col_a1', 'and its collection ID');
    });

    test('retention deletes events older than the cutoff', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      await collection(store, ns.rid, 'col_old1');
      await collection(store, ns.rid, 'col_old2');
      const old = await eventsSince(store, 0);
      await sleep(15);
      await collection(store, ns.rid, 'col_new');
      const fresh = (await eventsSince(store, 0)).slice(old.length);
      t.equal(fresh.length, 1);
      t.ok(fresh[0]!.created_at > old[1]!.created_at, 'the newer event is stamped later');

      t.equal(await store.write((tx) => tx.events.deleteBefore('2000-01-01T00:00:00.000Z')), 0, 'a cutoff before every event deletes none');
      t.equal(await store.write((tx) => tx.events.deleteBefore(fresh[0]!.created_at)), 2, 'how many went: the older ones');
      t.same(ids(await eventsSince(store, 0)), ids(fresh), 'the newer one stays');
      t.equal(await store.events.findRid(old[0]!.id), undefined, 'a deleted event is not found');
      t.equal(await store.events.lastRid(), fresh[0]!.rid, 'lastRid: the newest still');
      t.equal(await store.write((tx) => tx.events.deleteBefore(fresh[0]!.created_at)), 0, 'again: none');
    });
  });

  // ------------------------------------------------------------------ webhooks

  t.test('webhooks', async (t) => {
    const test = on(t);
    test('insert, find, list, enabled, update, delete', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const other = await namespace(store, 'ns_2');
      const w1 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_1', ns.rid, { event_types: '["file.ready"]', created_by_key_id: 'key_1' })));
      const w2 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_2', ns.rid)));
      const w3 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_3', other.rid, { enabled: 0, disabled_reason: 'off' })));
      t.same(w1, { ...newWebhook('wh_1', ns.rid, { event_types: '["file.ready"]', created_by_key_id: 'key_1' }), rid: w1.rid }, 'insert returns the row with its rid');
      t.same(await store.webhooks.find(ns.rid, 'wh_1'), w1, 'find in its namespace');
      t.equal(await store.webhooks.find(other.rid, 'wh_1'), undefined, 'not in another');
      t.equal(await store.webhooks.find(ns.rid, 'wh_nope'), undefined, 'unknown ID');
      t.same(await store.webhooks.byRid(w3.rid), w3, 'byRid');
      t.equal(await store.webhooks.byRid(w3.rid + 1000), undefined, 'unknown rid');
      t.same(ids(await store.webhooks.list(ns.rid, 0, 10)), ['wh_1', 'wh_2'], "list: one namespace's, in creation order");
      t.same(ids(await store.webhooks.list(ns.rid, w1.rid, 10)), ['wh_2'], 'after a cursor');
      t.same(ids(await store.webhooks.list(ns.rid, 0, 1)), ['wh_1'], 'up to the limit');
      t.same(sortedIds(await store.webhooks.enabled()), ['wh_1', 'wh_2'], 'enabled: every namespace, those on');

      await store.write((tx) => tx.webhooks.update(w1.rid, { name: 'renamed', enabled: 0, disabled_reason: 'failing', cursor_rid: 42, last_success_at: 123, updated_at: at(60) }));
      t.same(await store.webhooks.byRid(w1.rid), { ...w1, name: 'renamed', enabled: 0, disabled_reason: 'failing', cursor_rid: 42, last_success_at: 123, updated_at: at(60) }, 'update sets the named fields, and only those');
      t.same(sortedIds(await store.webhooks.enabled()), ['wh_2'], 'a webhook turned off is not enabled');
      await store.write((tx) => tx.webhooks.update(w1.rid, { event_types: null, previous_secret: 'whsec_old', previous_secret_expires_at: 999 }));
      t.match(await store.webhooks.byRid(w1.rid), { event_types: null, previous_secret: 'whsec_old', previous_secret_expires_at: 999, name: 'renamed' }, 'a field may be set to null');
      await store.write((tx) => tx.webhooks.update(w3.rid, { enabled: 1, disabled_reason: null }));
      t.same(sortedIds(await store.webhooks.enabled()), ['wh_2', 'wh_3'], 'turned on again');

      await store.write(async (tx) => {
        await tx.webhooks.insertDelivery(newDelivery('dlv_1', w2.rid, 'evt_1'));
        await tx.webhooks.insertDelivery(newDelivery('dlv_2', w1.rid, 'evt_1'));
      });
      const gone = await store.webhooks.findDelivery(w2.rid, 'dlv_1', EVERYTHING);
      const kept = await store.webhooks.findDelivery(w1.rid, 'dlv_2', EVERYTHING);
      await store.write((tx) => tx.webhooks.recordAttempt({ delivery_rid: gone!.rid, at: at(61), response_status: 500, error: null, duration_ms: 12 }));
      await store.write((tx) => tx.webhooks.delete(w2.rid));
      t.equal(await store.webhooks.byRid(w2.rid), undefined, 'delete: the webhook is gone');
      t.same(ids(await store.webhooks.list(ns.rid, 0, 10)), ['wh_1'], 'not listed');
      t.equal(await store.webhooks.deliveryByRid(gone!.rid), undefined, 'with its deliveries');
      t.same(await store.webhooks.attemptsOf(gone!.rid), [], 'and their attempts');
      t.same(await store.webhooks.deliveryByRid(kept!.rid), kept, "another webhook's deliveries stay");
    });

    test('deliveries: one per event and webhook, the log newest first, by status and audience', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const c1 = await collection(store, ns.rid, 'col_1');
      const c2 = await collection(store, ns.rid, 'col_2');
      const w1 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_1', ns.rid)));
      const w2 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_2', ns.rid)));

      t.equal(await store.write((tx) => tx.webhooks.insertDelivery(newDelivery('dlv_1', w1.rid, 'evt_1', { body: 'first' }))), true, 'a first delivery of an event: true');
      t.equal(await store.write((tx) => tx.webhooks.insertDelivery(newDelivery('dlv_1b', w1.rid, 'evt_1', { body: 'second' }))), false, 'a second of the same event to the same webhook: false');
      t.equal(await store.webhooks.findDelivery(w1.rid, 'dlv_1b', EVERYTHING), undefined, 'and not stored');
      t.equal((await store.webhooks.findDelivery(w1.rid, 'dlv_1', EVERYTHING))?.body, 'first', 'the first is kept as it was');
      t.equal(await store.write((tx) => tx.webhooks.insertDelivery(newDelivery('dlv_w2', w2.rid, 'evt_1'))), true, 'the same event to another webhook: true');

      await store.write(async (tx) => {
        await tx.webhooks.insertDelivery(newDelivery('dlv_2', w1.rid, 'evt_2', { status: 'succeeded', next_attempt_ms: null, event_collection_rid: c1.rid }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_3', w1.rid, 'evt_3', { status: 'failed', next_attempt_ms: null, event_collection_rid: c2.rid }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_4', w1.rid, 'evt_4', { event_type: 'research.updated', event_collection_rid: c1.rid, event_owner_key_id: 'key_1' }));
      });
      const list = (opts: { beforeRid?: number; limit?: number; status?: string; audience?: Partial<EventAudience> }, webhookRid = w1.rid) =>
        store.webhooks.listDeliveries(webhookRid, { beforeRid: opts.beforeRid ?? 0, limit: opts.limit ?? 100, status: opts.status, audience: audience(opts.audience ?? {}) }).then(ids);
      t.same(await list({}), ['dlv_4', 'dlv_3', 'dlv_2', 'dlv_1'], 'newest first, one webhook');
      const [d4, d3, d2, d1] = await store.webhooks.listDeliveries(w1.rid, { beforeRid: 0, limit: 100, audience: EVERYTHING });
      t.same(d1, { ...newDelivery('dlv_1', w1.rid, 'evt_1', { body: 'first' }), rid: d1!.rid }, 'a delivery as inserted');
      t.same(await list({ beforeRid: d3!.rid }), ['dlv_2', 'dlv_1'], 'before a cursor');
      t.same(await list({ limit: 2 }), ['dlv_4', 'dlv_3'], 'up to the limit');
      t.same(await list({ status: 'failed' }), ['dlv_3'], 'by status');
      t.same(await list({ status: 'pending' }), ['dlv_4', 'dlv_1'], 'pending ones');
      t.same(await list({ audience: { collectionRids: [c1.rid] } }), ['dlv_4', 'dlv_2'], "a list of collections: those collections' events only");
      t.same(await list({ audience: { research: 'none' } }), ['dlv_3', 'dlv_2', 'dlv_1'], "research 'none' hides research events");
      t.same(await list({ audience: { research: { ownerKeyId: 'key_2' } } }), ['dlv_3', 'dlv_2', 'dlv_1'], "another owner's research is hidden");
      t.same(await list({ audience: { resources: false, research: { ownerKeyId: 'key_1' } } }), ['dlv_4'], "the owner's research, without resources");
      t.same(await list({ status: 'pending', audience: { research: 'none' } }), ['dlv_1'], 'status and audience both apply');
      t.same(await list({}, w2.rid), ['dlv_w2'], "another webhook's log");

      t.same(await store.webhooks.findDelivery(w1.rid, 'dlv_4', EVERYTHING), d4, 'findDelivery');
      t.equal(await store.webhooks.findDelivery(w1.rid, 'dlv_4', audience({ research: 'none' })), undefined, 'not when the audience may not see its event');
      t.equal(await store.webhooks.findDelivery(w1.rid, 'dlv_3', audience({ collectionRids: [c1.rid] })), undefined, "nor another collection's");
      t.same(await store.webhooks.findDelivery(w1.rid, 'dlv_2', audience({ collectionRids: [c1.rid] })), d2, 'its own collection is seen');
      t.equal(await store.webhooks.findDelivery(w2.rid, 'dlv_1', EVERYTHING), undefined, "not another webhook's");
      t.equal(await store.webhooks.findDelivery(w1.rid, 'dlv_nope', EVERYTHING), undefined, 'unknown ID');
      t.same(await store.webhooks.deliveryByRid(d3!.rid), d3, 'deliveryByRid');
      t.equal(await store.webhooks.deliveryByRid(d4!.rid + 1000), undefined, 'unknown rid');

      await store.write((tx) => tx.webhooks.updateDelivery(d1!.rid, { status: 'succeeded', attempts: 2, round_attempts: 1, next_attempt_ms: null, updated_at: at(70) }));
      t.same(await store.webhooks.deliveryByRid(d1!.rid), { ...d1, status: 'succeeded', attempts: 2, round_attempts: 1, next_attempt_ms: null, updated_at: at(70) }, 'updateDelivery');

      t.same(await store.webhooks.attemptsOf(d1!.rid), [], 'no attempts yet');
      await store.write(async (tx) => {
        await tx.webhooks.recordAttempt({ delivery_rid: d1!.rid, at: at(71), response_status: null, error: 'connection refused', duration_ms: 5 });
        await tx.webhooks.recordAttempt({ delivery_rid: d1!.rid, at: at(72), response_status: 204, error: null, duration_ms: 40 });
      });
      const attempts = await store.webhooks.attemptsOf(d1!.rid);
      t.same(
        attempts.map(({ rid: _rid, ...a }) => a),
        [
          { delivery_rid: d1!.rid, at: at(71), response_status: null, error: 'connection refused', duration_ms: 5 },
          { delivery_rid: d1!.rid, at: at(72), response_status: 204, error: null, duration_ms: 40 },
        ],
        'attempts in the order made',
      );
      t.ok(attempts[0]!.rid < attempts[1]!.rid, 'rids grow');
      t.same(await store.webhooks.attemptsOf(d2!.rid), [], "another delivery's are its own");
    });

    test('due deliveries: pending ones of enabled webhooks, earliest first', async (t, store) => {
      t.equal(await store.webhooks.nextDueMs(), undefined, 'nothing due in an empty store');
      t.same(await store.webhooks.dueDeliveries(Number.MAX_SAFE_INTEGER, 10), [], 'no due deliveries');
      const ns = await namespace(store, 'ns_1');
      const on = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_on', ns.rid)));
      const off = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_off', ns.rid, { enabled: 0 })));
      await store.write(async (tx) => {
        await tx.webhooks.insertDelivery(newDelivery('dlv_p3000', on.rid, 'evt_1', { next_attempt_ms: 3000 }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_p1000', on.rid, 'evt_2', { next_attempt_ms: 1000 }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_p2000', on.rid, 'evt_3', { next_attempt_ms: 2000 }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_s500', on.rid, 'evt_4', { status: 'succeeded', next_attempt_ms: 500 }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_f400', on.rid, 'evt_5', { status: 'failed', next_attempt_ms: 400 }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_off100', off.rid, 'evt_1', { next_attempt_ms: 100 }));
      });
      t.equal(await store.webhooks.nextDueMs(), 1000, 'the earliest pending delivery of an enabled webhook');
      t.same(ids(await store.webhooks.dueDeliveries(2000, 10)), ['dlv_p1000', 'dlv_p2000'], 'due by now (inclusive), earliest first');
      t.same(ids(await store.webhooks.dueDeliveries(5000, 1)), ['dlv_p1000'], 'up to the limit');
      t.same(await store.webhooks.dueDeliveries(999, 10), [], 'none due yet');

      await store.write((tx) => tx.webhooks.update(off.rid, { enabled: 1 }));
      t.equal(await store.webhooks.nextDueMs(), 100, 'a webhook turned on: its pending deliveries count');
      t.same(ids(await store.webhooks.dueDeliveries(1000, 10)), ['dlv_off100', 'dlv_p1000']);

      t.equal(await store.write((tx) => tx.webhooks.failPendingDeliveries(on.rid, at(80))), 3, "failPendingDeliveries: how many of the webhook's pending ones");
      t.same(
        await store.webhooks.listDeliveries(on.rid, { beforeRid: 0, limit: 10, status: 'failed', audience: EVERYTHING }).then((rows) => rows.map((r) => [r.id, r.next_attempt_ms, r.updated_at]).sort()),
        [
          ['dlv_f400', 400, at(4)],
          ['dlv_p1000', null, at(80)],
          ['dlv_p2000', null, at(80)],
          ['dlv_p3000', null, at(80)],
        ],
        'ended as failed, no longer due; the one already failed untouched',
      );
      t.equal((await store.webhooks.findDelivery(on.rid, 'dlv_s500', EVERYTHING))?.status, 'succeeded', 'a succeeded one untouched');
      t.equal(await store.webhooks.nextDueMs(), 100, "only the other webhook's delivery is due");
      t.equal(await store.write((tx) => tx.webhooks.failPendingDeliveries(on.rid, at(81))), 0, 'again: none');
    });

    test('replay candidates', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const col = await collection(store, ns.rid, 'col_1');
      const w = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_1', ns.rid)));
      const w2 = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_2', ns.rid)));
      await store.write(async (tx) => {
        await tx.webhooks.insertDelivery(newDelivery('dlv_1', w.rid, 'evt_1', { event_at: at(1), status: 'succeeded' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_2', w.rid, 'evt_2', { event_at: at(2), status: 'failed' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_3', w.rid, 'evt_3', { event_at: at(3), status: 'pending' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_4', w.rid, 'evt_4', { event_at: at(4), status: 'failed', event_type: 'research.updated', event_collection_rid: col.rid, event_owner_key_id: 'key_1' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_other', w2.rid, 'evt_2', { event_at: at(2), status: 'failed' }));
      });
      const replay = (opts: { since?: string; until?: string; onlyFailed?: boolean; eventIds?: string[]; audience?: Partial<EventAudience> }) =>
        store.webhooks
          .replayCandidates(w.rid, { since: opts.since, until: opts.until, onlyFailed: opts.onlyFailed ?? false, eventIds: opts.eventIds, audience: audience(opts.audience ?? {}) })
          .then(sortedIds);
      t.same(await replay({}), ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4'], "every delivery of the webhook's log");
      t.same(await replay({ since: at(2) }), ['dlv_2', 'dlv_3', 'dlv_4'], 'since: events at or after it');
      t.same(await replay({ until: at(3) }), ['dlv_1', 'dlv_2'], 'until: events before it');
      t.same(await replay({ since: at(2), until: at(4) }), ['dlv_2', 'dlv_3'], 'both');
      t.same(await replay({ onlyFailed: true }), ['dlv_2', 'dlv_3', 'dlv_4'], 'onlyFailed: every one not delivered (a pending one counts, it stays queued once)');
      t.same(await replay({ eventIds: ['evt_4', 'evt_1', 'evt_nope'] }), ['dlv_1', 'dlv_4'], 'by event IDs');
      t.same(await replay({ eventIds: [] }), [], 'an empty list of event IDs selects none');
      t.same(await replay({ onlyFailed: true, eventIds: ['evt_1', 'evt_2'] }), ['dlv_2'], 'onlyFailed and event IDs both apply');
      t.same(await replay({ audience: { research: 'none' } }), ['dlv_1', 'dlv_2', 'dlv_3'], 'only what the audience may be sent now');
      t.same(await replay({ audience: { collectionRids: [col.rid] } }), ['dlv_4'], 'a list of collections');
      t.same(await replay({ since: at(10) }), [], 'nothing since a later time');
    });

    test('log retention keeps pending deliveries', async (t, store) => {
      const ns = await namespace(store, 'ns_1');
      const w = await store.write((tx) => tx.webhooks.insert(newWebhook('wh_1', ns.rid)));
      await store.write(async (tx) => {
        await tx.webhooks.insertDelivery(newDelivery('dlv_old_ok', w.rid, 'evt_1', { created_at: at(1), status: 'succeeded' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_old_failed', w.rid, 'evt_2', { created_at: at(2), status: 'failed' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_old_pending', w.rid, 'evt_3', { created_at: at(2), status: 'pending' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_cutoff', w.rid, 'evt_4', { created_at: at(5), status: 'succeeded' }));
        await tx.webhooks.insertDelivery(newDelivery('dlv_new', w.rid, 'evt_5', { created_at: at(9), status: 'failed' }));
      });
      const oldOk = await store.webhooks.findDelivery(w.rid, 'dlv_old_ok', EVERYTHING);
      await store.write((tx) => tx.webhooks.recordAttempt({ delivery_rid: oldOk!.rid, at: at(1), response_status: 200, error: null, duration_ms: 3 }));
      t.equal(await store.write((tx) => tx.webhooks.deleteDeliveriesBefore(at(5))), 2, 'how many went: delivered or failed ones before the cutoff');
      t.same(sortedIds(await store.webhooks.listDeliveries(w.rid, { beforeRid: 0, limit: 10, audience: EVERYTHING })), ['dlv_cutoff', 'dlv_new', 'dlv_old_pending'], 'pending ones and newer ones stay');
      t.same(await store.webhooks.attemptsOf(oldOk!.rid), [], "a deleted delivery's attempts go with it");
      t.equal(await store.write((tx) => tx.webhooks.deleteDeliveriesBefore(at(5))), 0, 'again: none');
    });
  });


  // ------------------------------------------------------------------ access rules

  t.test('access rules', async (t) => {
    const test = on(t);

    test('insert, find by target and ID, update, delete; rows typed', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const rule = await store.write((tx) => tx.accessRules.insert({ id: 'acr_1', collection_rid: col.rid, target: { folder: '/team/' }, readers: ['group:b', 'group:a'], sealed: true, now: at(20) }));
      t.match(rule, { id: 'acr_1', collection_rid: col.rid, folder: '/team/', file: null, readers: ['group:b', 'group:a'], sealed: true, created_at: at(20), updated_at: at(20) }, 'readers a list in the order given, sealed a boolean');
      t.same(await store.accessRules.findByTarget(col.rid, { folder: '/team/' }), rule, 'by target');
      t.equal(await store.accessRules.findByTarget(other.rid, { folder: '/team/' }), undefined, 'not in another collection');
      t.equal(await store.accessRules.findByTarget(col.rid, { file: '/team/' }), undefined, 'a file target is another target');
      t.same(await store.accessRules.findById(col.rid, 'acr_1'), rule, 'by ID');
      t.equal(await store.accessRules.findById(other.rid, 'acr_1'), undefined, 'by ID in its collection only');
      await t.rejects(
        store.write((tx) => tx.accessRules.insert({ id: 'acr_2', collection_rid: col.rid, target: { folder: '/team/' }, readers: [], sealed: false, now: at(21) })),
        'one rule per target',
      );
      const updated = await store.write((tx) => tx.accessRules.update(rule.rid, { readers: ['user:c'], sealed: false, now: at(22) }));
      t.match(updated, { rid: rule.rid, readers: ['user:c'], sealed: false, created_at: at(20), updated_at: at(22) }, 'update replaces readers and seal');
      await store.write((tx) => tx.accessRules.delete(rule.rid));
      t.equal(await store.accessRules.findById(col.rid, 'acr_1'), undefined, 'deleted');
      t.same(await store.accessRules.byRids([rule.rid]), [], 'gone by rid too');
      t.same(await store.accessRules.byRids([]), [], 'an empty rid list: none');
    });

    test('ofCollection, onTargets, list and byRids', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const [root, team, file, elsewhere] = await store.write(async (tx) => [
        await tx.accessRules.insert({ id: 'acr_root', collection_rid: col.rid, target: { folder: '/' }, readers: ['everyone'], sealed: false, now: at(23) }),
        await tx.accessRules.insert({ id: 'acr_team', collection_rid: col.rid, target: { folder: '/team/' }, readers: ['group:team'], sealed: false, now: at(23) }),
        await tx.accessRules.insert({ id: 'acr_file', collection_rid: col.rid, target: { file: '/team/plan.md' }, readers: ['user:ann'], sealed: false, now: at(23) }),
        await tx.accessRules.insert({ id: 'acr_other', collection_rid: other.rid, target: { folder: '/' }, readers: [], sealed: false, now: at(23) }),
      ]);
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
      t.same(ids(await store.accessRules.ofCollection(col.rid)), ['acr_root', 'acr_team', 'acr_file'], "a collection's rules in creation order");
      t.same(ids(await store.accessRules.onTargets(col.rid, ['d/', 'd/team/', 'f/team/plan.md'])).sort(), ['acr_file', 'acr_root', 'acr_team'], 'the rules on the targets named');
      t.same(ids(await store.accessRules.onTargets(col.rid, ['d/other/'])), [], 'none on a target without a rule');
      t.same(ids(await store.accessRules.list({ collectionRid: col.rid, afterRid: root!.rid, limit: 10 })), ['acr_team', 'acr_file'], 'list after a cursor');
      t.same(ids(await store.accessRules.list({ collectionRid: col.rid, afterRid: 0, limit: 1 })), ['acr_root'], 'up to the limit');
      t.same(ids(await store.accessRules.list({ collectionRid: col.rid, afterRid: 0, limit: 10, target: 'f/team/plan.md' })), ['acr_file'], 'one target');
      t.same(ids(await store.accessRules.byRids([elsewhere!.rid, team!.rid])).sort(), ['acr_other', 'acr_team'], 'by rids, any collection');
      t.same(await store.accessRules.filesUnder(col.rid, { prefix: '/team/' }), [], 'no files yet under a folder');
      t.ok(file, 'the file rule was made');
    });
  });

  // ------------------------------------------------------------------ jobs

  t.test('jobs', async (t) => {
    const test = on(t);
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

    test('insert queues the job and reports it; byId, status, list', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const last = await store.events.lastRid();
      const job = await store.write((tx) => tx.jobs.insert(newJob('job_1', ns, col)));
      t.match(job, { ...newJob('job_1', ns, col), status: 'queued', attempts: 0, worker_deaths: 0, error_code: null, error_message: null, updated_at: at(5) }, 'queued, never tried');
      t.same(await store.jobs.byId('job_1'), job, 'byId');
      t.equal(await store.jobs.byId('job_nope'), undefined, 'unknown ID');
      t.equal(await store.jobs.status(job.rid), 'queued', 'status');
      t.equal(await store.jobs.status(job.rid + 1000), undefined, 'status of an unknown rid');
      t.same((await eventsSince(store, last)).map((e) => [e.type, e.namespace_rid, e.collection_rid]), [['job.updated', ns.rid, col.rid]], 'one job.updated');

      const [j2, j3] = await store.write(async (tx) => [
        await tx.jobs.insert(newJob('job_2', ns, other, { type: 'delete_collection' })),
        await tx.jobs.insert(newJob('job_3', ns, null, { type: 'delete_namespace', collection: null })),
      ]);
      const list = (over: { afterRid?: number; limit?: number; status?: string; type?: string; collectionRids?: number[] }) =>
        store.jobs.list({ namespaceRid: ns.rid, afterRid: over.afterRid ?? 0, limit: over.limit ?? 10, status: over.status, type: over.type, collectionRids: over.collectionRids }).then(ids);
      t.same(await list({}), ['job_1', 'job_2', 'job_3'], 'in creation order');
      t.same(await list({ afterRid: job.rid }), ['job_2', 'job_3'], 'after a cursor');
      t.same(await list({ limit: 1 }), ['job_1'], 'up to the limit');
      t.same(await list({ type: 'delete_collection' }), ['job_2'], 'by type');
      t.same(await list({ collectionRids: [col.rid] }), ['job_1'], 'by collection (namespace-level jobs excluded)');
      t.same(await list({ collectionRids: [] }), [], 'an empty collection list selects none');
      t.same(await list({ status: 'running' }), [], 'by status');
      t.ok(j2 && j3, 'both inserted in one transaction');
      const elsewhere = await namespace(store, 'ns_2', 'beta');
      t.same(await store.jobs.list({ namespaceRid: elsewhere.rid, afterRid: 0, limit: 10 }), [], "another namespace's list is empty");
    });

    test('claim: oldest runnable first, up to the limit; a job tried before is claimed alone', async (t, store) => {
      const { ns, col } = await twoCollections(store);
      await store.write(async (tx) => {
        await tx.jobs.insert(newJob('job_1', ns, col));
        await tx.jobs.insert(newJob('job_2', ns, col, { runnable: 0 }));
        await tx.jobs.insert(newJob('job_3', ns, col));
        await tx.jobs.insert(newJob('job_4', ns, col));
      });
      const last = await store.events.lastRid();
      const first = await store.write((tx) => tx.jobs.claim(2, at(6)));
      t.same(ids(first), ['job_1', 'job_3'], 'the two oldest runnable ones; one not runnable is skipped');
      t.match(first[0], { status: 'running', attempts: 1, updated_at: at(6) }, 'running, one attempt');
      t.equal((await eventsSince(store, last)).filter((e) => e.type === 'job.updated').length, 2, 'each claim is reported');
      t.same(ids(await store.write((tx) => tx.jobs.claim(5, at(7)))), ['job_4'], 'what is left');
      t.same(await store.write((tx) => tx.jobs.claim(5, at(8))), [], 'nothing runnable left');

      await store.write((tx) => tx.jobs.makeRunnable('ver_never', at(9)));
      t.equal(await store.jobs.status((await store.jobs.byId('job_2'))!.rid), 'queued', 'makeRunnable of another version changes nothing');

      // A daemon died holding job_1, job_3 and job_4: they go back to the queue, and count one death each.
      const died = await store.write((tx) => tx.jobs.countWorkerDeath());
      t.same(ids(died).sort(), ['job_1', 'job_3', 'job_4'], 'every running job counts a worker death');
      t.match(died[0], { worker_deaths: 1 });
      const requeued = await store.write((tx) => tx.jobs.requeueInterruptedWork(at(10)));
      t.same(requeued, { jobs: 3, files: 0 }, 'the running jobs go back to the queue (no files here)');
      const again = await store.write((tx) => tx.jobs.claim(5, at(11)));
      t.same(ids(again), ['job_1'], 'a job tried before is claimed alone');
      t.match(again[0], { attempts: 2 });
    });

    test('finish: only a queued or running job ends, once', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const [a, b] = await store.write(async (tx) => [await tx.jobs.insert(newJob('job_a', ns, col)), await tx.jobs.insert(newJob('job_b', ns, other))]);
      const last = await store.events.lastRid();
      t.equal(await store.write((tx) => tx.jobs.finish(a!.rid, 'failed', at(12), { code: 'extraction_failed', message: 'no text' })), true, 'a queued job can end');
      t.match(await store.jobs.byId('job_a'), { status: 'failed', error_code: 'extraction_failed', error_message: 'no text', updated_at: at(12) });
      t.equal(await store.write((tx) => tx.jobs.finish(a!.rid, 'succeeded', at(13))), false, 'an ended job stays as it ended');
      t.equal(await store.jobs.status(a!.rid), 'failed');
      t.equal((await eventsSince(store, last)).length, 1, 'only the change is reported');
      t.equal(await store.write((tx) => tx.jobs.finish(b!.rid + 1000, 'canceled', at(14))), false, 'an unknown rid: false');

      await store.write((tx) => tx.jobs.cancelCollectionJobs(other.rid, at(15), -1));
      t.match(await store.jobs.byId('job_b'), { status: 'canceled', error_code: 'superseded' }, "a deleted collection's jobs end canceled");
      const keep = await store.write((tx) => tx.jobs.insert(newJob('job_c', ns, col)));
      await store.write((tx) => tx.jobs.cancelCollectionJobs(col.rid, at(16), keep.rid));
      t.equal(await store.jobs.status(keep.rid), 'queued', 'but not the one deleting it');
    });

    test('hasQueuedIndexJobs and queuedSourceFetches see only what they promise', async (t, store) => {
      const { ns, col } = await twoCollections(store);
      t.equal(await store.jobs.hasQueuedIndexJobs(col.rid), false, 'nothing queued');
      const job = await store.write((tx) => tx.jobs.insert(newJob('job_r', ns, col)));
      t.equal(await store.jobs.hasQueuedIndexJobs(col.rid), true, 'a queued reindex counts');
      await store.write((tx) => tx.jobs.finish(job.rid, 'succeeded', at(17)));
      t.equal(await store.jobs.hasQueuedIndexJobs(col.rid), false, 'a finished one does not');
      await store.write((tx) => tx.jobs.insert(newJob('job_d', ns, col, { type: 'delete_collection' })));
      t.equal(await store.jobs.hasQueuedIndexJobs(col.rid), false, 'nor other kinds of work');
      t.same(await store.jobs.queuedSourceFetches(10), [], 'no index job of an http(s) source');
    });
  });

  // ------------------------------------------------------------------ research

  t.test('research', async (t) => {
    const test = on(t);

    test('insert queues the run and reports it with its owner', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const last = await store.events.lastRid();
      const run = await store.write((tx) => tx.research.insert(newResearch('res_1', ns, col, 'key_1', { idempotency_key: 'idem', image_description: 'a chart' })));
      t.match(
        run,
        { ...newResearch('res_1', ns, col, 'key_1', { idempotency_key: 'idem', image_description: 'a chart' }), status: 'queued', progress: null, answer: null, sources: null, usage: null, error: null, completed_at: null },
        'queued, nothing answered yet',
      );
      t.equal(typeof run.rid, 'number');
      t.same(await store.research.byRid(run.rid), run, 'byRid');
      t.same(await store.research.find(col.rid, 'res_1'), run, 'find in its collection');
      t.equal(await store.research.find(other.rid, 'res_1'), undefined, 'not in another');
      t.equal(await store.research.find(col.rid, 'res_nope'), undefined, 'unknown ID');
      t.equal(await store.research.byRid(run.rid + 1000), undefined, 'unknown rid');

      const events = await eventsSince(store, last);
      t.same(events.map((e) => [e.type, e.namespace_rid, e.collection_rid, e.owner_key_id]), [['research.updated', ns.rid, col.rid, 'key_1']], 'one research.updated, carrying its owner');
      t.match(JSON.parse(events[0]!.data), { id: 'res_1', status: 'queued', namespace: 'alpha', collection: 'docs' }, 'its data: the run');
    });

    test('idempotency keys: found per key, forgotten after the cutoff', async (t, store) => {
      const { ns, col } = await twoCollections(store);
      const r1 = await store.write((tx) => tx.research.insert(newResearch('res_1', ns, col, 'key_1', { idempotency_key: 'same', created_at: at(1) })));
      const r2 = await store.write((tx) => tx.research.insert(newResearch('res_2', ns, col, 'key_2', { idempotency_key: 'same', created_at: at(3) })));
      t.equal((await store.research.findByIdempotency('key_1', 'same'))?.rid, r1.rid, "one key's run");
      t.equal((await store.research.findByIdempotency('key_2', 'same'))?.rid, r2.rid, "another key's, under the same idempotency key");
      t.equal(await store.research.findByIdempotency('key_1', 'other'), undefined, 'unknown idempotency key');
      t.equal(await store.research.findByIdempotency('key_3', 'same'), undefined, 'another key');

      await store.write((tx) => tx.research.expireIdempotencyKeys(at(3)));
      t.equal(await store.research.findByIdempotency('key_1', 'same'), undefined, 'a run created before the cutoff: forgotten');
      t.equal((await store.research.findByIdempotency('key_2', 'same'))?.rid, r2.rid, 'one created at the cutoff: kept');
      t.match(await store.research.byRid(r1.rid), { id: 'res_1', idempotency_key: null, status: 'queued' }, 'the run itself stays');
      const r3 = await store.write((tx) => tx.research.insert(newResearch('res_3', ns, col, 'key_1', { idempotency_key: 'same', created_at: at(4) })));
      t.equal((await store.research.findByIdempotency('key_1', 'same'))?.rid, r3.rid, 'the key may name a new run');
    });

    test('claim, progress and finish', async (t, store) => {
      const { ns, col } = await twoCollections(store);
      t.equal(await store.write((tx) => tx.research.claim(at(10))), undefined, 'nothing to claim');
      const r1 = await store.write((tx) => tx.research.insert(newResearch('res_1', ns, col, 'key_1')));
      const r2 = await store.write((tx) => tx.research.insert(newResearch('res_2', ns, col, 'key_1')));

      let last = await store.events.lastRid();
      const claimed = await store.write((tx) => tx.research.claim(at(11)));
      t.match(claimed, { rid: r1.rid, status: 'running', updated_at: at(11) }, 'the oldest queued run, marked running');
      t.equal((await store.research.byRid(r1.rid))?.status, 'running', 'stored');
      t.same((await eventsSince(store, last)).map((e) => [e.type, e.owner_key_id]), [['research.updated', 'key_1']], 'reported');
      t.equal((await store.write((tx) => tx.research.claim(at(12))))?.rid, r2.rid, 'then the next');
      t.equal(await store.write((tx) => tx.research.claim(at(13))), undefined, 'then none');

      last = await store.events.lastRid();
      t.equal(await store.write((tx) => tx.research.setProgress(r1.rid, '{"stage":"searching"}', at(14))), true, 'setProgress on a running run: true');
      t.equal(await store.write((tx) => tx.research.setProgress(r1.rid, '{"stage":"searching"}', at(15))), true, 'the same progress again: true');
      const progressEvents = await eventsSince(store, last);
      t.same(progressEvents.map((e) => [e.type, e.collection_rid, e.owner_key_id]), [['research.progress', col.rid, 'key_1']], 'the same progress twice: one research.progress event');
      t.equal((await store.research.byRid(r1.rid))?.progress, '{"stage":"searching"}', 'stored');
      last = await store.events.lastRid();
      await store.write((tx) => tx.research.setProgress(r1.rid, '{"stage":"reading"}', at(16)));
      t.same((await eventsSince(store, last)).map((e) => e.type), ['research.progress'], 'a new stage: another');

      last = await store.events.lastRid();
      const finished = await store.write((tx) => tx.research.finish(r1.rid, { status: 'succeeded', answer: '42', sources: '[]', usage: '{"tokens":3}', now: at(20) }));
      t.equal(finished, true, 'finish a running run: true');
      t.match(await store.research.byRid(r1.rid), { status: 'succeeded', answer: '42', sources: '[]', usage: '{"tokens":3}', error: null, completed_at: at(20), updated_at: at(20) }, 'its outcome stored');
      t.same((await eventsSince(store, last)).map((e) => [e.type, e.owner_key_id]), [['research.updated', 'key_1']], 'reported');

      last = await store.events.lastRid();
      t.equal(await store.write((tx) => tx.research.finish(r1.rid, { status: 'canceled', now: at(21) })), false, 'finish a finished run: false');
      t.match(await store.research.byRid(r1.rid), { status: 'succeeded', answer: '42', completed_at: at(20) }, 'it stays as it ended');
      t.equal(await store.write((tx) => tx.research.setProgress(r1.rid, '{"stage":"late"}', at(22))), false, 'setProgress on a finished run: false');
      t.equal((await store.research.byRid(r1.rid))?.progress, '{"stage":"reading"}', 'its progress stays');
      t.same(await eventsSince(store, last), [], 'neither is reported');

      const r3 = await store.write((tx) => tx.research.insert(newResearch('res_3', ns, col, 'key_1')));
      t.equal(await store.write((tx) => tx.research.finish(r3.rid, { status: 'canceled', error: '{"code":"canceled"}', now: at(23) })), true, 'a queued run may be ended (canceled)');
      t.match(await store.research.byRid(r3.rid), { status: 'canceled', error: '{"code":"canceled"}', answer: null, completed_at: at(23) });
      t.equal(await store.write((tx) => tx.research.claim(at(24))), undefined, 'a canceled run is not claimed');
    });

    test('runs left running are requeued', async (t, store) => {
      const { ns, col } = await twoCollections(store);
      const r1 = await store.write((tx) => tx.research.insert(newResearch('res_1', ns, col, 'key_1')));
      const r2 = await store.write((tx) => tx.research.insert(newResearch('res_2', ns, col, 'key_2')));
      const r3 = await store.write((tx) => tx.research.insert(newResearch('res_3', ns, col, 'key_1')));
      await store.write(async (tx) => {
        await tx.research.claim(at(10));
        await tx.research.claim(at(10));
        await tx.research.setProgress(r1.rid, '{"stage":"searching"}', at(11));
        await tx.research.finish(r2.rid, { status: 'failed', error: '{"code":"x"}', now: at(12) });
      });
      t.equal(await store.write((tx) => tx.research.requeueInterrupted(at(13))), 1, 'how many: the one still running');
      t.match(await store.research.byRid(r1.rid), { status: 'queued', progress: null, updated_at: at(13) }, 'queued again, its progress cleared');
      t.match(await store.research.byRid(r2.rid), { status: 'failed' }, 'a finished run stays finished');
      t.match(await store.research.byRid(r3.rid), { status: 'queued' }, 'a queued one stays queued');
      t.equal((await store.write((tx) => tx.research.claim(at(14))))?.rid, r1.rid, 'the requeued run is claimed first again (the oldest)');
      const last = await store.events.lastRid();
      t.equal(await store.write((tx) => tx.research.requeueInterrupted(at(15))), 1);
      t.same((await eventsSince(store, last)).map((e) => [e.type, e.owner_key_id]), [['research.updated', 'key_1']], 'reported');
      t.equal(await store.write((tx) => tx.research.requeueInterrupted(at(16))), 0, 'none left running: 0');
    });

    test('list newest first, by cursor, limit and key', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const [r1, r2, r3] = await store.write(async (tx) => [
        await tx.research.insert(newResearch('res_1', ns, col, 'key_1')),
        await tx.research.insert(newResearch('res_2', ns, col, 'key_2')),
        await tx.research.insert(newResearch('res_3', ns, col, 'key_1')),
        await tx.research.insert(newResearch('res_4', ns, other, 'key_1')),
      ]);
      const list = (opts: { beforeRid?: number; limit?: number; keyId?: string; collectionRid?: number }) =>
        store.research.list({ collectionRid: opts.collectionRid ?? col.rid, beforeRid: opts.beforeRid ?? null, limit: opts.limit ?? 10, keyId: opts.keyId }).then(ids);
      t.same(await list({}), ['res_3', 'res_2', 'res_1'], "newest first, one collection's");
      t.same(await list({ beforeRid: r3!.rid }), ['res_2', 'res_1'], 'before a cursor');
      t.same(await list({ beforeRid: r1!.rid }), [], 'nothing before the oldest');
      t.same(await list({ limit: 1 }), ['res_3'], 'up to the limit');
      t.same(await list({ keyId: 'key_1' }), ['res_3', 'res_1'], "one key's runs");
      t.same(await list({ keyId: 'key_1', beforeRid: r3!.rid }), ['res_1'], 'with a cursor');
      t.same(await list({ keyId: 'key_9' }), [], 'a key with none');
      t.same(await list({ collectionRid: other.rid }), ['res_4'], "another collection's");
      t.same(await store.research.byRid(r2!.rid).then((r) => r?.key_id), 'key_2');
    });
  });

  retentionConformance(t, { on, at, namespace, collection, twoCollections, newResearch });
}
