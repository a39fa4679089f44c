// A full disk (docs/decisions.md, "A full disk"): the database and the blob store refuse writes with
// SQLITE_FULL and ENOSPC. Requests that need room answer 503 temporarily_unavailable (reason
// insufficient_storage, retryable), keep nothing of themselves, lose nothing accepted before, and
// work again once there is room, without a restart.
//
// The database side is a real SQLITE_FULL: `PRAGMA max_page_count` caps the file at its size, and
// SQLite then fails a write that needs a page exactly as on a full disk (it rolls the whole
// transaction back, as it did on a full tmpfs). The blob side fails the upload's file writes with
// ENOSPC partway, through Node's own fs bindings (module.syncBuiltinESMExports).
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { openDatabase, type SqliteDb } from '../../src/store/sqlite/db.js';
import { WriteGate } from '../../src/store/sqlite/write-gate.js';
import { Writer } from '../../src/store/sqlite/writer.js';
import { addInline, seedCollection, startFixture, type Call } from '../helpers/trove.js';
import { diskFullAfter, noRoomForFoldersUnder } from '../helpers/disk-full.js';

/** Caps the database at the pages it has now: from here on a write that needs a new page fails with SQLITE_FULL. */
function capDatabase(db: SqliteDb): void {
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
}

/** Space is freed: the cap goes back to SQLite's default. */
function uncapDatabase(db: SqliteDb): void {
  db.pragma('max_page_count = 4294967294');
}

function isDiskFull(t: Test, r: Call, what: string): void {
  t.equal(r.status, 503, `${what}: 503`);
  t.equal(r.body?.error?.code, 'temporarily_unavailable', `${what}: temporarily_unavailable`);
  t.equal(r.body?.error?.retryable, true, `${what}: retryable`);
  t.equal(r.body?.error?.details?.reason, 'insufficient_storage', `${what}: details.reason`);
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}

t.test('the writer: a change that meets SQLITE_FULL fails with it, and the rest of its transaction is told the truth', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trove-full-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  const gate = new WriteGate();
  const writer = new Writer(db, gate, 'main');
  db.exec('CREATE TABLE filler (bytes BLOB)');
  db.prepare("INSERT INTO meta (key, value) VALUES ('first', '0'), ('last', '0')").run();
  // Updates in place need no new page: they can commit on a full disk.
  const set = (key: string, value: string) => () => db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(value, key).changes;
  const fill = () => {
    for (;;) db.prepare('INSERT INTO filler (bytes) VALUES (?)').run(Buffer.alloc(8192));
  };
  const value = (key: string) => (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string }).value;
  const fillerRows = () => (db.prepare('SELECT count(*) AS n FROM filler').get() as { n: number }).n;
  capDatabase(db);

  const rounds = {
    // With the token free: the three changes share the turn's transaction.
    'in the same turn': async (run: () => Promise<PromiseSettledResult<unknown>[]>) => run(),
    // With another thread holding the token: they queue and commit as one group.
    'queued behind another thread': async (run: () => Promise<PromiseSettledResult<unknown>[]>) => {
      t.ok(gate.tryAcquire('worker'));
      const settled = run();
      await new Promise((resolve) => setImmediate(resolve));
      gate.release('worker');
      return settled;
    },
  };
  let round = 0;
  for (const [name, drive] of Object.entries(rounds)) {
    round++;
    const [first, full, last] = await drive(() => Promise.allSettled([writer.write(set('first', `${round}`)), writer.write(fill), writer.write(set('last', `${round}`))]));
    t.match(full, { status: 'rejected', reason: { code: 'SQLITE_FULL' } }, `${name}: the change that ran out of room fails with SQLITE_FULL`);
    t.match(first, { status: 'rejected', reason: { code: 'SQLITE_FULL' } }, `${name}: the change before it, undone with the transaction SQLite rolled back, is not reported committed`);
    t.equal(value('first'), '0', `${name}: and is not in the database`);
    t.match(last, { status: 'fulfilled', value: 1 }, `${name}: the change after it commits`);
    t.equal(value('last'), `${round}`, `${name}: and is in the database`);
    t.equal(fillerRows(), 0, `${name}: nothing of the failed change is kept`);
    t.equal(gate.holder(), null, `${name}: the token is let go`);
  }

  uncapDatabase(db);
  await writer.write(() => db.prepare('INSERT INTO filler (bytes) VALUES (?)').run(Buffer.alloc(8192)));
  t.equal(fillerRows(), 1, 'once there is room, the same connection writes again');
});

t.test('namespace create and inline add on a full database: 503 insufficient_storage, nothing half-made, nothing lost, and again once there is room', async (t) => {
  const f = await startFixture({ webhookDispatcher: false, researchRunner: false });
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'full', 'notes');
  t.equal((await addInline(f, base, '/before.txt', 'accepted before the disk filled up')).status, 202);

  capDatabase(f.rt.db);
  // Namespaces until one does not fit.
  const created: string[] = [];
  let refused: Call | null = null;
  for (let i = 0; i < 5000 && !refused; i++) {
    const r = await f.call('POST', '/namespaces', { name: `ns-${i}` });
    if (r.status === 201) created.push(`ns-${i}`);
    else refused = r;
  }
  t.ok(refused, 'a namespace create finds the database full');
  isDiskFull(t, refused!, 'namespace create');
  const refusedName = `ns-${created.length}`;
  t.equal((await f.call('GET', `/namespaces/${refusedName}`)).status, 404, 'the refused namespace was not made');

  // Files until one does not fit.
  const added: string[] = [];
  let refusedFile: Call | null = null;
  for (let i = 0; i < 5000 && !refusedFile; i++) {
    const r = await addInline(f, base, `/note-${i}.txt`, `note ${i} ${'words '.repeat(200)}`);
    if (r.status === 202) added.push(`/note-${i}.txt`);
    else refusedFile = r;
  }
  t.ok(refusedFile, 'an inline add finds the database full');
  isDiskFull(t, refusedFile!, 'inline add');
  const refusedPath = `/note-${added.length}.txt`;
  const listed = await f.call('GET', `${base}/files?path=${encodeURIComponent(refusedPath)}`);
  t.same(listed.body.items, [], 'the refused file was not added');

  // Room again, no restart.
  uncapDatabase(f.rt.db);
  t.equal((await f.call('POST', '/namespaces', { name: refusedName })).status, 201, 'the refused namespace create succeeds on retry');
  t.equal((await addInline(f, base, refusedPath, 'sent again')).status, 202, 'the refused inline add succeeds on retry');
  const names = new Set<string>();
  for (let cursor: string | null = ''; cursor !== null; ) {
    const page: Call = await f.call('GET', `/namespaces?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const n of page.body.items as { name: string }[]) names.add(n.name);
    cursor = page.body.next_cursor;
  }
  t.same(
    [...created, refusedName].filter((n) => !names.has(n)),
    [],
    'every namespace accepted while the disk filled up is there',
  );
  const counts = await f.waitForIdle(ns, col);
  t.equal(counts.file_counts.ready, added.length + 2, 'every file accepted (before, while filling, and the retry) is indexed');
  t.equal(counts.file_counts.failed, 0, 'none failed');
  t.equal((await f.call('GET', '/ready')).status, 200, 'the daemon is ready');
});

t.test('an upload on a full disk: 503 insufficient_storage, no half-written blob, the URL works once there is room', async (t) => {
  const f = await startFixture({ webhookDispatcher: false, researchRunner: false });
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'full', 'uploads');
  const blobsDir = join(f.rt.dataDir, 'blobs');
  const bytes = Buffer.from(`${'an uploaded report on full disks. '.repeat(8000)}\n`);
  const added = await f.call('POST', `${base}/files`, { path: '/report.txt', source: { type: 'upload', content_type: 'text/plain', bytes: bytes.length } });
  t.equal(added.status, 202);
  const put = () => f.raw('PUT', new URL(added.body.upload.url).pathname, bytes, { authorization: undefined, 'content-type': 'text/plain' });
  const fileState = async () => (await f.call('GET', `${base}/files/${added.body.file.id}`)).body.status;

  // The blob's bytes: the disk fills up partway through them.
  const roomAgain = diskFullAfter(64 * 1024);
  const partway = await put();
  roomAgain();
  isDiskFull(t, partway, 'blob write');
  t.same(filesUnder(blobsDir), [], 'no half-written blob is left');

  // The blob's folder: no room for it.
  // (Its first two hex digits: the blob store's folder for it, src/store/fs-blobs/.)
  const foldersAgain = noRoomForFoldersUnder(join(blobsDir, createHash('sha256').update(bytes).digest('hex').slice(0, 2)));
  const noFolder = await put();
  foldersAgain();
  isDiskFull(t, noFolder, 'blob folder');
  t.same(filesUnder(blobsDir), [], 'no blob or temporary file is left');

  // The database row that would refer to the blob: the database is full when it is written.
  const store = f.rt.services.store as unknown as { write: (change: (tx: unknown) => Promise<unknown>) => Promise<unknown> };
  const write = store.write;
  f.rt.db.exec('CREATE TABLE filler (bytes BLOB)');
  capDatabase(f.rt.db);
  // After the change has run to its end: the upload's change awaits the blob store's commit.
  store.write = (change) =>
    write(async (tx) => {
      const value = await change(tx);
      for (;;) f.rt.db.prepare('INSERT INTO filler (bytes) VALUES (?)').run(Buffer.alloc(8192));
      return value;
    });
  const noRow = await put();
  store.write = write;
  uncapDatabase(f.rt.db);
  isDiskFull(t, noRow, 'database row');
  t.same(filesUnder(blobsDir), [], 'the blob no row refers to is removed');
  t.equal(await fileState(), 'pending', 'the file still waits for its bytes');

  const done = await put();
  t.equal(done.status, 200, 'once there is room, the same upload URL takes the bytes');
  t.equal(filesUnder(blobsDir).length, 1, 'and the blob is stored');
  const idle = await f.waitForIdle(ns, col);
  t.equal(idle.file_counts.ready, 1, 'the file is indexed');
});
