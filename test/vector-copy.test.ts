// The dense stage scans an in-memory copy of each shard's vectors (WebAssembly SIMD) when the copy
// matches the stored vectors, and sqlite-vec otherwise. Both must rank alike, and a stale copy must
// never be used: a deleted passage never comes back.
import t from 'tap';
import path from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { DotScanner } from '../src/store/simd-scan.js';
import { denseHits, hasCurrentVectorCopy, refreshVectorCopy, VECTOR_SHARDS } from '../src/store/vectors.js';
import { startFixture, seedCollection } from './helpers/trove.js';

t.test('the SIMD kernel computes dot products, any dimension count', async (t) => {
  for (const dimensions of [1, 3, 4, 5, 100, 257]) {
    const rows = 37;
    const scanner = new DotScanner(rows, dimensions);
    const vectors = Array.from({ length: rows }, (_, r) => Float32Array.from({ length: dimensions }, (_, j) => Math.sin(r * 7 + j)));
    vectors.forEach((v, r) => scanner.setBytes(r, new Uint8Array(v.buffer)));
    const query = Float32Array.from({ length: dimensions }, (_, j) => Math.cos(j));
    const got = scanner.scan(query);
    let worst = 0;
    vectors.forEach((v, r) => {
      const want = v.reduce((sum, x, j) => sum + x * query[j]!, 0);
      worst = Math.max(worst, Math.abs(got[r]! - want));
    });
    t.ok(worst < 1e-3, `${dimensions} dimensions: max error ${worst}`);
  }
});

t.test('in-memory copy vs sqlite-vec, and staleness', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'demo', 'dense');
  const topics = ['volcano lava eruption magma', 'violin orchestra symphony music', 'football goal stadium match', 'bread flour oven baking', 'rocket orbit launch space'];
  for (let i = 0; i < 120; i++) {
    const text = `${topics[i % topics.length]} note ${i}. ${topics[(i * 3) % topics.length]} aside.`;
    const r = await f.call('POST', `${base}/files`, { path: `/n/${i}.txt`, source: { type: 'inline', text }, metadata: { group: i % 4 } });
    t.ok(r.status < 300, `file ${i} accepted`);
  }
  await f.waitForIdle('demo', 'dense');
  const col = f.rt.db.prepare("SELECT rid FROM collections WHERE name = 'dense'").get() as { rid: number };
  // A second connection, as the dense helper threads have.
  const db = openDatabase(path.join(f.rt.dataDir, 'trove.db'));
  t.teardown(() => db.close());
  const embedder = await f.rt.services.embedding.get();
  const queries = await embedder.embed(['lava from a volcano', 'string music', 'space launch', 'baking bread']);
  const filter = { sql: "json_extract(f.metadata, '$.group') = ?", params: [1] };
  const run = (query: Float32Array, withFilter: boolean) =>
    Array.from({ length: VECTOR_SHARDS }, (_, shard) => denseHits(db, { collectionRid: col.rid, query, filter: withFilter ? filter : null, limit: 15, shard })).flat();

  for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.notOk(hasCurrentVectorCopy(db, col.rid, shard), 'no copy before the first refresh');
  const viaSqlite = queries.map((q) => [run(q!, false), run(q!, true)]);
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) {
    refreshVectorCopy(db, col.rid, shard);
    t.ok(hasCurrentVectorCopy(db, col.rid, shard), `shard ${shard} has a current copy`);
  }
  const viaCopy = queries.map((q) => [run(q!, false), run(q!, true)]);
  for (let i = 0; i < queries.length; i++) {
    for (const j of [0, 1]) {
      const a = viaSqlite[i]![j]!;
      const b = viaCopy[i]![j]!;
      t.same(
        b.map((h) => h.passageRid),
        a.map((h) => h.passageRid),
        `query ${i}${j ? ' (filtered)' : ''}: same passages in the same order`,
      );
      t.ok(
        a.every((h, k) => Math.abs(h.similarity - b[k]!.similarity) < 1e-4),
        'same similarities',
      );
    }
  }

  // Delete the files of the best hits: the copy is stale at once and must not be used.
  const best = viaCopy[0]![0]!.slice(0, 3);
  const fileIds = db.prepare(`SELECT DISTINCT f.id FROM files f JOIN passages p ON p.file_rid = f.rid WHERE p.rid IN (${best.map(() => '?').join(',')})`).all(...best.map((h) => h.passageRid)) as { id: string }[];
  for (const { id } of fileIds) t.ok((await f.call('DELETE', `${base}/files/${id}`)).status < 300, 'deleted');
  await f.waitForIdle('demo', 'dense');
  // Deleting a file removes its vectors in the background: wait until its version stops moving.
  const version = () => (db.prepare('SELECT version FROM vector_versions WHERE collection_rid = ?').get(col.rid) as { version: number }).version;
  for (let last = -1, seen = version(); last !== seen; seen = version()) {
    last = seen;
    await new Promise((r) => setTimeout(r, 300));
  }
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.notOk(hasCurrentVectorCopy(db, col.rid, shard), `shard ${shard}: the copy is stale after a delete`);
  const after = run(queries[0]!, false).map((h) => h.passageRid);
  t.notOk(
    best.some((h) => after.includes(h.passageRid)),
    'deleted passages are not returned',
  );
  // Right after a change the copy waits for the vectors to settle; later it is rebuilt.
  const now = Date.now();
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) refreshVectorCopy(db, col.rid, shard, now);
  t.notOk(hasCurrentVectorCopy(db, col.rid, 0), 'not rebuilt while the vectors may still be changing');
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) refreshVectorCopy(db, col.rid, shard, now + 5000);
  t.ok(hasCurrentVectorCopy(db, col.rid, 0), 'rebuilt once settled');
  const rebuilt = run(queries[0]!, false).map((h) => h.passageRid);
  t.same(rebuilt, after, 'the rebuilt copy ranks as sqlite-vec does');
});
