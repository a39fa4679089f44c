// The keyword index is merged into one segment once indexing goes quiet (issue 15): every ingest
// transaction adds an FTS5 segment and a query reads them all. mergeKeywordIndexStep merges a
// bounded amount per call and says when there is nothing left; the ranking is the same before and
// after; the indexing worker runs it by itself a second after its last job, on a collection's own
// index (the one collections share keeps FTS5's own merges: merged whole, it would be rewritten for
// every tenant's write).
import t from 'tap';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { createFtsTableSql, ftsTableName } from '../../src/store/sqlite/migrations.js';
import { keywordIndexSegments, mergeKeywordIndexStep } from '../../src/store/sqlite/passages.js';
import { keywordIndexOf } from '../../src/store/sqlite/keyword-index.js';
import { moveKeywordIndexToOwnTable } from '../../src/store/sqlite/keyword-index-move.js';
import { addInline, seedCollection, startFixture } from '../helpers/trove.js';
import { waitFor, PATIENCE_MS } from '../helpers/wait.js';

t.test('merge steps leave one segment and the same ranking', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trove-merge-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(path.join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  const rid = 77;
  const fts = ftsTableName(rid);
  db.exec(createFtsTableSql(rid));
  t.equal(keywordIndexSegments(db, rid), 0, 'an empty index has no segment');

  const words = ['harbour', 'lamp', 'keeper', 'storm', 'tide', 'signal', 'rope', 'beacon', 'gull', 'reef'];
  const insert = db.prepare(`INSERT INTO ${fts} (rowid, heading, body) VALUES (?, ?, ?)`);
  // One transaction per passage, as files arriving one by one are committed.
  for (let rowid = 1; rowid <= 40; rowid++) {
    const body = Array.from({ length: 12 }, (_, i) => words[(rowid * 7 + i * 3) % words.length]).join(' ');
    db.transaction(() => insert.run(rowid, rowid % 5 === 0 ? 'storm log' : '', body))();
  }
  const before = keywordIndexSegments(db, rid);
  t.ok(before > 1, `ingest left ${before} segments`);
  const queries = [['"storm"'], ['"lamp"', '"reef"'], ['"beacon"', '"gull"', '"tide"']];
  // What the index answers for a query: its best matches by FTS5's own bm25(), which reads every
  // segment's postings and the averages a merge rewrites.
  const ranking = (phrases: string[]) =>
    db.prepare(`SELECT rowid, -bm25(${fts}, 2.0, 1.0) AS score FROM ${fts} WHERE ${fts} MATCH ? ORDER BY score DESC, rowid LIMIT 20`).all(phrases.join(' OR '));
  const rankings = queries.map(ranking);

  let steps = 0;
  while (db.transaction(() => mergeKeywordIndexStep(db, rid, 1))()) {
    steps++;
    if (steps > 1000) break;
  }
  t.ok(steps >= 1 && steps <= 1000, `merged in ${steps} steps of one page`);
  t.equal(keywordIndexSegments(db, rid), 1, 'one segment left');
  t.notOk(db.transaction(() => mergeKeywordIndexStep(db, rid, 1))(), 'a merged index has nothing more to merge');
  t.same(
    queries.map(ranking),
    rankings,
    'the same passages, order and scores',
  );
  t.notOk(db.transaction(() => mergeKeywordIndexStep(db, 4242, 100))(), 'a collection without an index has nothing to merge');
  t.throws(() => mergeKeywordIndexStep(db, rid, 100), /outside a write transaction/, 'a merge is a write: only inside the writer');
});

t.test('the indexing worker merges a collection once indexing goes quiet', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'merge', 'docs', { processing: { semantic: false } });
  t.equal((await addInline(f, base, '/n0.txt', 'lighthouse entry 0: the lamp was trimmed at dusk')).status, 202);
  await f.waitForIdle(ns, col);
  const rid = (f.rt.db.prepare('SELECT rid FROM collections WHERE name = ?').get(col) as { rid: number }).rid;
  t.ok(keywordIndexOf(f.rt.db, rid).shared, 'a new collection is in the shared index');
  t.notOk(f.rt.db.transaction(() => mergeKeywordIndexStep(f.rt.db, rid, 100))(), 'which the worker leaves to FTS5');
  // As the worker moves a grown collection (at a lower threshold): its own index from now on.
  t.ok(await f.rt.write(() => moveKeywordIndexToOwnTable(f.rt.db, rid, 1)), 'moved to an index of its own');
  // Files added one at a time, each indexed before the next: a commit, and a segment, each.
  for (let i = 1; i < 6; i++) {
    t.equal((await addInline(f, base, `/n${i}.txt`, `lighthouse entry ${i}: the lamp was trimmed at dusk`)).status, 202);
    await f.waitForIdle(ns, col);
  }
  t.ok(keywordIndexSegments(f.rt.db, rid) > 1, 'one segment a commit');
  const merged = await waitFor('one segment', () => keywordIndexSegments(f.rt.db, rid) === 1, PATIENCE_MS, 50);
  t.ok(merged, 'the index ends as one segment');
  // Then the upkeep folds the WAL into the database: an idle data dir is its database file.
  const wal = path.join(f.rt.dataDir, 'trove.db-wal');
  t.ok(await waitFor('an empty WAL', () => statSync(wal).size === 0, PATIENCE_MS, 50), 'the WAL is truncated once the worker is idle');
  const hits = await f.call('POST', `${base}:search`, { query: 'lamp dusk', mode: 'keyword', limit: 10 });
  t.equal(hits.body.results.length, 6, 'every file is still found');
});

t.test('a checkpoint truncates a WAL that grew past 64 MB', async (t) => {
  // The index merge at 1M passages, with searches holding old snapshots, left a 360 MB WAL file
  // behind (a checkpoint resets the WAL but keeps its size unless journal_size_limit is set).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trove-wal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'trove.db');
  const db = openDatabase(file, { migrate: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('journal_size_limit', { simple: true }), 64 * 1024 * 1024, 'every connection limits its WAL');
  db.exec('CREATE TABLE bulk (b BLOB)');
  const reader = openDatabase(file, { readonly: true });
  // A reader in the middle of a transaction keeps the checkpointer from resetting the WAL.
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM bulk').get();
  const insert = db.prepare('INSERT INTO bulk VALUES (zeroblob(1048576))');
  db.transaction(() => {
    for (let i = 0; i < 80; i++) insert.run();
  })();
  t.ok(statSync(file + '-wal').size > 64 * 1024 * 1024, 'the WAL grew past the limit');
  reader.exec('COMMIT');
  reader.close();
  // A complete checkpoint, then the next write starts the WAL over: that is when the limit applies.
  db.pragma('wal_checkpoint(PASSIVE)');
  db.exec('INSERT INTO bulk VALUES (x\'00\')');
  t.ok(statSync(file + '-wal').size <= 64 * 1024 * 1024, `after a checkpoint the WAL is ${statSync(file + '-wal').size} bytes`);
});
