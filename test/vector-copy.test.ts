// The dense stage (src/domain/search/vector-scan.ts) scans an in-memory int8 copy of each shard's
// vectors (WebAssembly SIMD) when the copy matches the stored vectors, having the store re-score its
// shortlist from the float32 vectors, and has the store score the whole shard otherwise. Both must
// rank exactly alike, whatever the memory budget keeps, and a stale copy must never be used: a
// deleted passage never comes back. Run here over the SQLite engine, whose vectors these tests write
// with its own functions (the store interface has no vector writes yet).
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseVectorMemory, resolveVectorMemory } from '../src/domain/search/vector-memory.js';
import { resolveFileSettings } from '../daemon/config.js';
import { openDatabase, type Db } from '../src/store/sqlite/db.js';
import { Int8Scanner } from '../src/domain/search/int8-scanner.js';
import { VectorCopies } from '../src/domain/search/vector-copies.js';
import { byDenseRank, denseHits } from '../src/domain/search/vector-scan.js';
import { insertVectors } from '../src/store/sqlite/vectors.js';
import { selectFiles } from '../src/store/sqlite/search.js';
import { VECTOR_SHARDS, type FileSelection, type VectorReads } from '../src/store/interface.js';
import { sqliteReads } from './helpers/sqlite-reads.js';
import { runCli } from './helpers/cli.js';
import { startFixture, seedCollection } from './helpers/trove.js';

const BUDGET = { budgetBytes: 256 * 2 ** 20 };

const unit = (v: Float32Array) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

t.test('the int8 kernel is within its error bound of the float32 dot product, any dimension count', async (t) => {
  for (const dimensions of [1, 3, 15, 16, 17, 100, 257]) {
    const rows = 37;
    const scanner = new Int8Scanner(rows, dimensions);
    const vectors = Array.from({ length: rows }, (_, r) => unit(Float32Array.from({ length: dimensions }, (_, j) => Math.sin(r * 7 + j) + (j === r % dimensions ? 3 : 0))));
    vectors.forEach((v, r) => scanner.setBytes(r, new Uint8Array(v.buffer)));
    const query = unit(Float32Array.from({ length: dimensions }, (_, j) => Math.cos(j)));
    const got = scanner.scan(query);
    const bound = scanner.errorBound(query);
    let worst = 0;
    vectors.forEach((v, r) => {
      const want = v.reduce((sum, x, j) => sum + x * query[j]!, 0);
      worst = Math.max(worst, Math.abs(got[r]! - want));
    });
    t.ok(worst <= bound, `${dimensions} dimensions: max error ${worst.toExponential(2)} within the bound ${bound.toExponential(2)}`);
    t.ok(bound < 0.05, 'and the bound is small enough to shortlist with');
  }
});

/** A migrated database with `collections` collections of ready files, one passage each, all with vectors. */
function syntheticDb(t: { teardown(fn: () => void): void }, collections: number, vectorsOf: (collection: number) => Float32Array[]): { db: Db; rids: number[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-vec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(path.join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  const now = new Date().toISOString();
  db.prepare("INSERT INTO namespaces (rid, id, name, created_at, updated_at) VALUES (1, 'ns_1', 'n', ?, ?)").run(now, now);
  const rids: number[] = [];
  for (let c = 1; c <= collections; c++) {
    db.prepare("INSERT INTO collections (rid, id, namespace_rid, name, processing, access_control, created_at, updated_at) VALUES (?, ?, 1, ?, '{}', '{}', ?, ?)").run(c, `col_${c}`, `c${c}`, now, now);
    const vectors = vectorsOf(c);
    db.transaction(() => {
      vectors.forEach((embedding, i) => {
        const file = db
          .prepare("INSERT INTO files (id, collection_rid, path, status, source_type, content_type, metadata, version_id, created_at, updated_at) VALUES (?, ?, ?, 'ready', 'inline', 'text/plain', ?, 'v', ?, ?)")
          .run(`file_${c}_${i}`, c, `/${i}.txt`, JSON.stringify({ group: i % 3 }), now, now);
        const passage = db
          .prepare("INSERT INTO passages (file_rid, ordinal, evidence_kind, heading, text, char_start, char_end) VALUES (?, 0, 'text', '', 'x', 0, 1)")
          .run(file.lastInsertRowid);
        insertVectors(db, c, [{ passageRid: Number(passage.lastInsertRowid), textHash: `h${i}`, embedding }]);
      });
    })();
    rids.push(c);
  }
  return { db, rids };
}

const GROUP_ONE = { field: 'metadata.group', op: 'eq', value: 1 } as const;

/** The domain's scan over a SQLite connection, with copies of its own (as one helper thread holds). */
function scanOver(db: Db): { vectors: VectorReads; copies: VectorCopies } {
  const vectors = sqliteReads(db).vectors;
  return { vectors, copies: new VectorCopies(vectors) };
}

const allShards = async (over: { vectors: VectorReads; copies: VectorCopies }, collectionRid: number, query: Float32Array, limit: number, selection: FileSelection | null = null) =>
  (await Promise.all(Array.from({ length: VECTOR_SHARDS }, (_, shard) => denseHits(over.vectors, over.copies, { collectionRid, query, selection, limit, shard }))))
    .flat()
    .sort(byDenseRank)
    .slice(0, limit);

const refreshAll = async (copies: VectorCopies, collectionRid: number, options: { budgetBytes: number; now?: number }) => {
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) await copies.refresh(collectionRid, shard, options);
};

// Near-duplicates a hair apart: their float32 order is well defined, but far finer than an int8
// step, so the int8 scan alone orders them almost at random. The re-scored shortlist must not.
function nearDuplicates(seed: number, far = 600): { vectors: Float32Array[]; queries: Float32Array[] } {
  let x = seed;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
  const base = unit(Float32Array.from({ length: 100 }, rand));
  const vectors: Float32Array[] = [];
  for (let i = 0; i < far; i++) vectors.push(unit(Float32Array.from({ length: 100 }, rand)));
  for (let i = 0; i < 400; i++) vectors.push(unit(base.map((b) => b + rand() * 0.004)));
  const queries = Array.from({ length: 5 }, () => unit(base.map((b) => b + rand() * 0.01)));
  return { vectors, queries };
}

t.test('the int8 shortlist, re-scored, gives exactly the float32 ranking where int8 alone would not', async (t) => {
  // Enough rows that a wide window (limit 200: 800 rows a shard) takes the histogram path.
  const { vectors, queries } = nearDuplicates(7, 3000);
  const { db } = syntheticDb(t, 1, () => vectors);
  const scan = scanOver(db);
  // The synthetic rows keep no file counters: the selection's share is counted here, so the int8
  // window is sized as for a real collection (not every row).
  const selected = selectFiles(db, 1, { filter: GROUP_ONE, principals: null });
  const ready = selectFiles(db, 1, { filter: null, principals: null }).fileRids.length;
  const filter = { ...selected, selectivity: selected.fileRids.length / ready };
  t.ok(filter.selectivity > 0 && filter.selectivity < 1, `the filter keeps a share of the files (${filter.selectivity})`);
  const ask = (q: Float32Array) => Promise.all([allShards(scan, 1, q, 10), allShards(scan, 1, q, 10, filter), allShards(scan, 1, q, 100), allShards(scan, 1, q, 200, filter)]);
  const viaTable = await Promise.all(queries.map(ask));
  await refreshAll(scan.copies, 1, BUDGET);
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.ok(await scan.copies.hasCurrent(1, shard), `shard ${shard} is scanned from memory`);
  const viaCopy = await Promise.all(queries.map(ask));
  t.same(viaCopy, viaTable, 'the same passages, order and similarities as the exact table scan, filtered or not');

  // What the int8 scores alone would have returned: a different top 10, so the re-scoring is what makes it exact.
  const scanner = new Int8Scanner(vectors.length, 100);
  vectors.forEach((v, r) => scanner.setBytes(r, new Uint8Array(v.buffer)));
  let differs = 0;
  for (const [i, q] of queries.entries()) {
    const approx = scanner.scan(q);
    const int8Top = Array.from(approx.keys()).sort((a, b) => approx[b]! - approx[a]! || a - b).slice(0, 10);
    const exactTop = viaTable[i]![0]!.map((h) => h.passageRid - 1);
    t.ok(exactTop.every((r) => r >= 3000), 'the top 10 are near-duplicates');
    if (int8Top.join() !== exactTop.join()) differs++;
  }
  t.ok(differs >= 3, `the int8 order alone differs from the float32 one in ${differs} of ${queries.length} queries`);
});

t.test('a query whose scan is overwritten while it awaits the store (another query scanned) still ranks exactly', async (t) => {
  const { vectors, queries } = nearDuplicates(23, 3000);
  const { db } = syntheticDb(t, 1, () => vectors);
  const scan = scanOver(db);
  const selected = selectFiles(db, 1, { filter: GROUP_ONE, principals: null });
  const filter = { ...selected, selectivity: selected.fileRids.length / selectFiles(db, 1, { filter: null, principals: null }).fileRids.length };
  const ask = (over: typeof scan, q: Float32Array) => Promise.all([allShards(over, 1, q, 10), allShards(over, 1, q, 100), allShards(over, 1, q, 200, filter)]);
  await refreshAll(scan.copies, 1, BUDGET);
  const alone = [];
  for (const q of queries) alone.push(await ask(scan, q));
  // As an engine whose reads really wait would allow: before each exact read, another query (one
  // far from these) scans every shard's copy.
  const elsewhere = unit(Float32Array.from({ length: 100 }, (_, j) => Math.cos(j * 3)));
  const interrupted: VectorReads = {
    ...scan.vectors,
    exactHits: async (...args) => {
      for (let shard = 0; shard < VECTOR_SHARDS; shard++) (await scan.copies.current(1, shard))!.scanner.scan(elsewhere);
      return scan.vectors.exactHits(...args);
    },
  };
  const overwritten = [];
  for (const q of queries) overwritten.push(await ask({ vectors: interrupted, copies: scan.copies }, q));
  t.same(overwritten, alone, 'the same answers as without the other scans');
});

t.test('the memory budget: the least recently used copy goes, a copy that cannot fit is not made, the ranking never changes', async (t) => {
  const sets = [nearDuplicates(11), nearDuplicates(13), nearDuplicates(17)];
  const { db } = syntheticDb(t, 3, (c) => sets[c - 1]!.vectors);
  const scan = scanOver(db);
  const ask = () => Promise.all(sets.map((set, c) => Promise.all(set.queries.map((q) => allShards(scan, c + 1, q, 10)))));
  const exact = await ask();
  const refresh = (collection: number, budgetBytes: number) => refreshAll(scan.copies, collection, { budgetBytes });
  const held = async (collection: number) => (await Promise.all(Array.from({ length: VECTOR_SHARDS }, (_, shard) => scan.copies.hasCurrent(collection, shard)))).every(Boolean);

  await refresh(1, BUDGET.budgetBytes);
  const perCollection = scan.copies.bytes();
  t.ok(perCollection > 0, `one collection's copies hold ${perCollection} bytes`);
  // Room for two collections' copies, not three.
  const budget = Math.floor(perCollection * 2.5);
  await refresh(2, budget);
  t.ok((await held(1)) && (await held(2)), 'two collections fit');
  await allShards(scan, 1, sets[0]!.queries[0]!, 10); // collection 1 is now used more recently than 2
  await refresh(3, budget);
  t.ok((await held(1)) && (await held(3)), 'the recently used copies stay');
  t.notOk(await held(2), 'the least recently used collection lost its copies');
  t.ok(scan.copies.bytes() <= budget, `within the budget (${scan.copies.bytes()} ≤ ${budget} bytes)`);
  t.same(await ask(), exact, 'with and without copies, every collection ranks exactly the same');
  // The next use of collection 2 brings its copy back, pushing out the least recently used one.
  await refresh(2, budget);
  t.ok((await held(2)) && scan.copies.bytes() <= budget, 'collection 2 is copied again on its next use, within the budget');

  const { db: other } = syntheticDb(t, 1, () => sets[0]!.vectors);
  const otherScan = scanOver(other);
  await refreshAll(otherScan.copies, 1, { budgetBytes: 1024 });
  t.equal(otherScan.copies.bytes(), 0, 'a budget smaller than one copy keeps none');
  await refreshAll(otherScan.copies, 1, BUDGET);
  t.ok(otherScan.copies.bytes() > 0, 'a larger budget copies it');
  t.same(await Promise.all(sets[0]!.queries.map((q) => allShards(otherScan, 1, q, 10))), exact[0], 'and the table scan ranks the same');
});

// The store's vector reads over stored vectors: part of the store's contract
// (test/conformance/store-vectors.ts), tested here on SQLite until vectors are written through the interface.
t.test('the budget setting: bytes, sizes, shares of RAM; bad values say what is wrong', async (t) => {
  const gb = 2 ** 30;
  t.equal(parseVectorMemory('25%', 24 * gb), 6 * gb);
  t.equal(parseVectorMemory('512MB'), 512 * 2 ** 20);
  t.equal(parseVectorMemory('1.5GiB'), 1.5 * gb);
  t.equal(parseVectorMemory('2g'), 2 * gb);
  t.equal(parseVectorMemory(536870912), 536870912);
  t.equal(parseVectorMemory('0'), 0, '0 keeps no copies');
  for (const bad of ['lots', '150%', '-1', '12XB', '', '1e9']) {
    const got = parseVectorMemory(bad);
    t.ok(got instanceof Error && /vectors\.memory \(TROVE_VECTOR_MEMORY\).*give bytes/.test(got.message), `'${bad}' is refused: ${(got as Error).message}`);
  }
  t.same(resolveVectorMemory(undefined, 8 * gb), { setting: '25%', bytes: 2 * gb }, 'default: a quarter of RAM');
  t.same(resolveVectorMemory('1GB', 8 * gb), { setting: '1GB', bytes: gb });
  t.same(resolveFileSettings({}, { vectors: { memory: '1GB' } }).vectorMemory, { setting: '1GB', bytes: gb }, 'config.json');
  t.equal(resolveFileSettings({ TROVE_VECTOR_MEMORY: '10%' }, { vectors: { memory: '1GB' } }).vectorMemory.setting, '10%', 'the environment wins');

  const run = await runCli(['daemon', 'start', '--ephemeral', '--port', '0'], { env: { TROVE_VECTOR_MEMORY: 'lots' } });
  t.equal(run.code, 1, 'the daemon does not start');
  t.match(run.stderr, /^trove: vectors\.memory \(TROVE_VECTOR_MEMORY\) 'lots' is not a size/m, 'and says why, without a stack trace');
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
});

t.test('in-memory copy vs the table scan, and staleness', async (t) => {
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
  const scan = scanOver(db);
  const embedder = await f.rt.services.embedding.get();
  const queries = await embedder.embed(['lava from a volcano', 'string music', 'space launch', 'baking bread']);
  const filter = selectFiles(db, col.rid, { filter: GROUP_ONE, principals: null });
  const run = async (query: Float32Array, withFilter: boolean) =>
    (await Promise.all(Array.from({ length: VECTOR_SHARDS }, (_, shard) => denseHits(scan.vectors, scan.copies, { collectionRid: col.rid, query, selection: withFilter ? filter : null, limit: 15, shard })))).flat();

  for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.notOk(await scan.copies.hasCurrent(col.rid, shard), 'no copy before the first refresh');
  const viaTable = await Promise.all(queries.map(async (q) => [await run(q!, false), await run(q!, true)]));
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) {
    await scan.copies.refresh(col.rid, shard, BUDGET);
    t.ok(await scan.copies.hasCurrent(col.rid, shard), `shard ${shard} has a current copy`);
  }
  const viaCopy = await Promise.all(queries.map(async (q) => [await run(q!, false), await run(q!, true)]));
  for (let i = 0; i < queries.length; i++) {
    for (const j of [0, 1]) {
      const a = viaTable[i]![j]!;
      const b = viaCopy[i]![j]!;
      t.same(
        b.map((h) => h.passageRid),
        a.map((h) => h.passageRid),
        `query ${i}${j ? ' (filtered)' : ''}: same passages in the same order`,
      );
      t.same(
        b.map((h) => h.similarity),
        a.map((h) => h.similarity),
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
  for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.notOk(await scan.copies.hasCurrent(col.rid, shard), `shard ${shard}: the copy is stale after a delete`);
  const after = (await run(queries[0]!, false)).map((h) => h.passageRid);
  t.notOk(
    best.some((h) => after.includes(h.passageRid)),
    'deleted passages are not returned',
  );
  // Right after a change the copy waits for the vectors to settle; later it is rebuilt.
  const now = Date.now();
  await refreshAll(scan.copies, col.rid, { ...BUDGET, now });
  t.notOk(await scan.copies.hasCurrent(col.rid, 0), 'not rebuilt while the vectors may still be changing');
  await refreshAll(scan.copies, col.rid, { ...BUDGET, now: now + 5000 });
  t.ok(await scan.copies.hasCurrent(col.rid, 0), 'rebuilt once settled');
  const rebuilt = (await run(queries[0]!, false)).map((h) => h.passageRid);
  t.same(rebuilt, after, 'the rebuilt copy ranks as the table scan does');
});
