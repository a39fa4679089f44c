// Search cursors serve the ranking the first page saw (retrieval-api.md, search: cursor,
// index_generation; docs/decisions.md "Search cursors"): a file added, deleted, edited or hidden
// between pages neither repeats nor skips a result, and later pages report the first page's
// index_generation. Cursors expire with their snapshot, which is then removed.
import t from 'tap';
import { untilWrite } from '../src/store/sqlite/read-cache.js';
import { insertSearchSnapshot, type SearchSnapshotRow } from '../src/store/sqlite/search-snapshots.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

type Result = { file_id: string; path: string; rank: number; score: number; evidence: { text: string }[]; explain?: { fusion: string; score: number } };
type Page = { status: number; body: { results: Result[]; next_cursor: string | null; index_generation: string | null; error?: { code: string } } };

let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

const FILES = 12;
/** File i holds the query word 20 − i times: the keyword ranking is f00, f01, … */
const textOf = (i: number) => `${'kiwi '.repeat(20 - i)}orchard note ${i}. ${'lorem ipsum dolor sit amet '.repeat(6)}`;
const pathOf = (i: number) => `/f${String(i).padStart(2, '0')}.txt`;

async function fill(ns: string, col: string, body: Record<string, unknown> = {}, first: (base: string) => Promise<void> = async () => undefined): Promise<string> {
  const { base } = await seedCollection(f, ns, col, body);
  await first(base);
  for (let i = 0; i < FILES; i++) await addInline(f, base, pathOf(i), textOf(i));
  await f.waitForIdle(ns, col);
  return base;
}

const search = (base: string, body: Record<string, unknown>): Promise<Page> => f.call('POST', `${base}:search`, body) as Promise<Page>;

/** Page 1, then `between`, then every later page; each page's results and index_generation. */
async function pagesAround(base: string, body: Record<string, unknown>, between: () => Promise<void>): Promise<{ first: Page; later: Page[]; all: Result[] }> {
  const first = await search(base, body);
  if (first.status !== 200) throw new Error(`page 1: ${JSON.stringify(first.body)}`);
  await between();
  const later: Page[] = [];
  let cursor = first.body.next_cursor;
  while (cursor) {
    const page = await search(base, { ...body, cursor });
    if (page.status !== 200) throw new Error(`page ${later.length + 2}: ${page.status} ${JSON.stringify(page.body)}`);
    later.push(page);
    cursor = page.body.next_cursor;
    if (later.length > 50) throw new Error('no end to the pages');
  }
  return { first, later, all: [first, ...later].flatMap((p) => p.body.results) };
}

const ids = (rs: Result[], unit: string) => rs.map((r) => (unit === 'file' ? r.path : `${r.path} ${r.evidence[0]?.text}`));
const fileIdOf = async (base: string, path: string) => (await f.call('GET', `${base}/files?path=${encodeURIComponent(path)}`)).body.items[0].id as string;

for (const unit of ['file', 'passage'] as const) {
  t.test(`${unit} results: a file added between pages that ranks first changes nothing in the later pages`, async (t) => {
    const base = await fill('add', unit, { processing: { semantic: false } });
    const body = { query: 'kiwi', mode: 'keyword', limit: 3, result_unit: unit };
    const before = (await search(base, { ...body, limit: 100 })).body;
    t.equal(before.results.length, FILES);
    const { first, later, all } = await pagesAround(base, body, async () => {
      await addInline(f, base, '/top.txt', `${'kiwi '.repeat(60)}the new first`);
      await f.waitForIdle('add', unit);
    });
    const now = (await search(base, { ...body, limit: 100 })).body;
    t.equal(now.results[0]?.path, '/top.txt', 'a fresh search ranks the new file first');
    t.not(now.index_generation, first.body.index_generation, 'the index moved on between the pages');

    t.same(ids(all, unit), ids(before.results, unit), 'the pages together are the ranking page 1 saw: each result once, none skipped');
    t.same(all.map((r) => r.rank), before.results.map((_, i) => i + 1), 'ranks run on across pages');
    t.same(all.map((r) => r.score), before.results.map((r) => r.score), 'with the scores page 1 saw');
    t.notOk(all.some((r) => r.path === '/top.txt'), 'the file added since is not in these pages');
    for (const page of later) t.equal(page.body.index_generation, first.body.index_generation, "a later page reports page 1's index_generation");
  });

  t.test(`${unit} results: a file deleted between pages is not served and nothing is skipped`, async (t) => {
    const base = await fill('del', unit, { processing: { semantic: false } });
    const body = { query: 'kiwi', mode: 'keyword', limit: 3, result_unit: unit };
    const before = (await search(base, { ...body, limit: 100 })).body.results;
    // One file page 1 showed, one it did not.
    const shown = before[1]!.path;
    const gone = before[4]!.path;
    const { all } = await pagesAround(base, body, async () => {
      for (const path of [shown, gone]) t.ok((await f.call('DELETE', `${base}/files/${await fileIdOf(base, path)}`)).status < 300);
      await f.waitForIdle('del', unit);
    });
    t.same(ids(all, unit), ids(before.filter((r) => r.path !== gone), unit), 'the ranking page 1 saw, without the file deleted before it was shown');
    t.same(all.map((r) => r.rank), all.map((_, i) => i + 1), 'ranks stay contiguous');
  });

  t.test(`${unit} results: a file edited between pages keeps its place with its current evidence`, async (t) => {
    const base = await fill('edit', unit, { processing: { semantic: false } });
    const body = { query: 'kiwi', mode: 'keyword', limit: 3, result_unit: unit };
    const before = (await search(base, { ...body, limit: 100 })).body.results;
    const edited = before[4]!;
    const { all } = await pagesAround(base, body, async () => {
      // One kiwi now: a fresh ranking puts it last.
      t.ok((await addInline(f, base, edited.path, 'kiwi papaya mango, rewritten')).status < 300);
      await f.waitForIdle('edit', unit);
    });
    const fresh = (await search(base, { ...body, limit: 100 })).body.results;
    t.equal(fresh[fresh.length - 1]?.path, edited.path, 'a fresh search ranks the edited file last');
    t.same(
      all.map((r) => r.path),
      before.map((r) => r.path),
      'the pages hold the ranking page 1 saw',
    );
    const shown = all[4]!;
    t.equal(shown.path, edited.path, 'the edited file keeps its place');
    t.equal(shown.rank, 5);
    t.equal(shown.score, edited.score, 'and its score');
    t.match(shown.evidence[0]?.text, /papaya/, 'with its current evidence');
  });

  t.test(`${unit} results: a file whose metadata changed between pages shows the evidence page 1 ranked`, async (t) => {
    const base = await fill('meta', unit, { processing: { semantic: false } });
    const body = { query: 'kiwi', mode: 'keyword', limit: 3, result_unit: unit };
    const before = (await search(base, { ...body, limit: 100 })).body.results;
    const { all } = await pagesAround(base, body, async () => {
      const patched = await f.call('PATCH', `${base}/files/${await fileIdOf(base, before[4]!.path)}`, { metadata: { reviewed: true } });
      t.equal(patched.status, 200);
    });
    t.same(ids(all, unit), ids(before, unit), 'the same results with the same evidence');
  });
}

t.test('past the entries page 1 kept, later pages go on without repeats and without files added since', async (t) => {
  const { base } = await seedCollection(f, 'deep', 'docs', { processing: { semantic: false } });
  // More files than a keyword first page keeps (KEYWORD_FIRST_DEPTH + 1): the third page reads past them.
  for (let i = 0; i < 130; i++) await addInline(f, base, `/d${String(i).padStart(3, '0')}.txt`, `${'kiwi '.repeat(1 + (i % 13))}${'lorem ipsum dolor '.repeat(5)}`);
  await f.waitForIdle('deep', 'docs');
  const body = { query: 'kiwi', mode: 'keyword', limit: 60 };
  const head = (await search(base, { ...body, limit: 100 })).body.results;
  const unchanged = await pagesAround(base, body, async () => undefined);
  t.equal(unchanged.all.length, 130, 'every file, once');
  t.same(unchanged.all.slice(0, 100).map((r) => r.path), head.map((r) => r.path), 'an unchanged collection pages as one deep page ranks');
  const { all } = await pagesAround(base, body, async () => {
    await addInline(f, base, '/top.txt', 'kiwi '.repeat(60));
    await f.waitForIdle('deep', 'docs');
  });
  t.same(all.map((r) => r.path), unchanged.all.map((r) => r.path), 'the same pages when a file is added between them');
  t.same(all.map((r) => r.rank), all.map((_, i) => i + 1));
});

t.test('a file the principals may no longer read is not served by a later page', async (t) => {
  // One file page 1 shows, one it does not.
  const shown = pathOf(1);
  const hidden = pathOf(4);
  // The rules come before the files, so no rule change has a job to wait for.
  const base = await fill('acl', 'docs', { processing: { semantic: false }, access_control: 'enforced' }, async (base) => {
    t.equal((await f.call('POST', `${base}/access-rules`, { folder: '/', readers: ['u1'] })).status, 201);
    for (const file of [shown, hidden]) t.equal((await f.call('POST', `${base}/access-rules`, { file, readers: ['u1'] })).status, 201);
  });
  const body = { query: 'kiwi', mode: 'keyword', limit: 3, principals: ['u1'] };
  const before = (await search(base, { ...body, limit: 100 })).body.results;
  t.equal(before.length, FILES, 'u1 reads every file');
  t.equal(before[4]?.path, hidden);
  const { all } = await pagesAround(base, body, async () => {
    for (const file of [shown, hidden]) {
      const r = await f.call('POST', `${base}/access-rules`, { file, readers: ['u2'] });
      t.ok(r.status < 300, `rule replaced (${r.status})`);
    }
    await f.waitForIdle('acl', 'docs');
    t.notOk((await search(base, { ...body, limit: 100 })).body.results.some((r) => r.path === hidden), 'a fresh search hides it from u1');
  });
  t.same(
    all.map((r) => r.path),
    before.map((r) => r.path).filter((p) => p !== hidden),
    'the ranking page 1 saw, without the file u1 may no longer read that it had not been shown',
  );
});

t.test('semantic mode: the later pages serve page 1 ranking, explain included', async (t) => {
  const base = await fill('sem', 'docs');
  const body = { query: 'kiwi orchard', mode: 'semantic', limit: 3 };
  // The same pages with nothing changed between them: the reference.
  const unchanged = await pagesAround(base, body, async () => undefined);
  const { first, later, all } = await pagesAround(base, body, async () => {
    await addInline(f, base, '/top.txt', `${'kiwi orchard '.repeat(40)}the new first`);
    await f.waitForIdle('sem', 'docs');
  });
  t.equal((await search(base, body)).body.results[0]?.path, '/top.txt', 'a fresh search ranks the new file first');
  t.same(
    all.map((r) => r.path),
    unchanged.all.map((r) => r.path),
    'the pages are those of an unchanged collection',
  );
  t.equal(new Set(all.map((r) => r.path)).size, all.length, 'no result repeats');
  t.notOk(all.some((r) => r.path === '/top.txt'));
  for (const page of later) t.equal(page.body.index_generation, first.body.index_generation);

  const explained = await search(base, { ...body, cursor: first.body.next_cursor, explain: true });
  t.equal(explained.status, 200);
  t.same(explained.body.results.map((r) => r.path), later[0]!.body.results.map((r) => r.path), 'explain changes nothing in the page');
  for (const r of explained.body.results) {
    t.equal(r.explain?.fusion, 'minmax', `${r.path} is explained`);
    t.equal(r.explain?.score, r.score, 'explain.score is the score');
  }
});

t.test('an expired snapshot gives invalid_cursor and is removed; the table stays bounded', async (t) => {
  const base = await fill('exp', 'docs', { processing: { semantic: false } });
  const body = { query: 'kiwi', mode: 'keyword', limit: 3 };
  const first = await search(base, body);
  const cursor = first.body.next_cursor!;
  t.ok(cursor);
  t.equal((await search(base, { ...body, cursor })).status, 200, 'the cursor works before it expires');
  const db = f.rt.db;
  const count = () => (db.prepare('SELECT count(*) AS n FROM search_snapshots').get() as { n: number }).n;
  await f.rt.write(() => undefined);
  const held = count();
  t.ok(held >= 1, 'the first page kept a snapshot');
  // Forty minutes on, as the store sees it.
  await f.rt.write(() => db.prepare('UPDATE search_snapshots SET expires_at = ?').run(Date.now() - 1));
  const late = await search(base, { ...body, cursor });
  t.equal(late.status, 400);
  t.equal(late.body.error?.code, 'invalid_cursor', 'an expired snapshot is invalid_cursor');

  // The next search that keeps a snapshot removes the expired ones (once its write has committed:
  // writes commit in order, so a later one's promise says so).
  t.ok((await search(base, { ...body, query: 'kiwi orchard' })).body.next_cursor);
  await f.rt.write(() => undefined);
  t.equal(count(), 1, 'expired snapshots were removed; only the new one is left');

  // Past the row cap, or the byte budget, the oldest go.
  const row = (id: string, entries = '[]'): SearchSnapshotRow => ({ id, collection_rid: 1, binding: 'b', page_one: '{}', entries, entry_count: 0, complete: true, expires_at: Date.now() + 60_000 });
  const kept = () => (db.prepare('SELECT id FROM search_snapshots ORDER BY rid').all() as { id: string }[]).map((r) => r.id);
  await f.rt.write(() => {
    for (const id of ['a', 'b', 'c', 'd']) insertSearchSnapshot(db, row(id), Date.now(), { rows: 2, bytes: 1e9 });
  });
  t.same(kept(), ['c', 'd'], 'at most the row cap, newest kept');
  const big = `[${'0,'.repeat(499)}0]`;
  await f.rt.write(() => {
    for (const id of ['e', 'f', 'g']) insertSearchSnapshot(db, row(id, big), Date.now(), { rows: 100, bytes: 2.5 * big.length });
  });
  t.same(kept(), ['f', 'g'], 'at most the byte budget, newest kept');
});

t.test('a cursor is refused for another request or collection', async (t) => {
  const base = await fill('bind', 'docs', { processing: { semantic: false } });
  const other = await fill('bind', 'other', { processing: { semantic: false } });
  const body = { query: 'kiwi', mode: 'keyword', limit: 3 };
  const cursor = (await search(base, body)).body.next_cursor!;
  for (const [what, where, changed] of [
    ['another limit', base, { ...body, limit: 4 }],
    ['another query', base, { ...body, query: 'orchard' }],
    ['another unit', base, { ...body, result_unit: 'passage' }],
    ['another collection', other, body],
  ] as const) {
    const r = await search(where, { ...changed, cursor });
    t.equal(r.status, 400, what);
    t.equal(r.body.error?.code, 'invalid_cursor', what);
  }
  t.equal((await search(base, { ...body, cursor: cursor.slice(0, -2) + 'xx' })).body.error?.code, 'invalid_cursor', 'a tampered cursor');
});

t.test('a next page waits for a snapshot still being committed, and a fresh cursor for one another daemon commits late', async (t) => {
  const base = await fill('late', 'docs', { processing: { semantic: false } });
  const body = { query: 'kiwi', mode: 'keyword', limit: 3 };
  const expected = (await search(base, { ...body, limit: 6 })).body.results.slice(3).map((r) => r.path);

  // Asked at once: the first page's answer may come before its snapshot commits.
  const first = await search(base, body);
  const soon = await search(base, { ...body, cursor: first.body.next_cursor });
  t.equal(soon.status, 200, 'the page asked at once is served');
  t.same(soon.body.results.map((r) => r.path), expected, 'from the first page\'s ranking');

  // As another daemon sees it: the row is not there yet and commits 300 ms after the page is asked.
  const again = await search(base, body);
  await f.rt.write(() => undefined);
  const db = f.rt.db;
  const rows = db.prepare('SELECT * FROM search_snapshots').all() as Record<string, unknown>[];
  await f.rt.write(() => db.prepare('DELETE FROM search_snapshots').run());
  const asked = search(base, { ...body, cursor: again.body.next_cursor });
  await new Promise((r) => setTimeout(r, 300));
  await f.rt.write(() => {
    for (const row of rows) db.prepare(`INSERT INTO search_snapshots (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map(() => '?').join(', ')})`).run(...Object.values(row));
  });
  const late = await asked;
  t.equal(late.status, 200, 'the page waited for the snapshot');
  t.same(late.body.results.map((r) => r.path), expected);

  // One that never comes: invalid_cursor once the wait is over.
  const lost = await search(base, body);
  await f.rt.write(() => undefined);
  await f.rt.write(() => db.prepare('DELETE FROM search_snapshots').run());
  const started = Date.now();
  const refused = await search(base, { ...body, cursor: lost.body.next_cursor });
  t.equal(refused.status, 400);
  t.equal(refused.body.error?.code, 'invalid_cursor');
  t.ok(Date.now() - started >= 1000, 'after waiting for it');
});

t.test('keeping a snapshot leaves the reads cached until a write in place; other writes clear them', async (t) => {
  const base = await fill('cache', 'docs', { processing: { semantic: false } });
  const db = f.rt.db;
  let computed = 0;
  const read = () => untilWrite(db, 'test:cache', () => ++computed);
  read();
  t.equal(read(), 1, 'cached');
  // A first page keeps its snapshot, a later page extends its life, the sweep deletes expired ones.
  const first = await search(base, { query: 'kiwi', mode: 'keyword', limit: 3 });
  t.ok(first.body.next_cursor);
  t.equal((await search(base, { query: 'kiwi', mode: 'keyword', limit: 3, cursor: first.body.next_cursor })).status, 200);
  await f.rt.write(() => undefined);
  t.equal(read(), 1, 'still cached after the snapshot writes');
  await addInline(f, base, '/new.txt', 'kiwi');
  t.equal(read(), 2, 'computed again after a file was added');
});
