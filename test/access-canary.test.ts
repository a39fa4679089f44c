// The canary (retrieval-api.md: Access rule, Principals, POST ...:search, Job): a document that
// only principal X may read never reaches principal Y through any channel of a search response:
// results, evidence, the file counts in warnings, next_cursor, error messages. Its unique word sits
// in its text, its path and its metadata, so any leak shows up as that word in a response body.
// Also: sealed folders over X's file rule, and apply_access_rule jobs that hold moved files.
import t, { type Test } from 'tap';
import { addInline, seedCollection, startFixture, type Call, type Fixture } from './helpers/trove.js';
import { PATIENCE_MS } from './helpers/wait.js';

const CANARY = 'zqxcanary';
/** X's files: the word is in their paths, text and metadata. */
const PLAN = `/vault/${CANARY}-plan.txt`;
const DRAFT = `/public/${CANARY}-draft.txt`;
const BROKEN = `/vault/${CANARY}-broken.json`;
const PENDING = `/vault/${CANARY}-pending.txt`;
const CANARY_PATHS = [PLAN, DRAFT, BROKEN, PENDING];
/** Y reads these (and X reads /public/ too). */
const Y_FILES = ['/public/notes.txt', '/public/more.txt', '/y/own.txt'];

/** Principal lists Y's server might send: Y's own, none, and near-misses of X. */
const Y_PRINCIPALS: string[][] = [
  ['Y'],
  ['Y', 'team-y'],
  [],
  ['x'],
  ['X '],
  [' X'],
  ['\uFF38'], // fullwidth X
  ['X\u200b'],
  ['Y', 'x'],
  ['*'],
  ['%'],
  ['_'],
  ["X' OR '1'='1"],
  ['["X"]'],
  ['admin '],
];
const MODES = ['keyword', 'semantic'] as const;
const UNITS = ['file', 'passage'] as const;
const QUERIES = [CANARY, `${CANARY}-plan`, 'lantern budget', 'launch plan approved board', `${CANARY} lantern`, 'plan'];
const FILTERS: (Record<string, unknown> | null)[] = [
  null,
  { field: 'path', op: 'prefix', value: '/vault/' },
  { field: 'path', op: 'eq', value: PLAN },
  { field: 'path', op: 'prefix', value: `/public/${CANARY}` },
  { field: 'metadata.tag', op: 'eq', value: CANARY },
  { field: 'metadata.owner', op: 'eq', value: 'X' },
  { or: [{ field: 'path', op: 'in', value: [PLAN, DRAFT] }, { field: 'metadata.tag', op: 'eq', value: 'public' }] },
  { not: { field: 'metadata.tag', op: 'eq', value: 'public' } },
];

let f: Fixture;
/** The main canary collection, shared by the tests below. */
let main: string;
t.before(async () => {
  f = await startFixture();
  main = await canaryCollection('canary', 'main');
});
t.teardown(() => f.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pathsOf = (r: Call) => ((r.body?.results ?? []) as { path: string }[]).map((x) => x.path);

/** Base64 and base64url pieces of a cursor, decoded, so a cursor cannot smuggle the word either. */
function decodedCursor(cursor: string): string {
  return cursor
    .split(/[^A-Za-z0-9+/_=-]+/)
    .map((part) => Buffer.from(part.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'))
    .join(' ');
}

/** Nothing of X's documents in a body Y received: not the word, not the folder, not a path. */
function assertClean(t: Test, r: Call, what: string): boolean {
  const leaks = [CANARY, '/vault/', ...CANARY_PATHS].filter((needle) => r.text.includes(needle));
  const cursor = typeof r.body?.next_cursor === 'string' ? decodedCursor(r.body.next_cursor) : '';
  if (cursor.includes(CANARY) || cursor.includes('/vault/')) leaks.push('next_cursor (decoded)');
  if (leaks.length === 0) return true;
  t.fail(`${what}: Y's response carries ${leaks.join(', ')}`, { status: r.status, body: r.text.slice(0, 2000) });
  return false;
}

async function waitJob(job: { id: string }): Promise<any> {
  const started = Date.now();
  for (let i = 0; Date.now() - started < PATIENCE_MS; i++) {
    const r = await f.call('GET', `/jobs/${job.id}`);
    if (['succeeded', 'failed', 'canceled'].includes(r.body.status)) return r.body;
    await sleep(i < 20 ? 1 : 10);
  }
  throw new Error(`job ${job.id} never finished`);
}

async function search(base: string, body: Record<string, unknown>): Promise<Call> {
  return f.call('POST', `${base}:search`, { query: 'lantern', mode: 'keyword', limit: 100, ...body });
}

/**
 * Y's side of the twin collections: filler that holds none of the query words (so those words are
 * rare enough to weigh in ranking) and one file of Y's own that holds the canary word, as a guess.
 */
async function addTwinFiles(base: string) {
  for (let i = 0; i < 12; i++) await addInline(f, base, `/y/filler${i}.txt`, `Weather report ${i}: rain and wind over the hills.`);
  await addInline(f, base, '/y/guess.txt', `Is there a ${CANARY} anywhere? A guess about the plan.`);
}

/** The main canary collection: X's files beside files Y reads. */
async function canaryCollection(ns: string, col: string, extra?: (base: string) => Promise<void>): Promise<string> {
  const { base } = await seedCollection(f, ns, col, { access_control: 'enforced' });
  // Rules first: they govern the files as they arrive.
  const rules = await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/', readers: ['admin'] },
      { op: 'upsert', folder: '/public/', readers: ['X', 'Y'] },
      { op: 'upsert', folder: '/y/', readers: ['Y'] },
      { op: 'upsert', folder: '/vault/', readers: ['X'] },
      { op: 'upsert', file: PLAN, readers: ['X'] },
      { op: 'upsert', file: DRAFT, readers: ['X'] }, // a file rule under a folder Y reads
    ],
  });
  if (rules.status !== 200) throw new Error(`rules: ${rules.status} ${rules.text}`);
  await addInline(f, base, PLAN, `The ${CANARY} launch plan: lantern budget approved by the board. Codename ${CANARY}.`, 'text/plain', { tag: CANARY, owner: 'X', note: `${CANARY} secret` });
  await addInline(f, base, DRAFT, `Draft ${CANARY}: lantern budget plan for the launch, approved later.`, 'text/plain', { tag: CANARY, owner: 'X' });
  await addInline(f, base, BROKEN, `{"${CANARY}": "lantern budget", broken`, 'application/json', { tag: CANARY, owner: 'X' });
  await addInline(f, base, '/public/notes.txt', 'Lantern budget notes for the whole team.', 'text/plain', { tag: 'public' });
  await addInline(f, base, '/public/more.txt', 'Another lantern note about the budget and the plan.', 'text/plain', { tag: 'public' });
  await addInline(f, base, '/y/own.txt', 'Lantern budget plan kept by Y alone.', 'text/plain', { tag: 'y' });
  await extra?.(base);
  await f.waitForIdle(ns, col);
  // An upload that never gets its bytes stays pending.
  const pending = await f.call('POST', `${base}/files`, { path: PENDING, source: { type: 'upload', content_type: 'text/plain' }, metadata: { tag: CANARY, owner: 'X' } });
  if (pending.status !== 202) throw new Error(`pending upload: ${pending.status} ${pending.text}`);
  return base;
}

t.test('search results and evidence: X reads the canary, Y never does', async (t) => {
  const base = main;
  const status = await f.call('GET', `${base}/files/${encodeURIComponent(BROKEN)}`);
  t.equal(status.body.status, 'failed', 'the broken JSON file failed to index');
  t.equal((await f.call('GET', `${base}/files/${encodeURIComponent(PENDING)}`)).body.status, 'pending', 'the upload is still pending');

  // Controls: the canary is findable, by X, in every mode and unit.
  for (const mode of MODES)
    for (const result_unit of UNITS) {
      const x = await search(base, { query: CANARY, mode, result_unit, principals: ['X'] });
      t.equal(x.status, 200);
      t.ok(pathsOf(x).includes(PLAN) && pathsOf(x).includes(DRAFT), `X finds both canary documents (${mode}, ${result_unit})`);
      t.ok(x.text.includes(CANARY), 'X sees the canary word in evidence');
      const filtered = await search(base, { query: 'lantern', mode, result_unit, principals: ['X'], filter: { field: 'metadata.tag', op: 'eq', value: CANARY } });
      t.same([...new Set(pathsOf(filtered))].sort(), [DRAFT, PLAN].sort(), `X's metadata filter selects the canary documents (${mode}, ${result_unit})`);
    }

  let searches = 0;
  let clean = 0;
  for (const principals of Y_PRINCIPALS)
    for (const query of QUERIES)
      for (const mode of MODES)
        for (const result_unit of UNITS)
          for (const filter of FILTERS) {
            const body = { query, mode, result_unit, principals, ...(filter ? { filter } : {}) };
            const r = await search(base, body);
            searches++;
            if (r.status !== 200) {
              t.fail(`Y's search did not answer 200: ${JSON.stringify(body)}`, { status: r.status, body: r.body });
              continue;
            }
            const got = pathsOf(r);
            const allowed = principals.includes('Y') ? Y_FILES : [];
            const stray = got.filter((p) => !allowed.includes(p));
            if (stray.length > 0) t.fail(`Y got files it cannot read: ${JSON.stringify(body)}`, { stray });
            else if (assertClean(t, r, `search ${JSON.stringify(body)}`)) clean++;
          }
  t.equal(clean, searches, `${searches} searches by Y (${Y_PRINCIPALS.length} principal lists × ${QUERIES.length} queries × modes × units × ${FILTERS.length} filters) return nothing of X's`);
  t.comment(`${searches} canary searches`);

  // Y's own files are found (the searches above were not vacuous).
  const own = await search(base, { principals: ['Y'] });
  t.same(pathsOf(own).sort(), [...Y_FILES].sort(), 'Y finds exactly its readable files');
  const none = await search(base, { principals: [] });
  t.same(none.body.results, [], 'an empty principal list reads nothing');
});

t.test('file counts in warnings count only what the reader may read', async (t) => {
  const base = main;
  for (const mode of MODES) {
    const x = await search(base, { mode, principals: ['X'] });
    const codes = (x.body.warnings as { code: string; message: string }[]).map((w) => w.code);
    t.ok(codes.length >= 2, `X's warnings report its failed and its pending file (${mode}): ${JSON.stringify(x.body.warnings)}`);
    for (const w of x.body.warnings as { message: string }[]) t.match(w.message, /\b1\b/, `X's warning counts one file: ${w.message}`);
    for (const principals of Y_PRINCIPALS) {
      const y = await search(base, { mode, principals });
      t.same(y.body.warnings, [], `Y (${JSON.stringify(principals)}, ${mode}) reads no failed or pending file, so gets no count of X's`);
      assertClean(t, y, `warnings for ${JSON.stringify(principals)}`);
    }
  }

  // Every file failed: two are X's, one is Y's. Y's warning may count at most its own one.
  const { base: failed } = await seedCollection(f, 'canary', 'allfailed', { access_control: 'enforced' });
  await f.call('POST', `${failed}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/vault/', readers: ['X'] },
      { op: 'upsert', folder: '/y/', readers: ['Y'] },
    ],
  });
  await addInline(f, failed, BROKEN, `{"${CANARY}": broken`, 'application/json');
  await addInline(f, failed, `/vault/${CANARY}-second.json`, `{"${CANARY}": also broken`, 'application/json');
  await addInline(f, failed, '/y/broken.json', '{"y": broken', 'application/json');
  const col = await f.waitForIdle('canary', 'allfailed');
  t.equal(col.status, 'failed', 'the collection failed');
  for (const principals of [['Y'], [], ['nobody']]) {
    const y = await search(failed, { principals });
    t.equal(y.status, 200, 'a failed collection answers 200');
    assertClean(t, y, `failed collection, ${JSON.stringify(principals)}`);
    const readable = principals.includes('Y') ? 1 : 0;
    for (const w of y.body.warnings as { code: string; message: string }[]) {
      const counts = (w.message.match(/\d+/g) ?? []).map(Number);
      t.ok(
        counts.every((n) => n <= readable),
        `Y (${JSON.stringify(principals)}) reads ${readable} failed file(s); its warning may not count more: ${JSON.stringify(w)}`,
      );
    }
  }

  // Only X's pending upload: Y learns nothing of it from the error either.
  const { base: waiting } = await seedCollection(f, 'canary', 'waiting', { access_control: 'enforced' });
  await f.call('POST', `${waiting}/access-rules`, { folder: '/vault/', readers: ['X'] });
  await f.call('POST', `${waiting}/files`, { path: PENDING, source: { type: 'upload', content_type: 'text/plain' } });
  // Y reads no file of it, so to Y it is an empty collection (docs/decisions.md), not one whose files are not ready yet.
  const y = await search(waiting, { principals: ['Y'] });
  t.equal(y.status, 200, 'Y sees an empty collection, not one that is not ready');
  t.match(y.body, { results: [], index_generation: null, execution: { stages: [] }, warnings: [] }, 'as a collection without X\'s file answers');
  assertClean(t, y, 'empty to Y');
});

t.test('next_cursor: X cursors do not work for Y; Y cursors and their presence reveal nothing', async (t) => {
  const base = main;
  for (const mode of MODES)
    for (const result_unit of UNITS) {
      const xBody = { query: 'lantern budget', mode, result_unit, limit: 1, principals: ['X'] };
      const x = await search(base, xBody);
      t.type(x.body.next_cursor, 'string', `X has more than one page (${mode}, ${result_unit})`);
      for (const principals of [['Y'], ['Y', 'X '], [], ['x']]) {
        const replay = await search(base, { ...xBody, principals, cursor: x.body.next_cursor });
        t.equal(replay.status, 400, `X's cursor replayed with ${JSON.stringify(principals)} is refused`);
        t.equal(replay.body.error?.code, 'invalid_cursor');
        t.notOk('results' in (replay.body ?? {}), 'and carries no results');
        assertClean(t, replay, 'cursor replay');
      }
      // A filter aimed at the canary, with X's cursor: still refused, still nothing of X's.
      const aimed = await search(base, { ...xBody, principals: ['Y'], filter: { field: 'metadata.tag', op: 'eq', value: CANARY }, cursor: x.body.next_cursor });
      t.equal(aimed.body.error?.code, 'invalid_cursor');
      t.notOk(aimed.text.includes(PLAN) || aimed.text.includes(DRAFT), 'no canary path in the refusal');

      // Y pages through its own results: exactly its files, clean cursors.
      const yBody = { query: 'lantern budget', mode, result_unit, limit: 1, principals: ['Y'] };
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: Call = await search(base, { ...yBody, ...(cursor ? { cursor } : {}) });
        assertClean(t, r, `Y page ${pages + 1}`);
        seen.push(...pathsOf(r));
        cursor = r.body.next_cursor;
      } while (cursor && ++pages < 20);
      t.same([...new Set(seen)].sort(), [...Y_FILES].sort(), `Y's pages hold exactly its files (${mode}, ${result_unit})`);
      if (result_unit === 'file') t.equal(seen.length, Y_FILES.length, 'each once');
    }

  // A page that holds all of Y's matches has no next page, though X's files also match.
  for (const mode of MODES) {
    const full = await search(base, { query: 'lantern', mode, limit: Y_FILES.length, principals: ['Y'] });
    t.equal(full.body.results.length, Y_FILES.length);
    t.equal(full.body.next_cursor, null, `next_cursor does not betray more (unreadable) matches (${mode})`);
    const canaryOnly = await search(base, { query: CANARY, mode, limit: 1, principals: ['Y'] });
    t.same(canaryOnly.body.results, []);
    t.equal(canaryOnly.body.next_cursor, null, `no cursor when Y has no match (${mode})`);
  }
});

t.test('error messages Y receives carry nothing of X', async (t) => {
  const base = main;
  const bad: Record<string, unknown>[] = [
    { principals: ['Y'], limit: 101 },
    { principals: ['Y'], limit: 0 },
    { principals: ['Y'], mode: 'fuzzy' },
    { principals: ['Y'], filter: { field: 'path', op: 'gt', value: '/a' } },
    { principals: ['Y'], filter: { field: 'bytes', op: 'prefix', value: '1' } },
    { principals: ['Y'], cursor: 'not-a-cursor' },
    { principals: ['Y'], unknown_field: true },
    { principals: ['x'.repeat(300)] },
    { principals: null },
    { principals: ['Y'], sort: [{ field: 'metadata.tag', order: 'asc' }] },
    { principals: ['Y'], query: '   ' },
  ];
  for (const body of bad) {
    const r = await search(base, body);
    t.equal(r.status, 400, `refused: ${JSON.stringify(body).slice(0, 80)}`);
    assertClean(t, r, `error for ${JSON.stringify(body).slice(0, 80)}`);
  }
  const missing = await f.call('POST', '/namespaces/canary/collections/nope:search', { query: CANARY, principals: ['Y'] });
  t.equal(missing.status, 404);
  t.notOk(missing.text.includes('/vault/'), 'a 404 names no canary path');
});

t.test('a sealed folder above X\'s file rule hides the file from X unless X reads the sealed rule', async (t) => {
  const { base } = await seedCollection(f, 'canary', 'sealed', { access_control: 'enforced' });
  const MEMO = `/locked/${CANARY}-memo.txt`;
  const DEEP = `/locked/inner/${CANARY}-deep.txt`;
  const rules = await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/locked/', readers: ['S'], sealed: true },
      { op: 'upsert', file: MEMO, readers: ['X'] },
      { op: 'upsert', folder: '/locked/inner/', readers: ['X'], sealed: true }, // a lower seal: the highest one governs
      { op: 'upsert', file: '/open.txt', readers: ['X', 'S', 'Y'] },
    ],
  });
  t.equal(rules.status, 200);
  const sealedRule = rules.body.rules[0];
  await addInline(f, base, MEMO, `Memo ${CANARY}: lantern budget.`);
  await addInline(f, base, DEEP, `Deep ${CANARY}: lantern budget.`);
  await addInline(f, base, '/open.txt', 'Open lantern budget.');
  await f.waitForIdle('canary', 'sealed');
  const sees = async (principals: string[]) => {
    const out = new Set<string>();
    for (const mode of MODES)
      for (const result_unit of UNITS) {
        const r = await search(base, { mode, result_unit, principals });
        t.equal(r.status, 200);
        if (principals.length === 1 && principals[0] === 'Y') assertClean(t, r, 'sealed collection, Y');
        for (const p of pathsOf(r)) out.add(p);
      }
    return [...out].sort();
  };
  const governing = async (path: string) => (await f.call('GET', `${base}/files/${encodeURIComponent(path)}`)).body.governing_rule;

  t.same(await sees(['X']), ['/open.txt'], 'X does not read its file rule or a lower sealed folder under a sealed folder it does not read');
  t.same(await sees(['S']), [DEEP, MEMO, '/open.txt'].sort(), 'S reads everything under the highest seal');
  t.equal((await governing(MEMO))?.id, sealedRule.id, 'the sealed folder governs the memo');
  t.equal((await governing(DEEP))?.id, sealedRule.id, 'the highest sealed folder governs below a lower seal');

  let r = await f.call('PATCH', `${base}/access-rules/${sealedRule.id}`, { add_readers: ['X'] });
  t.equal(r.status, 200, 'a reader change is 200 and immediate');
  t.same(await sees(['X']), [DEEP, MEMO, '/open.txt'].sort(), 'X reads the sealed rule now');
  r = await f.call('PATCH', `${base}/access-rules/${sealedRule.id}`, { remove_readers: ['X'] });
  t.same(await sees(['X']), ['/open.txt'], 'and not after removal');

  r = await f.call('PATCH', `${base}/access-rules/${sealedRule.id}`, { sealed: false });
  t.equal(r.status, 202, 'unsealing moves files: 202');
  t.equal(r.body.job?.type, 'apply_access_rule', 'with an apply_access_rule job');
  t.equal(r.body.rule?.sealed, false);
  const during = await sees(['X']);
  t.ok(during.every((p) => [MEMO, DEEP, '/open.txt'].includes(p)), 'while the job runs X sees nothing it may not read');
  t.equal((await waitJob(r.body.job)).status, 'succeeded', 'the job succeeds');
  t.same(await sees(['X']), [DEEP, MEMO, '/open.txt'].sort(), 'unsealed: X reads its file rule and the lower sealed folder');
  t.same(await sees(['S']), ['/open.txt'], 'S no longer reads the moved files');
  t.equal((await governing(MEMO))?.file, MEMO, 'the file rule governs the memo');
  t.equal((await governing(DEEP))?.folder, '/locked/inner/', 'the lower sealed folder governs the deep file');

  r = await f.call('PATCH', `${base}/access-rules/${sealedRule.id}`, { sealed: true });
  t.equal(r.status, 202, 'sealing again moves them back');
  const during2 = await sees(['S']);
  t.ok(during2.every((p) => [MEMO, DEEP, '/open.txt'].includes(p)));
  const duringX = await sees(['X']);
  t.ok(duringX.every((p) => p === '/open.txt'), 'while the job runs, X never sees a file the seal now hides');
  t.equal((await waitJob(r.body.job)).status, 'succeeded');
  t.same(await sees(['X']), ['/open.txt'], 'sealed again: X reads neither');
  t.same(await sees(['Y']), ['/open.txt'], 'Y never read them');
});

t.test('an apply_access_rule job hides the files it moves until it succeeds', async (t) => {
  const { base } = await seedCollection(f, 'canary', 'hold', { access_control: 'enforced' });
  const HELD = `/h/${CANARY}-held.txt`;
  await f.call('POST', `${base}/access-rules`, { folder: '/h/', readers: ['X', 'Y'] });
  await addInline(f, base, HELD, `Held ${CANARY}: lantern budget.`);
  await addInline(f, base, '/h/other.txt', 'Other lantern budget.');
  await f.waitForIdle('canary', 'hold');
  t.same((await search(base, { principals: ['Y'] })).body.results.length, 2, 'before the change Y reads both');

  // Queue indexing work ahead of the rule change, so its job waits behind it.
  const { base: flood } = await seedCollection(f, 'canary', 'flood');
  const filler = 'words to index for a while, '.repeat(400);
  for (let i = 0; i < 200; i++) await addInline(f, flood, `/f${i}.txt`, `${filler} ${i}`);

  const change = await f.call('POST', `${base}/access-rules`, { file: HELD, readers: ['X'] });
  t.equal(change.status, 202, 'a file rule that takes a file from its folder rule moves it: 202');
  t.match(change.body, { rule: { file: HELD, readers: ['X'] }, job: { type: 'apply_access_rule' } });
  t.ok(['queued', 'running', 'succeeded'].includes(change.body.job.status));

  const x = await search(base, { principals: ['X'] });
  const y = await search(base, { principals: ['Y'] });
  const job = (await f.call('GET', `/jobs/${change.body.job.id}`)).body;
  t.notOk(pathsOf(y).includes(HELD), 'Y never sees the file after the change');
  assertClean(t, y, 'Y during the hold');
  if (job.status === 'queued' || job.status === 'running') {
    t.notOk(pathsOf(x).includes(HELD), `the job is ${job.status}: the moved file is hidden, even from X who reads it before and after`);
    t.same(pathsOf(y), ['/h/other.txt'], 'files the job does not move stay visible');
  } else {
    t.comment('the job finished before the search: the hold was not observed this time');
  }
  t.equal((await waitJob(change.body.job)).status, 'succeeded');
  t.same(pathsOf(await search(base, { principals: ['X'] })).sort(), [HELD, '/h/other.txt'].sort(), 'after the job X reads it again');
  t.same(pathsOf(await search(base, { principals: ['Y'] })), ['/h/other.txt'], 'and Y does not');
  await f.waitForIdle('canary', 'flood');
});

t.test('Y sees the same thing whether or not X\'s documents exist', async (t) => {
  // Twin collections: "with" holds X's canary documents, "without" does not; Y's files are the same.
  const withX = await canaryCollection('canary', 'twin-with', addTwinFiles);
  const { base: withoutX } = await seedCollection(f, 'canary', 'twin-without', { access_control: 'enforced' });
  await f.call('POST', `${withoutX}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/', readers: ['admin'] },
      { op: 'upsert', folder: '/public/', readers: ['X', 'Y'] },
      { op: 'upsert', folder: '/y/', readers: ['Y'] },
    ],
  });
  await addInline(f, withoutX, '/public/notes.txt', 'Lantern budget notes for the whole team.', 'text/plain', { tag: 'public' });
  await addInline(f, withoutX, '/public/more.txt', 'Another lantern note about the budget and the plan.', 'text/plain', { tag: 'public' });
  await addInline(f, withoutX, '/y/own.txt', 'Lantern budget plan kept by Y alone.', 'text/plain', { tag: 'y' });
  await addTwinFiles(withoutX);
  await f.waitForIdle('canary', 'twin-without');

  const view = (r: Call) => ({
    status: r.status,
    results: ((r.body.results ?? []) as { path: string; rank: number; matched_by: string[]; evidence: unknown }[]).map((x) => ({ path: x.path, rank: x.rank, matched_by: x.matched_by, evidence: x.evidence })),
    warnings: r.body.warnings,
    more: r.body.next_cursor !== null,
  });
  const scores = (r: Call) => ((r.body.results ?? []) as { path: string; score: number }[]).map((x) => `${x.path}=${x.score}`);
  const differing: string[] = [];
  let compared = 0;
  for (const query of ['lantern budget', 'plan', `${CANARY} plan`, CANARY, 'launch plan approved board'])
    for (const mode of MODES)
      for (const result_unit of UNITS)
        for (const limit of [1, 2, 10]) {
          const body = { query, mode, result_unit, limit, principals: ['Y'] };
          const a = await search(withX, body);
          const b = await search(withoutX, body);
          compared++;
          t.same(view(a), view(b), `same results, ranks, evidence, warnings and paging: ${JSON.stringify(body)}`);
          if (JSON.stringify(scores(a)) !== JSON.stringify(scores(b))) differing.push(`${JSON.stringify(body)}: with X ${scores(a).join(' ')} / without ${scores(b).join(' ')}`);
        }
  t.comment(`${compared} twin comparisons; scores differed in ${differing.length}${differing.length ? `, e.g. ${differing[0]}` : ''}`);
  // Scores are a channel too (issue 16, item 4): BM25's statistics (passage count, document
  // frequency, average length) count only what Y may read, so with a file of its own that holds a
  // guessed word, Y cannot tell whether unreadable files hold that word too.
  const guess = async (base: string) => (await search(base, { query: CANARY, mode: 'keyword', principals: ['Y'] })).body.results.find((x: { path: string }) => x.path === '/y/guess.txt')?.score;
  const [guessWith, guessWithout] = [await guess(withX), await guess(withoutX)];
  t.comment(`score of Y's own /y/guess.txt for the query "${CANARY}": ${guessWith} beside X's documents, ${guessWithout} without them`);
  t.ok(typeof guessWith === 'number', "Y's own file with the guessed word is found");
  t.equal(guessWith, guessWithout, "Y's scores do not depend on documents Y cannot read (membership of a guessed word)");
  t.equal(differing.length, 0, "Y's scores are the same whether or not X's documents exist");
});

t.test('answer channel: :answer text, sources and citations never carry X\'s canary to Y', async (t) => {
  const base = main;
  for (const principals of Y_PRINCIPALS)
    for (const query of QUERIES) {
      const r = await f.call('POST', `${base}:answer`, { query, principals });
      // Principals without Y read no file: to them the collection is empty (docs/decisions.md).
      const reads = principals.includes('Y');
      t.equal(r.status, reads ? 200 : 409, `Y gets ${reads ? 'an answer' : 'collection_empty'}: ${JSON.stringify({ query, principals })}`);
      if (!reads) t.equal(r.body.error?.code, 'collection_empty');
      assertClean(t, r, `answer ${JSON.stringify({ query, principals })}`);
    }
});
