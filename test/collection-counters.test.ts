// A collection's file counts are counters (migration v11), kept by every change of a file's status or
// deletion instead of counted over its files. After any mix of changes they must equal the count:
import type { Processing } from '../src/contract/schemas.js';
// one write path that forgot its counter would show here.
import t from 'tap';
import { restoreWorkspace } from '../src/domain/restore.js';
import { fileCounts, insertCollection, markCollectionDeleted, restoreCollection, type FileCounts } from '../src/store/sqlite/collections.js';
import { migrate, openDatabase, type SqliteDb } from '../src/store/sqlite/db.js';
import { insertFile, markFileDeleted, markFileIndexed, replaceFileSource, resetInterruptedFiles, setFileStatus, type FileRow } from '../src/store/sqlite/files.js';
import { requeueCollectionFiles } from '../src/store/sqlite/jobs.js';
import { MIGRATIONS } from '../src/store/sqlite/migrations.js';
import { insertNamespace, markNamespaceDeleted, restoreNamespace } from '../src/store/sqlite/namespaces.js';
import { purgeCollection } from '../src/store/sqlite/purge.js';
import { addInline, seedCollection, startFixture } from './helpers/trove.js';

function counted(db: SqliteDb, collectionRid: number): FileCounts {
  const rows = db.prepare('SELECT status, count(*) AS n FROM files WHERE collection_rid = ? AND deleted_at IS NULL GROUP BY status').all(collectionRid) as { status: string; n: number }[];
  const out: FileCounts = { pending: 0, indexing: 0, ready: 0, failed: 0 };
  for (const r of rows) if (r.status in out) out[r.status as keyof FileCounts] = r.n;
  return out;
}

/** A small deterministic generator, so a failure names a sequence that can be replayed. */
function prng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
}

t.test('the counters equal a count over the files after a mixed sequence of store changes', async (t) => {
  const db = openDatabase(':memory:', { migrate: true });
  t.teardown(() => db.close());
  let seq = 0;
  const now = () => new Date(Date.UTC(2025, 0, 1) + seq++ * 1000).toISOString();
  const { ns, cols } = db.transaction(() => {
    const ns = insertNamespace(db, { id: 'ns_c', name: 'c', display_name: null, created_at: now(), updated_at: now() });
    const cols = ['a', 'b', 'c'].map((name) =>
      insertCollection(db, { id: `col_${name}`, namespace_rid: ns.rid, name, display_name: null, processing: {} as Processing, access_control: 'off', embedding_model: null, created_at: now(), updated_at: now() }),
    );
    return { ns, cols };
  })();
  const file = (colRid: number, path: string, n: number) => ({
    id: `fil_${n}`,
    collection_rid: colRid,
    path,
    status: 'pending' as const,
    source_type: 'inline' as const,
    declared_content_type: null,
    content_type: 'text/plain',
    bytes: 1,
    checksum: null,
    uri: null,
    metadata: {},
    version_id: `ver_${n}`,
    created_at: now(),
    updated_at: now(),
  });
  const live = (colRid: number) => db.prepare('SELECT * FROM files WHERE collection_rid = ? AND deleted_at IS NULL ORDER BY rid').all(colRid) as FileRow[];
  const check = (label: string) => {
    for (const c of cols) {
      const have = fileCounts(db, c.rid);
      const want = counted(db, c.rid);
      if (JSON.stringify(have) !== JSON.stringify(want)) {
        t.same(have, want, `${label}: collection ${c.name}`);
        return false;
      }
    }
    return true;
  };

  const rand = prng(15);
  const pick = <T>(xs: T[]): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(rand() * xs.length)]);
  const ops: Record<string, (colRid: number) => void> = {
    add: (c) => {
      const path = `/p${Math.floor(rand() * 40)}`;
      const existing = live(c).find((f) => f.path === path);
      if (existing) replaceFileSource(db, existing.rid, { source_type: 'inline', declared_content_type: null, content_type: 'text/plain', bytes: 2, checksum: null, uri: null, version_id: `ver_r${seq}` }, null, now());
      else insertFile(db, file(c, path, seq));
    },
    start: (c) => {
      const f = pick(live(c).filter((x) => x.status === 'pending'));
      if (f) setFileStatus(db, f.rid, 'indexing', now());
    },
    index: (c) => {
      const f = pick(live(c).filter((x) => x.status === 'indexing' || x.status === 'pending'));
      if (f) markFileIndexed(db, f.rid, { versionId: f.version_id, contentType: 'text/plain' }, now());
    },
    reindexReady: (c) => {
      const f = pick(live(c).filter((x) => x.status === 'ready'));
      if (f) markFileIndexed(db, f.rid, { versionId: f.version_id, contentType: 'text/plain' }, now());
    },
    fail: (c) => {
      const f = pick(live(c).filter((x) => x.status !== 'failed'));
      if (f) setFileStatus(db, f.rid, 'failed', now(), { code: 'extraction_failed', message: 'no' });
    },
    cancelToReady: (c) => {
      const f = pick(live(c).filter((x) => x.status === 'pending'));
      if (f) setFileStatus(db, f.rid, 'ready', now());
    },
    delete: (c) => {
      const f = pick(live(c));
      if (f) markFileDeleted(db, f.rid, now());
    },
    deleteTwice: (c) => {
      const f = db.prepare('SELECT * FROM files WHERE collection_rid = ? AND deleted_at IS NOT NULL LIMIT 1').get(c) as FileRow | undefined;
      if (f) markFileDeleted(db, f.rid, now());
    },
    recover: () => resetInterruptedFiles(db, now()),
    deleteAndRestoreCollection: (c) => {
      markCollectionDeleted(db, c, now());
      requeueCollectionFiles(db, c, now());
      restoreCollection(db, c, now());
      requeueCollectionFiles(db, c, now());
    },
    deleteAndRestoreNamespace: () => {
      const at = now();
      for (const c of cols) markCollectionDeleted(db, c.rid, at);
      markNamespaceDeleted(db, ns.rid, at);
      restoreNamespace(db, ns.rid, now());
    },
  };
  const names = Object.keys(ops);
  let ok = true;
  for (let i = 0; i < 1500 && ok; i++) {
    const name = names[Math.floor(rand() * names.length)]!;
    const col = cols[Math.floor(rand() * cols.length)]!;
    db.transaction(() => ops[name]!(col.rid))();
    ok = check(`step ${i} (${name})`);
  }
  t.ok(ok, 'counters equal the count after 1500 mixed changes');
  for (const c of cols) t.ok(Object.values(fileCounts(db, c.rid)).some((n) => n > 0), `collection ${c.name} has living files`);

  // A change that rolls back moves no counter.
  const before = fileCounts(db, cols[0]!.rid);
  t.throws(() =>
    db.transaction(() => {
      insertFile(db, file(cols[0]!.rid, '/rolled-back', 99_999));
      throw new Error('roll back');
    })(),
  );
  t.same(fileCounts(db, cols[0]!.rid), before, 'a rolled-back insert leaves the counters');

  // Purging one collection takes its counters with it and leaves the others right.
  db.transaction(() => purgeCollection(db, cols[2]!.rid))();
  t.same(fileCounts(db, cols[2]!.rid), { pending: 0, indexing: 0, ready: 0, failed: 0 });
  cols.pop();
  t.ok(check('after a purge'));
});

t.test('the counters follow the domain: add, fail, cancel, delete, restore, re-add', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'cc', 'docs');
  const colRid = (f.rt.db.prepare("SELECT rid FROM collections WHERE name = 'docs'").get() as { rid: number }).rid;
  const agree = async (label: string) => {
    const got = (await f.call('GET', base)).body;
    t.same(got.file_counts ?? null, counted(f.rt.db, colRid), label);
  };
  const a = await addInline(f, base, '/a.md', 'a');
  const b = await addInline(f, base, '/b.md', 'b');
  await agree('two pending');
  await f.call('POST', `/jobs/${a.body.job.id}:cancel`);
  await agree('one canceled: failed');
  await f.call('DELETE', `${base}/files/${b.body.file.id}`);
  await agree('one deleted');
  await addInline(f, base, '/b.md', 'b again');
  await addInline(f, base, '/a.md', 'a again');
  await agree('re-added: a new file, and a failed one pending again');
  await f.call('DELETE', base);
  t.equal((await f.call('POST', '/v1/workspaces/cc/buckets/docs/restore')).status, 200);
  await agree('deleted and restored');
  await f.call('DELETE', '/namespaces/cc', { force: true });
  restoreWorkspace(f.rt.services, 'cc');
  await agree('namespace deleted and restored');
});

t.test('migration 11 fills the counters from the files', async (t) => {
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version <= 10)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, 'then');
  }
  const at = '2025-01-01T00:00:00.000Z';
  db.prepare("INSERT INTO namespaces (id, name, created_at, updated_at) VALUES ('ns_m', 'm', ?, ?)").run(at, at);
  for (const [i, name] of ['x', 'y', 'empty'].entries()) {
    db.prepare("INSERT INTO collections (id, namespace_rid, name, processing, access_control, created_at, updated_at) VALUES (?, 1, ?, '{}', 'off', ?, ?)").run(`col_${name}`, name, at, at);
    if (name === 'empty') continue;
    const statuses = ['pending', 'indexing', 'ready', 'ready', 'failed', 'deleting', 'ready'];
    statuses.forEach((status, j) => {
      db.prepare(
        "INSERT INTO files (id, collection_rid, path, status, source_type, content_type, version_id, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, 'inline', 'text/plain', 'v', ?, ?, ?)",
      ).run(`fil_${i}_${j}`, i + 1, `/${j}`, status, at, at, status === 'deleting' || (name === 'y' && j === 6) ? at : null);
    });
  }
  migrate(db);
  t.equal((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v, MIGRATIONS.at(-1)!.version);
  t.same(fileCounts(db, 1), { pending: 1, indexing: 1, ready: 3, failed: 1 });
  t.same(fileCounts(db, 2), { pending: 1, indexing: 1, ready: 2, failed: 1 }, 'deleted files are not counted');
  t.same(fileCounts(db, 3), { pending: 0, indexing: 0, ready: 0, failed: 0 });
  for (const rid of [1, 2, 3]) t.same(fileCounts(db, rid), counted(db, rid));
  t.same(db.prepare("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'view')").all(), [], 'no trigger or view is left');
});
