// Access rules through the API (retrieval-api.md: Access rule, PATCH .../access-rules/{rule_id},
// Principals; decisions.md §2): create or replace, list, get, the six PATCH rules, delete, batch,
// limits, governing rules, `governing_rule` on files, and files held hidden until their
// apply_access_rule job succeeds (also across a restart).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { addInline, CLUSTER_KEY, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

async function waitForJob(f: Fixture, id: string): Promise<any> {
  for (let i = 0; i < 1500; i++) {
    const r = await f.call('GET', `/jobs/${id}`);
    if (r.body.status !== 'queued' && r.body.status !== 'running') return r.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`job ${id} did not finish`);
}

/** The paths a principal set finds for a query, in both modes. */
async function visible(f: Fixture, base: string, principals: string[], query = 'shared'): Promise<string[]> {
  const out = new Set<string>();
  for (const mode of ['keyword', 'semantic']) {
    const r = await f.call('POST', `${base}:search`, { query, mode, limit: 100, principals });
    if (r.status !== 200) throw new Error(`search ${r.status} ${r.text}`);
    for (const x of r.body.results) out.add(x.path);
  }
  return [...out].sort();
}

t.test('create or replace, list, get, delete', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const off = (await seedCollection(f, 'a1', 'open')).base;
  const r0 = await f.call('POST', `${off}/access-rules`, { folder: '/', readers: ['u'] });
  t.equal(r0.status, 400, 'rules require an enforced collection');
  t.match(r0.body.error.message, /enforced/);

  const { base } = await seedCollection(f, 'a1', 'docs', { access_control: 'enforced' });
  const created = await f.call('POST', `${base}/access-rules`, { file: '/later.txt', readers: ['u1', 'u1', 'u2'] });
  t.equal(created.status, 201, 'a rule on a target with no file is created without a job');
  t.match(created.body, { folder: null, file: '/later.txt', readers: ['u1', 'u2'], sealed: false }, 'duplicate readers collapse, order kept');
  t.match(created.body.id, /^acr_/);

  const replaced = await f.call('POST', `${base}/access-rules`, { file: '/later.txt', readers: ['u3'] });
  t.equal(replaced.status, 200, 'the same target again replaces the rule');
  t.equal(replaced.body.id, created.body.id, 'replacing keeps the rule ID');
  t.same(replaced.body.readers, ['u3']);

  const folder = await f.call('POST', `${base}/access-rules`, { folder: '/team/', readers: [], sealed: true });
  t.equal(folder.status, 201);
  t.same(folder.body.readers, [], 'an empty reader list is allowed (it denies retrieval)');

  const got = await f.call('GET', `${base}/access-rules/${folder.body.id}`);
  t.same(got.body, folder.body);
  const page1 = await f.call('GET', `${base}/access-rules?limit=1`);
  t.equal(page1.body.items.length, 1);
  t.ok(page1.body.next_cursor);
  const page2 = await f.call('GET', `${base}/access-rules?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
  t.same(page2.body.items.map((r: any) => r.id), [folder.body.id]);
  t.equal(page2.body.next_cursor, null);
  t.same((await f.call('GET', `${base}/access-rules?folder=${encodeURIComponent('/team/')}`)).body.items.map((r: any) => r.id), [folder.body.id], 'list by folder');
  t.same((await f.call('GET', `${base}/access-rules?file=${encodeURIComponent('/later.txt')}`)).body.items.map((r: any) => r.id), [created.body.id], 'list by file');
  t.equal((await f.call('GET', `${base}/access-rules?file=/a.txt&folder=/`)).status, 400, 'at most one of folder and file');
  t.equal((await f.call('GET', `${base}/access-rules?cursor=${encodeURIComponent(page1.body.next_cursor)}&folder=/`)).body.error.code, 'invalid_cursor', 'a cursor is bound to its query');

  t.equal((await f.call('GET', `${base}/access-rules/acr_doesnotexist`)).status, 404);
  t.equal((await f.call('GET', `${base}/access-rules/nope`)).status, 400, 'rule IDs carry the acr_ prefix');
  const other = (await seedCollection(f, 'a1', 'other', { access_control: 'enforced' })).base;
  t.equal((await f.call('GET', `${other}/access-rules/${folder.body.id}`)).status, 404, "another collection's rule is not found here");

  const del = await f.call('DELETE', `${base}/access-rules/${created.body.id}`);
  t.equal(del.status, 204, 'deleting a rule that governs no file is 204');
  t.equal((await f.call('GET', `${base}/access-rules/${created.body.id}`)).status, 404);
  t.equal((await f.call('DELETE', `${base}/access-rules/${created.body.id}`)).status, 404);
});

t.test('request shape and limits', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'a2', 'docs', { access_control: 'enforced' });
  const code = async (method: string, url: string, body: unknown) => {
    const r = await f.call(method, url, body);
    return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
  };
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/', file: '/a.txt', readers: [] }), '400 invalid_request', 'never both folder and file');
  t.equal(await code('POST', `${base}/access-rules`, { readers: [] }), '400 invalid_request', 'one of folder and file');
  t.equal(await code('POST', `${base}/access-rules`, { file: '/a.txt', readers: [], sealed: true }), '400 invalid_request', 'only folder rules can be sealed');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/team', readers: [] }), '400 invalid_request', 'a folder ends with /');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/', readers: ['x'.repeat(257)] }), '400 invalid_request', 'a reader is at most 256 bytes');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/', readers: ['é'.repeat(129)] }), '400 invalid_request', 'bytes, not characters');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/', readers: ['x'.repeat(256)] }), '201', '256 bytes is allowed');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/', readers: [], colour: 'red' }), '400 invalid_request', 'unknown fields are refused');
  const many = Array.from({ length: 1025 }, (_, i) => `user-${i}`);
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/big/', readers: many }), '409 limit_exceeded', 'more than 1,024 readers');
  t.equal(await code('POST', `${base}/access-rules`, { folder: '/big/', readers: many.slice(0, 1024) }), '201', '1,024 readers is allowed');
  const big = (await f.call('GET', `${base}/access-rules?folder=${encodeURIComponent('/big/')}`)).body.items[0];
  t.equal(await code('PATCH', `${base}/access-rules/${big.id}`, { add_readers: ['one-more'] }), '409 limit_exceeded', 'add_readers past the limit');
  t.equal(await code('PATCH', `${base}/access-rules/${big.id}`, { add_readers: ['one-more'], remove_readers: ['user-0'] }), '200', 'removals apply first, so a swap at the limit fits');
  const after = (await f.call('GET', `${base}/access-rules/${big.id}`)).body;
  t.equal(after.readers.length, 1024);
  t.ok(after.readers.includes('one-more') && !after.readers.includes('user-0'));
});

t.test('PATCH follows the six rules', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'a3', 'docs', { access_control: 'enforced' });
  await addInline(f, base, '/team/a.txt', 'shared words in team a');
  await addInline(f, base, '/team/sub/b.txt', 'shared words in team b');
  await f.waitForIdle(ns, col);
  const folder = await f.call('POST', `${base}/access-rules`, { folder: '/team/', readers: ['u1', 'u2'] });
  t.equal(folder.status, 202, 'a rule that moves files returns a job');
  await waitForJob(f, folder.body.job.id);
  const file = await f.call('POST', `${base}/access-rules`, { file: '/team/a.txt', readers: ['u9'] });
  t.equal(file.status, 202);
  await waitForJob(f, file.body.job.id);
  const url = `${base}/access-rules/${folder.body.rule.id}`;

  // 1 and 2
  t.equal((await f.call('PATCH', url, { readers: ['u3'], add_readers: ['u4'] })).body.error.code, 'invalid_request', 'rule 1: readers with add_readers');
  t.equal((await f.call('PATCH', url, { readers: ['u3'], remove_readers: ['u4'] })).body.error.code, 'invalid_request', 'rule 1: readers with remove_readers');
  t.equal((await f.call('PATCH', url, { add_readers: ['u4'], remove_readers: ['u4'] })).body.error.code, 'invalid_request', 'rule 2: the same principal in both lists');
  // 3
  const r3 = await f.call('PATCH', url, { add_readers: ['u2', 'u5'], remove_readers: ['u1', 'absent'] });
  t.equal(r3.status, 200);
  t.same(r3.body.readers, ['u2', 'u5'], 'rule 3: removals first; removing an absent reader or adding a present one does nothing');
  // 4
  t.equal((await f.call('PATCH', `${base}/access-rules/${file.body.rule.id}`, { sealed: true })).body.error.code, 'invalid_request', 'rule 4: only folder rules can be sealed');
  t.equal((await f.call('PATCH', `${base}/access-rules/${file.body.rule.id}`, { sealed: false })).status, 200, 'unsealing a file rule is a no-op');
  // 5: a reader-only change applies on the next request.
  t.same(await visible(f, base, ['u5']), ['/team/sub/b.txt']);
  const r5 = await f.call('PATCH', url, { readers: ['u6'] });
  t.equal(r5.status, 200, 'rule 5: a reader-only change is 200');
  t.same(await visible(f, base, ['u5']), [], 'rule 5: ...and applies on the next request');
  t.same(await visible(f, base, ['u6']), ['/team/sub/b.txt']);
  t.same(await visible(f, base, ['u9']), ['/team/a.txt'], 'the file rule governs its file below an unsealed folder rule');
  // 6: sealing moves /team/a.txt from its file rule to the folder rule.
  const r6 = await f.call('PATCH', url, { sealed: true });
  t.equal(r6.status, 202, 'rule 6: a seal change that moves files is 202');
  t.equal(r6.body.job.type, 'apply_access_rule');
  t.equal(r6.body.rule.sealed, true);
  t.equal((await waitForJob(f, r6.body.job.id)).status, 'succeeded');
  t.same(await visible(f, base, ['u9']), [], 'the sealed folder rule overrides the file rule below it');
  t.same(await visible(f, base, ['u6']), ['/team/a.txt', '/team/sub/b.txt']);
  const again = await f.call('PATCH', url, { sealed: true, readers: ['u6'] });
  t.equal(again.status, 200, 'a seal that does not change moves nothing');
  t.equal((await f.call('PATCH', url, {})).status, 200, 'an empty patch changes nothing');
  t.equal((await f.call('PATCH', url, { sealed: null, readers: null })).status, 200, 'nulls mean "no change"');
  t.same((await f.call('GET', url)).body.readers, ['u6']);
});

t.test('the governing rule: highest sealed ancestor, else the most specific', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'a4', 'docs', { access_control: 'enforced' });
  const paths = ['/root.txt', '/a/x.txt', '/a/b/y.txt', '/a/b/c/z.txt', '/d/w.txt'];
  for (const p of paths) await addInline(f, base, p, `shared text of ${p}`);
  await f.waitForIdle(ns, col);
  t.same(await visible(f, base, ['anyone']), [], 'a file no rule governs is visible to nobody');
  const files = async () => Object.fromEntries((await f.call('GET', `${base}/files`)).body.items.map((x: any) => [x.path, x.governing_rule ?? null]));
  t.same(Object.values(await files()), [null, null, null, null, null], 'governing_rule is omitted when no rule governs');

  const batch = await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/', readers: ['root'] },
      { op: 'upsert', folder: '/a/', readers: ['a'] },
      { op: 'upsert', folder: '/a/b/', readers: ['b'], sealed: true },
      { op: 'upsert', folder: '/a/b/c/', readers: ['c'], sealed: true },
      { op: 'upsert', file: '/a/b/c/z.txt', readers: ['z'] },
      { op: 'upsert', file: '/a/x.txt', readers: ['x'] },
    ],
  });
  t.equal(batch.status, 202);
  t.equal(batch.body.rules.length, 6, 'rules in operation order');
  await waitForJob(f, batch.body.job.id);
  t.same(await visible(f, base, ['root']), ['/d/w.txt', '/root.txt'], '/ governs what nothing deeper does');
  t.same(await visible(f, base, ['a']), [], '/a/ governs nothing: its only direct file has a file rule');
  t.same(await visible(f, base, ['x']), ['/a/x.txt'], 'a file rule beats the folder rule above it');
  t.same(await visible(f, base, ['b']), ['/a/b/c/z.txt', '/a/b/y.txt'], 'the highest sealed ancestor governs, over a deeper sealed one and a file rule');
  t.same(await visible(f, base, ['c', 'z']), [], 'rules below the highest sealed folder do not govern');
  const gov = await files();
  t.match(gov['/a/b/c/z.txt'], { folder: '/a/b/' });
  t.match(gov['/a/x.txt'], { file: '/a/x.txt' });
  t.match(gov['/root.txt'], { folder: '/' });
  const one = await f.call('GET', `${base}/files/${encodeURIComponent('/a/x.txt')}`);
  t.match(one.body.governing_rule, { id: /^acr_/, file: '/a/x.txt' }, 'a single file shows its governing rule');

  // A rule created before its file governs the file from the moment it is added.
  t.equal((await f.call('POST', `${base}/access-rules`, { file: '/d/late.txt', readers: ['late'] })).status, 201);
  const added = await addInline(f, base, '/d/late.txt', 'shared late text');
  t.match(added.body.file.governing_rule, { file: '/d/late.txt' });
  await f.waitForIdle(ns, col);
  t.same(await visible(f, base, ['late']), ['/d/late.txt']);
  t.same(await visible(f, base, ['root']), ['/d/w.txt', '/root.txt']);

  // governing_rule appears only when the collection enforces access rules.
  const patched = await f.call('PATCH', base, { access_control: 'off' });
  t.equal(patched.body.access_control, 'off');
  t.notOk((await f.call('GET', `${base}/files/${encodeURIComponent('/a/x.txt')}`)).body.governing_rule, 'no governing_rule when access control is off');
  const everyone = await f.call('POST', `${base}:search`, { query: 'shared', mode: 'keyword', limit: 100 });
  t.equal(everyone.body.results.length, 6, 'with access control off every file is searchable');
  await f.call('PATCH', base, { access_control: 'enforced' });
  t.same(await visible(f, base, ['x']), ['/a/x.txt'], 'turning enforcement back on restores the rules');

  // Deleting the sealed rule moves its files back to the most specific rule.
  const sealedB = batch.body.rules[2];
  const del = await f.call('DELETE', `${base}/access-rules/${sealedB.id}`);
  t.equal(del.status, 202, 'deleting a governing rule returns a job');
  await waitForJob(f, del.body.job.id);
  t.same(await visible(f, base, ['c']), ['/a/b/c/z.txt'], '/a/b/c/ is now the highest sealed folder above z.txt...');
  t.same(await visible(f, base, ['a']), ['/a/b/y.txt'], '...and /a/ is the deepest rule above y.txt');
  t.same(await visible(f, base, ['b', 'z']), [], 'the deleted rule governs nothing; the file rule under a sealed folder neither');
});

t.test('batch is all or nothing', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'a5', 'docs', { access_control: 'enforced' });
  await addInline(f, base, '/p/q.txt', 'shared words');
  await f.waitForIdle(ns, col);
  const before = await f.call('POST', `${base}/access-rules`, { folder: '/', readers: ['all'] });
  await waitForJob(f, before.body.job.id);
  const bad = [
    [{ op: 'upsert', folder: '/p/', readers: ['p'] }, { op: 'update', folder: '/missing/', add_readers: ['x'] }],
    [{ op: 'upsert', folder: '/p/', readers: ['p'] }, { op: 'delete', folder: '/missing/' }],
    [{ op: 'upsert', folder: '/p/', readers: ['p'] }, { op: 'delete', folder: '/', readers: ['x'] }],
    [{ op: 'upsert', folder: '/p/' }],
    [{ op: 'upsert', folder: '/p/', readers: ['p'], add_readers: ['q'] }],
    [{ op: 'upsert', folder: '/p/', file: '/p/q.txt', readers: ['p'] }],
    [{ op: 'update', folder: '/', readers: ['a'], add_readers: ['b'] }],
    [{ op: 'update', folder: '/', add_readers: ['b'], remove_readers: ['b'] }],
    [{ op: 'upsert', file: '/p/q.txt', readers: ['p'], sealed: true }],
    [{ op: 'update', folder: '/', add_readers: Array.from({ length: 1024 }, (_, i) => `n${i}`) }],
  ];
  for (const operations of bad) {
    const r = await f.call('POST', `${base}/access-rules:batch`, { operations });
    t.ok(r.status >= 400 && r.status < 500, `refused: ${JSON.stringify(operations).slice(0, 90)} → ${r.status} ${r.body.error.code}`);
    t.match(r.body.error.message, /operations(\.|\[)\d|request body/, 'the error names the operation');
  }
  t.same((await f.call('GET', `${base}/access-rules`)).body.items.map((r: any) => [r.folder, r.readers]), [['/', ['all']]], 'no refused batch changed anything');
  t.same(await visible(f, base, ['all']), ['/p/q.txt']);
  t.equal((await f.call('POST', `${base}/access-rules:batch`, { operations: [] })).status, 400, 'an empty batch is refused');

  const ok = await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'update', folder: '/', add_readers: ['more'] },
      { op: 'upsert', folder: '/tmp/', readers: ['t'] },
      { op: 'delete', folder: '/tmp/' },
    ],
  });
  t.equal(ok.status, 200, 'no file moves: 200');
  t.equal(ok.body.job, null);
  t.same(ok.body.rules.map((r: any) => r.folder), ['/'], 'a rule upserted and deleted in the same batch is not reported');
  t.same(ok.body.rules[0].readers, ['all', 'more']);
});

t.test('moved files stay hidden until the apply_access_rule job succeeds, across a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-acl-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let f = await startFixture({ dataDir, ephemeral: false });
  const { ns, col, base } = await seedCollection(f, 'a6', 'docs', { access_control: 'enforced' });
  await addInline(f, base, '/keep/k.txt', 'shared words kept');
  await addInline(f, base, '/move/m.txt', 'shared words moved');
  await f.waitForIdle(ns, col);
  const all = await f.call('POST', `${base}/access-rules`, { folder: '/', readers: ['u'] });
  await waitForJob(f, all.body.job.id);
  t.same(await visible(f, base, ['u']), ['/keep/k.txt', '/move/m.txt']);
  await f.close();

  // Without the worker the job stays queued: the in-between state can be observed.
  f = await startFixture({ dataDir, ephemeral: false, indexer: false });
  const moved = await f.call('POST', `${base}/access-rules`, { folder: '/move/', readers: ['u', 'v'] });
  t.equal(moved.status, 202);
  t.equal(moved.body.job.status, 'queued');
  t.same(await visible(f, base, ['u']), ['/keep/k.txt'], 'the moved file is hidden while its job is unfinished');
  t.same(await visible(f, base, ['v']), [], '...from its new readers too');
  const cancel = await f.call('POST', `/jobs/${moved.body.job.id}:cancel`);
  t.equal(cancel.status, 400, 'an apply_access_rule job cannot be canceled (it would hide the files for good)');
  const readerOnly = await f.call('PATCH', `${base}/access-rules/${all.body.rule.id}`, { add_readers: ['w'] });
  t.equal(readerOnly.status, 200, 'a reader-only change needs no job even while another job runs');
  t.same(await visible(f, base, ['w']), ['/keep/k.txt'], 'and applies at once');
  await f.close();

  f = await startFixture({ dataDir, ephemeral: false });
  t.teardown(() => f.close());
  t.equal((await waitForJob(f, moved.body.job.id)).status, 'succeeded', 'the job runs after a restart');
  t.same(await visible(f, base, ['v']), ['/move/m.txt'], 'then the file is visible to its new readers');
  t.same(await visible(f, base, ['u']), ['/keep/k.txt', '/move/m.txt']);
  t.same(await visible(f, base, ['w']), ['/keep/k.txt']);
});

t.test('principals: required when enforced, invalid when off, limits, empty list', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'a7', 'docs', { access_control: 'enforced' });
  await addInline(f, base, '/a.txt', 'shared words');
  await f.waitForIdle(ns, col);
  const r = await f.call('POST', `${base}/access-rules`, { folder: '/', readers: ['u'] });
  await waitForJob(f, r.body.job.id);
  const search = (body: Record<string, unknown>) => f.call('POST', `${base}:search`, { query: 'shared', mode: 'keyword', ...body });
  t.equal((await search({})).body.error.code, 'invalid_request', 'required when enforced');
  t.equal((await search({ principals: null })).body.error.code, 'invalid_request', 'null is not a principal list');
  t.same((await search({ principals: [] })).body.results, [], 'an empty list yields no results');
  t.equal((await search({ principals: ['u'] })).body.results.length, 1);
  t.equal((await search({ principals: Array.from({ length: 4097 }, (_, i) => `p${i}`) })).body.error.code, 'invalid_request', 'at most 4,096 principals');
  const max = Array.from({ length: 4095 }, (_, i) => `p${i}`).concat(['u']);
  t.equal((await search({ principals: max })).body.results.length, 1, '4,096 principals are accepted');
  t.equal((await search({ principals: ['x'.repeat(257)] })).body.error.code, 'invalid_request', 'each at most 256 bytes');
  t.equal((await search({ principals: ['U'] })).body.results.length, 0, 'principals match by exact string');
  const off = (await seedCollection(f, 'a7', 'open')).base;
  t.equal((await f.call('POST', `${off}:search`, { query: 'x', principals: [] })).body.error.code, 'invalid_request', 'invalid when access control is off');
  // No key bypasses access rules: the cluster key still needs principals.
  t.equal((await f.call('POST', `${base}:search`, { query: 'shared' }, { authorization: `Bearer ${CLUSTER_KEY}` })).status, 400);
});

t.test("one tenant's documents never change another tenant's scores", async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const mine = await seedCollection(f, 'tenant-a', 'docs');
  const theirs = await seedCollection(f, 'tenant-b', 'docs');
  const sibling = await seedCollection(f, 'tenant-a', 'other');
  const texts = ['apples and pears in the orchard', 'a recipe with apples', 'pears only', 'the orchard at night'];
  for (const [i, text] of texts.entries()) await addInline(f, mine.base, `/d${i}.txt`, text);
  await f.waitForIdle(mine.ns, mine.col);
  const scores = async () => {
    const out: string[] = [];
    for (const mode of ['keyword', 'semantic']) {
      const r = await f.call('POST', `${mine.base}:search`, { query: 'apples orchard', mode, result_unit: 'passage', limit: 10 });
      out.push(...r.body.results.map((x: any) => `${mode} ${x.path} ${x.score}`));
    }
    return out;
  };
  const before = await scores();
  t.ok(before.length >= 4);
  // Many documents full of the query's words elsewhere: in another namespace and in a sibling collection.
  for (const target of [theirs, sibling]) {
    for (let i = 0; i < 40; i++) await addInline(f, target.base, `/flood${i}.txt`, `apples apples orchard apples ${i}`);
    await f.waitForIdle(target.ns, target.col);
  }
  t.same(await scores(), before, 'scores are computed from this collection alone');
});

t.test("adding a file answers with the rule that governs it, as a GET of the file shows", async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'a9', 'docs', { access_control: 'enforced' });
  const rule = await f.call('POST', `${base}/access-rules`, { folder: '/team/', readers: ['u1'] });
  t.equal(rule.status, 201);
  const added = await addInline(f, base, '/team/plan.txt', 'The team plan.');
  t.equal(added.status, 202);
  t.same(added.body.file.governing_rule, { id: rule.body.id, folder: '/team/' }, 'the 202 names the governing rule');
  t.same((await f.call('GET', `${base}/files/${encodeURIComponent('/team/plan.txt')}`)).body.governing_rule, added.body.file.governing_rule);
  const outside = await addInline(f, base, '/readme.txt', 'Read me.');
  t.notOk(outside.body.file.governing_rule, 'a file no rule governs has none');
  // The same paths in a collection without enforcement: no rule is shown even where one would match.
  const open = (await seedCollection(f, 'a9', 'open')).base;
  t.notOk((await addInline(f, open, '/team/plan.txt', 'The team plan.')).body.file.governing_rule);
});
