// The files aggregate's part of the store's contract (test/conformance/store.ts runs it on each
// engine), written against the interface only.
import type { Test } from 'tap';
import { newFile as pendingFile } from './rows.js';
import type { CollectionRow, EventRow, FileRow, FileStatus, NamespaceRow, NewFile, Store } from '../../src/store/interface.js';

/** What the suite lends this part: its per-test store, set-up and clock. */
export interface FilesConformanceKit {
  on: (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) => void;
  /** Namespace `alpha` with collections `docs` and `other`. */
  twoCollections: (store: Store) => Promise<{ ns: NamespaceRow; col: CollectionRow; other: CollectionRow }>;
  eventsSince: (store: Store, afterRid: number) => Promise<EventRow[]>;
  /** A second of 2025-01-01, as ISO text. */
  at: (second: number) => string;
}

export function storeFilesConformance(t: Test, { on, twoCollections, eventsSince, at }: FilesConformanceKit): void {
  /** A pending file at `path`. */
  const newFile = (id: string, collectionRid: number, path: string, over: Partial<NewFile> = {}): NewFile => pendingFile(id, collectionRid, { path, ...over });
  const addFiles = (store: Store, files: NewFile[]) =>
    store.write(async (tx) => {
      const out: FileRow[] = [];
      for (const f of files) out.push(await tx.files.insert(f));
      return out;
    });
  const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id);
  const types = (events: readonly EventRow[]) => events.map((e) => e.type);
  const setStatus = (store: Store, rid: number, status: FileStatus, second: number) => store.write((tx) => tx.files.setStatus(rid, status, at(second)));

  t.test('files', async (t) => {
    const test = on(t);

    test('insert and find by ID and path; rows typed; reported with the counters moved', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const last = await store.events.lastRid();
      const file = await store.write((tx) => tx.files.insert(newFile('fil_1', col.rid, '/a/readme.md', { metadata: { team: 'docs', n: 2 } })));
      t.match(
        file,
        {
          id: 'fil_1',
          collection_rid: col.rid,
          path: '/a/readme.md',
          status: 'pending',
          source_type: 'inline',
          version_id: 'ver_fil_1',
          indexed_version_id: null,
          error_code: null,
          error_message: null,
          governing_rule_rid: null,
          access_job_rid: null,
          notes: null,
          created_at: at(30),
          updated_at: at(30),
          deleted_at: null,
        },
        'insert returns the row',
      );
      t.same(file.metadata, { team: 'docs', n: 2 }, 'metadata comes back as data, not JSON text');
      t.equal(typeof file.rid, 'number');

      t.same(await store.files.byRid(file.rid), file, 'byRid');
      t.same(await store.files.findLiveById(col.rid, 'fil_1'), file, 'by ID');
      t.same(await store.files.findLiveByPath(col.rid, '/a/readme.md'), file, 'by path');
      t.equal(await store.files.findLiveById(other.rid, 'fil_1'), undefined, 'not by ID in another collection');
      t.equal(await store.files.findLiveByPath(other.rid, '/a/readme.md'), undefined, 'not by path in another collection');
      t.equal(await store.files.findLiveByPath(col.rid, '/a/README.md'), undefined, 'paths are case-sensitive');
      t.equal(await store.files.byRid(file.rid + 1000), undefined, 'unknown rid');
      t.same(await store.files.versionState(file.rid), { rid: file.rid, collection_rid: col.rid, status: 'pending', version_id: 'ver_fil_1', deleted_at: null }, 'versionState');
      t.equal(await store.files.versionState(file.rid + 1000), undefined, 'versionState of an unknown rid');

      const events = await eventsSince(store, last);
      t.same(types(events), ['collection.updated', 'file.updated'], 'the collection starts indexing; the file is reported');
      t.same(JSON.parse(events[1]!.data), { id: 'fil_1', path: '/a/readme.md', status: 'pending', source: { type: 'inline', content_type: 'text/plain', bytes: 5 }, metadata: { team: 'docs', n: 2 }, created_at: at(30), updated_at: at(30) }, "the event's data is the file as GET shows it");
      t.equal(events[1]!.collection_rid, col.rid);
      t.same(await store.collections.fileCounts(col.rid), { pending: 1, indexing: 0, ready: 0, failed: 0 }, 'counted pending');
      t.same(await store.collections.fileCounts(other.rid), { pending: 0, indexing: 0, ready: 0, failed: 0 }, 'not in the other collection');

      await t.rejects(store.write((tx) => tx.files.insert(newFile('fil_2', col.rid, '/a/readme.md'))), 'one living file per path in a collection');
      t.same(await store.files.list({ collectionRid: col.rid, afterRid: 0, limit: 10 }).then(ids), ['fil_1'], 'and not stored');
      const twin = await store.write((tx) => tx.files.insert(newFile('fil_3', other.rid, '/a/readme.md')));
      t.equal((await store.files.findLiveByPath(other.rid, '/a/readme.md'))?.rid, twin.rid, 'the same path in another collection is another file');
      t.equal((await store.files.findLiveByPath(col.rid, '/a/readme.md'))?.rid, file.rid, 'each collection finds its own');
    });

    test('a governing rule set with the row; sources of every kind', async (t, store) => {
      const { col } = await twoCollections(store);
      const rule = await store.write((tx) => tx.accessRules.insert({ id: 'acr_1', collection_rid: col.rid, target: { folder: '/' }, readers: [], sealed: false, now: at(29) }));
      const [inline, uri, upload] = await addFiles(store, [
        newFile('fil_i', col.rid, '/i.txt', { governing_rule_rid: rule.rid }),
        newFile('fil_u', col.rid, '/u.pdf', { source_type: 'uri', uri: 'https://example.com/u.pdf', declared_content_type: null, content_type: 'application/pdf', bytes: null, checksum: 'sha256:ab' }),
        newFile('fil_p', col.rid, '/p.bin', { source_type: 'upload', content_type: 'application/octet-stream', bytes: 1024 }),
      ]);
      t.equal(inline!.governing_rule_rid, rule.rid, 'governing_rule_rid as given');
      t.match(uri, { source_type: 'uri', uri: 'https://example.com/u.pdf', declared_content_type: null, content_type: 'application/pdf', bytes: null, checksum: 'sha256:ab', governing_rule_rid: null });
      t.match(upload, { source_type: 'upload', bytes: 1024, uri: null });
    });

    test('versions and uploads: insert, find, received, closed once, expired', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const [text, up, gone, old] = await addFiles(store, [
        newFile('fil_t', col.rid, '/t.txt'),
        newFile('fil_u', col.rid, '/u.bin', { source_type: 'upload' }),
        newFile('fil_g', col.rid, '/g.bin', { source_type: 'upload' }),
        newFile('fil_o', other.rid, '/o.bin', { source_type: 'upload', version_id: 'ver_o2' }),
      ]);
      await store.write(async (tx) => {
        await tx.files.insertVersion({ id: 'ver_fil_t', file_rid: text!.rid, inline_text: 'hello', blob_sha256: null, upload_state: null, created_at: at(30) });
        await tx.files.insertVersion({ id: 'ver_fil_u', file_rid: up!.rid, inline_text: null, blob_sha256: null, upload_state: 'waiting', created_at: at(30) });
        await tx.files.insertVersion({ id: 'ver_fil_g', file_rid: gone!.rid, inline_text: null, blob_sha256: null, upload_state: 'waiting', created_at: at(30) });
        // A version the file has moved on from: its upload no longer matters.
        await tx.files.insertVersion({ id: 'ver_o1', file_rid: old!.rid, inline_text: null, blob_sha256: null, upload_state: 'waiting', created_at: at(30) });
        await tx.files.insertVersion({ id: 'ver_o2', file_rid: old!.rid, inline_text: null, blob_sha256: null, upload_state: 'waiting', created_at: at(40) });
      });
      t.same(await store.files.version('ver_fil_t'), { id: 'ver_fil_t', file_rid: text!.rid, inline_text: 'hello', blob_sha256: null, upload_state: null, created_at: at(30) }, 'a version by ID');
      t.equal(await store.files.version('ver_nope'), undefined, 'unknown version');
      await t.rejects(
        store.write((tx) => tx.files.insertVersion({ id: 'ver_fil_t', file_rid: text!.rid, inline_text: 'again', blob_sha256: null, upload_state: null, created_at: at(31) })),
        'a version ID is unique',
      );

      await store.write((tx) => tx.files.markDeleted(gone!.rid, at(35)));
      const expired = await store.files.expiredWaitingUploads(at(45));
      t.same(
        expired.map((e) => [e.version_id, e.file_rid]).sort(),
        [
          ['ver_fil_u', up!.rid],
          ['ver_o2', old!.rid],
        ].sort(),
        "waiting versions made before the cutoff, each its living file's current one",
      );
      t.same(await store.files.expiredWaitingUploads(at(40)).then((e) => e.map((v) => v.version_id)), ['ver_fil_u'], 'the cutoff is exclusive');
      t.same(await store.files.expiredWaitingUploads(at(30)), [], 'none made before the first');

      await store.write((tx) => tx.files.markUploadReceived('ver_fil_u', 'ab'.repeat(32)));
      t.match(await store.files.version('ver_fil_u'), { upload_state: 'received', blob_sha256: 'ab'.repeat(32) }, 'received with its blob');
      t.same(await store.files.expiredWaitingUploads(at(45)).then((e) => e.map((v) => v.version_id)), ['ver_o2'], 'a received upload is no longer waiting');
      t.equal(await store.write((tx) => tx.files.closeWaitingUpload('ver_fil_u', 'expired')), false, 'a received upload cannot be closed');
      t.equal(await store.write((tx) => tx.files.closeWaitingUpload('ver_o2', 'rejected')), true, 'a waiting one can');
      t.equal((await store.files.version('ver_o2'))?.upload_state, 'rejected');
      t.equal(await store.write((tx) => tx.files.closeWaitingUpload('ver_o2', 'expired')), false, 'once');
      t.equal((await store.files.version('ver_o2'))?.upload_state, 'rejected', 'as it was first closed');
      t.equal(await store.write((tx) => tx.files.closeWaitingUpload('ver_nope', 'expired')), false, 'an unknown version: false');
      t.same(await store.files.expiredWaitingUploads(at(45)), [], 'nothing left waiting');
    });

    test('list: living files in creation order, by path, prefix and status, after a cursor', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const [a, b, c, d] = await addFiles(store, [
        newFile('fil_a', col.rid, '/docs/a.md'),
        newFile('fil_b', col.rid, '/docs/b.md'),
        newFile('fil_c', col.rid, '/docs_old/c.md'),
        newFile('fil_d', col.rid, '/d%_.md'),
        newFile('fil_x', other.rid, '/docs/a.md'),
      ]);
      const list = (over: { afterRid?: number; limit?: number; path?: string; prefix?: string; status?: FileStatus }) =>
        store.files.list({ collectionRid: col.rid, afterRid: over.afterRid ?? 0, limit: over.limit ?? 10, path: over.path, prefix: over.prefix, status: over.status }).then(ids);
      t.same(await list({}), ['fil_a', 'fil_b', 'fil_c', 'fil_d'], "one collection's, in creation order");
      t.same(await list({ afterRid: a!.rid }), ['fil_b', 'fil_c', 'fil_d'], 'after a cursor');
      t.same(await list({ afterRid: a!.rid, limit: 2 }), ['fil_b', 'fil_c'], 'up to the limit');
      t.same(await list({ afterRid: d!.rid }), [], 'nothing after the last');
      t.same(await list({ path: '/docs/a.md' }), ['fil_a'], 'one path');
      t.same(await list({ path: '/docs/' }), [], 'a path is a whole path');
      t.same(await list({ prefix: '/docs/' }), ['fil_a', 'fil_b'], 'a prefix');
      t.same(await list({ prefix: '/docs' }), ['fil_a', 'fil_b', 'fil_c'], 'a prefix is text, not a folder');
      t.same(await list({ prefix: '/d%' }), ['fil_d'], 'pattern characters in a prefix are literal');
      t.same(await list({ prefix: '/D' }), [], 'and case-sensitive');

      await setStatus(store, b!.rid, 'failed', 31);
      await setStatus(store, c!.rid, 'ready', 31);
      t.same(await list({ status: 'failed' }), ['fil_b'], 'by status');
      t.same(await list({ status: 'pending', prefix: '/docs' }), ['fil_a'], 'filters combine');
      t.same(await list({ status: 'indexing' }), [], 'a status no file has');
      t.ok(c, 'made');

      await store.write((tx) => tx.files.markDeleted(a!.rid, at(32)));
      t.same(await list({}), ['fil_b', 'fil_c', 'fil_d'], 'a deleted file is not listed');
      t.same(await list({ status: 'deleting' }), [], 'not even by its status');
      t.same(await store.files.list({ collectionRid: other.rid, afterRid: 0, limit: 10 }).then(ids), ['fil_x'], "the other collection's list");
    });

    test('metadata and a new source', async (t, store) => {
      const { col } = await twoCollections(store);
      const [file] = await addFiles(store, [newFile('fil_1', col.rid, '/a.md', { metadata: { a: 1 } })]);
      const last = await store.events.lastRid();
      const updated = await store.write((tx) => tx.files.updateMetadata(file!.rid, { b: [true, null], nested: { c: 'd' } }, at(31)));
      t.same(updated.metadata, { b: [true, null], nested: { c: 'd' } }, 'replaced as data');
      t.match(updated, { status: 'pending', version_id: 'ver_fil_1', created_at: at(30), updated_at: at(31) }, 'nothing else changes');
      t.same(await store.files.byRid(file!.rid), updated, 'as stored');
      t.same(await eventsSince(store, last), [], 'not reported: file events come with status changes');

      await setStatus(store, file!.rid, 'ready', 32);
      await store.write((tx) => tx.files.setStatus(file!.rid, 'failed', at(33), { code: 'extraction_failed', message: 'no text' }));
      const source = { source_type: 'uri' as const, declared_content_type: null, content_type: 'text/html', bytes: null, checksum: null, uri: 'https://example.com/a', version_id: 'ver_2' };
      const replaced = await store.write((tx) => tx.files.replaceSource(file!.rid, source, null, at(34)));
      t.match(replaced, { ...source, status: 'pending', error_code: null, error_message: null, notes: null, updated_at: at(34), created_at: at(30), id: 'fil_1', path: '/a.md' }, 'a new source: pending, the error gone');
      t.same(replaced.metadata, { b: [true, null], nested: { c: 'd' } }, 'metadata null keeps it');
      const again = await store.write((tx) => tx.files.replaceSource(file!.rid, { ...source, version_id: 'ver_3' }, { fresh: 'yes' }, at(35)));
      t.same(again.metadata, { fresh: 'yes' }, 'or replaces it');
      t.same(await store.collections.fileCounts(col.rid), { pending: 1, indexing: 0, ready: 0, failed: 0 }, 'counted pending again');
    });

    test('status changes: the error with it, counters and events', async (t, store) => {
      const { col } = await twoCollections(store);
      const [a, b] = await addFiles(store, [newFile('fil_a', col.rid, '/a.md'), newFile('fil_b', col.rid, '/b.md')]);
      let last = await store.events.lastRid();
      await setStatus(store, a!.rid, 'indexing', 31);
      t.same(types(await eventsSince(store, last)), ['file.updated'], 'indexing: reported; the collection was already busy');
      t.same(await store.collections.fileCounts(col.rid), { pending: 1, indexing: 1, ready: 0, failed: 0 });

      last = await store.events.lastRid();
      await store.write((tx) => tx.files.setStatus(a!.rid, 'failed', at(32), { code: 'extraction_failed', message: 'no text' }));
      t.match(await store.files.byRid(a!.rid), { status: 'failed', error_code: 'extraction_failed', error_message: 'no text', updated_at: at(32) }, 'failed with its error');
      const failedEvents = await eventsSince(store, last);
      t.same(types(failedEvents), ['file.updated', 'file.failed', 'object.indexing_failed'], 'the failure reported; another file keeps the collection busy');
      t.match(JSON.parse(failedEvents[0]!.data), { status: 'failed', error: { code: 'extraction_failed', message: 'no text' } }, 'the event shows the error');

      last = await store.events.lastRid();
      await store.write((tx) => tx.files.setStatus(b!.rid, 'failed', at(33), { code: 'fetch_failed', message: 'gone' }));
      t.same(types(await eventsSince(store, last)), ['collection.updated', 'file.updated', 'file.failed', 'object.indexing_failed'], 'the last busy file settles: the collection first');

      last = await store.events.lastRid();
      await store.write((tx) => tx.files.setStatus(b!.rid, 'failed', at(34), { code: 'fetch_failed', message: 'still gone' }));
      t.same(await eventsSince(store, last), [], 'the same status again is not reported');
      t.equal((await store.files.byRid(b!.rid))?.error_message, 'still gone', 'though the error is written');

      await setStatus(store, a!.rid, 'pending', 35);
      t.match(await store.files.byRid(a!.rid), { status: 'pending', error_code: null, error_message: null }, 'a status without an error clears it');
      t.same(await store.collections.fileCounts(col.rid), { pending: 1, indexing: 0, ready: 0, failed: 1 });

      last = await store.events.lastRid();
      await store.write((tx) => tx.files.setStatus(b!.rid + 1000, 'ready', at(36)));
      t.same(await eventsSince(store, last), [], 'an unknown rid: no change');
    });

    test('indexed: ready at a version with what indexing found; the indexed version cleared', async (t, store) => {
      const { col } = await twoCollections(store);
      const [file] = await addFiles(store, [newFile('fil_1', col.rid, '/a.bin', { declared_content_type: null, content_type: 'application/octet-stream' })]);
      await store.write((tx) => tx.files.setStatus(file!.rid, 'failed', at(31), { code: 'extraction_failed', message: 'first try' }));
      const last = await store.events.lastRid();
      await store.write((tx) => tx.files.markIndexed(file!.rid, { versionId: 'ver_fil_1', contentType: 'application/pdf', notes: ['declared type contradicted', 'page 3: OCR'] }, at(32)));
      const indexed = await store.files.byRid(file!.rid);
      t.match(indexed, { status: 'ready', indexed_version_id: 'ver_fil_1', content_type: 'application/pdf', error_code: null, error_message: null, updated_at: at(32) }, 'ready, the error gone');
      t.same(indexed!.notes, ['declared type contradicted', 'page 3: OCR'], 'notes come back as a list');
      const events = await eventsSince(store, last);
      t.same(types(events), ['file.updated', 'file.ready', 'object.indexed'], 'reported ready');
      t.same(JSON.parse(events[0]!.data).notes, ['declared type contradicted', 'page 3: OCR'], 'the event shows the notes');
      t.same(await store.collections.fileCounts(col.rid), { pending: 0, indexing: 0, ready: 1, failed: 0 });

      await store.write((tx) => tx.files.markIndexed(file!.rid, { versionId: 'ver_fil_1', contentType: 'application/pdf' }, at(33)));
      t.equal((await store.files.byRid(file!.rid))?.notes, null, 'no notes: null');

      await store.write((tx) => tx.files.clearIndexedVersion(file!.rid));
      t.match(await store.files.byRid(file!.rid), { indexed_version_id: null, status: 'ready' }, 'cleared; the status is left to its own write');
      await store.write((tx) => tx.files.markIndexed(file!.rid + 1000, { versionId: 'ver_x', contentType: 'text/plain' }, at(34)));
      t.same(await store.collections.fileCounts(col.rid), { pending: 0, indexing: 0, ready: 1, failed: 0 }, 'an unknown rid: no change');
    });

    test('deletion: no longer living, counted nowhere, reported', async (t, store) => {
      const { col } = await twoCollections(store);
      const [a, b] = await addFiles(store, [newFile('fil_a', col.rid, '/a.md'), newFile('fil_b', col.rid, '/b.md')]);
      await setStatus(store, b!.rid, 'ready', 31);
      const last = await store.events.lastRid();
      await store.write((tx) => tx.files.markDeleted(a!.rid, at(32)));
      t.same(types(await eventsSince(store, last)), ['collection.updated', 'file.updated', 'file.deleted'], 'its collection settles; the file is reported deleted');
      t.equal(await store.files.findLiveById(col.rid, 'fil_a'), undefined, 'not found by ID');
      t.equal(await store.files.findLiveByPath(col.rid, '/a.md'), undefined, 'nor by path');
      t.match(await store.files.byRid(a!.rid), { status: 'deleting', deleted_at: at(32), updated_at: at(32) }, 'byRid still reads it');
      t.same(await store.collections.fileCounts(col.rid), { pending: 0, indexing: 0, ready: 1, failed: 0 }, 'counted nowhere');

      const reborn = await store.write((tx) => tx.files.insert(newFile('fil_a2', col.rid, '/a.md')));
      t.equal((await store.files.findLiveByPath(col.rid, '/a.md'))?.rid, reborn.rid, 'its path may be taken again');
      await store.write((tx) => tx.files.markDeleted(b!.rid + 1000, at(33)));
      t.same(await store.collections.fileCounts(col.rid), { pending: 1, indexing: 0, ready: 1, failed: 0 }, 'deleting an unknown rid changes nothing');
    });

    test('settled: living ready and failed files at their versions, paged', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const files = await addFiles(store, [
        newFile('fil_1', col.rid, '/1.md'),
        newFile('fil_2', col.rid, '/2.md'),
        newFile('fil_3', col.rid, '/3.md'),
        newFile('fil_4', col.rid, '/4.md'),
        newFile('fil_5', col.rid, '/5.md'),
        newFile('fil_x', other.rid, '/1.md'),
      ]);
      const [f1, f2, f3, f4, f5, fx] = files as [FileRow, FileRow, FileRow, FileRow, FileRow, FileRow];
      for (const f of [f1, f2, f4, f5, fx]) await setStatus(store, f.rid, 'ready', 31);
      await setStatus(store, f4.rid, 'failed', 32);
      await setStatus(store, f3.rid, 'indexing', 32);
      await store.write((tx) => tx.files.markDeleted(f5.rid, at(33)));
      t.same(await store.files.settled(col.rid, 0, 10), [f1, f2, f4].map((f) => ({ rid: f.rid, version_id: f.version_id })), 'ready and failed, living, in creation order; none mid-work');
      t.same(await store.files.settled(col.rid, 0, 2).then((p) => p.map((f) => f.rid)), [f1.rid, f2.rid], 'a page');
      t.same(await store.files.settled(col.rid, f2.rid, 2).then((p) => p.map((f) => f.rid)), [f4.rid], 'the next');
      t.same(await store.files.settled(col.rid, f4.rid, 2), [], 'and the end');
      t.same(await store.files.settled(other.rid, 0, 10).then((p) => p.map((f) => f.rid)), [fx.rid], "the other collection's");
    });

    test('interrupted and indexing files go back to pending', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const [a, b, c, d, x] = await addFiles(store, [
        newFile('fil_a', col.rid, '/a.md'),
        newFile('fil_b', col.rid, '/b.md'),
        newFile('fil_c', col.rid, '/c.md'),
        newFile('fil_d', col.rid, '/d.md'),
        newFile('fil_x', other.rid, '/x.md'),
      ]);
      for (const f of [a!, b!, d!, x!]) await setStatus(store, f.rid, 'indexing', 31);
      await setStatus(store, c!.rid, 'ready', 31);
      await store.write((tx) => tx.files.markDeleted(d!.rid, at(32)));

      const last = await store.events.lastRid();
      t.equal(await store.write((tx) => tx.files.resetIndexing(col.rid, at(33))), 2, "one collection's living files mid-indexing");
      t.match(await store.files.byRid(a!.rid), { status: 'pending', updated_at: at(33) });
      t.equal((await store.files.byRid(c!.rid))?.status, 'ready', 'a ready file stays');
      t.equal((await store.files.byRid(d!.rid))?.status, 'deleting', 'a deleted one stays');
      t.equal((await store.files.byRid(x!.rid))?.status, 'indexing', "another collection's stays");
      t.same(types(await eventsSince(store, last)), ['file.updated', 'file.updated'], 'each reported');
      t.same(await store.collections.fileCounts(col.rid), { pending: 2, indexing: 0, ready: 1, failed: 0 }, 'counted pending');

      await setStatus(store, a!.rid, 'indexing', 34);
      t.equal(await store.write((tx) => tx.files.resetInterrupted(at(35))), 2, 'after a crash: every collection');
      t.equal((await store.files.byRid(a!.rid))?.status, 'pending', "this collection's");
      t.equal((await store.files.byRid(x!.rid))?.status, 'pending', "and the other's");
      t.same(await store.collections.fileCounts(other.rid), { pending: 1, indexing: 0, ready: 0, failed: 0 });
      t.equal(await store.write((tx) => tx.files.resetInterrupted(at(36))), 0, 'none left');
    });

    test('cards: only the columns a search result shows, of the rids asked', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const [a, b, x] = await addFiles(store, [
        newFile('fil_a', col.rid, '/a.md', { bytes: 10, metadata: { big: 'x'.repeat(100) } }),
        newFile('fil_b', col.rid, '/b.md', { bytes: null, updated_at: at(31) }),
        newFile('fil_x', other.rid, '/x.md'),
      ]);
      const cards = await store.files.cards([b!.rid, a!.rid, x!.rid, a!.rid + 1000]);
      const byId = new Map(cards.map((c) => [c.id, c]));
      t.equal(cards.length, 3, 'unknown rids are left out');
      t.same(byId.get('fil_a'), { rid: a!.rid, id: 'fil_a', path: '/a.md', content_type: 'text/plain', bytes: 10, created_at: at(30), updated_at: at(30) }, 'a card');
      t.same(byId.get('fil_b'), { rid: b!.rid, id: 'fil_b', path: '/b.md', content_type: 'text/plain', bytes: null, created_at: at(30), updated_at: at(31) });
      t.equal(byId.get('fil_x')?.path, '/x.md', 'any collection');
      t.same(await store.files.cards([]), [], 'none asked: none');
      const many = Array.from({ length: 700 }, (_, i) => a!.rid + 2000 + i);
      t.same(await store.files.cards([...many, a!.rid]).then(ids), ['fil_a'], 'many rids at once');
    });
  });
}
