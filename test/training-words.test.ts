// The words the indexing worker keeps for the collection model's next training
// (src/domain/search/training-words.ts): what is kept is always what the store holds, a training
// from kept words is the training from the store's texts bit for bit, and the memory is bounded.
import t, { type Test } from 'tap';
import { runDeleteFileJob, runIndexJobs } from '../src/domain/ingest/pipeline.js';
import { modelTerms, modelText } from '../src/domain/search/collection-model.js';
import { trainAndRefold } from '../src/domain/search/collection-topics.js';
import { TrainingWords } from '../src/domain/search/training-words.js';
import { getCollectionModel } from '../src/store/sqlite/collection-models.js';
import { passagesOfFiles } from '../src/store/sqlite/passages.js';
import { databaseFile } from '../src/store/sqlite/db.js';
import { sqlite } from '../src/store/sqlite/sqlite.js';
import { claim, inProcessWorker, keptWords } from './helpers/indexing.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

t.test('words are kept per file and version, the oldest dropped first beyond the budget', async (t) => {
  const words = new TrainingWords(10);
  words.put(1, 'v1', ['cat', 'purr', 'cat']);
  const ids = words.ids(1, 'v1');
  t.ok(ids, 'held for its version');
  t.same(words.terms(ids!), ['cat', 'purr', 'cat'], 'the same words back, repeats and order kept');
  t.equal(words.ids(1, 'v2'), null, 'not for another version');
  t.equal(words.ids(1, undefined), null);
  t.equal(words.ids(2, 'v1'), null, 'nor for another file');
  words.put(1, 'v2', ['dog']);
  t.equal(words.ids(1, 'v1'), null, 'a new version replaces the old');
  t.same(words.terms(words.ids(1, 'v2')!), ['dog']);
  t.equal(words.size, 1);
  words.put(2, 'v1', ['a', 'b', 'c', 'd', 'e']);
  words.put(3, 'v1', ['f', 'g', 'h', 'i']);
  t.equal(words.size, 10, 'at the budget');
  words.put(4, 'v1', ['j', 'k']);
  t.equal(words.ids(1, 'v2'), null, 'beyond it the oldest file goes');
  t.equal(words.ids(2, 'v1'), null);
  t.ok(words.ids(3, 'v1') && words.ids(4, 'v1'), 'the newest stay');
  t.ok(words.size <= 10);
  words.put(5, 'v1', Array.from({ length: 11 }, (_, i) => `w${i}`));
  t.equal(words.ids(5, 'v1'), null, 'a file larger than the whole budget is not kept');
  t.ok(words.ids(4, 'v1'), 'and costs the others nothing');
  words.forget(4);
  t.equal(words.ids(4, 'v1'), null, 'forgotten');
  const rows = words.rowsIn(new Map([['g', 7], ['h', 3]]));
  const held = words.ids(3, 'v1')!;
  t.same(Array.from(held, (id) => rows[id]), [-1, 7, 3, -1], "each word's row in a model, -1 where the model lacks it");
});

async function collectionWith(t: Test, f: Fixture, name: string, count: number, body: Record<string, unknown> = {}): Promise<number> {
  const { base } = await seedCollection(f, 'w', name, body);
  for (let i = 0; i < count; i++) {
    const animal = ['cat', 'dog', 'horse'][i % 3];
    t.equal((await addInline(f, base, `/notes/${String(i).padStart(3, '0')}.md`, `Note ${i}: the ${animal} visits the vet, ${animal} checkup number ${i} of ${name}.`)).status, 202);
  }
  return (sqlite(f.rt.db).prepare('SELECT rid FROM collections WHERE name = ?').get(name) as { rid: number }).rid;
}

const readyFiles = (f: Fixture, collectionRid: number) =>
  sqlite(f.rt.db).prepare("SELECT rid, indexed_version_id AS version FROM files WHERE collection_rid = ? AND status = 'ready' ORDER BY rid").all(collectionRid) as { rid: number; version: string }[];

t.test('the worker keeps the words of what it committed, and forgets what it replaced or removed', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.rt.close());
  const db = f.rt.db;
  const semantic = await collectionWith(t, f, 'notes', 70);
  const keyword = await collectionWith(t, f, 'plain', 5, { processing: { semantic: false } });
  const worker = inProcessWorker(f);
  await runIndexJobs(worker, await claim(f));
  const held = keptWords(f);
  const files = readyFiles(f, semantic);
  t.equal(files.length, 70);
  const texts = passagesOfFiles(db, files.map((x) => x.rid));
  const kept = files.map((x) => held.ids(x.rid, x.version));
  t.equal(kept.filter(Boolean).length, 70, 'every file of the semantic collection');
  t.same(
    kept.map((ids) => held.terms(ids!)),
    files.map((x) => modelTerms(modelText(texts.get(x.rid) ?? []))),
    "the words of each file's stored passages",
  );
  t.equal(readyFiles(f, keyword).filter((x) => held.ids(x.rid, x.version)).length, 0, 'none of a collection without a model');
  t.ok(getCollectionModel(db, semantic), 'the batch that emptied the queue trained the model');

  // A new version: the old words go, the new come once it is committed.
  const first = files[0]!;
  t.equal((await addInline(f, '/namespaces/w/collections/notes', '/notes/000.md', 'Rewritten: the parrot talks to the vet.')).status, 202);
  await runIndexJobs(worker, await claim(f));
  const rewritten = readyFiles(f, semantic)[0]!;
  t.not(rewritten.version, first.version);
  t.same(held.terms(held.ids(rewritten.rid, rewritten.version)!), modelTerms('Rewritten: the parrot talks to the vet.'), 'the new version kept');
  t.equal(held.ids(rewritten.rid, first.version), null, 'the old one gone');

  // Deleted: forgotten with its passages.
  const second = files[1]!;
  t.equal((await f.call('DELETE', `/namespaces/w/collections/notes/files/${encodeURIComponent('/notes/001.md')}`)).status < 300, true, 'deleted');
  const deletions = (await claim(f)).filter((j) => j.type === 'delete_file');
  t.equal(deletions.length, 1);
  await runDeleteFileJob(worker, deletions[0]!);
  t.equal(held.ids(second.rid, second.version), null, 'a deleted file is forgotten');
});

t.test('a training from kept words is the training from the stored texts, bit for bit', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.rt.close());
  const db = f.rt.db;
  const collectionRid = await collectionWith(t, f, 'notes', 150);
  await runIndexJobs(inProcessWorker(f), await claim(f));
  const files = readyFiles(f, collectionRid);
  t.equal(keptWords(f).size > 0, true, 'the worker kept words');
  // A sample of 100 of the 150: kept words serve the sample and the files folded in after. A
  // helper thread is offered each time, and started only when some file has to be split.
  const snapshot = async (words: TrainingWords, helper: 'none' | 'used') => {
    const trained = await trainAndRefold(inProcessWorker(f).store, collectionRid, null, [], { maxFiles: 100, helperFile: databaseFile(db), words });
    t.equal(trained?.helper, helper, `the helper thread: ${helper}`);
    const rows = sqlite(db).prepare('SELECT file_rid, vector FROM file_topics ORDER BY file_rid').all() as { file_rid: number; vector: Buffer }[];
    return { model: getCollectionModel(db, collectionRid)!.model.toString('base64'), rows: rows.map((r) => `${r.file_rid}:${r.vector.toString('base64')}`) };
  };
  const fromStore = await snapshot(new TrainingWords(), 'used');
  t.equal(fromStore.rows.length, 150);
  const kept = await snapshot(keptWords(f), 'none');
  t.equal(kept.model, fromStore.model, 'every word kept: nothing to split, the same model');
  t.same(kept.rows, fromStore.rows, 'the same vectors');
  // Some kept, some not (every other file); the helper thread splits what is not.
  const half = new TrainingWords();
  const texts = passagesOfFiles(db, files.map((x) => x.rid));
  files.forEach((x, i) => i % 2 === 0 && half.put(x.rid, x.version, modelTerms(modelText(texts.get(x.rid) ?? []))));
  const mixed = await snapshot(half, 'used');
  t.equal(mixed.model, fromStore.model, 'half kept: the same model');
  t.same(mixed.rows, fromStore.rows);
  // Words kept for another version are not used.
  const stale = new TrainingWords();
  for (const x of files) stale.put(x.rid, `${x.version}-old`, ['unrelated', 'words']);
  const fromStale = await snapshot(stale, 'used');
  t.equal(fromStale.model, fromStore.model, 'words of another version are ignored');
  t.same(fromStale.rows, fromStore.rows);
});

t.test('a file whose passages a rejected upload deleted is not brought back ready by a cancel, nor trained from old words', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.rt.close());
  const db = f.rt.db;
  const collectionRid = await collectionWith(t, f, 'notes', 70);
  const base = '/namespaces/w/collections/notes';
  t.equal((await addInline(f, base, '/x.md', 'The cat and the dog visit the horse vet: cat checkup, dog checkup.')).status, 202);
  const worker = inProcessWorker(f);
  await runIndexJobs(worker, await claim(f));
  const x = () => sqlite(db).prepare("SELECT rid, status, indexed_version_id FROM files WHERE path = '/x.md'").get() as { rid: number; status: string; indexed_version_id: string | null };
  const { rid } = x();
  t.equal(x().status, 'ready');
  t.ok(keptWords(f).ids(rid, x().indexed_version_id!), 'its words are kept');
  // A new version as an upload whose bytes contradict the declared size: rejected, the file fails.
  const up = await f.call('POST', `${base}/files`, { path: '/x.md', source: { type: 'upload', content_type: 'text/plain', bytes: 10 } });
  t.equal(up.status, 202);
  const put = await f.raw('PUT', new URL(up.body.upload.url).pathname, 'short', { 'content-type': 'text/plain', 'content-length': '5' });
  t.equal(put.status, 400, 'the upload is rejected');
  t.same(x(), { rid, status: 'failed', indexed_version_id: null }, 'failed, its passages and with them its indexed version gone');
  // Added again, and that job canceled before it ran.
  const again = await addInline(f, base, '/x.md', 'Anything at all.');
  t.equal((await f.call('POST', `/jobs/${again.body.job.id}:cancel`)).status, 200);
  t.equal(x().status, 'failed', 'a cancel does not make it ready with nothing to find');
  const train = async (words: TrainingWords) => {
    await trainAndRefold(worker.store, collectionRid, null, [], { helperFile: null, words });
    return getCollectionModel(db, collectionRid)!.model.toString('base64');
  };
  t.equal(await train(keptWords(f)), await train(new TrainingWords()), 'the same model with the words kept as without them');
});
