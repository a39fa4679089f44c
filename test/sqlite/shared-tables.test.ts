// A collection is a key, not a table (src/store/sqlite/keyword-index.ts): creating a collection and
// indexing its first files change no schema; collections sharing the keyword index score exactly as
// with an index of their own and never see each other; a grown collection moves to an index of its
// own with every score as it was; a data dir from before keeps its collections' own tables.
import t from 'tap';
import { keywordIndexText } from '../../src/contract/cjk.js';
import { buildMatchPhrases } from '../../src/domain/search/query-text.js';
import { keywordRanking } from '../../src/domain/search/keyword-ranking.js';
import { migrate, openDatabase } from '../../src/store/sqlite/db.js';
import { MIGRATIONS, createFtsTableSql } from '../../src/store/sqlite/migrations.js';
import { keywordIndexOf } from '../../src/store/sqlite/keyword-index.js';
import { moveKeywordIndexToOwnTable } from '../../src/store/sqlite/keyword-index-move.js';
import { liveFiles } from '../../src/store/sqlite/keyword-postings.js';
import { sqliteReads } from '../helpers/sqlite-reads.js';
import { deletePassages, indexPassageText, replacePassageRows } from '../../src/store/sqlite/passages.js';
import { purgeCollection } from '../../src/store/sqlite/purge.js';
import { sqlite, type SqliteDb } from '../../src/store/sqlite/sqlite.js';
import { insertVectors } from '../../src/store/sqlite/vectors.js';
import { bm25FromScratch, livePassages, relativeError } from '../helpers/bm25.js';
import { addInline, seedCollection, startFixture } from '../helpers/trove.js';

const now = '2026-01-01T00:00:00.000Z';
const words = 'lantern budget launch board weather harbour ledger signal orchard quarry run running runs plan approved naïve Élan 图书馆 東京都庁'.split(' ');
const QUERIES = ['lantern budget', 'running run runs', 'board approved launch plan', 'lantern', 'naive elan', '图书馆', '東京', '图书馆 plan', 'weather harbour ledger signal orchard quarry'];

function randomText(seed: { s: number }) {
  const random = () => (seed.s = (seed.s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');
}

function addCollection(db: SqliteDb, rid: number): void {
  db.prepare("INSERT OR IGNORE INTO namespaces (rid, id, name, created_at, updated_at) VALUES (1, 'ns_1', 'n', ?, ?)").run(now, now);
  db.prepare("INSERT INTO collections (rid, id, namespace_rid, name, processing, access_control, created_at, updated_at) VALUES (?, ?, 1, ?, '{}', 'off', ?, ?)").run(rid, `col_${rid}`, `c${rid}`, now, now);
}

/**
 * `files` files of three passages each, the same text for every seed, into collection `rid` through
 * the store's own writes (whatever index holds it); file rids from `firstFile`.
 */
function fill(db: SqliteDb, rid: number, firstFile: number, files: number, seed: number): number[] {
  const text = randomText({ s: seed });
  const insertFile = db.prepare("INSERT INTO files (rid, id, collection_rid, path, status, source_type, content_type, version_id, created_at, updated_at) VALUES (?, ?, ?, ?, 'ready', 'inline', 'text/plain', 'v', ?, ?)");
  const made: number[] = [];
  db.transaction(() => {
    const batch = [];
    for (let file = firstFile; file < firstFile + files; file++) {
      insertFile.run(file, `fil_${file}`, rid, `/p${file}.txt`, now, now);
      made.push(file);
      batch.push({
        fileRid: file,
        passages: [0, 1, 2].map((ordinal) => ({ ordinal, evidence_kind: 'text', heading: text(1 + ((file - firstFile) % 3)), text: text(3 + (((file - firstFile) * 7 + ordinal * 5) % 30)), char_start: 0, char_end: 0, location: null })),
      });
    }
    const rids = replacePassageRows(db, rid, batch);
    indexPassageText(
      db,
      rid,
      batch.flatMap((f, i) => f.passages.map((p, k) => ({ rid: rids[i]![k]!, heading: keywordIndexText(p.heading), text: keywordIndexText(p.text) }))),
    );
  })();
  return made;
}

const rank = async (db: SqliteDb, rid: number, query: string) =>
  (await keywordRanking(sqliteReads(db), { collectionRid: rid, collectionId: `col_${rid}`, phrases: buildMatchPhrases(query)!, files: liveFiles(db, rid), selectedFiles: null })).top(1_000_000);
/** Each query's ranking. */
const rankAll = async (db: SqliteDb, rid: number, queries: readonly string[]) => new Map(await Promise.all(queries.map(async (q) => [q, await rank(db, rid, q)] as const)));

t.test('the shared index scores as an index of its own, to the last digit, whoever else shares it', async (t) => {
  const db = openDatabase(':memory:', { migrate: true });
  t.teardown(() => db.close());
  // 11 has a table of its own as collections made before had (text tokenized by FTS5 itself).
  addCollection(db, 11);
  db.exec(createFtsTableSql(11));
  fill(db, 11, 1, 100, 4242);
  // 12: the same files in the shared index; 13 shares it too, with other text under the same words.
  addCollection(db, 12);
  fill(db, 12, 1001, 100, 4242);
  t.ok(keywordIndexOf(db, 12).shared && !keywordIndexOf(db, 11).shared, 'layouts as meant');
  for (const query of QUERIES) {
    const own = await rank(db, 11, query);
    t.ok(own.length > 0, `${query}: matches`);
    // Paths differ by the file rid offset: compare by position in the ranking instead.
    const shared = await rank(db, 12, query);
    t.same(
      shared.map((h) => h.score),
      own.map((h) => h.score),
      `${query}: the same scores in the same order`,
    );
  }
  const alone = await rankAll(db, 12, QUERIES);
  addCollection(db, 13);
  const others = fill(db, 13, 5001, 150, 99);
  db.transaction(() => deletePassages(db, 13, others[3]!))();
  for (const query of QUERIES) {
    const hits = await rank(db, 12, query);
    t.same(hits, alone.get(query), `${query}: another tenant's files move nothing`);
    const files = new Set(db.prepare('SELECT p.file_rid AS f FROM passages p WHERE p.rid IN (SELECT value FROM json_each(?))').all(JSON.stringify(hits.map((h) => h.passageRid))).map((r) => (r as { f: number }).f));
    t.ok([...files].every((f) => f > 1000 && f <= 1100), `${query}: and never show up`);
    const scratch = bm25FromScratch(livePassages(db, 12, liveFiles(db, 12)), query);
    t.ok(hits.every((h) => relativeError(h.score, scratch.get(h.passageRid) ?? NaN) <= 1e-9) && hits.length === scratch.size, `${query}: BM25 from scratch`);
  }
});

t.test('a grown collection moves to an index of its own with every score as it was; a purge takes exactly its rows', async (t) => {
  const db = openDatabase(':memory:', { migrate: true });
  t.teardown(() => db.close());
  addCollection(db, 21);
  addCollection(db, 22);
  fill(db, 21, 1, 120, 7);
  fill(db, 22, 1001, 60, 8);
  // A deleted file's rows must not come along, and an edit's old rows neither.
  db.transaction(() => deletePassages(db, 21, 5))();
  db.transaction(() => {
    const passages = [0, 1].map((ordinal) => ({ ordinal, evidence_kind: 'text', heading: 'lantern plan', text: `budget lantern ${'harbour '.repeat(ordinal * 4)}`, char_start: 0, char_end: 0, location: null }));
    const [rids] = replacePassageRows(db, 21, [{ fileRid: 9, passages }]);
    indexPassageText(db, 21, passages.map((p, i) => ({ rid: rids![i]!, heading: p.heading, text: p.text })));
  })();
  const before = await rankAll(db, 21, QUERIES);
  /** An edited file's evidence: its passages in the order the keyword stage ranks them. */
  const evidenceOf = async (file: number) => (await rank(db, 21, 'lantern budget plan')).filter((h) => h.fileRid === file).map((h) => h.passageRid);
  const evidence = await evidenceOf(9);
  t.equal(evidence.length, 2, "the edited file's passages both match");
  const other = await rankAll(db, 22, QUERIES);
  t.notOk(db.transaction(() => moveKeywordIndexToOwnTable(db, 21))(), 'below the threshold it stays');
  t.ok(db.transaction(() => moveKeywordIndexToOwnTable(db, 21, 100))(), 'past it, it moves');
  t.notOk(keywordIndexOf(db, 21).shared, 'to a table of its own');
  t.equal((db.prepare("SELECT count(*) AS n FROM fts_shared_instances WHERE term >= '21:' AND term < '21;'").get() as { n: number }).n, 0, 'leaving nothing behind');
  for (const query of QUERIES) {
    t.same(await rank(db, 21, query), before.get(query), `${query}: the same ranking`);
    t.same(await rank(db, 22, query), other.get(query), `${query}: the other tenant's too`);
  }
  t.same(await evidenceOf(9), evidence, "an edited file's evidence in the same order");
  // New files go to the new index, as terms.
  fill(db, 21, 600, 2, 10);
  const scratch = bm25FromScratch(livePassages(db, 21, liveFiles(db, 21)), 'lantern');
  const hits = await rank(db, 21, 'lantern');
  t.ok(hits.length === scratch.size && hits.every((h) => relativeError(h.score, scratch.get(h.passageRid) ?? NaN) <= 1e-9), 'later files are scored as BM25 from scratch');

  const rows = (rid: number) => (db.prepare("SELECT count(*) AS n FROM fts_shared_instances WHERE term >= ? AND term < ?").get(`${rid}:`, `${rid};`) as { n: number }).n;
  const kept = rows(22);
  addCollection(db, 23);
  fill(db, 23, 2001, 10, 11);
  t.ok(rows(23) > 0);
  db.transaction(() => purgeCollection(db, 23))();
  t.equal(rows(23), 0, "a purge takes the collection's rows of the shared index");
  t.equal(rows(22), kept, 'and no other');
  db.transaction(() => purgeCollection(db, 21))();
  t.equal((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name GLOB 'fts_21*'").get() as { n: number }).n, 0, 'and its own table goes');
  for (const query of QUERIES) t.same(await rank(db, 22, query), other.get(query), `${query}: the other tenant ranks as before`);
});

t.test('a data dir from before keeps its collections in their own tables', async (t) => {
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  // The schema as it was before collections shared tables.
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const m of MIGRATIONS.filter((m) => m.version <= 21)) {
    db.exec(m.sql);
    m.run?.(db);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, now);
  }
  addCollection(db, 31);
  db.exec(createFtsTableSql(31));
  db.exec('CREATE TABLE vec_31_data (rid INTEGER PRIMARY KEY, text_hash TEXT NOT NULL, embedding BLOB NOT NULL)');
  // Written as the code before wrote them: text into fts_31, vectors into vec_31_data.
  const text = randomText({ s: 5 });
  const insertFile = db.prepare("INSERT INTO files (rid, id, collection_rid, path, status, source_type, content_type, version_id, created_at, updated_at) VALUES (?, ?, 31, ?, 'ready', 'inline', 'text/plain', 'v', ?, ?)");
  const insertPassage = db.prepare("INSERT INTO passages (rid, file_rid, ordinal, evidence_kind, heading, text, char_start, char_end) VALUES (?, ?, 0, 'text', ?, ?, 0, 0)");
  const vector = (i: number) => {
    const v = new Float32Array(4);
    v[i % 4] = 1;
    return Buffer.from(v.buffer);
  };
  for (let i = 1; i <= 40; i++) {
    const heading = text(2);
    const body = text(12);
    insertFile.run(i, `fil_${i}`, `/p${i}.txt`, now, now);
    insertPassage.run(i, i, heading, body);
    db.prepare('INSERT INTO fts_31 (rowid, heading, body) VALUES (?, ?, ?)').run(i, keywordIndexText(heading), keywordIndexText(body));
    db.prepare('INSERT INTO vec_31_data (rid, text_hash, embedding) VALUES (?, ?, ?)').run(i, `h${i}`, vector(i));
  }
  const scratch = new Map(QUERIES.slice(0, 4).map((q) => [q, bm25FromScratch(livePassages(db, 31, liveFiles(db, 31)), q)]));
  migrate(db);
  t.equal((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v, MIGRATIONS.at(-1)!.version, 'migrated');
  t.equal(keywordIndexOf(db, 31).table, 'fts_31', 'the old collection keeps its keyword index');
  for (const [query, expected] of scratch) {
    const hits = await rank(db, 31, query);
    t.ok(hits.length === expected.size && hits.every((h) => relativeError(h.score, expected.get(h.passageRid) ?? NaN) <= 1e-9), `${query}: ranked from it as before`);
  }
  const query = new Float32Array([0, 1, 0, 0]);
  const vectors = sqliteReads(db).vectors;
  const dense = (await Promise.all([0, 1].map((shard) => vectors.nearest(31, query, { shard, selection: null, limit: 40 })))).flat();
  t.equal(dense.filter((h) => h.similarity > 0.99).length, 10, 'its vectors are read from its own table');
  let copied = 0;
  for (const shard of [0, 1]) await vectors.readShard(31, shard, { start: (shape) => shape.dimensions === 4, row: () => void copied++ });
  t.equal(copied, 40, 'and copied from it');
  // A new file of the old collection goes where its collection's rows are.
  db.transaction(() => {
    db.prepare("INSERT INTO files (rid, id, collection_rid, path, status, source_type, content_type, version_id, created_at, updated_at) VALUES (41, 'fil_41', 31, '/p41.txt', 'ready', 'inline', 'text/plain', 'v', ?, ?)").run(now, now);
    const [rids] = replacePassageRows(db, 31, [{ fileRid: 41, passages: [{ ordinal: 0, evidence_kind: 'text', heading: '', text: 'lantern lantern', char_start: 0, char_end: 0, location: null }] }]);
    insertVectors(db, 31, [{ passageRid: rids![0]!, textHash: 'x', embedding: new Float32Array([0, 1, 0, 0]) }]);
    indexPassageText(db, 31, [{ rid: rids![0]!, heading: '', text: 'lantern lantern' }]);
  })();
  t.equal((db.prepare('SELECT count(*) AS n FROM fts_31_docsize WHERE id = 41').get() as { n: number }).n, 1, 'its keyword index');
  t.equal((db.prepare('SELECT count(*) AS n FROM vec_31_data').get() as { n: number }).n, 41, 'its vectors table');
  // A collection made now shares the tables.
  addCollection(db, 32);
  t.ok(keywordIndexOf(db, 32).shared, 'a new collection uses the shared index');
  db.transaction(() => purgeCollection(db, 31))();
  t.equal((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name GLOB 'fts_31*' OR name GLOB 'vec_31*'").get() as { n: number }).n, 0, "a purge drops the old collection's tables");
});

t.test('creating a collection and indexing its first files run no DDL', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const db = sqlite(f.rt.db);
  const schema = () => ({ version: db.pragma('schema_version', { simple: true }), objects: (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n });
  const before = schema();
  for (const [col, body] of [
    ['keyword', { processing: { semantic: false } }],
    ['semantic', {}],
  ] as const) {
    const { ns, base } = await seedCollection(f, 'ddl', col, body);
    t.equal((await addInline(f, base, '/a.md', '# Orchard\n\nThe quarterly report on orchard yields.', 'text/markdown')).status, 202);
    t.equal((await addInline(f, base, '/b.txt', 'Irrigation of the kiwi rows.')).status, 202);
    await f.waitForIdle(ns, col);
    const hits = await f.call('POST', `${base}:search`, { query: 'orchard irrigation', mode: col, limit: 10 });
    t.equal(hits.body.results.length, 2, `${col}: both files are found`);
  }
  t.same(schema(), before, 'the schema is as it was: same version, same objects');
  const vectors = (db.prepare("SELECT count(*) AS n FROM vec_shared WHERE collection_rid = (SELECT rid FROM collections WHERE name = 'semantic')").get() as { n: number }).n;
  t.ok(vectors > 0, "the semantic collection's vectors are rows of the shared table");
});
