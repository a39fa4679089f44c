// The keyword ranking (store/sqlite/keyword-postings.ts feeding domain/search/bm25.ts) against BM25 computed
// from scratch on one index: 900 passages of random words from a small vocabulary (so scores tie),
// headings and bodies, repeated and shared-stem query words, a Han phrase of bigrams; for a reader
// of everything, of half the files, and after deletes.
import t, { type Test } from 'tap';
import { buildMatchPhrases } from '../../src/domain/search/query-text.js';
import { keywordIndexText } from '../../src/contract/cjk.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { createFtsTableSql } from '../../src/store/sqlite/migrations.js';
import { keywordRanking } from '../../src/domain/search/keyword-ranking.js';
import { liveFiles } from '../../src/store/sqlite/keyword-postings.js';
import { sqliteReads } from '../helpers/sqlite-reads.js';
import { bm25FromScratch, livePassages, relativeError } from '../helpers/bm25.js';

const db = openDatabase(':memory:', { migrate: true });
const store = sqliteReads(db);
t.teardown(() => db.close());
const now = '2026-01-01T00:00:00.000Z';
db.prepare("INSERT INTO namespaces (rid, id, name, created_at, updated_at) VALUES (1, 'ns_1', 'n', ?, ?)").run(now, now);
db.prepare("INSERT INTO collections (rid, id, namespace_rid, name, processing, access_control, created_at, updated_at) VALUES (7, 'col_7', 1, 'c', '{}', 'enforced', ?, ?)").run(now, now);
db.exec(createFtsTableSql(7));
const words = 'lantern budget launch board weather harbour ledger signal orchard quarry run running runs plan approved 图书馆'.split(' ');
let seed = 12345;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');
const insertFile = db.prepare("INSERT INTO files (rid, id, collection_rid, path, status, source_type, content_type, version_id, created_at, updated_at) VALUES (?, ?, 7, ?, 'ready', 'inline', 'text/plain', 'v', ?, ?)");
const insertPassage = db.prepare("INSERT INTO passages (rid, file_rid, ordinal, evidence_kind, heading, text, char_start, char_end) VALUES (?, ?, ?, 'text', ?, ?, 0, 0)");
const insertIndexed = db.prepare('INSERT INTO fts_7 (rowid, heading, body) VALUES (?, ?, ?)');
const files: number[] = [];
db.transaction(() => {
  let passage = 0;
  for (let file = 1; file <= 300; file++) {
    insertFile.run(file, `fil_${file}`, `/p${file}.txt`, now, now);
    files.push(file);
    for (let ordinal = 0; ordinal < 3; ordinal++) {
      const heading = text(1 + Math.floor(random() * 3));
      const body = text(3 + Math.floor(random() * 30));
      insertPassage.run(++passage, file, ordinal, heading, body);
      insertIndexed.run(passage, keywordIndexText(heading), keywordIndexText(body));
    }
  }
})();

const QUERIES = ['lantern budget', 'running run runs', 'board approved launch plan', 'lantern', 'weather harbour ledger signal orchard quarry lantern budget', 'run run', '图书馆', '图书馆 plan'];

const rank = (readable: readonly number[], query: string, selectedFiles: ReadonlySet<number> | null = null) =>
  keywordRanking(store, { collectionRid: 7, collectionId: 'col_7', phrases: buildMatchPhrases(query)!, files: readable, selectedFiles });

/** The ranking's scores against BM25 from scratch over the same passages, to 1e-9 relative, and its order: score, then rid. */
async function checkAgainstScratch(t: Test, readable: readonly number[], query: string): Promise<void> {
  const ours = (await rank(readable, query)).top(1_000_000);
  const expected = bm25FromScratch(livePassages(db, 7, readable), query);
  t.ok(ours.length > 0, `${query}: matches`);
  t.equal(ours.length, expected.size, `${query}: the passages BM25 scores (${expected.size})`);
  const off = ours.filter((h) => !(relativeError(h.score, expected.get(h.passageRid) ?? NaN) <= 1e-9));
  t.same(off, [], `${query}: every score is BM25's`);
  t.ok(ours.every((h, i) => i === 0 || ours[i - 1]!.score > h.score || (ours[i - 1]!.score === h.score && ours[i - 1]!.passageRid < h.passageRid)), `${query}: best first, ties by rid`);
}

t.test('a reader of everything: BM25 over every live passage', async (t) => {
  for (const query of QUERIES) await checkAgainstScratch(t, liveFiles(db, 7), query);
});

t.test('a reader of half: statistics of that half only', async (t) => {
  const half = files.filter((f) => f % 2 === 0);
  for (const query of QUERIES) await checkAgainstScratch(t, half, query);
  const hits = (await rank(half, 'lantern budget')).top(1_000_000);
  t.ok(hits.every((h) => h.fileRid % 2 === 0), "only the reader's files");
  const before = new Map((await rank(files, 'lantern budget')).top(1_000_000).map((h) => [h.passageRid, h.score]));
  t.ok(hits.some((h) => before.get(h.passageRid) !== h.score), 'scores differ from the whole index once the other half is left out');
  const selected = new Set(half.slice(0, 20));
  t.same((await rank(half, 'lantern budget', selected)).top(1_000_000), hits.filter((h) => selected.has(h.fileRid)), 'a selection narrows the list and keeps its scores');
  const top = await rank(half, 'lantern budget');
  t.same(top.top(5), hits.slice(0, 5), 'a limit keeps the best');
  t.equal(top.passages, half.length * 3, "the reader's passages are counted");
  t.same((await rank([], 'lantern budget')).top(10), [], 'nothing readable, nothing found');
});

t.test('deleted passages leave the statistics at once, though FTS5 keeps counting them', async (t) => {
  const gone = files.filter((f) => f % 3 === 0);
  const fts5Before = db.prepare("SELECT -bm25(fts_7, 2.0, 1.0) AS s FROM fts_7 WHERE fts_7 MATCH '\"lantern\"' ORDER BY rowid").all();
  db.transaction(() => {
    for (const file of gone) {
      db.prepare('DELETE FROM fts_7 WHERE rowid IN (SELECT rid FROM passages WHERE file_rid = ?)').run(file);
      db.prepare('DELETE FROM passages WHERE file_rid = ?').run(file);
      db.prepare("UPDATE files SET status = 'deleting', deleted_at = ? WHERE rid = ?").run(now, file);
    }
  })();
  db.exec("INSERT INTO fts_7 (fts_7) VALUES ('optimize')");
  const live = liveFiles(db, 7);
  t.equal(live.length, files.length - gone.length, 'the deleted files are not live');
  for (const query of QUERIES) await checkAgainstScratch(t, live, query);
  const fts5After = db.prepare("SELECT -bm25(fts_7, 2.0, 1.0) AS s FROM fts_7 WHERE fts_7 MATCH '\"lantern\"' ORDER BY rowid").all();
  t.ok(fts5After.length < fts5Before.length, 'FTS5 matches fewer rows');
});
