// store/scoped-bm25.ts against FTS5's own bm25() on one index, to the last bit: 900 passages of
// random words from a small vocabulary (so scores tie and rounding shows), headings and bodies,
// repeated and shared-stem query words, a Han phrase of bigrams. A reader who may read everything
// must get exactly FTS5's scores and order; an operation grouped differently from fts5_aux.c's
// changed 1,197 of 5,638 scores in the last bit and swapped 48 tied pairs.
import t from 'tap';
import { buildMatchPhrases } from '../src/domain/search/query-text.js';
import { keywordIndexText } from '../src/contract/cjk.js';
import { openDatabase } from '../src/store/db.js';
import { createFtsTableSql } from '../src/store/migrations.js';
import { scopedKeywordPassageHits } from '../src/store/scoped-bm25.js';
import { keywordPassageHits } from '../src/store/search.js';

const db = openDatabase(':memory:', { migrate: true });
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

t.test('a reader of everything: the same passages, scores and order as bm25()', async (t) => {
  for (const query of QUERIES) {
    const phrases = buildMatchPhrases(query)!;
    const fts5 = keywordPassageHits(db, { collectionRid: 7, phrases, filter: null, limit: 100_000 });
    const ours = scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: files, selectedFiles: null }).hits;
    t.ok(fts5.length > 0, `${query}: matches`);
    t.same(ours, fts5, `${query}: identical to the bit (${fts5.length} passages)`);
  }
});

t.test('a reader of half: statistics of that half only', async (t) => {
  const half = files.filter((f) => f % 2 === 0);
  const phrases = buildMatchPhrases('lantern budget')!;
  const hits = scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: half, selectedFiles: null }).hits;
  t.ok(hits.length > 0 && hits.every((h) => h.fileRid % 2 === 0), "only the reader's files");
  const all = scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: files, selectedFiles: null }).hits;
  const before = new Map(all.map((h) => [h.passageRid, h.score]));
  t.ok(hits.some((h) => before.get(h.passageRid) !== h.score), 'scores differ from the whole index once the other half is left out');
  const selected = new Set(half.slice(0, 20));
  const narrowed = scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: half, selectedFiles: selected }).hits;
  t.same(narrowed, hits.filter((h) => selected.has(h.fileRid)), 'a selection narrows the list and keeps its scores');
  const top = scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: half, selectedFiles: null, limit: 5 });
  t.same(top.hits, hits.slice(0, 5), 'a limit keeps the best');
  t.equal(top.readablePassages, half.length * 3, "the reader's passages are counted");
  t.same(scopedKeywordPassageHits(db, { collectionRid: 7, collectionId: 'col_7', phrases, readableFiles: [], selectedFiles: null, limit: 10 }).hits, [], 'nothing readable, nothing found');
});
