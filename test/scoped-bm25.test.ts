// BM25 over what the reader may read (store/sqlite/keyword-postings.ts, domain/search/bm25.ts): statistics
// counted over the reader's passages, so a reader who may read every file gets the open
// collection's scores, a filter narrows results without moving scores, and the collection
// model (learnt from every file) stays out of an enforced reader's ranking.
import t from 'tap';
import { purgeCollection } from '../src/store/sqlite/purge.js';
import { addInline, seedCollection, startFixture, type Call, type Fixture } from './helpers/trove.js';

let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

/** Words repeated, in headings and bodies, a stem shared by two query words, and a Chinese run (a phrase of bigrams). */
const FILES: [string, string, string][] = [
  ['/notes/budget.md', '# Lantern budget\n\nThe lantern budget for the launch: lanterns, running costs and the board.', 'text/markdown'],
  ['/notes/launch.md', '# Launch\n\nThe launch plan runs late; the budget is approved. Running, running, run.', 'text/markdown'],
  ['/notes/plain.txt', 'A plain note about weather, rain and the hills, with one lantern.', 'text/plain'],
  ['/notes/board.txt', 'Board minutes: the budget was approved, the lantern order placed.', 'text/plain'],
  ['/notes/zh.txt', '图书馆的开放时间是上午九点。图书馆在周一关闭。', 'text/plain'],
  ['/notes/zh2.txt', '这本书在图书馆里。', 'text/plain'],
  ['/other/long.txt', `${'Filler words about nothing in particular. '.repeat(30)}A lantern at the end.`, 'text/plain'],
];
const QUERIES = ['lantern budget', 'running run runs', 'board approved launch plan', '图书馆', 'lantern', 'weather hills rain lantern budget'];

async function fill(base: string, files = FILES): Promise<void> {
  for (const [path, text, type] of files) t.equal((await addInline(f, base, path, text, type, { tag: path.startsWith('/notes/') ? 'note' : 'other' })).status, 202, `added ${path}`);
}

const scoresOf = (r: Call) => ((r.body.results ?? []) as { path: string; score: number }[]).map((x) => `${x.path}=${x.score}`);

t.test("a reader who may read everything gets the open collection's scores exactly", async (t) => {
  const open = await seedCollection(f, 'scoped', 'open');
  await fill(open.base);
  await f.waitForIdle('scoped', 'open');
  const enforced = await seedCollection(f, 'scoped', 'enforced', { access_control: 'enforced' });
  t.equal((await f.call('POST', `${enforced.base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['all'] }] })).status, 200);
  await fill(enforced.base);
  await f.waitForIdle('scoped', 'enforced');
  for (const query of QUERIES)
    for (const result_unit of ['passage', 'file'] as const) {
      const body = { query, mode: 'keyword', result_unit, limit: 20 };
      const a = await f.call('POST', `${open.base}:search`, body);
      const b = await f.call('POST', `${enforced.base}:search`, { ...body, principals: ['all'] });
      t.equal(a.status, 200);
      t.equal(b.status, 200);
      t.ok(scoresOf(a).length > 0, `${query}: found something`);
      t.same(scoresOf(b), scoresOf(a), `same paths, order and scores: ${JSON.stringify(body)}`);
    }
  // The scorer keeps postings and lengths per state of the index: a new file must change them.
  const extra: [string, string, string][] = [['/notes/new.txt', 'Another lantern, another budget, and a lantern again.', 'text/plain']];
  await fill(open.base, extra);
  await fill(enforced.base, extra);
  await f.waitForIdle('scoped', 'open');
  await f.waitForIdle('scoped', 'enforced');
  const body = { query: 'lantern budget', mode: 'keyword', result_unit: 'passage', limit: 20 };
  const after = await f.call('POST', `${enforced.base}:search`, { ...body, principals: ['all'] });
  t.ok(scoresOf(after).some((x) => x.startsWith('/notes/new.txt=')), 'the new file is found');
  t.same(scoresOf(after), scoresOf(await f.call('POST', `${open.base}:search`, body)), 'and every score follows the new statistics');
});

t.test('what a reader may read is worked out again after every write', async (t) => {
  const { base } = await seedCollection(f, 'scoped', 'rules', { access_control: 'enforced' });
  await f.call('POST', `${base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['r'] }] });
  await fill(base);
  await f.waitForIdle('scoped', 'rules');
  const paths = async () => ((await f.call('POST', `${base}:search`, { query: 'lantern', mode: 'keyword', limit: 20, principals: ['r'] })).body.results as { path: string }[]).map((x) => x.path).sort();
  const before = await paths();
  t.ok(before.includes('/other/long.txt'));
  const rule = await f.call('POST', `${base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/other/', readers: ['someone-else'] }] });
  t.ok([200, 202].includes(rule.status), `rule accepted (${rule.status})`);
  await f.waitForIdle('scoped', 'rules');
  const hidden = await paths();
  t.notOk(hidden.includes('/other/long.txt'), 'a folder hidden by a new rule drops out at the next search');
  t.same(hidden, before.filter((p) => p !== '/other/long.txt'));
});

t.test("an enforced reader's scores count only its own files, and a filter narrows without moving them", async (t) => {
  const { base } = await seedCollection(f, 'scoped', 'split', { access_control: 'enforced' });
  await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/', readers: ['admin'] },
      { op: 'upsert', folder: '/notes/', readers: ['reader', 'admin'] },
    ],
  });
  await fill(base);
  await f.waitForIdle('scoped', 'split');
  // The reader's twin: an open collection holding only the reader's files.
  const twin = await seedCollection(f, 'scoped', 'notes-only');
  await fill(
    twin.base,
    FILES.filter(([path]) => path.startsWith('/notes/')),
  );
  await f.waitForIdle('scoped', 'notes-only');
  for (const query of QUERIES) {
    const body = { query, mode: 'keyword', result_unit: 'passage', limit: 20 };
    const mine = await f.call('POST', `${base}:search`, { ...body, principals: ['reader'] });
    const alone = await f.call('POST', `${twin.base}:search`, body);
    t.same(scoresOf(mine), scoresOf(alone), `the reader scores as if the hidden file did not exist: ${query}`);
    const all = await f.call('POST', `${base}:search`, { ...body, principals: ['admin'] });
    if (query === 'lantern') t.not(scoresOf(all).join(), scoresOf(mine).join(), "the hidden file moves admin's statistics, not the reader's");
    // A filter that keeps half the reader's files: the same scores for what it keeps.
    const filtered = await f.call('POST', `${base}:search`, { ...body, principals: ['reader'], filter: { field: 'path', op: 'in', value: ['/notes/budget.md', '/notes/board.txt', '/notes/zh.txt'] } });
    t.equal(filtered.status, 200);
    const kept = new Set(scoresOf(filtered));
    t.same(
      scoresOf(mine).filter((s) => kept.has(s)),
      scoresOf(filtered),
      `a filter drops files but keeps the others' scores and order: ${query}`,
    );
    t.ok(
      scoresOf(filtered).every((s) => ['/notes/budget.md', '/notes/board.txt', '/notes/zh.txt'].some((p) => s.startsWith(`${p}=`))),
      'only filtered files',
    );
  }
});

t.test("the collection model stays out of an enforced reader's ranking", async (t) => {
  const { base } = await seedCollection(f, 'scoped', 'model', { access_control: 'enforced' });
  await f.call('POST', `${base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['all'] }] });
  const open = await seedCollection(f, 'scoped', 'model-open');
  const words = ['lantern', 'budget', 'launch', 'board', 'weather', 'harbour', 'ledger', 'signal', 'orchard', 'quarry'];
  const files: [string, string, string][] = Array.from({ length: 70 }, (_, i) => [`/f/${i}.txt`, `Note ${i}: ${words[i % 10]} ${words[(i * 3) % 10]} ${words[(i * 7) % 10]} and more.`, 'text/plain']);
  await fill(base, files);
  await fill(open.base, files);
  await f.waitForIdle('scoped', 'model');
  await f.waitForIdle('scoped', 'model-open');
  const body = { query: 'lantern harbour', mode: 'semantic', explain: true, limit: 5 };
  const openHit = (await f.call('POST', `${open.base}:search`, body)).body.results[0];
  t.equal(openHit.explain.collection_weight, 0.6, 'an open collection of 70 files ranks with its model');
  const enforcedHit = (await f.call('POST', `${base}:search`, { ...body, principals: ['all'] })).body.results[0];
  t.equal(enforcedHit.explain.collection_weight, 0, 'an enforced reader ranks without it');
  t.equal(enforcedHit.explain.collection_part, 0);
});

t.test("a purged collection's rid coming back with a new index never meets the old one's postings", async (t) => {
  const rule = { operations: [{ op: 'upsert', folder: '/', readers: ['r'] }] };
  const ridOf = async (name: string) => (await f.rt.services.store.collections.find((await f.rt.services.store.namespaces.find('reuse'))!.rid, name))!.rid;
  const first = await seedCollection(f, 'reuse', 'first', { access_control: 'enforced' });
  await f.call('POST', `${first.base}/access-rules:batch`, rule);
  await addInline(f, first.base, '/one.txt', 'alpha bravo charlie');
  await f.waitForIdle('reuse', 'first');
  const ask = (base: string, query: string) => f.call('POST', `${base}:search`, { query, mode: 'keyword', limit: 5, principals: ['r'] });
  t.same(scoresOf(await ask(first.base, 'alpha')).length, 1, 'the first collection finds its word');
  const rid = await ridOf('first');
  // The newest collection purged: SQLite hands its rid (and its file's and passage's) to the next one.
  await f.rt.write(() => purgeCollection(f.rt.db, rid));
  const second = await seedCollection(f, 'reuse', 'second', { access_control: 'enforced' });
  t.equal(await ridOf('second'), rid, 'the rid came back');
  await f.call('POST', `${second.base}/access-rules:batch`, rule);
  await addInline(f, second.base, '/two.txt', 'delta echo foxtrot');
  await f.waitForIdle('reuse', 'second');
  t.same(scoresOf(await ask(second.base, 'alpha')), [], "the old collection's word finds nothing in the new one");
  t.same(scoresOf(await ask(second.base, 'delta')).length, 1, 'its own word is found');
});

t.test("how much evidence a file shows does not depend on files the reader cannot read", async (t) => {
  // Keyword file results take their passages from a window sized by the collection's passages per
  // file; hidden files with many passages each must not widen an enforced reader's window.
  const processing = { chunk_tokens: 64, chunk_overlap: 0 };
  const section = (i: number, word: string) => `${Array.from({ length: 55 }, (_, k) => `filler${(i * 7 + k) % 40}`).join(' ')} ${word}.`;
  // Ranked: /v/short.txt, then /v/long.txt's first passage (the word twice), the three medium files,
  // then long.txt's other passages; ten files without the word keep the reader's passages per file low.
  const visible: [string, string][] = [
    ['/v/short.txt', 'A lantern.'],
    ['/v/long.txt', Array.from({ length: 6 }, (_, i) => section(i, i === 0 ? 'lantern lantern' : 'lantern')).join('\n\n')],
    ...Array.from({ length: 3 }, (_, i): [string, string] => [`/v/medium${i}.txt`, `${Array.from({ length: 48 }, (_, k) => `word${(i + k) % 30}`).join(' ')} lantern.`]),
    ...Array.from({ length: 10 }, (_, i): [string, string] => [`/v/other${i}.txt`, `Nothing to see here: weather ${i}.`]),
  ];
  const hidden: [string, string][] = Array.from({ length: 6 }, (_, h) => [`/h/${h}.txt`, Array.from({ length: 12 }, (_, i) => section(i + 20 + h, 'weather')).join('\n\n')]);
  const twin = async (name: string, withHidden: boolean) => {
    const { base } = await seedCollection(f, 'evidence', name, { access_control: 'enforced', processing });
    await f.call('POST', `${base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['admin'] }, { op: 'upsert', folder: '/v/', readers: ['r', 'admin'] }] });
    for (const [path, text] of [...visible, ...(withHidden ? hidden : [])]) await addInline(f, base, path, text);
    await f.waitForIdle('evidence', name);
    return base;
  };
  const withHidden = await twin('with', true);
  const without = await twin('without', false);
  const view = (r: Call) => ((r.body.results ?? []) as { path: string; evidence: unknown[] }[]).map((x) => ({ path: x.path, evidence: x.evidence }));
  for (const limit of [1, 2, 3]) {
    const body = { query: 'lantern', mode: 'keyword', result_unit: 'file', limit, principals: ['r'] };
    const a = await f.call('POST', `${withHidden}:search`, body);
    const b = await f.call('POST', `${without}:search`, body);
    t.ok(view(a).length > 0);
    t.same(view(a), view(b), `same files and evidence at limit ${limit}`);
  }
});
