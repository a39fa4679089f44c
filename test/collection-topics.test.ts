// The collection model wired into indexing and search (issue 16, item 1): trained in the worker once
// a collection has enough files, a vector per file, a third fusion term in semantic search.
import t from 'tap';
import type { z } from 'zod';
import { SearchResponse } from '../src/contract/schemas.js';
import { join } from 'node:path';
import { dueForTraining, FIRST_TRAINING_FILES, SETTLED_TRAINING_FILES, staysSettled, trainAndRefold, TRAINING_GROWTH } from '../src/domain/search/collection-topics.js';
import { databaseFile } from '../src/store/sqlite/db.js';
import { COLLECTION_WEIGHT } from '../src/domain/search/fusion-weights.js';
import { getCollectionModel } from '../src/store/sqlite/collection-models.js';
import { sqlite } from '../src/store/sqlite/sqlite.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

type Result = z.infer<typeof SearchResponse>['results'][number];

/**
 * A vet's notes: cats called "cat" or "feline", dogs "dog" or "canine", never both names in one note.
 * Each kind of animal has its own few hundred words (a real collection's vocabulary is far larger
 * than the model's 64 dimensions, which is what makes them generalise).
 */
function vetNotes(count: number): [string, string][] {
  let seed = 11;
  const pick = <T>(xs: readonly T[]) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return xs[Math.floor((seed / 2 ** 31) * xs.length)]!;
  };
  const words = (prefix: string, real: string[]) => [...real, ...Array.from({ length: 150 }, (_, i) => `${prefix}${i}`)];
  const topics = [
    { names: ['cat', 'feline'], context: words('cx', ['purr', 'whiskers', 'litter', 'meow', 'mouse', 'scratch', 'claws', 'yarn']) },
    { names: ['dog', 'canine'], context: words('dx', ['bark', 'leash', 'fetch', 'bone', 'puppy', 'kennel', 'walk', 'tail']) },
    { names: ['horse', 'equine'], context: words('hx', ['saddle', 'hoof', 'stable', 'gallop', 'hay', 'mane', 'rider', 'bridle']) },
  ];
  // Words of every kind of note; "checkup" among them, in about one note in ten.
  const generic = ['checkup', 'sleep', 'food', 'owner', 'house', 'morning', 'vet', 'visit', 'healthy', 'weight', ...Array.from({ length: 20 }, (_, i) => `gx${i}`)];
  return Array.from({ length: count }, (_, i) => {
    const topic = pick(topics);
    const name = pick(topic.names);
    const body = [...Array.from({ length: 12 }, () => pick(topic.context)), ...Array.from({ length: 3 }, () => pick(generic))];
    return [`/notes/${String(i).padStart(3, '0')}.md`, `The ${name} ${body.join(' ')}.`];
  });
}

/**
 * Two notes the query's words find alike (a common word, "checkup"), the dog note shorter so BM25 puts it first;
 * only the cat note is about what "feline" means in this collection, though it never says it.
 */
const TARGETS: [string, string][] = [
  ['/cats.md', 'Checkup: purr, whiskers, litter, yarn, mouse and claws.'],
  ['/dogs.md', 'Checkup: bark, leash, bone, puppy and kennel.'],
];
const QUERY = 'feline checkup';

async function ingest(f: Fixture, files: [string, string][]): Promise<{ base: string; collectionRid: number }> {
  const { base } = await seedCollection(f, 'vet', 'notes');
  for (const [path, text] of files) t.equal((await addInline(f, base, path, text)).status, 202, `added ${path}`);
  await f.waitForIdle('vet', 'notes');
  const rid = (sqlite(f.rt.db).prepare("SELECT rid FROM collections WHERE name = 'notes'").get() as { rid: number }).rid;
  return { base, collectionRid: rid };
}

t.test('thresholds: the first training at 64 files, then on every change up to 4,096 files, then at each doubling', async (t) => {
  t.equal(FIRST_TRAINING_FILES, 64);
  t.notOk(dueForTraining(null, 63));
  t.ok(dueForTraining(null, 64));
  t.equal(SETTLED_TRAINING_FILES, 4096);
  t.ok(dueForTraining(100, 101), 'a small collection is trained again on any change');
  t.ok(dueForTraining(4000, 4000), 'also when a file was replaced');
  t.notOk(dueForTraining(5000, 5000 * TRAINING_GROWTH - 1));
  t.ok(dueForTraining(5000, 5000 * TRAINING_GROWTH));
});

t.test('a due training waits until no new work has come for a while', async (t) => {
  const slept: number[] = [];
  const sleep = async (ms: number) => void slept.push(ms);
  const total = () => slept.splice(0).reduce((a, b) => a + b, 0);
  t.ok(await staysSettled(() => false, { lingerMs: 150, sleep }), 'nothing came: settled');
  t.equal(total(), 150, 'after waiting the whole linger');
  let polls = 0;
  t.notOk(await staysSettled(() => ++polls > 3, { lingerMs: 150, sleep }), 'work came while it waited: not settled');
  t.equal(polls, 4, 'and it stopped waiting at once');
  total();
  t.ok(await staysSettled(() => false, { lingerMs: 150, quietForMs: 100, sleep }), 'the newest work is 100 ms old: settled');
  t.equal(total(), 50, 'after the rest of the linger only');
  t.ok(await staysSettled(() => false, { lingerMs: 150, quietForMs: 2000, sleep }), 'a worker that took 2 s to catch up: settled');
  t.equal(total(), 0, 'without waiting again');
  t.notOk(await staysSettled(() => true, { lingerMs: 150, quietForMs: 2000, sleep }), 'but not while work is queued');
});

t.test('the model is learnt from the files a collection holds, whenever the worker caught up with their uploads', async (t) => {
  // The worker catching up with the uploads after 100 of 150 files once left CISI's model trained on
  // part of its files: 150 is less than twice 100, so it was never trained again.
  const files = [...vetNotes(148), ...TARGETS];
  const runs: { files: number | undefined; scores: string }[] = [];
  for (const parts of [[files], [files.slice(0, 100), files.slice(100)]]) {
    const f = await startFixture();
    const { base } = await seedCollection(f, 'vet', 'notes');
    for (const part of parts) {
      for (const [path, text] of part) t.equal((await addInline(f, base, path, text)).status, 202);
      await f.waitForIdle('vet', 'notes');
    }
    const rid = (sqlite(f.rt.db).prepare("SELECT rid FROM collections WHERE name = 'notes'").get() as { rid: number }).rid;
    const r = await f.call('POST', `${base}:search`, { query: QUERY, limit: 20, explain: true });
    runs.push({ files: getCollectionModel(f.rt.db, rid)?.files, scores: JSON.stringify((r.body.results as Result[]).map((x) => [x.path, x.score, x.explain!.collection_cosine])) });
    await f.close();
  }
  t.equal(runs[0]!.files, 150, 'uploaded at once: trained on all 150');
  t.equal(runs[1]!.files, 150, 'in two parts, idle in between: trained again on all 150');
  t.equal(runs[1]!.scores, runs[0]!.scores, 'the same scores');
});

t.test('a collection of 300 notes gets a model; semantic search ranks by it, keyword search does not', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base, collectionRid } = await ingest(f, [...vetNotes(300), ...TARGETS]);
  const db = f.rt.db;
  const stored = getCollectionModel(db, collectionRid);
  t.ok(stored, 'the worker trained a model before the collection went idle');
  t.equal(stored!.files, 302, 'from every ready file');
  const topics = (sqlite(db).prepare('SELECT count(*) AS n FROM file_topics').get() as { n: number }).n;
  t.equal(topics, 302, 'a vector per file');

  const keyword = await f.call('POST', `${base}:search`, { query: QUERY, mode: 'keyword', limit: 100 });
  const kwPaths = (keyword.body.results as Result[]).map((r) => r.path);
  t.ok(kwPaths.indexOf('/dogs.md') < kwPaths.indexOf('/cats.md'), `BM25 alone puts the short dog note first (${kwPaths.indexOf('/dogs.md')} < ${kwPaths.indexOf('/cats.md')})`);

  const semantic = await f.call('POST', `${base}:search`, { query: QUERY, limit: 100, explain: true });
  t.equal(semantic.status, 200);
  t.ok(SearchResponse.safeParse(semantic.body).success, 'the response matches the contract schema');
  const results = semantic.body.results as Result[];
  const paths = results.map((r) => r.path);
  // BM25 and the builtin vectors both prefer the dog note (explain shows it); the collection's model tips it.
  t.ok(paths.indexOf('/cats.md') < paths.indexOf('/dogs.md'), `the collection model puts the cat note first (${paths.indexOf('/cats.md')} < ${paths.indexOf('/dogs.md')})`);
  for (const r of results) {
    const e = r.explain!;
    t.equal(e.collection_weight, COLLECTION_WEIGHT);
    t.type(e.collection_cosine, 'number', `${r.path}: its file's cosine in the model`);
    t.ok(e.collection_cosine_scaled! >= 0 && e.collection_cosine_scaled! <= 1);
    t.ok(Math.abs(e.collection_part - COLLECTION_WEIGHT * e.collection_cosine_scaled!) <= 2e-6, 'collection part = weight × scaled cosine');
    t.ok(Math.abs(e.keyword_part + e.semantic_part + e.collection_part - r.score) <= 3e-6, `${r.path}: the three parts add up to the score`);
  }
  const cats = results.find((r) => r.path === '/cats.md')!.explain!;
  const dogs = results.find((r) => r.path === '/dogs.md')!.explain!;
  t.ok(cats.collection_cosine! > dogs.collection_cosine!, 'the cat note is nearer "feline" in the model');

  // A deleted file's vector goes with its passages.
  const cat = results.find((r) => r.path === '/cats.md')!;
  t.equal((await f.call('DELETE', `${base}/files/${cat.file_id}`)).status, 202);
  await f.waitForIdle('vet', 'notes');
  await waitFor('301 files with topics', () => (sqlite(db).prepare('SELECT count(*) AS n FROM file_topics').get() as { n: number }).n === 301);
  t.equal((sqlite(db).prepare('SELECT count(*) AS n FROM file_topics').get() as { n: number }).n, 301, 'the deleted file has no vector left');
});

t.test('the same files give the same model and scores, whatever order they were uploaded in', async (t) => {
  const files = [...vetNotes(70), ...TARGETS];
  const scores: string[] = [];
  for (const order of [files, [...files].reverse()]) {
    const f = await startFixture();
    const { base, collectionRid } = await ingest(f, order);
    t.ok((await f.rt.services.store.collectionModels.header(collectionRid)) !== null, 'a model');
    const r = await f.call('POST', `${base}:search`, { query: QUERY, limit: 20, explain: true });
    scores.push(JSON.stringify((r.body.results as Result[]).map((x) => [x.path, x.score, x.explain!.collection_cosine])));
    await f.close();
  }
  t.equal(scores[1], scores[0]);
});

t.test('below the first threshold there is no model, and the fusion is as before', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base, collectionRid } = await ingest(f, [...vetNotes(20), ...TARGETS]);
  t.equal(getCollectionModel(f.rt.db, collectionRid), null);
  const r = await f.call('POST', `${base}:search`, { query: QUERY, explain: true });
  for (const x of r.body.results as Result[]) {
    t.match(x.explain, { collection_cosine: null, collection_cosine_scaled: null, collection_weight: 0, collection_part: 0 });
    t.ok(Math.abs(x.explain!.keyword_part + x.explain!.semantic_part - x.score) <= 2e-6);
  }
});

t.test('a reindex learns the model afresh', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base, collectionRid } = await ingest(f, [...vetNotes(70), ...TARGETS]);
  const modelVersion = async () => (await f.rt.services.store.collectionModels.header(collectionRid))?.version ?? null;
  const before = (await modelVersion())!;
  t.equal((await f.call('POST', `${base}:reindex`)).status, 202);
  await waitFor('a new collection model', async () => (await modelVersion()) !== before);
  t.equal(await modelVersion(), before + 1, 'a new version');
  await f.waitForIdle('vet', 'notes');
  t.equal((sqlite(f.rt.db).prepare('SELECT count(*) AS n FROM file_topics').get() as { n: number }).n, 72, 'every file has its vector again');
});

t.test("a purged collection's rid coming back never meets the old model's version", async (t) => {
  const { openDatabase } = await import('../src/store/sqlite/db.js');
  const { putCollectionModel } = await import('../src/store/sqlite/collection-models.js');
  const db = openDatabase(':memory:', { migrate: true });
  t.teardown(() => db.close());
  const now = '2026-01-01T00:00:00.000Z';
  db.prepare("INSERT INTO namespaces (rid, id, name, created_at, updated_at) VALUES (1, 'ns_1', 'n', ?, ?)").run(now, now);
  const create = () => db.prepare("INSERT INTO collections (rid, id, namespace_rid, name, processing, access_control, created_at, updated_at) VALUES (5, 'col_5', 1, 'c', '{}', 'off', ?, ?)").run(now, now);
  create();
  const put = () => db.transaction(() => putCollectionModel(db, 5, { files: 64, model: Buffer.from('model'), semanticWeight: null, semanticModel: null }, now))();
  const first = put();
  t.equal(put(), first + 1, 'a retraining is the next version');
  // What purgeCollection does to the rows, then the same rid again.
  db.exec('DELETE FROM collection_models; DELETE FROM collections WHERE rid = 5');
  create();
  t.ok(put() > first + 1, "the new collection's first model has a version the old one never had");
});

t.test('a training gives the same model and vectors with its helper thread, without it, and when the helper fails', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { collectionRid } = await ingest(f, [...vetNotes(300), ...TARGETS]);
  const db = f.rt.db;
  const file = databaseFile(db);
  t.type(file, 'string', 'the fixture keeps its database in a file a thread can open');
  // A sample of 100 of the 302 files: the helper splits part of it, and reads and folds the 202 outside it.
  const snapshot = async (helperFile: string | null, helper: 'none' | 'used' | 'failed') => {
    const trained = await trainAndRefold(f.rt.services.store, collectionRid, null, [], { maxFiles: 100, helperFile });
    t.equal(trained?.helper, helper, `the helper thread: ${helper}`);
    const rows = sqlite(db).prepare('SELECT file_rid, vector FROM file_topics ORDER BY file_rid').all() as { file_rid: number; vector: Buffer }[];
    return { model: getCollectionModel(db, collectionRid)!.model.toString('base64'), rows: rows.map((r) => `${r.file_rid}:${r.vector.toString('base64')}`) };
  };
  const alone = await snapshot(null, 'none');
  t.equal(alone.rows.length, 302, 'a vector per file');
  const helped = await snapshot(file, 'used');
  t.equal(helped.model, alone.model, 'the same model');
  t.same(helped.rows, alone.rows, 'the same vectors, bit for bit');
  const failed = await snapshot(join(f.rt.dataDir, 'no-such-dir', 'trove.db'), 'failed');
  t.equal(failed.model, alone.model, 'a helper that cannot start: the worker does it all, the same way');
  t.same(failed.rows, alone.rows);
});
