// One writer per data dir (issue 15, item 1): the HTTP thread waits for the write token without
// blocking, so /health and reads go on while another thread holds a long write; queued writes
// commit together; a store write outside a transaction fails at once instead of taking the lock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { stmt } from '../../src/store/sqlite/statements.js';
import { WriteGate } from '../../src/store/sqlite/write-gate.js';
import { Writer } from '../../src/store/sqlite/writer.js';
import { startFixture } from '../helpers/trove.js';

const dbModule = new URL('../../src/store/sqlite/db.js', import.meta.url).href;
const gateModule = new URL('../../src/store/sqlite/write-gate.js', import.meta.url).href;

/**
 * Stands in for the indexing worker in the middle of a long transaction: takes the token, begins a
 * write, says so (ctl[0] = 1), and holds SQLite's write lock until the test says commit (ctl[0] = 2).
 * It blocks its own thread while it holds, as a long synchronous batch of inserts would.
 */
const HOLDER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
(async () => {
  const { openDatabase } = await import(workerData.dbModule);
  const { WriteGate } = await import(workerData.gateModule);
  const gate = new WriteGate(workerData.gate);
  const ctl = new Int32Array(workerData.ctl);
  const db = openDatabase(workerData.dbFile);
  await gate.acquire('worker');
  db.exec('BEGIN IMMEDIATE');
  db.prepare("INSERT INTO meta (key, value) VALUES ('held-by-worker', 'yes')").run();
  Atomics.store(ctl, 0, 1);
  Atomics.notify(ctl, 0);
  Atomics.wait(ctl, 0, 1, 30000);
  db.exec('COMMIT');
  Atomics.store(ctl, 0, 3);
  gate.release('worker');
  db.close();
  parentPort.postMessage('committed');
})().catch((err) => parentPort.postMessage('error: ' + (err && err.stack || err)));
`;

t.test('the HTTP thread answers /health and reads while the worker holds a long write; its own write waits and then commits', async (t) => {
  const f = await startFixture({ indexer: false, webhookDispatcher: false, researchRunner: false });
  t.teardown(() => f.close());
  const ctl = new Int32Array(new SharedArrayBuffer(4));
  const holder = new Worker(HOLDER_SOURCE, {
    eval: true,
    workerData: { dbModule, gateModule, gate: f.rt.writeGate.buffer, ctl: ctl.buffer, dbFile: join(f.rt.dataDir, 'trove.db') },
  });
  const order: string[] = [];
  const committed = new Promise<string>((resolve) => holder.on('message', (m: string) => resolve(m)));
  const workerState = () => ['begun', 'holding', 'told to commit', 'committed'][Atomics.load(ctl, 0)];

  // Wait (without blocking) until the worker holds the token and SQLite's write lock.
  while (Atomics.load(ctl, 0) !== 1) await Atomics.waitAsync(ctl, 0, 0, 1000).value;
  t.equal(f.rt.writeGate.holder(), 'worker', 'the worker holds the write token');

  let writeSettled = false;
  const write = f.call('POST', '/namespaces', { name: 'made-during-the-write' }).then((r) => {
    writeSettled = true;
    order.push(`write answered, worker ${workerState()}`);
    return r;
  });
  const health = await f.call('GET', '/health');
  order.push(`health answered, worker ${workerState()}`);
  t.equal(health.status, 200, '/health answers');
  const list = await f.call('GET', '/namespaces');
  t.equal(list.status, 200, 'a read answers');
  t.notOk(writeSettled, 'while the write is still waiting for the token');
  t.equal(f.rt.writeGate.holder(), 'worker', 'and the worker still holds its transaction');
  t.notOk((list.body.items as { name: string }[]).some((n) => n.name === 'made-during-the-write'), 'the waiting write is not visible yet');

  // The worker commits; the waiting write goes through.
  Atomics.store(ctl, 0, 2);
  Atomics.notify(ctl, 0);
  t.equal(await committed, 'committed');
  const made = await write;
  t.equal(made.status, 201, 'the write committed once the token was free');
  t.same(order, ['health answered, worker holding', 'write answered, worker committed'], '/health during the worker\'s write; the waiting write after it');
  t.equal((await f.call('GET', '/namespaces/made-during-the-write')).status, 200);
  t.equal(f.rt.writeGate.holder(), null, 'the token is free again');
  await holder.terminate();
});

/** A database of its own with its writer; `put` writes through the store's statement cache, as every store function does. */
function writerFixture(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'trove-writer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  const gate = new WriteGate();
  return {
    db,
    gate,
    writer: new Writer(db, gate, 'main'),
    put: (key: string) => stmt(db, 'INSERT INTO meta (key, value) VALUES (?, ?)').run(key, 'v'),
    has: (key: string) => db.prepare('SELECT 1 FROM meta WHERE key = ?').get(key) !== undefined,
  };
}

t.test('the writer', async (t) => {
  const { gate, writer, put, has } = writerFixture(t);

  t.throws(() => put('bypass'), /outside a write transaction/, 'a write that does not come through the writer fails at once');
  t.notOk(has('bypass'));

  await writer.write(() => put('alone'));
  t.ok(has('alone'), 'with the token free, a change commits');
  t.equal(gate.holder(), null, 'and the token is let go');

  // Another thread holds the token: changes queue, then commit together; one failing change is undone alone.
  t.ok(gate.tryAcquire('worker'));
  const settled: string[] = [];
  const a = writer.write(() => put('a')).then(() => settled.push('a'));
  const bad = writer.write(() => {
    put('b');
    throw new Error('this change fails');
  });
  const c = writer.write(() => (put('c'), 'c result'));
  await new Promise((r) => setTimeout(r, 30));
  t.same(settled, [], 'nothing commits while another thread holds the token');
  t.notOk(has('a'));
  gate.release('worker');
  await a;
  await t.rejects(bad, /this change fails/, 'the failing change rejects');
  t.equal(await c, 'c result', 'the others resolve with their results');
  t.ok(has('a') && has('c'), 'and are committed');
  t.notOk(has('b'), "the failing change's own write was rolled back");

  let inner: Promise<unknown> = Promise.resolve();
  await writer.write(() => {
    inner = writer.write(() => 1).then(
      () => 'resolved',
      (err: Error) => err.message,
    );
  });
  t.match(await inner, /inside a change/, 'a change cannot call write itself');

  // The worker lets the HTTP thread's waiting writes go first.
  t.ok(gate.tryAcquire('worker'));
  const mainWrite = writer.write(() => put('main-first'));
  await new Promise((r) => setImmediate(r));
  gate.release('worker');
  t.notOk(gate.tryAcquire('worker'), 'with a main-thread write waiting, the worker does not take the token');
  await mainWrite;
  t.ok(gate.tryAcquire('worker'), 'once it committed, the worker can');
  gate.release('worker');
  t.ok(has('main-first'));
});

t.test('async changes: each keeps its savepoint until it settles, the next waits its turn, COMMIT waits for the last', async (t) => {
  const { gate, writer, put, has } = writerFixture(t);
  const tick = () => new Promise((r) => setImmediate(r));
  const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

  // Token free: the turn's transaction takes them in order; each settles before the next runs.
  const order: string[] = [];
  const slow = writer.write(async () => {
    put('slow-1');
    order.push('slow starts');
    await later(30);
    put('slow-2');
    order.push('slow ends');
    return 'slow result';
  });
  const failing = writer.write(async () => {
    order.push('failing starts');
    put('failing');
    await Promise.resolve();
    throw new Error('this async change fails');
  });
  const quick = writer.write(() => (order.push('sync runs'), put('sync'), 'sync result'));
  t.equal(await slow, 'slow result', 'an async change resolves with its result');
  await t.rejects(failing, /this async change fails/, 'a failing async change rejects');
  t.equal(await quick, 'sync result');
  t.same(order, ['slow starts', 'slow ends', 'failing starts', 'sync runs'], 'no change starts while an async one is still running');
  t.ok(has('slow-1') && has('slow-2'), 'both writes of the slow change committed, the second made 30 ms after the turn');
  t.notOk(has('failing'), "the failing change's write was undone");
  t.ok(has('sync'), 'the change after it committed');
  t.equal(gate.holder(), null, 'the token is let go');

  // A write arriving while COMMIT waits for a running change goes into the next transaction.
  let release!: () => void;
  const held = writer.write(async () => {
    put('held');
    await new Promise<void>((r) => (release = r));
  });
  await tick();
  await tick();
  const next = writer.write(() => put('next'));
  await later(10);
  t.notOk(has('next'), 'nothing of the next transaction runs while the token is held');
  release();
  await held;
  await next;
  t.ok(has('held') && has('next'), 'both commit');

  // Token held by another thread: queued async changes run in the group, one after the other.
  t.ok(gate.tryAcquire('worker'));
  const a = writer.write(async () => {
    await later(5);
    put('queued-a');
    return 'a';
  });
  const b = writer.write(async () => {
    put('queued-b');
    await Promise.resolve();
    throw new Error('b fails');
  });
  const c = writer.write(async () => (put('queued-c'), 'c'));
  await later(20);
  t.notOk(has('queued-a'));
  gate.release('worker');
  t.equal(await a, 'a');
  await t.rejects(b, /b fails/);
  t.equal(await c, 'c');
  t.ok(has('queued-a') && has('queued-c'), 'the queued async changes commit together');
  t.notOk(has('queued-b'), 'but not the one that failed');
});

t.test('a worker that died holding the token does not keep it', async (t) => {
  const gate = new WriteGate();
  t.ok(gate.tryAcquire('worker'));
  t.equal(gate.releaseAbandoned('main'), false, 'only the holder named is freed');
  t.equal(gate.releaseAbandoned('worker'), true);
  t.equal(gate.holder(), null);
  t.throws(() => gate.release('worker'), /not held/);
});

t.test('writes that waited for the token check that what their route found still exists', async (t) => {
  const f = await startFixture({ indexer: false, webhookDispatcher: false, researchRunner: false });
  t.teardown(() => f.close());
  const base = '/namespaces/race/collections/docs';
  t.equal((await f.call('POST', '/namespaces', { name: 'race' })).status, 201);
  t.equal((await f.call('POST', '/namespaces/race/collections', { name: 'docs' })).status, 201);
  t.equal((await f.call('POST', `${base}/files`, { path: '/a.md', source: { type: 'inline', text: 'alpha' } })).status, 202);
  t.equal((await f.call('POST', '/namespaces/race/collections', { name: 'other' })).status, 201);

  // The worker holds the token: every write below resolves its target now and waits to change it.
  t.ok(f.rt.writeGate.tryAcquire('worker'));
  const del = f.call('DELETE', `${base}/files/%2Fa.md`);
  const patch = f.call('PATCH', `${base}/files/%2Fa.md`, { source: { type: 'inline', text: 'beta' } });
  const meta = f.call('PATCH', `${base}/files/%2Fa.md`, { metadata: { k: 1 } });
  const dropOther = f.call('DELETE', '/namespaces/race/collections/other');
  const addToOther = f.call('POST', '/namespaces/race/collections/other/files', { path: '/b.md', source: { type: 'inline', text: 'gamma' } });
  await new Promise((r) => setTimeout(r, 20));
  f.rt.writeGate.release('worker');

  t.equal((await del).status, 202, 'the delete that came first goes through');
  const patched = await patch;
  t.equal(patched.status, 404, 'a new version of the file deleted meanwhile is refused');
  t.equal(patched.body.error.code, 'not_found');
  t.equal((await meta).status, 404, 'and so is a metadata change');
  t.equal((await dropOther).status, 202);
  t.equal((await addToOther).status, 404, 'a file is not added to a collection deleted meanwhile');
  const files = await f.call('GET', `${base}/files`);
  t.same(files.body.items, [], 'nothing came back to life');
});

t.test('a read that arrives with a burst of file POSTs is answered before their writes (yieldToReads)', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  await f.call('POST', '/namespaces', { name: 'burst' });
  await f.call('POST', '/namespaces/burst/collections', { name: 'c', processing: { semantic: false } });
  // Eight POSTs and then a read, all started in one tick, as a poll phase delivers them.
  const posts = Array.from({ length: 8 }, (_, i) => f.call('POST', '/namespaces/burst/collections/c/files', { path: `/f${i}.txt`, source: { type: 'inline', text: `burst file ${i}` } }));
  const read = f.call('GET', '/namespaces/burst/collections/c/files');
  const listed = await read;
  t.equal(listed.status, 200);
  t.same(listed.body.items, [], 'the read ran before any of the POSTs wrote');
  t.same((await Promise.all(posts)).map((r) => r.status), Array(8).fill(202), 'every POST is accepted');
  const after = await f.call('GET', '/namespaces/burst/collections/c/files');
  t.equal(after.body.items.length, 8, 'and every file is there afterwards');
});
