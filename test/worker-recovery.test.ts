// What the indexing worker leaves behind when it fails. A fault in training the collection model
// must not keep a batch's files `indexing` (the worker used to die with them claimed, and nothing
// re-queued them until the daemon restarted); jobs a dead worker held go back to the queue, a
// job that was interrupted before runs alone, and one that keeps killing the worker fails.
import t, { type Test } from 'tap';
import { MAX_WORKER_DEATHS, recoverFromWorkerDeath, runIndexJobs, type IndexingWorker } from '../src/domain/ingest/pipeline.js';
import { getCollectionModel } from '../src/store/sqlite/collection-models.js';
import { requeueInterruptedJobs } from '../src/store/sqlite/jobs.js';
import { claim, inProcessWorker } from './helpers/indexing.js';
import { sqlite } from '../src/store/sqlite/sqlite.js';
import { nowIso } from '../src/contract/ids.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

/**
 * What a worker that died now leaves: the daemon lives on and a new worker recovers first.
 * `countDeath` false: it died of the machine (a full disk), which is not held against the jobs.
 */
const workerDied = (f: Fixture, countDeath = true) => f.rt.services.store.write((tx) => recoverFromWorkerDeath(tx, nowIso(), countDeath));

const fileStates = (f: Fixture) =>
  sqlite(f.rt.db).prepare('SELECT path, status, error_code, error_message FROM files ORDER BY path').all() as { path: string; status: string; error_code: string | null; error_message: string | null }[];

/** The indexing worker as the test runs it (no thread of its own), whose write number `failing` (0: the first) fails as a full disk would. */
function workerFailingWrite(f: Fixture, failing: number): { worker: IndexingWorker; warnings: string[]; writes: () => number } {
  let writes = 0;
  const warnings: string[] = [];
  const worker = inProcessWorker(f, {
    wrap: (write) => (change) => (writes++ === failing ? Promise.reject(new Error('SQLITE_FULL: database or disk is full')) : write(change)),
    warn: (message, fields) => warnings.push(`${message} ${String(fields?.cause)}`),
  });
  return { worker, warnings, writes: () => writes };
}

async function fixtureWithFiles(t: Test, paths: string[], collectionBody: Record<string, unknown> = {}): Promise<{ f: Fixture; collectionRid: number }> {
  // No indexing worker: the test claims and runs the jobs itself, as the worker would.
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.rt.close());
  const { base } = await seedCollection(f, 'w', 'notes', collectionBody);
  for (const [i, path] of paths.entries()) t.equal((await addInline(f, base, path, `Note ${i}: the ${['cat', 'dog', 'horse'][i % 3]} visits the vet for a checkup, number ${i}.`)).status, 202);
  const collectionRid = (sqlite(f.rt.db).prepare("SELECT rid FROM collections WHERE name = 'notes'").get() as { rid: number }).rid;
  return { f, collectionRid };
}

t.test('jobs a dead worker held go back to the queue and their files to pending', async (t) => {
  const { f } = await fixtureWithFiles(t, ['/a.md', '/b.md', '/c.md']);
  t.equal((await claim(f, 10)).length, 3, 'one batch holds all three');
  t.same(new Set(fileStates(f).map((x) => x.status)), new Set(['indexing']));
  t.same(await workerDied(f), { requeued: 3, failed: 0 });
  t.same(new Set(fileStates(f).map((x) => x.status)), new Set(['pending']), 'none stays indexing');
  const counts = (await f.call('GET', '/namespaces/w/collections/notes')).body.file_counts;
  t.same(counts, { pending: 3, indexing: 0, ready: 0, failed: 0 }, "the collection's counters follow");
});

t.test('a job interrupted before is claimed alone; fresh jobs are batched as usual', async (t) => {
  const { f } = await fixtureWithFiles(t, ['/a.md', '/b.md']);
  await claim(f, 10);
  await workerDied(f);
  await addInline(f, '/namespaces/w/collections/notes', '/c.md', 'A note added after the worker died.');
  const first = await claim(f, 10);
  t.equal(first.length, 1, 'the oldest interrupted job alone');
  t.equal(first[0]!.attempts, 2);
  const second = await claim(f, 10);
  t.equal(second.length, 1, 'then the next interrupted one, alone');
  t.equal(second[0]!.attempts, 2);
  const third = await claim(f, 10);
  t.equal(third.length, 1, 'then the fresh job (the only one left)');
  t.equal(third[0]!.attempts, 1);
  t.same(await claim(f, 10), [], 'nothing more');
});

t.test(`a job that stops the worker ${MAX_WORKER_DEATHS} times fails its file; the jobs batched with it do not`, async (t) => {
  const { f } = await fixtureWithFiles(t, ['/poison.md', '/b.md', '/c.md']);
  await claim(f, 10); // the poison file and two bystanders die together once
  t.same(await workerDied(f), { requeued: 3, failed: 0 });
  for (let attempt = 2; attempt <= MAX_WORKER_DEATHS; attempt++) {
    const alone = await claim(f, 10);
    t.same(alone.map((j) => j.attempts), [attempt], `attempt ${attempt} runs alone`);
    const recovered = await workerDied(f);
    t.same(recovered, attempt < MAX_WORKER_DEATHS ? { requeued: 1, failed: 0 } : { requeued: 0, failed: 1 }, 'only the job alone was held');
  }
  const states = fileStates(f);
  t.match(states[0], { path: '/b.md', status: 'pending', error_code: null });
  t.match(states[1], { path: '/c.md', status: 'pending', error_code: null });
  t.match(states[2], { path: '/poison.md', status: 'failed', error_code: 'extraction_failed', error_message: /stopped the indexing worker 3 times/ });
  const file = (await f.call('GET', '/namespaces/w/collections/notes/files?limit=10')).body.items.find((x: { path: string }) => x.path === '/poison.md');
  t.match(file, { status: 'failed', error: { code: 'extraction_failed', message: /add the file again to retry/ } }, 'the API shows why');
  const next = await claim(f, 10);
  t.equal(next.length, 1, 'the bystanders were interrupted too, so each runs alone, and neither is failed');
});

t.test('restarts and deaths of the machine are not held against a job', async (t) => {
  const { f } = await fixtureWithFiles(t, ['/a.md']);
  const db = f.rt.db;
  for (let i = 0; i < MAX_WORKER_DEATHS + 1; i++) {
    t.equal((await claim(f, 10)).length, 1);
    // A daemon restart (kill -9 included), then a worker that died of a full disk.
    if (i % 2 === 0) sqlite(db).transaction(() => requeueInterruptedJobs(db, nowIso()))();
    else t.same(await workerDied(f, false), { requeued: 1, failed: 0 });
  }
  t.match(sqlite(db).prepare('SELECT attempts, worker_deaths, status FROM jobs').get(), { attempts: MAX_WORKER_DEATHS + 1, worker_deaths: 0, status: 'queued' });
  t.same(fileStates(f).map((x) => x.status), ['pending'], 'the file is tried again');
});

t.test('one collection whose training fails costs the others nothing', async (t) => {
  const paths = Array.from({ length: 70 }, (_, i) => `/notes/${String(i).padStart(2, '0')}.md`);
  const { f, collectionRid: first } = await fixtureWithFiles(t, paths);
  const { base } = await seedCollection(f, 'w', 'other');
  for (const [i, path] of paths.entries()) t.equal((await addInline(f, base, path, `Other ${i}: the ${['owl', 'hawk', 'wren'][i % 3]} sings at dawn, number ${i}.`)).status, 202);
  const second = (sqlite(f.rt.db).prepare("SELECT rid FROM collections WHERE name = 'other'").get() as { rid: number }).rid;
  const db = f.rt.db;
  // The first collection's model is written; the second's write fails.
  const { worker, warnings } = workerFailingWrite(f, 1);
  const jobs = await claim(f, 200);
  t.equal(jobs.length, 140, 'both collections in one batch');
  await runIndexJobs(worker, jobs);
  t.same(new Set(fileStates(f).map((x) => x.status)), new Set(['ready']), 'every file of both is ready');
  t.ok(getCollectionModel(db, first), 'the first collection has its model');
  const topics = (rid: number) => (sqlite(db).prepare('SELECT count(*) AS n FROM file_topics t JOIN files f ON f.rid = t.file_rid WHERE f.collection_rid = ?').get(rid) as { n: number }).n;
  t.equal(topics(first), 70, "and its files' vectors");
  t.equal(getCollectionModel(db, second), null, 'the second has none');
  t.equal(topics(second), 0);
  t.equal(warnings.length, 1, 'one warning, for the second');
});

t.test("a training that fails leaves the batch's files ready, without a model, and says so", async (t) => {
  // 70 files: enough for the first training (64), which runs with the batch that empties the queue.
  const paths = Array.from({ length: 70 }, (_, i) => `/notes/${String(i).padStart(2, '0')}.md`);
  const { f, collectionRid } = await fixtureWithFiles(t, paths);
  const db = f.rt.db;
  // The first write of the batch is the model's (trainAndRefold), before the files are committed: a
  // disk that fills up there, say.
  const { worker, warnings, writes } = workerFailingWrite(f, 0);
  const jobs = await claim(f, 100);
  t.equal(jobs.length, 70);
  await runIndexJobs(worker, jobs);
  t.ok(writes() > 1, 'the training tried to write first');
  t.same(new Set(fileStates(f).map((x) => x.status)), new Set(['ready']), 'every file is ready');
  t.equal(getCollectionModel(db, collectionRid), null, 'and the collection has no model');
  t.equal(warnings.length, 1);
  t.match(warnings[0], /could not be trained.*SQLITE_FULL/s, 'the daemon log says why');
  const search = await f.call('POST', '/namespaces/w/collections/notes:search', { query: 'cat checkup', mode: 'semantic' });
  t.equal(search.status, 200, 'semantic search still answers');
  t.ok(search.body.results.length > 0);
});

t.test('end to end: a file whose commit kills the worker fails after three tries; the daemon and the other files go on', async (t) => {
  const warnings: string[] = [];
  const log = { info() {}, error() {}, warn: (message: string, fields?: Record<string, unknown>) => warnings.push(`${message} ${JSON.stringify(fields ?? {})}`) };
  const f = await startFixture({ log });
  t.teardown(() => f.rt.close());
  const { base } = await seedCollection(f, 'w', 'notes');
  // A fault the worker cannot catch: the write that marks this one file ready fails, every time
  // (a trigger, so it reaches the worker's own connection). The batch's transaction rolls back and
  // the worker dies with its jobs claimed.
  await f.rt.write(() =>
    sqlite(f.rt.db).exec("CREATE TRIGGER poison BEFORE UPDATE OF status ON files WHEN NEW.path = '/poison.md' AND NEW.status = 'ready' BEGIN SELECT RAISE(ABORT, 'injected fault'); END"),
  );
  for (const path of ['/a.md', '/poison.md', '/c.md']) t.equal((await addInline(f, base, path, `The note ${path} about kestrels.`)).status, 202);
  const idle = await f.waitForIdle('w', 'notes');
  t.same(idle.file_counts, { pending: 0, indexing: 0, ready: 2, failed: 1 }, 'nothing stays indexing');
  const states = fileStates(f);
  t.match(states, [
    { path: '/a.md', status: 'ready' },
    { path: '/c.md', status: 'ready' },
    { path: '/poison.md', status: 'failed', error_code: 'extraction_failed', error_message: /stopped the indexing worker 3 times/ },
  ]);
  t.ok(warnings.some((w) => /re-queued the jobs the indexing worker held/.test(w)), 'the log says what the new worker recovered');
  t.ok(f.rt.services.indexerAlive(), 'a worker runs again');
  // And it still works: a new file is indexed.
  t.equal((await addInline(f, base, '/d.md', 'One more note.')).status, 202);
  t.same((await f.waitForIdle('w', 'notes')).file_counts, { pending: 0, indexing: 0, ready: 3, failed: 1 });
});
