// The keyword stage scores only passages holding a rarer query term when a bound proves the rest
// cannot reach the window (store/search.ts rankedWindow). It must return exactly what the plain
// bm25() query returns: same passages, same order, same scores.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { createFtsTableSql, ftsTableName } from '../src/store/migrations.js';
import { rankedWindow, termDocuments } from '../src/store/search.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'trove-maxscore-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const db = openDatabase(path.join(dir, 'trove.db'), { migrate: true });
t.teardown(() => db.close());
const fts = ftsTableName(999);
db.exec(createFtsTableSql(999));

// A Zipf-like vocabulary: the first words are in most passages, the last in a handful.
const vocabulary = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}x`);
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const zipfWord = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(random() * Math.log(vocabulary.length + 1)) - 1))]!;
const insert = db.prepare(`INSERT INTO ${fts} (rowid, heading, body) VALUES (?, ?, ?)`);
db.transaction(() => {
  for (let rowid = 1; rowid <= 4000; rowid++) {
    const body = Array.from({ length: 20 + Math.floor(random() * 50) }, zipfWord).join(' ');
    const heading = random() < 0.3 ? Array.from({ length: 3 }, zipfWord).join(' ') : '';
    insert.run(rowid, heading, body);
  }
  // Passages made of common words only, repeated: the ones the bound must account for.
  insert.run(5001, `${vocabulary[0]} ${vocabulary[1]}`, `${vocabulary[0]} `.repeat(40) + `${vocabulary[1]} `.repeat(40));
  insert.run(5002, '', `${vocabulary[2]} `.repeat(200));
})();

const plain = (phrases: string[], window: number) =>
  db.prepare(`SELECT rowid, -bm25(${fts}, 2.0, 1.0) AS score FROM ${fts} WHERE ${fts} MATCH ? ORDER BY score DESC, rowid LIMIT ?`).all(phrases.join(' OR '), window) as {
    rowid: number;
    score: number;
  }[];

t.test('pruned ranking equals the plain bm25 ranking', async (t) => {
  let pruned = 0;
  let fellBack = 0;
  let disagreements = 0;
  for (let i = 0; i < 400; i++) {
    const size = 2 + Math.floor(random() * 5);
    // Mix common and rare words; sometimes only common ones.
    const words = new Set(Array.from({ length: size }, () => (random() < 0.5 ? vocabulary[Math.floor(random() * 8)]! : zipfWord())));
    const phrases = [...words].map((w) => `"${w}"`);
    const window = [5, 20, 64, 200][i % 4]!;
    const plan: { essentialTerms?: number } = {};
    const got = rankedWindow(db, fts, phrases, window, { plan, minRows: 0 });
    const want = plain(phrases, window);
    if (JSON.stringify(got) !== JSON.stringify(want)) disagreements++;
    if (plan.essentialTerms !== undefined) pruned++;
    else if (phrases.length > 1) fellBack++;
  }
  t.equal(disagreements, 0, 'every query ranks exactly as the plain query');
  t.ok(pruned > 50, `pruning was used (${pruned} of 400 queries)`);
  t.ok(fellBack > 0, `and the plain query was the fallback when the bound did not hold (${fellBack})`);
});

t.test('small tables are ranked by the plain query (pruning would cost more)', async (t) => {
  const plan: { essentialTerms?: number } = {};
  const phrases = [`"${vocabulary[0]}"`, `"${vocabulary[250]}"`];
  t.same(rankedWindow(db, fts, phrases, 20, { plan }), plain(phrases, 20));
  t.equal(plan.essentialTerms, undefined, 'no pruning below the default minimum of rows');
});

t.test('a passage of common words only still wins when it should', async (t) => {
  // vocabulary[2] repeated 200 times: its bm25 for that term is near the ceiling.
  const phrases = [`"${vocabulary[2]}"`, `"${vocabulary[299]}"`];
  const got = rankedWindow(db, fts, phrases, 10, { minRows: 0 });
  t.same(got, plain(phrases, 10));
});

t.test('cached term counts follow every write to the index', async (t) => {
  // rankedWindow keeps each term's document count per state of the index; a stale count would
  // make its bound wrong. Queries before and after writes that change the counts must still equal
  // the plain query exactly.
  const queries = [[`"${vocabulary[0]}"`, `"${vocabulary[120]}"`], [`"${vocabulary[1]}"`, `"${vocabulary[250]}"`, `"${vocabulary[3]}"`], [`"${vocabulary[299]}"`, `"${vocabulary[2]}"`]];
  const check = (what: string) => {
    for (const q of queries) t.same(rankedWindow(db, fts, q, 10, { minRows: 0 }), plain(q, 10), `${what}: ${q.join(' ')}`);
  };
  const rare = [`"${vocabulary[299]}"`];
  const count = () => (db.prepare(`SELECT count(*) AS n FROM ${fts} WHERE ${fts} MATCH ?`).get(rare[0]) as { n: number }).n;
  const counted = (what: string) => t.same(termDocuments(db, fts, rare), [count()], `${what}: the cached count is the index's`);
  check('before');
  counted('before');
  t.same(termDocuments(db, fts, rare), [count()], 'a second read (from the cache) too');
  // A rare word becomes common: its count, and so its bound, changes.
  db.transaction(() => {
    for (let rowid = 6000; rowid < 6400; rowid++) insert.run(rowid, '', `${vocabulary[299]} ${vocabulary[250]} `.repeat(3 + (rowid % 5)));
  })();
  check('after inserts');
  counted('after inserts');
  db.transaction(() => db.prepare(`DELETE FROM ${fts} WHERE rowid >= 6000 AND rowid < 6300`).run())();
  check('after deletes');
  counted('after deletes');
  db.exec(`INSERT INTO ${fts}(${fts}) VALUES('optimize')`);
  check('after a merge');
  counted('after a merge');
});
