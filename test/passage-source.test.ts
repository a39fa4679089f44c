// A passage that is a verbatim slice of its file's inline source is stored as offsets into that
// source (migration 13, issue 15: the text was kept twice, ~400 bytes a passage at 1M). Reading it
// gives back exactly the text it was cut from; any other passage keeps its own text.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../src/store/sqlite/db.js';
import { insertFileVersion } from '../src/store/sqlite/files.js';
import { deletePassages, getPassages, replacePassageRows } from '../src/store/sqlite/passages.js';
import type { NewPassage } from '../src/store/interface.js';
import { createFtsTableSql } from '../src/store/sqlite/migrations.js';
import { addInline, seedCollection, startFixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

const passage = (ordinal: number, text: string, start: number): NewPassage => ({ ordinal, evidence_kind: 'text', heading: '', text, char_start: start, char_end: start + text.length, location: null });

/** A migrated database in a temporary dir, without foreign keys (the rows here stand alone). */
function scratchDb(t: Test): ReturnType<typeof openDatabase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trove-psource-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(path.join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  db.pragma('foreign_keys = OFF');
  return db;
}

t.test('store: verbatim slices are kept as offsets, the rest as text, and all read back exactly', async (t) => {
  const db = scratchDb(t);
  db.exec(createFtsTableSql(5));
  const source = 'Harbour log 🚢 first entry.\nThe lamp was trimmed at dusk — ünïcödé.\nLast line.';
  db.transaction(() => insertFileVersion(db, { id: 'ver_a', file_rid: 9, inline_text: source, blob_sha256: null, upload_state: null, created_at: '2026-01-01T00:00:00.000Z' }))();
  const first = source.indexOf('The lamp');
  const passages = [
    passage(0, source.slice(0, first - 1), 0), // with the emoji: offsets are UTF-16 units
    passage(1, source.slice(first), first),
    { ...passage(2, 'normalised text', 3) }, // not what the source holds there
  ];
  const [rids] = db.transaction(() => replacePassageRows(db, 5, [{ fileRid: 9, passages, source: { versionId: 'ver_a', text: source } }]))();
  const stored = db.prepare('SELECT rid, text, source_version_rid AS v FROM passages ORDER BY ordinal').all() as { rid: number; text: string; v: number | null }[];
  t.same(
    stored.map((r) => [r.text === '', r.v !== null]),
    [
      [true, true],
      [true, true],
      [false, false],
    ],
    'the two slices are offsets only; the changed text is stored',
  );
  const back = getPassages(db, rids!);
  t.same(
    back.map((p) => p.text),
    passages.map((p) => p.text),
    'every passage reads back as it was cut',
  );
  const [plain] = db.transaction(() => replacePassageRows(db, 5, [{ fileRid: 9, passages: passages.slice(0, 1) }]))();
  t.equal((db.prepare('SELECT text FROM passages WHERE rid = ?').get(plain![0]) as { text: string }).text, passages[0]!.text, 'without a source the text is stored');
  t.equal(getPassages(db, plain!)[0]!.text, passages[0]!.text);
});

t.test('store: a passage rid is never given twice, even after the passages holding the largest rids are replaced or deleted', async (t) => {
  const db = scratchDb(t);
  db.exec(createFtsTableSql(5));
  const texts = ['one', 'two', 'three'].map((w, i) => passage(i, w, 0));
  const seen = new Set<number>();
  const fresh = (rids: number[], what: string) => {
    t.ok(rids.every((rid) => !seen.has(rid)), `${what}: new rids ${rids.join(', ')}`);
    for (const rid of rids) seen.add(rid);
  };
  fresh(db.transaction(() => replacePassageRows(db, 5, [{ fileRid: 1, passages: texts }, { fileRid: 2, passages: texts }]))().flat(), 'two files');
  // File 2 holds the largest rids: replacing its passages must not give them back to it.
  fresh(db.transaction(() => replacePassageRows(db, 5, [{ fileRid: 2, passages: texts.slice(0, 2) }]))().flat(), 'file 2 replaced');
  db.transaction(() => deletePassages(db, 5, 2))();
  fresh(db.transaction(() => replacePassageRows(db, 5, [{ fileRid: 2, passages: texts }]))().flat(), 'file 2 deleted, then indexed again');
});

t.test('search evidence, a new version and a reindex read the right source', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'psource', 'docs', { processing: { semantic: false } });
  const v1 = 'Keeper notes 🚢. The fog bell rang twice at the northern reef.\n\n' + 'Quiet watch. '.repeat(30);
  t.equal((await addInline(f, base, '/log.txt', v1)).status, 202);
  await f.waitForIdle(ns, col);
  const sourced = f.rt.db.prepare('SELECT count(*) AS n FROM passages WHERE source_version_rid IS NOT NULL').get() as { n: number };
  t.ok(sourced.n > 0, `the plain-text file's passages are read from its source (${sourced.n})`);
  const located = f.rt.db.prepare('SELECT count(*) AS n FROM passages WHERE location IS NOT NULL').get() as { n: number };
  t.equal(located.n, 0, 'a location that is only the offsets is not stored; evidence still has one (below)');
  let hits = await f.call('POST', `${base}:search`, { query: 'fog bell reef', mode: 'keyword', limit: 5, result_unit: 'passage' });
  const evidence = hits.body.results[0].evidence[0];
  t.match(evidence.text, /fog bell rang twice at the northern reef/, 'the evidence quotes the source');
  t.equal(v1.slice(evidence.location.char_start, evidence.location.char_end), evidence.text, 'and its location points at that text');

  const v2 = 'Keeper notes, second book. Aurora over the harbour; the beacon was relit.\n';
  t.equal((await addInline(f, base, '/log.txt', v2)).status, 202);
  await f.waitForIdle(ns, col);
  hits = await f.call('POST', `${base}:search`, { query: 'aurora beacon', mode: 'keyword', limit: 5, result_unit: 'passage' });
  t.match(hits.body.results[0].evidence[0].text, /Aurora over the harbour/, 'the new version is what is quoted');
  hits = await f.call('POST', `${base}:search`, { query: 'fog bell', mode: 'keyword', limit: 5 });
  t.equal(hits.body.results.length, 0, 'the old text is gone from the index');
  const reindex = await f.call('POST', `${base}:reindex`);
  t.equal(reindex.status, 202, JSON.stringify(reindex.body));
  await waitFor('the reindex to finish', async () => (await f.call('GET', `/jobs/${reindex.body.job.id}`)).body.status === 'succeeded');
  await f.waitForIdle(ns, col);
  hits = await f.call('POST', `${base}:search`, { query: 'aurora beacon', mode: 'keyword', limit: 5, result_unit: 'passage' });
  t.match(hits.body.results[0]?.evidence[0]?.text ?? '', /Aurora over the harbour/, 'after a reindex too');
});

t.test('migration 13 on a database from before: passages keep their text', async (t) => {
  const db = scratchDb(t);
  // As version 12 left it: no source_version_rid, every passage with its text.
  db.exec('ALTER TABLE passages DROP COLUMN source_version_rid');
  db.prepare('DELETE FROM schema_migrations WHERE version >= 13').run();
  const rid = Number(db.prepare("INSERT INTO passages (file_rid, ordinal, evidence_kind, heading, text, char_start, char_end, location) VALUES (1, 0, 'text', '', 'an old passage', 0, 14, NULL)").run().lastInsertRowid);
  migrate(db);
  t.same(getPassages(db, [rid]).map((p) => p.text), ['an old passage'], 'read as stored');
  migrate(db);
  t.pass('and migrating again changes nothing');
});
