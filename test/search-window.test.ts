// The keyword stage scores every match and cuts the page from them (domain/search/keyword-ranking.ts):
// a small page must be exactly the head of a large one, deep pages through cursors must match it
// too, and passages of files that are not ready must be skipped.
import t from 'tap';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

type Result = { path: string; rank: number; score: number; evidence: { text: string }[] };
// File results: a file's extra evidence passages come from a window that depends on the page size
// (search.ts passagesCoveringFiles), so only the ranking is compared there.
const strip = (rs: Result[], unit = 'passage') => rs.map((r) => ({ path: r.path, score: r.score, ...(unit === 'passage' ? { evidence: r.evidence.map((e) => e.text) } : {}) }));

t.test('a page is the head of a larger window, and cursors page through it exactly', async (t) => {
  const { base } = await seedCollection(f, 'win', 'docs', { processing: { semantic: false, chunk_tokens: 64, chunk_overlap: 0 } });
  for (let i = 0; i < 90; i++) {
    // Varying term frequency and length, several passages per file, some files without the word.
    const paras = Array.from({ length: 1 + (i % 4) }, (_, j) => `${'kiwi '.repeat(((i * 7 + j) % 5) + (i % 3 === 0 ? 0 : 1))} fruit number ${i} paragraph ${j} ${'filler words here and there '.repeat((i % 6) + 8)}`);
    await addInline(f, base, `/f${i}.txt`, paras.join('\n\n'));
  }
  await f.waitForIdle('win', 'docs');
  for (const unit of ['passage', 'file']) {
    const all = (await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit: 100, result_unit: unit })).body.results as Result[];
    t.ok(all.length > 20, `${unit}: enough results (${all.length})`);
    for (const limit of [1, 3, 10, 25]) {
      const page = (await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit, result_unit: unit })).body.results as Result[];
      t.same(strip(page, unit), strip(all.slice(0, limit), unit), `${unit}: limit ${limit} is the head of limit 100`);
    }
    const paged: Result[] = [];
    let cursor: string | null = null;
    while (paged.length < all.length) {
      const r: { body: { results: Result[]; next_cursor: string | null } } = await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit: 7, result_unit: unit, ...(cursor ? { cursor } : {}) });
      paged.push(...r.body.results);
      cursor = r.body.next_cursor;
      if (!cursor) break;
    }
    t.same(strip(paged.slice(0, all.length), unit), strip(all, unit), `${unit}: pages of 7 through cursors equal one page of 100`);
    t.same(paged.slice(0, all.length).map((r) => r.rank), all.map((_, i) => i + 1), `${unit}: ranks run on across pages`);
  }

  // Files that are not ready drop out of the ranking.
  const top = (await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit: 100, result_unit: 'passage' })).body.results as Result[];
  const hidden = [...new Set(top.slice(0, 40).map((r) => r.path))];
  // Through the store, as the indexer does: the collection's file counters follow (migration v11).
  const setStatus = (status: 'indexing' | 'ready') =>
    f.rt.services.store.write(async (tx) => {
      const col = (await tx.collections.find((await tx.namespaces.find('win'))!.rid, 'docs'))!;
      for (const path of hidden) await tx.files.setStatus((await tx.files.findLiveByPath(col.rid, path))!.rid, status, new Date().toISOString());
    });
  await setStatus('indexing');
  // Files not ready are not live: they leave the statistics as well as the results.
  const rest = (await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit: 100, result_unit: 'passage' })).body.results as Result[];
  t.ok(rest.length > 5 && rest.every((r) => !hidden.includes(r.path)), 'no passage of a file not ready');
  const small = (await f.call('POST', `${base}:search`, { query: 'kiwi fruit', mode: 'keyword', limit: 5, result_unit: 'passage' })).body;
  t.same(strip(small.results), strip(rest.slice(0, 5)), 'the page skips passages of files not ready, in the same order');
  t.ok(small.warnings.some((w: { code: string }) => w.code === 'indexing_in_progress'), 'and warns that files are being indexed');
  await setStatus('ready');
});
