// The reads a semantic search adds to a keyword one (issue 16's budget: semantic p50 within 1.3×
// keyword): the exact cosines of keyword hits the vector scan did not return, read by key in
// bound blocks, and the files' vectors in the collection model, kept until the next write.
import t, { type Test } from 'tap';
import { collectionModelOf, MAX_HELD_TOPICS, topicScores } from '../src/domain/search/collection-topics.js';
import { encodeTopic } from '../src/domain/search/collection-model.js';
import { putFileTopics } from '../src/store/sqlite/collection-models.js';
import { sqlite } from '../src/store/sqlite/sqlite.js';
import { similarities } from '../src/store/sqlite/vectors.js';
import { addInline, seedCollection, startFixture } from './helpers/trove.js';

t.test('cosines of passages by rid: every block of the list, the same values as one query over them all', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'w', 'notes');
  for (let i = 0; i < 150; i++) t.equal((await addInline(f, base, `/n/${i}.md`, `Note ${i}: the ${['cat', 'dog', 'owl'][i % 3]} naps by the window, day ${i}.`)).status, 202);
  await f.waitForIdle('w', 'notes');
  const db = f.rt.db;
  const collectionRid = (sqlite(db).prepare("SELECT rid FROM collections WHERE name = 'notes'").get() as { rid: number }).rid;
  const rows = sqlite(db).prepare('SELECT rid, embedding FROM vec_shared WHERE collection_rid = ? ORDER BY rid').all(collectionRid) as { rid: number; embedding: Buffer }[];
  t.ok(rows.length >= 150, 'a vector per passage');
  const query = new Float32Array(rows[7]!.embedding.buffer.slice(rows[7]!.embedding.byteOffset, rows[7]!.embedding.byteOffset + rows[7]!.embedding.byteLength));
  // More than two blocks of 64, out of order, with a repeat and rids that have no vector.
  const asked = [...rows.map((r) => r.rid).reverse(), rows[3]!.rid, 999_999, -1];
  const got = similarities(db, collectionRid, query, asked);
  const reference = new Map(
    (sqlite(db).prepare('SELECT rid, vec_distance_cosine(embedding, ?) AS d FROM vec_shared WHERE rid IN (SELECT value FROM json_each(?))').all(Buffer.from(query.buffer), JSON.stringify(asked)) as { rid: number; d: number }[]).map((r) => [r.rid, 1 - r.d]),
  );
  t.equal(got.size, rows.length, 'every passage with a vector, once');
  t.same([...got].sort((a, b) => a[0] - b[0]), [...reference].sort((a, b) => a[0] - b[0]), 'the same cosines, bit for bit');
  t.ok(Math.abs(got.get(rows[7]!.rid)! - 1) < 1e-6, "a passage's own vector: cosine 1");
  t.equal(similarities(db, collectionRid, query, []).size, 0);
});

/** 80 notes in a semantic collection, indexed, with its model: the database, the model and the files' rids. */
async function modelledCollection(t: Test) {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'w', 'notes');
  for (let i = 0; i < 80; i++) t.equal((await addInline(f, base, `/n/${i}.md`, `Note ${i}: the ${['cat purrs', 'dog barks', 'owl hoots'][i % 3]} by the window, day ${i}.`)).status, 202);
  await f.waitForIdle('w', 'notes');
  const db = f.rt.db;
  const collectionRid = (sqlite(db).prepare("SELECT rid FROM collections WHERE name = 'notes'").get() as { rid: number }).rid;
  const files = (sqlite(db).prepare('SELECT rid FROM files WHERE collection_rid = ? ORDER BY rid').all(collectionRid) as { rid: number }[]).map((r) => r.rid);
  return { f, db, entry: await collectionModelOf(f.rt.services.store, collectionRid), files };
}

t.test("files' vectors in the model are kept until the next write, and a write is seen at once", async (t) => {
  const { f, db, entry, files } = await modelledCollection(t);
  t.ok(entry, 'the collection has its model');
  const first = (await topicScores(f.rt.services.store, entry, 'cat purrs', files))!;
  t.equal(first.size, 80, 'a score per file');
  t.same(await topicScores(f.rt.services.store, entry, 'cat purrs', files), first, 'the same scores from what was read');
  // Another file's vector changes (as a training or an indexed file rewrites it): the next search sees it.
  const target = files[0]!;
  const flipped = new Float32Array(entry!.model.dimensions);
  flipped[0] = 1;
  await f.rt.write(() => putFileTopics(db, [{ fileRid: target, vector: encodeTopic(flipped) }]));
  const after = (await topicScores(f.rt.services.store, entry, 'cat purrs', files))!;
  t.not(after.get(target), first.get(target), 'the rewritten vector counts at once');
  t.equal(after.get(files[1]!), first.get(files[1]!), 'the others are unchanged');
});

t.test("a search that fills the kept files' vectors still scores every file it held", async (t) => {
  const { f, entry, files } = await modelledCollection(t);
  const first = (await topicScores(f.rt.services.store, entry, 'cat purrs', files))!;
  t.equal(first.size, 80);
  // Other searches' candidates (rids with no vector) fill what is kept to just under the budget; the
  // next search brings the same 80 files and more, and goes over it.
  const other = (from: number, n: number) => Array.from({ length: n }, (_, i) => 10_000_000 + from + i);
  await topicScores(f.rt.services.store, entry, 'cat purrs', other(0, MAX_HELD_TOPICS - 100));
  const again = (await topicScores(f.rt.services.store, entry, 'cat purrs', [...files, ...other(MAX_HELD_TOPICS, 100)]))!;
  t.same(again, first, 'the same 80 scores: what was dropped for room is read again');
});
