// The store's contract for what the operator and the sweeper use (src/store/aggregates/operator.ts,
// retention.ts, search-snapshots.ts, and a namespace's restore), written against the interface only
// and run from test/conformance/store.ts on a fresh store per test. What needs files, versions and
// passages (a purge removing a collection's files and indexes, a blob another collection still
// uses, a later page's reads of live files and passages) is still tested through the SQLite
// daemon, in test/restore.test.ts and test/search-cursors.test.ts.
import type { Test } from 'tap';
import { newJob } from './rows.js';
import type { CollectionRow, EventAudience, NamespaceRow, NewResearch, SearchSnapshotRow, Store } from '../../src/store/interface.js';

/** What test/conformance/store.ts shares with this suite. */
export interface SuiteHelpers {
  /** A test of `parent` on a store of its own. */
  on: (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) => unknown;
  /** A second of 2025-01-01, as the ISO text the domain passes. */
  at: (second: number) => string;
  namespace: (store: Store, id: string, name?: string) => Promise<NamespaceRow>;
  collection: (store: Store, namespaceRid: number, id: string, name?: string) => Promise<CollectionRow>;
  /** Namespace `alpha` with collections `docs` and `other`. */
  twoCollections: (store: Store) => Promise<{ ns: NamespaceRow; col: CollectionRow; other: CollectionRow }>;
  newResearch: (id: string, ns: NamespaceRow, col: { rid: number; name: string }, keyId: string) => NewResearch;
}

const EVERYTHING: EventAudience = { namespaceRid: null, collectionRids: null, resources: true, research: 'all' };

export function retentionConformance(t: Test, { on, at, namespace, collection, twoCollections, newResearch }: SuiteHelpers): void {

  // ------------------------------------------------------------------ operator

  t.test('operator', async (t) => {
    const test = on(t);

    test('cluster counts: an empty store counts nothing', async (t, store) => {
      t.same(await store.operator.clusterCounts(), {
        namespaces: { live: 0, deleted: 0 },
        collections: { live: 0, deleted: 0, by_status: {} },
        files: {},
        jobs: {},
        queued_jobs_by_type: {},
        research_runs: {},
      });
    });

    test("cluster counts: living and deleted, a deleted namespace's collections count as deleted, jobs and runs by status", async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const beta = await namespace(store, 'ns_b', 'beta');
      const betaCol = await collection(store, beta.rid, 'col_b', 'docs');
      const gamma = await namespace(store, 'ns_c', 'gamma');
      const gone = await collection(store, gamma.rid, 'col_c', 'docs');
      await store.write(async (tx) => {
        await tx.collections.markDeleted(other.rid, at(9));
        await tx.collections.markDeleted(gone.rid, at(9));
        await tx.namespaces.markDeleted(gamma.rid, at(9));
        await tx.jobs.insert(newJob('job_1', ns, col));
        await tx.jobs.insert(newJob('job_2', ns, col));
        await tx.jobs.insert(newJob('job_3', ns, other, { type: 'delete_collection' }));
        await tx.research.insert(newResearch('res_1', ns, col, 'key_1'));
        await tx.research.insert(newResearch('res_2', beta, betaCol, 'key_1'));
      });
      await store.write((tx) => tx.jobs.claim(1, at(6)));
      t.same(await store.operator.clusterCounts(), {
        namespaces: { live: 2, deleted: 1 },
        collections: { live: 2, deleted: 2, by_status: { empty: 2 } },
        files: {},
        jobs: { queued: 2, running: 1 },
        queued_jobs_by_type: { reindex_collection: 1, delete_collection: 1 },
        research_runs: { queued: 2 },
      });
    });

    test('granted file roots: none at first, then the list last saved, in its order', async (t, store) => {
      t.same(await store.operator.grantedFileRoots(), [], 'none before a first save');
      const roots = [
        { path: '/srv/b', granted_at: at(1) },
        { path: '/srv/a', granted_at: at(2) },
      ];
      await store.write((tx) => tx.operator.saveGrantedFileRoots(roots));
      t.same(await store.operator.grantedFileRoots(), roots, 'read back as saved, in its order');
      const next = await store.write(async (tx) => {
        const kept = (await tx.operator.grantedFileRoots()).filter((r) => r.path !== '/srv/b');
        await tx.operator.saveGrantedFileRoots([...kept, { path: '/srv/c', granted_at: at(3) }]);
        return tx.operator.grantedFileRoots();
      });
      t.same(next, [roots[1], { path: '/srv/c', granted_at: at(3) }], 'a transaction reads its own save');
      t.same(await store.operator.grantedFileRoots(), next, 'the save replaced the whole list');
      await store
        .write(async (tx) => {
          await tx.operator.saveGrantedFileRoots([]);
          throw new Error('the change fails');
        })
        .catch(() => undefined);
      t.same(await store.operator.grantedFileRoots(), next, 'a change that throws keeps the list');
      await store.write((tx) => tx.operator.saveGrantedFileRoots([]));
      t.same(await store.operator.grantedFileRoots(), [], 'an empty list removes every grant');
    });
  });

  // ------------------------------------------------------------------ retention

  t.test('retention', async (t) => {
    const test = on(t);

    test('deleted before a cutoff: strictly before, deleted ones only', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const beta = await namespace(store, 'ns_b', 'beta');
      await store.write(async (tx) => {
        await tx.collections.markDeleted(col.rid, at(8));
        await tx.collections.markDeleted(other.rid, at(10));
        await tx.namespaces.markDeleted(beta.rid, at(9));
      });
      t.same(await store.retention.collectionsDeletedBefore(at(9)), [col.rid], 'a collection deleted before the cutoff');
      t.same((await store.retention.collectionsDeletedBefore(at(11))).sort((a, b) => a - b), [col.rid, other.rid].sort((a, b) => a - b), 'both, by a later cutoff');
      t.same(await store.retention.collectionsDeletedBefore(at(8)), [], 'one deleted at the cutoff is not yet');
      t.same(await store.retention.namespacesDeletedBefore(at(10)), [beta.rid], 'a namespace deleted before the cutoff');
      t.same(await store.retention.namespacesDeletedBefore(at(9)), [], 'not one deleted at it');
      t.ok(await store.namespaces.byRid(ns.rid), 'a living namespace is never listed');
    });

    test("purging a collection removes it, its rules, runs and jobs; another collection's stay", async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const made = await store.write(async (tx) => {
        const rows = {
          rule: await tx.accessRules.insert({ id: 'acr_1', collection_rid: col.rid, target: { folder: '/' }, readers: ['everyone'], sealed: false, now: at(4) }),
          keptRule: await tx.accessRules.insert({ id: 'acr_2', collection_rid: other.rid, target: { folder: '/' }, readers: ['everyone'], sealed: false, now: at(4) }),
          run: await tx.research.insert(newResearch('res_1', ns, col, 'key_1')),
          keptRun: await tx.research.insert(newResearch('res_2', ns, other, 'key_1')),
          job: await tx.jobs.insert(newJob('job_1', ns, col, { type: 'delete_collection' })),
          keptJob: await tx.jobs.insert(newJob('job_2', ns, other)),
        };
        await tx.collections.markDeleted(col.rid, at(9));
        return rows;
      });
      t.same(await store.write((tx) => tx.retention.purgeCollection(col.rid)), [], 'no file versions: no blobs to check');
      t.equal(await store.collections.byRid(col.rid), undefined, 'the collection is gone');
      t.equal(await store.collections.findDeleted(ns.rid, 'docs'), undefined, 'and no longer restorable');
      t.same(await store.accessRules.byRids([made.rule.rid]), [], 'its access rules');
      t.equal(await store.research.byRid(made.run.rid), undefined, 'its research runs');
      t.equal(await store.jobs.byId('job_1'), undefined, 'its jobs, the one deleting it too');
      t.same(await store.retention.collectionsDeletedBefore(at(20)), [], 'nothing deleted is left to purge');

      t.same(await store.collections.byRid(other.rid), other, 'the other collection stays');
      t.same(await store.accessRules.byRids([made.keptRule.rid]), [made.keptRule], 'with its rules');
      t.same(await store.research.byRid(made.keptRun.rid), made.keptRun, 'its runs');
      t.same(await store.jobs.byId('job_2'), made.keptJob, 'and its jobs');
      t.same(await store.namespaces.byRid(ns.rid), ns, 'the namespace stays');
      t.same(await store.collections.allRids(ns.rid), [other.rid]);
    });

    test("purging a namespace once its collections are purged; another namespace's stay", async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const beta = await namespace(store, 'ns_b', 'beta');
      const betaCol = await collection(store, beta.rid, 'col_b', 'docs');
      await store.write(async (tx) => {
        await tx.jobs.insert(newJob('job_ns', ns, null, { type: 'delete_namespace' }));
        await tx.jobs.insert(newJob('job_beta', beta, betaCol));
        await tx.collections.markDeleted(col.rid, at(9));
        await tx.collections.markDeleted(other.rid, at(9));
        await tx.namespaces.markDeleted(ns.rid, at(9));
      });
      t.same(await store.retention.namespacesDeletedBefore(at(10)), [ns.rid]);
      for (const rid of await store.collections.allRids(ns.rid)) await store.write((tx) => tx.retention.purgeCollection(rid));
      await store.write((tx) => tx.retention.purgeNamespace(ns.rid));
      t.equal(await store.namespaces.byRid(ns.rid), undefined, 'the namespace is gone');
      t.equal(await store.namespaces.findDeleted('alpha'), undefined, 'and no longer restorable');
      t.equal(await store.jobs.byId('job_ns'), undefined, 'with its own jobs');
      t.same(await store.collections.allRids(ns.rid), [], 'and its collections');
      t.same(await store.retention.namespacesDeletedBefore(at(20)), [], 'nothing left to purge');
      t.same(await store.namespaces.byRid(beta.rid), beta, 'another namespace stays');
      t.same(await store.collections.byRid(betaCol.rid), betaCol, 'with its collection');
      t.equal((await store.jobs.byId('job_beta'))?.status, 'queued', 'and its jobs');
    });

    test('blobInUse: bytes no file version uses are not in use', async (t, store) => {
      const { col } = await twoCollections(store);
      t.equal(await store.retention.blobInUse('0'.repeat(64)), false, 'in an empty collection');
      await store.write(async (tx) => {
        await tx.collections.markDeleted(col.rid, at(9));
        await tx.retention.purgeCollection(col.rid);
      });
      t.equal(await store.retention.blobInUse('0'.repeat(64)), false, 'nor after a purge');
    });
  });

  // ------------------------------------------------------------------ a namespace's restore

  t.test('namespace restore', async (t) => {
    const test = on(t);

    test('findDeleted: by ID or name, the most recently deleted, never a living one', async (t, store) => {
      const first = await namespace(store, 'ns_1', 'alpha');
      await store.write((tx) => tx.namespaces.markDeleted(first.rid, at(8)));
      const second = await namespace(store, 'ns_2', 'alpha');
      await store.write((tx) => tx.namespaces.markDeleted(second.rid, at(9)));
      await namespace(store, 'ns_3', 'alpha');
      t.equal((await store.namespaces.findDeleted('alpha'))?.id, 'ns_2', 'by name: the most recently deleted');
      t.match(await store.namespaces.findDeleted('ns_1'), { rid: first.rid, name: 'alpha', deleted_at: at(8) }, 'by ID: that one, deleted');
      t.equal(await store.namespaces.findDeleted('ns_3'), undefined, 'a living one is not found');
      t.equal(await store.namespaces.findDeleted('nope'), undefined, 'an unknown ref');
    });

    test('restore brings back the collections its deletion took, reported, and leaves those deleted before', async (t, store) => {
      const { ns, col, other } = await twoCollections(store);
      const earlier = await collection(store, ns.rid, 'col_3', 'earlier');
      await store.write((tx) => tx.collections.markDeleted(earlier.rid, at(8)));
      await store.write(async (tx) => {
        await tx.collections.markDeleted(col.rid, at(9));
        await tx.collections.markDeleted(other.rid, at(9));
        await tx.namespaces.markDeleted(ns.rid, at(9));
      });
      const last = await store.events.lastRid();
      const restored = await store.write((tx) => tx.namespaces.restore(ns.rid, at(12)));
      t.same([...restored].sort((a, b) => a - b), [col.rid, other.rid].sort((a, b) => a - b), 'returns the collections it brought back');
      t.match(await store.namespaces.find('alpha'), { rid: ns.rid, deleted_at: null, updated_at: at(12) }, 'the namespace lives again');
      t.same((await store.collections.liveRids(ns.rid)).sort((a, b) => a - b), [col.rid, other.rid].sort((a, b) => a - b), 'with those collections');
      t.match(await store.collections.byRid(col.rid), { deleted_at: null, updated_at: at(12) });
      t.equal((await store.collections.byRid(earlier.rid))?.deleted_at, at(8), 'one deleted before stays deleted');
      const events = await store.events.after({ afterRid: last, limit: 10, audience: EVERYTHING });
      t.same(events.map((e) => [e.type, e.collection_rid]).sort(), [['collection.updated', col.rid], ['collection.updated', other.rid]].sort(), 'each restored collection is reported');
    });
  });

  // ------------------------------------------------------------------ search snapshots

  t.test('search snapshots', async (t) => {
    const test = on(t);
    const NOW = 1_800_000_000_000;
    const snapshot = (id: string, over: Partial<SearchSnapshotRow> = {}): SearchSnapshotRow => ({
      id,
      collection_rid: 1,
      binding: `binding of ${id}`,
      page_one: JSON.stringify({ at: NOW }),
      entries: '[[1,[2],0.5,1]]',
      entry_count: 1,
      complete: false,
      expires_at: NOW + 60_000,
      ...over,
    });
    const roomy = { rows: 100, bytes: 1e9 };

    test('insert, get and exists; an expired one is kept but not served', async (t, store) => {
      const row = snapshot('snap_1');
      await store.write((tx) => tx.searchSnapshots.insert(row, NOW, roomy));
      t.same(await store.searchSnapshots.get('snap_1', NOW), row, 'read back as kept, complete a boolean');
      t.same(await store.searchSnapshots.get('snap_1', row.expires_at), row, 'still served at its expiry');
      t.equal(await store.searchSnapshots.get('snap_1', row.expires_at + 1), undefined, 'not after it');
      t.equal(await store.searchSnapshots.exists('snap_1'), true, 'though it exists until removed');
      t.equal(await store.searchSnapshots.exists('snap_nope'), false);
      t.equal(await store.searchSnapshots.get('snap_nope', NOW), undefined);
      await t.rejects(store.write((tx) => tx.searchSnapshots.insert(snapshot('snap_1'), NOW, roomy)), 'an ID is kept once');
    });

    test('extend: only from the count it was read at', async (t, store) => {
      await store.write((tx) => tx.searchSnapshots.insert(snapshot('snap_1'), NOW, roomy));
      const longer = { entries: '[[1,[2],0.5,1],[3,[4],0.25,1]]', entry_count: 2, complete: true };
      t.equal(await store.write((tx) => tx.searchSnapshots.extend('snap_1', 1, longer, roomy.bytes)), true, 'extended');
      t.same(await store.searchSnapshots.get('snap_1', NOW), snapshot('snap_1', longer), 'the longer entries, the rest unchanged');
      t.equal(await store.write((tx) => tx.searchSnapshots.extend('snap_1', 1, { entries: '[]', entry_count: 0, complete: false }, roomy.bytes)), false, 'a stale count: refused');
      t.same(await store.searchSnapshots.get('snap_1', NOW), snapshot('snap_1', longer), 'and nothing changed');
      t.equal(await store.write((tx) => tx.searchSnapshots.extend('snap_nope', 0, longer, roomy.bytes)), false, 'an unknown snapshot: refused');
    });

    test('keepUntil only moves the expiry later; deleteExpired removes the expired ones', async (t, store) => {
      await store.write(async (tx) => {
        await tx.searchSnapshots.insert(snapshot('snap_1', { expires_at: NOW + 1_000 }), NOW, roomy);
        await tx.searchSnapshots.insert(snapshot('snap_2', { expires_at: NOW + 1_000 }), NOW, roomy);
      });
      await store.write((tx) => tx.searchSnapshots.keepUntil('snap_1', NOW + 5_000));
      t.equal((await store.searchSnapshots.get('snap_1', NOW))?.expires_at, NOW + 5_000, 'later');
      await store.write((tx) => tx.searchSnapshots.keepUntil('snap_1', NOW + 2_000));
      t.equal((await store.searchSnapshots.get('snap_1', NOW))?.expires_at, NOW + 5_000, 'never earlier');
      t.equal(await store.write((tx) => tx.searchSnapshots.deleteExpired(NOW + 1_000)), 0, 'none expired yet at the expiry itself');
      t.equal(await store.write((tx) => tx.searchSnapshots.deleteExpired(NOW + 3_000)), 1, 'one expired');
      t.equal(await store.searchSnapshots.exists('snap_2'), false, 'the expired one is gone');
      t.equal(await store.searchSnapshots.exists('snap_1'), true, 'the one kept longer stays');
    });

    test('an insert removes the expired ones, and past the bounds the oldest; the newest stays', async (t, store) => {
      await store.write((tx) => tx.searchSnapshots.insert(snapshot('old', { expires_at: NOW - 1 }), NOW - 10_000, roomy));
      await store.write((tx) => tx.searchSnapshots.insert(snapshot('a'), NOW, roomy));
      t.equal(await store.searchSnapshots.exists('old'), false, 'an expired one goes with the next insert');
      await store.write(async (tx) => {
        for (const id of ['b', 'c', 'd']) await tx.searchSnapshots.insert(snapshot(id), NOW, { rows: 2, bytes: 1e9 });
      });
      const kept = async (ids: string[]) => (await Promise.all(ids.map(async (id) => ((await store.searchSnapshots.exists(id)) ? id : null)))).filter(Boolean);
      t.same(await kept(['a', 'b', 'c', 'd']), ['c', 'd'], 'at most the row bound, the newest kept');
      const big = `[${'0,'.repeat(499)}0]`;
      await store.write(async (tx) => {
        for (const id of ['e', 'f', 'g']) await tx.searchSnapshots.insert(snapshot(id, { entries: big }), NOW, { rows: 100, bytes: 2.5 * big.length });
      });
      t.same(await kept(['c', 'd', 'e', 'f', 'g']), ['f', 'g'], 'at most the byte bound, the newest kept');
      await store.write((tx) => tx.searchSnapshots.insert(snapshot('h', { entries: big + ' '.repeat(big.length) }), NOW, { rows: 100, bytes: big.length }));
      t.same(await kept(['f', 'g', 'h']), ['h'], 'one larger than the whole budget still stays, alone');
    });

    test("a later page's reads of files and passages: nothing to show in an empty collection", async (t, store) => {
      const { col } = await twoCollections(store);
      t.same(await store.searchSnapshots.liveReadyFiles(col.rid, []), new Set(), 'no files asked');
      t.same(await store.searchSnapshots.liveReadyFiles(col.rid, [1, 2]), new Set(), 'unknown files');
      t.same(await store.searchSnapshots.passageFiles([]), new Map(), 'no passages asked');
      t.same(await store.searchSnapshots.passageFiles([1, 2]), new Map(), 'unknown passages');
      t.same(await store.searchSnapshots.passagesOfFile(1), [], 'an unknown file has none');
    });
  });
}
