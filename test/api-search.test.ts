// POST ...:search in keyword mode (retrieval-api.md): shapes, evidence, filters before top-k, sort,
// cursors, principals and the collection state rules.
import t from 'tap';
import { newId, nowIso } from '../src/contract/ids.js';
import { SearchResponse } from '../src/contract/schemas.js';
import { hashSecret } from '../src/domain/keys.js';
import { bestJsonSnippet, MAX_EVIDENCE_CHARS } from '../src/domain/search/snippet.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

const PLAIN = 'Line one is about nothing.\n\nThe quick brown fox jumps over the lazy dog near the riverbank.\n\nA final paragraph about tea.';

t.test('results carry ranks, scores, matched_by and exact evidence', async (t) => {
  const { base } = await seedCollection(f, 's1', 'docs');
  await addInline(f, base, '/fox.txt', PLAIN);
  await addInline(f, base, '/dog.md', '# Dogs\n\nA lazy dog sleeps all day.', 'text/markdown');
  await addInline(f, base, '/data.json', JSON.stringify({ animals: [{ name: 'fox', habitat: 'riverbank forest' }] }), 'application/json');
  await addInline(f, base, '/table.csv', 'animal,habitat\nbadger,riverbank burrow\notter,river\n', 'text/csv');
  await addInline(f, base, '/page.html', '<html><head><script>var riverbank = 1;</script></head><body><h1>Herons</h1><p>Herons wade at the riverbank.</p></body></html>', 'text/html');
  await f.waitForIdle('s1', 'docs');

  const r = await f.call('POST', `${base}:search`, { query: 'lazy dog', mode: 'keyword' });
  t.equal(r.status, 200);
  t.ok(SearchResponse.safeParse(r.body).success, 'the response matches the contract');
  t.match(r.body, { execution: { mode: 'keyword', interpretation: 'literal', stages: ['keyword'] }, next_cursor: null });
  t.equal(r.body.request_id, r.headers['x-request-id']);
  t.type(r.body.index_generation, 'string');
  t.same(r.body.results.map((x: { rank: number }) => x.rank), [1, 2]);
  t.ok(r.body.results[0].score >= r.body.results[1].score, 'scores descend with rank');
  t.same(r.body.results[0].matched_by, ['keyword']);
  const fox = r.body.results.find((x: { path: string }) => x.path === '/fox.txt');
  const ev = fox.evidence[0];
  t.equal(ev.kind, 'text');
  t.equal(PLAIN.slice(ev.location.char_start, ev.location.char_end), ev.text, 'a char span points at the evidence text in the extracted text');
  t.match(ev.text, /lazy dog/);

  const json = await f.call('POST', `${base}:search`, { query: 'forest', mode: 'keyword' });
  t.equal(json.body.results[0].path, '/data.json');
  t.equal(json.body.results[0].evidence[0].kind, 'json_path');
  t.match(json.body.results[0].evidence[0].location.json_path, /^\$\.animals\[0\]/);

  const csv = await f.call('POST', `${base}:search`, { query: 'badger', mode: 'keyword' });
  t.equal(csv.body.results[0].path, '/table.csv');
  t.match(csv.body.results[0].evidence[0].text, /animal: badger/);

  const html = await f.call('POST', `${base}:search`, { query: 'herons wade', mode: 'keyword' });
  t.equal(html.body.results[0].path, '/page.html');
  const script = await f.call('POST', `${base}:search`, { query: 'var', mode: 'keyword' });
  t.equal(script.body.results.length, 0, 'script text in HTML is not indexed');

  const passages = await f.call('POST', `${base}:search`, { query: 'riverbank', mode: 'keyword', result_unit: 'passage', limit: 100 });
  t.equal(passages.status, 200);
  t.ok(passages.body.results.length >= 4);
  for (const p of passages.body.results) t.equal(p.evidence.length, 1, 'a passage result carries its passage');

  const none = await f.call('POST', `${base}:search`, { query: '!!! ???', mode: 'keyword' });
  t.equal(none.status, 200);
  t.same(none.body.results, [], 'a query without words finds nothing, without error');
  const syntax = await f.call('POST', `${base}:search`, { query: 'fox" OR NEAR(', mode: 'keyword' });
  t.equal(syntax.status, 200, 'query text is never read as FTS5 syntax');
});

t.test('JSON evidence is the value that holds the matched words, at its own path', async (t) => {
  const { ns, col, base } = await seedCollection(f, 'sjson', 'docs');
  const inventory = { inventory: { warehouses: [{ name: 'Alta depot', note: 'plain' }, { name: 'Bergen depot', note: 'the zebra crossing is flooded' }] } };
  await addInline(f, base, '/inventory.json', JSON.stringify(inventory), 'application/json');
  await addInline(f, base, '/odd.json', JSON.stringify({ 'a b': { "it's": 'a quokka smiles' } }), 'application/json');
  const warehouses = Array.from({ length: 500 }, (_, i) => ({ name: `W${i}`, city: `city${i}`, note: `stock marker${i} checked` }));
  await addInline(f, base, '/large.json', JSON.stringify({ inventory: { warehouses } }), 'application/json');
  await f.waitForIdle(ns, col);

  for (const unit of ['passage', 'file'] as const) {
    const r = await f.call('POST', `${base}:search`, { query: 'zebra', mode: 'keyword', result_unit: unit });
    t.equal(r.status, 200);
    t.ok(SearchResponse.safeParse(r.body).success, `${unit}: the response matches the contract`);
    const [ev] = r.body.results[0].evidence;
    t.equal(ev.kind, 'json_path');
    t.equal(ev.location.json_path, '$.inventory.warehouses[1].note', `${unit}: the path of the value that matched`);
    t.match(ev.text, /zebra crossing/);
    t.notMatch(ev.text, /plain|Alta|Bergen/, `${unit}: the value's text, not the whole array`);
    t.same(Object.keys(ev.location), ['json_path'], `${unit}: only the contract's location field`);
  }

  // Words in two values of one record: the record that holds both.
  const both = await f.call('POST', `${base}:search`, { query: 'bergen zebra', mode: 'keyword', result_unit: 'passage' });
  const [ev] = both.body.results[0].evidence;
  t.equal(ev.location.json_path, '$.inventory.warehouses[1]');
  t.equal(ev.text, 'name: Bergen depot\nnote: the zebra crossing is flooded');

  const odd = await f.call('POST', `${base}:search`, { query: 'quokka', mode: 'keyword' });
  t.equal(odd.body.results[0].evidence[0].location.json_path, "$['a b']['it\\'s']", 'keys that are not identifiers are quoted (RFC 9535)');

  const large = await f.call('POST', `${base}:search`, { query: 'marker337', mode: 'keyword', result_unit: 'file' });
  t.equal(large.body.results[0].path, '/large.json');
  t.same(large.body.results[0].evidence.map((e: { location: { json_path: string }; text: string }) => [e.location.json_path, e.text]), [['$.inventory.warehouses[337].note', 'note: stock marker337 checked']]);
});

t.test('bestJsonSnippet: fallbacks and limits', async (t) => {
  const lines = ['name: Alta', 'note: plain', 'name: Bergen', `note: ${'filler words here. '.repeat(40)}the zebra is here. ${'more filler. '.repeat(20)}`];
  const text = lines.join('\n');
  const paths = ['$.w[0].name', '$.w[0].note', '$.w[1].name', '$.w[1].note'];
  let at = 0;
  const spans = lines.map((line, i): [number, number, string] => [at, (at += line.length + 1) - 1, paths[i]!]);
  const long = bestJsonSnippet(text, spans, ['zebra']);
  t.equal(long.path, '$.w[1].note', 'a value longer than the evidence limit keeps its path');
  t.ok(long.end - long.start <= MAX_EVIDENCE_CHARS && text.slice(long.start, long.end).includes('the zebra is here'), 'and shows its best sentences');
  const wide = bestJsonSnippet(text, spans, ['bergen', 'zebra']);
  t.ok(wide.path !== '$.w[1]' && wide.end - wide.start <= MAX_EVIDENCE_CHARS, 'no widening to a record that would exceed the limit');
  const none = bestJsonSnippet(text.slice(0, spans[2]![1]), spans.slice(0, 3), ['unrelated']);
  t.same([none.path, none.start, none.end], ['$.w', 0, spans[2]![1]], 'no matched word (a semantic match): the shown values and their common ancestor');
});

t.test('filters apply before the top-k cut; sort reorders only the page', async (t) => {
  const { base } = await seedCollection(f, 's2', 'docs');
  for (let i = 0; i < 30; i++) {
    const words = 'alpha '.repeat(30 - i);
    await addInline(f, base, `/f${String(i).padStart(2, '0')}.txt`, `${words} filler`, 'text/plain', { team: i === 25 || i === 28 ? 'x' : 'y', n: i });
  }
  await f.waitForIdle('s2', 'docs');
  const filtered = await f.call('POST', `${base}:search`, { query: 'alpha', mode: 'keyword', limit: 2, filter: { field: 'metadata.team', op: 'eq', value: 'x' } });
  t.same(filtered.body.results.map((x: { path: string }) => x.path).sort(), ['/f25.txt', '/f28.txt'], 'the filtered files are found though 25 better matches exist');
  const combo = await f.call('POST', `${base}:search`, {
    query: 'alpha',
    mode: 'keyword',
    limit: 100,
    filter: { and: [{ field: 'path', op: 'prefix', value: '/f1' }, { not: { field: 'metadata.n', op: 'in', value: [10, 11] } }] },
  });
  t.same(combo.body.results.map((x: { path: string }) => x.path).sort(), ['/f12.txt', '/f13.txt', '/f14.txt', '/f15.txt', '/f16.txt', '/f17.txt', '/f18.txt', '/f19.txt']);

  const bad = await f.call('POST', `${base}:search`, { query: 'alpha', filter: { field: 'bytes', op: 'prefix', value: '1' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'invalid_filter');
  const deep = { field: 'path', op: 'eq', value: '/x' } as Record<string, unknown>;
  let nested: Record<string, unknown> = deep;
  for (let i = 0; i < 8; i++) nested = { not: nested };
  t.equal((await f.call('POST', `${base}:search`, { query: 'alpha', filter: nested })).body.error.code, 'invalid_filter', 'depth 9 is refused');

  const sorted = await f.call('POST', `${base}:search`, { query: 'alpha', mode: 'keyword', limit: 5, sort: [{ field: 'path', order: 'desc' }] });
  const paths = sorted.body.results.map((x: { path: string }) => x.path);
  t.same(paths, [...paths].sort().reverse(), 'the page is sorted by path');
  t.same(sorted.body.results.map((x: { rank: number }) => x.rank).sort(), [1, 2, 3, 4, 5], 'ranks are unchanged by sort');
  const unsorted = await f.call('POST', `${base}:search`, { query: 'alpha', mode: 'keyword', limit: 5 });
  t.same(new Set(paths), new Set(unsorted.body.results.map((x: { path: string }) => x.path)), 'sort does not change which results are on the page');
  t.equal((await f.call('POST', `${base}:search`, { query: 'alpha', sort: [{ field: 'metadata.n', order: 'asc' }] })).body.error.code, 'invalid_request');
  const five = ['score', 'path', 'bytes', 'created_at', 'updated_at'].map((field) => ({ field, order: 'asc' }));
  t.equal((await f.call('POST', `${base}:search`, { query: 'alpha', sort: five })).body.error.code, 'invalid_request', 'at most four sort fields');
});

t.test('search cursors page through results and are bound to key and request', async (t) => {
  const { base } = await seedCollection(f, 's3', 'docs');
  for (let i = 0; i < 12; i++) await addInline(f, base, `/p${i}.txt`, `${'kiwi '.repeat(i + 1)}`);
  await f.waitForIdle('s3', 'docs');
  const seen: string[] = [];
  let cursor: string | null = null;
  let rank = 0;
  do {
    const r: { body: { results: { path: string; rank: number }[]; next_cursor: string | null } } = await f.call('POST', `${base}:search`, { query: 'kiwi', mode: 'keyword', limit: 5, ...(cursor ? { cursor } : {}) });
    for (const x of r.body.results) t.equal(x.rank, ++rank, 'ranks continue across pages');
    seen.push(...r.body.results.map((x) => x.path));
    cursor = r.body.next_cursor;
  } while (cursor);
  t.equal(seen.length, 12);
  t.equal(new Set(seen).size, 12);

  const first = await f.call('POST', `${base}:search`, { query: 'kiwi', mode: 'keyword', limit: 5 });
  const c = first.body.next_cursor;
  const otherQuery = await f.call('POST', `${base}:search`, { query: 'kiwis', mode: 'keyword', limit: 5, cursor: c });
  t.equal(otherQuery.body.error.code, 'invalid_cursor', 'a cursor is bound to its request');

  // A second key with search rights: the same request with its cursor is another key's.
  const secret = 'second-key-for-cursor-binding-test';
  const { prefixOf } = await import('../src/domain/keys.js');
  await f.rt.services.store.write((tx) =>
    tx.keys.insert({
      id: newId('key'),
      name: 'other',
      prefix: prefixOf(secret),
      secret_hash: hashSecret(secret),
      scope: { kind: 'cluster' },
      created_by: null,
      created_at: nowIso(),
    }),
  );
  const otherKey = await f.call('POST', `${base}:search`, { query: 'kiwi', mode: 'keyword', limit: 5, cursor: c }, { authorization: `Bearer ${secret}` });
  t.equal(otherKey.body.error.code, 'invalid_cursor', 'a cursor is bound to its key');
});

t.test('state rules, principals and mode flags', async (t) => {
  const { base } = await seedCollection(f, 's4', 'empty');
  const empty = await f.call('POST', `${base}:search`, { query: 'anything', mode: 'keyword' });
  t.equal(empty.status, 200, 'an empty collection gives 200');
  t.same(empty.body.results, []);
  t.equal(empty.body.index_generation, null);

  const waiting = (await seedCollection(f, 's4', 'waiting')).base;
  await f.call('POST', `${waiting}/files`, { path: '/later.txt', source: { type: 'upload', content_type: 'text/plain' } });
  const notReady = await f.call('POST', `${waiting}:search`, { query: 'anything', mode: 'keyword' });
  t.equal(notReady.status, 409);
  t.match(notReady.body.error, { code: 'collection_not_ready', retryable: true });

  const broken = (await seedCollection(f, 's4', 'broken')).base;
  await addInline(f, broken, '/bad.json', '{not json', 'application/json');
  const col = await f.waitForIdle('s4', 'broken');
  t.equal(col.status, 'failed');
  const failed = await f.call('POST', `${broken}:search`, { query: 'json', mode: 'keyword' });
  t.equal(failed.status, 200, 'a failed collection gives results (none) and a warning');
  t.same(failed.body.results, []);
  t.equal(failed.body.warnings[0].code, 'collection_failed');
  const file = await f.call('GET', `${broken}/files/${encodeURIComponent('/bad.json')}`);
  t.equal(file.body.error.code, 'extraction_failed');

  const ready = (await seedCollection(f, 's4', 'ready')).base;
  await addInline(f, ready, '/a.txt', 'apples and pears');
  await f.waitForIdle('s4', 'ready');
  t.equal((await f.call('POST', `${ready}:search`, { query: 'apples', mode: 'keyword', principals: ['u1'] })).body.error.code, 'invalid_request', 'principals are invalid when access control is off');
  t.equal((await f.call('POST', `${ready}:search`, { query: '   ', mode: 'keyword' })).body.error.code, 'invalid_request', 'a blank query');
  t.equal((await f.call('POST', `${ready}:search`, { query: 'x'.repeat(32001), mode: 'keyword' })).body.error.code, 'invalid_request', 'a query over 32,000 characters');
  t.equal((await f.call('POST', `${ready}:search`, { query: 'apples', limit: 101 })).body.error.code, 'invalid_request');
  t.equal((await f.call('POST', `${ready}:search`, { query: 'apples', mode: 'fuzzy' })).body.error.code, 'invalid_request');
  const semantic = await f.call('POST', `${ready}:search`, { query: 'apples' });
  t.equal(semantic.status, 200, 'the default mode answers');
  t.same(semantic.body.execution.stages, ['keyword', 'semantic'], 'and says which stages ran');

  const noSemantic = (await seedCollection(f, 's4', 'kwonly', { processing: { semantic: false } })).base;
  await addInline(f, noSemantic, '/a.txt', 'apples');
  await f.waitForIdle('s4', 'kwonly');
  const refused = await f.call('POST', `${noSemantic}:search`, { query: 'apples', mode: 'semantic' });
  t.equal(refused.body.error.code, 'invalid_request', 'the mode needs its processing flag');
  t.match(refused.body.error.message, /send mode 'keyword'/, 'and names the mode that works');
  // With both off the advice to send 'keyword' would fail too (found by a bad-input attack).
  const neither = (await seedCollection(f, 's4', 'nothing', { processing: { semantic: false, keyword: false } })).base;
  const none = await f.call('POST', `${neither}:search`, { query: 'apples', mode: 'semantic' });
  t.equal(none.body.error?.code, 'invalid_request');
  t.notMatch(none.body.error?.message, /send mode 'keyword'/, 'no advice that cannot work');
  t.match(none.body.error?.message, /keyword search is disabled too/);

  const enforced = (await seedCollection(f, 's4', 'private', { access_control: 'enforced' })).base;
  await addInline(f, enforced, '/secret.txt', 'apples are secret');
  await f.waitForIdle('s4', 'private');
  t.equal((await f.call('POST', `${enforced}:search`, { query: 'apples', mode: 'keyword' })).body.error.code, 'invalid_request', 'principals are required when enforced');
  const nobody = await f.call('POST', `${enforced}:search`, { query: 'apples', mode: 'keyword', principals: ['u1'] });
  t.equal(nobody.status, 200);
  t.same(nobody.body.results, [], 'a file no rule governs is visible to nobody');
});
