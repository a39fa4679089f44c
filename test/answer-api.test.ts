// Answers and research through the API (retrieval-api.md: POST ...:answer, POST .../research,
// Research run; decisions.md §2-4, §7): citations that resolve, sentences found in the evidence they
// cite, the state rules, cluster-only options, principals and filters bounding every source, query
// images, the OpenAI-compatible generator on its real wire format, and research runs that are
// idempotent, staged, cancelable and survive restarts.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const MARKER = /\[\[(SRC:\d{4})\]\]/g;
const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

const DOCS: [string, string][] = [
  ['/cats.md', '# Cats\n\nCats purr when they are content. A purring cat may also be soothing itself when it is hurt. Cats sleep for up to sixteen hours a day.'],
  ['/tides.md', '# Tides\n\nTides are caused by the gravitational pull of the moon and the sun. Spring tides happen at full moon and new moon.'],
  ['/solar.md', '# Solar panels\n\nSolar panels turn sunlight into electricity with photovoltaic cells. Their output drops when the panels are dirty or shaded.'],
];

async function seeded(f: Fixture, ns: string, col = 'docs', body: Record<string, unknown> = {}) {
  const c = await seedCollection(f, ns, col, body);
  for (const [path, text] of DOCS) await addInline(f, c.base, path, text, 'text/markdown');
  await f.waitForIdle(c.ns, c.col);
  return c;
}

/** Each marker resolves to a cited source, every cited source is cited, and each sentence is in its source's evidence. */
type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

function checkCitations(t: TestContext, body: any): void {
  const cited = new Set<string>([...(body.answer as string).matchAll(MARKER)].map((m) => m[1]!));
  for (const key of cited) t.equal(body.sources[key]?.is_cited, true, `${key} resolves to a cited source`);
  for (const [key, source] of Object.entries<any>(body.sources)) t.equal(source.is_cited, cited.has(key), `${key}.is_cited matches the markers`);
  // The text between markers: each sentence appears in the evidence of the source its marker points at.
  let rest = body.answer as string;
  for (const m of body.answer.matchAll(MARKER)) {
    const at = rest.indexOf(m[0]);
    const sentence = norm(rest.slice(0, at).replace(MARKER, ''));
    rest = rest.slice(at + m[0].length);
    if (sentence === '') continue;
    const evidence = body.sources[m[1]].evidence.map((e: any) => norm(e.text)).join(' ');
    t.ok(evidence.includes(sentence), `"${sentence.slice(0, 60)}" is in the evidence of ${m[1]}`);
  }
}

t.test('an answer cites sources that hold each sentence', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans1');
  const r = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?' });
  t.equal(r.status, 200);
  t.match(r.body, { mode: 'standard', image_description: null, request_id: /^req_/, usage: { retrieval_ms: Number, generation_ms: Number, passages_considered: Number, sources_cited: Number, credits: Number } });
  t.match(r.body.answer, /purr/i);
  t.match(r.body.answer, MARKER);
  t.equal(r.body.sources['SRC:0001'].path, '/cats.md', 'the best source comes first');
  t.equal(r.body.usage.sources_cited, Object.values<any>(r.body.sources).filter((s) => s.is_cited).length);
  checkCitations(t, r.body);

  const none = await f.call('POST', `${base}:answer`, { query: 'how do volcanoes erupt under the ocean?' });
  t.equal(none.status, 200);
  t.notMatch(none.body.answer, MARKER, 'nothing relevant: no markers');
  t.match(none.body.answer, /nothing/i, 'and it says so plainly');
  t.ok(Object.values<any>(none.body.sources).every((s) => !s.is_cited));

  const hidden = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?', return_sources: false });
  t.notOk('sources' in hidden.body, 'return_sources false omits sources');

  for (const mode of ['ultra', 'recall']) {
    const m = await f.call('POST', `${base}:answer`, { query: 'what causes tides?', mode });
    t.equal(m.status, 200, mode);
    t.equal(m.body.mode, mode);
    t.match(m.body.answer, /moon/);
    checkCitations(t, m.body);
  }
  const followUp = await f.call('POST', `${base}:answer`, { query: 'and when do they sleep?', history: [{ role: 'user', content: 'why do cats purr?' }, { role: 'assistant', content: 'Cats purr when content.' }] });
  t.match(followUp.body.answer, /sixteen hours/, 'history resolves a follow-up question');

  const filtered = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?', filter: { field: 'path', op: 'eq', value: '/solar.md' } });
  // Nothing in /solar.md supports the question: declined, with no source at all.
  t.ok(Object.values<any>(filtered.body.sources).every((s) => s.path === '/solar.md'), 'the filter bounds every source');
  t.notMatch(filtered.body.answer, /purr/);
});

t.test('bad requests and the state rules', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans2');
  const code = async (url: string, body: unknown, headers = {}) => {
    const r = await f.call('POST', url, body, headers);
    return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
  };
  t.equal(await code(`${base}:answer`, { query: '   ' }), '400 invalid_request', 'a query needs non-space text');
  t.equal(await code(`${base}:answer`, { query: 'x', history: Array.from({ length: 33 }, () => ({ role: 'user', content: 'x' })) }), '400 invalid_request', 'at most 32 history messages');
  t.equal(await code(`${base}:answer`, { query: 'x', history: [{ role: 'system', content: 'x' }] }), '400 invalid_request', 'history roles are user and assistant');
  t.equal(await code(`${base}:answer`, { query: 'x', history: [{ role: 'user', content: 'x'.repeat(32_001) }] }), '400 invalid_request', 'history messages up to 32,000 characters');
  t.equal(await code(`${base}:answer`, { query: 'x', filter: { field: 'colour', op: 'eq', value: 'red' } }), '400 invalid_filter');
  t.equal(await code(`${base}:answer`, { query: 'x', principals: ['u'] }), '400 invalid_request', 'principals are invalid when access control is off');
  t.equal(await code(`${base}:answer`, { query: 'x', mode: 'deep' }), '400 invalid_request');
  t.equal(await code(`${base}:answer`, { query: 'x', temperature: 0 }), '400 invalid_request', 'unknown fields are refused');

  const empty = (await seedCollection(f, 'ans2', 'empty')).base;
  t.equal(await code(`${empty}:answer`, { query: 'x' }), '409 collection_empty');
  t.equal(await code(`${empty}/research`, { query: 'x' }, { 'idempotency-key': 'e1' }), '409 collection_empty');
  const waiting = (await seedCollection(f, 'ans2', 'waiting')).base;
  await f.call('POST', `${waiting}/files`, { path: '/later.txt', source: { type: 'upload', content_type: 'text/plain' } });
  const notReady = await f.call('POST', `${waiting}:answer`, { query: 'x' });
  t.equal(notReady.body.error.code, 'collection_not_ready');
  t.equal(notReady.body.error.retryable, true, 'retryable while files index');
  const failed = (await seedCollection(f, 'ans2', 'failed')).base;
  await addInline(f, failed, '/bad.json', '{"broken": ', 'application/json');
  await f.waitForIdle('ans2', 'failed');
  const failedAnswer = await f.call('POST', `${failed}:answer`, { query: 'x' });
  t.equal(failedAnswer.body.error.code, 'collection_not_ready');
  t.equal(failedAnswer.body.error.retryable, false, 'not retryable when processing failed');
});

t.test('cluster-only options need a cluster key (decisions.md §4)', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans3');
  const key = (await f.call('POST', '/keys', { name: 'ans3-query', scope: { kind: 'namespace', namespace: 'ans3', actions: ['query'] } })).body.secret;
  const png = readFileSync(new URL('../../fixtures/formats/sign.png', import.meta.url)).toString('base64');
  for (const [what, extra] of [
    ['mode recall', { mode: 'recall' }],
    ['web_search use_if_needed', { web_search: 'use_if_needed' }],
    ['query_image', { query_image: { data: png, media_type: 'image/png' } }],
  ] as const) {
    const r = await f.call('POST', `${base}:answer`, { query: 'cats', ...extra }, bearer(key));
    t.equal(`${r.status} ${r.body.error?.code}`, '403 forbidden', `${what} with a namespace key`);
    const research = await f.call('POST', `${base}/research`, { query: 'cats', ...extra }, { ...bearer(key), 'idempotency-key': `k-${what}` });
    t.equal(research.status, 403, `${what} in research too`);
  }
  t.equal((await f.call('POST', `${base}:answer`, { query: 'cats' }, bearer(key))).status, 200, 'standard answers with a query key');
  const search = (await f.call('POST', '/keys', { name: 'ans3-search', scope: { kind: 'namespace', namespace: 'ans3', actions: ['search', 'read'] } })).body.secret;
  t.equal((await f.call('POST', `${base}:answer`, { query: 'cats' }, bearer(search))).status, 403, 'answers need the query action');
  const web = await f.call('POST', `${base}:answer`, { query: 'what causes tides?', web_search: 'use_if_needed', mode: 'ultra' });
  t.equal(web.status, 200, 'web search is accepted and runs nothing (off in this deployment)');
  t.equal((await f.call('GET', '/info')).body.web_search.enabled, false);
});

t.test('access rules bound every source of an answer', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans4', 'private', { access_control: 'enforced' });
  const rules = await f.call('POST', `${base}/access-rules:batch`, {
    operations: [
      { op: 'upsert', folder: '/', readers: ['everyone'] },
      { op: 'upsert', file: '/cats.md', readers: ['cat-people'] },
    ],
  });
  await waitFor('the access-rule job', async () => (await f.call('GET', `/jobs/${rules.body.job.id}`)).body.status === 'succeeded');
  t.equal((await f.call('POST', `${base}:answer`, { query: 'why do cats purr?' })).status, 400, 'principals are required when enforced');
  const outsider = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?', principals: ['everyone'] });
  t.equal(outsider.status, 200);
  t.notOk(JSON.stringify(outsider.body).includes('cats.md'), 'no source, evidence or text from the unreadable file');
  t.notMatch(outsider.body.answer, /purr/i);
  const insider = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?', principals: ['cat-people'] });
  t.match(insider.body.answer, /purr/i);
  t.same(Object.values<any>(insider.body.sources).map((s) => s.path), ['/cats.md'], 'only what the principals read');
  const nobody = await f.call('POST', `${base}:answer`, { query: 'why do cats purr?', principals: [] });
  // It reads no file, so to it the collection is empty (docs/decisions.md).
  t.equal(nobody.status, 409, 'an empty principal list reads nothing');
  t.equal(nobody.body.error?.code, 'collection_empty');
});

t.test('query images are checked, read by OCR, and only their reading is returned', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'ans5', 'harbour');
  await addInline(f, base, '/notice.md', '# Harbour\n\nThe harbour is closed for maintenance until May. Ferries use the north pier meanwhile.', 'text/markdown');
  await addInline(f, base, '/other.md', '# Gardens\n\nThe gardens open at nine.', 'text/markdown');
  await f.waitForIdle('ans5', 'harbour');
  const png = readFileSync(new URL('../../fixtures/formats/sign.png', import.meta.url));
  const r = await f.call('POST', `${base}:answer`, { query: 'what does this sign say about the harbour?', query_image: { data: png.toString('base64'), media_type: 'image/png' } });
  t.equal(r.status, 200);
  t.match(r.body.image_description, /harbour closed for maintenance/i, 'the image was read');
  t.equal(r.body.sources['SRC:0001'].path, '/notice.md');
  const bad = async (query_image: unknown) => {
    const x = await f.call('POST', `${base}:answer`, { query: 'x', query_image });
    return `${x.status} ${x.body.error?.code}`;
  };
  t.equal(await bad({ data: `data:image/png;base64,${png.toString('base64')}`, media_type: 'image/png' }), '400 invalid_request', 'no data-URI prefix');
  t.equal(await bad({ data: 'not base64!', media_type: 'image/png' }), '400 invalid_request');
  t.equal(await bad({ data: png.toString('base64'), media_type: 'image/jpeg' }), '400 invalid_request', 'the bytes must be the declared type');
  t.equal(await bad({ data: png.toString('base64'), media_type: 'image/gif' }), '400 invalid_request', 'png, jpeg and webp only');
  t.equal(await bad({ data: Buffer.alloc(4 * 1024 * 1024 + 3).toString('base64'), media_type: 'image/png' }), '400 invalid_request', 'at most 4 MiB decoded');
});

t.test('the OpenAI-compatible generator speaks the chat completions wire format', async (t) => {
  const requests: any[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push({ url: req.url, auth: req.headers.authorization, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      const image = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((p: any) => p.type === 'image_url');
      if (image) {
        res.end(JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `A blue sign by a harbour (${image.image_url.url.slice(0, 22)}).` }, finish_reason: 'stop' }] }));
        return;
      }
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'local-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Cats purr when they are content [1]. Tides follow the moon [2][9].' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  process.env.TEST_GENERATION_KEY = 'sk-test-secret';
  const f = await startFixture({ generation: { provider: 'openai', model: 'local-model', url: `http://127.0.0.1:${port}/v1`, apiKeyEnv: 'TEST_GENERATION_KEY', vision: true } });
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans6');
  const info = await f.call('GET', '/info');
  t.same(info.body.generation, { provider: 'openai', model: 'local-model' });
  const r = await f.call('POST', `${base}:answer`, { query: 'why do cats purr and what causes tides?' });
  t.equal(r.status, 200);
  t.equal(requests.length, 1);
  t.equal(requests[0].url, '/v1/chat/completions');
  t.equal(requests[0].auth, 'Bearer sk-test-secret');
  t.equal(requests[0].body.model, 'local-model');
  t.ok(requests[0].body.messages.some((m: any) => m.role === 'system'));
  t.match(JSON.stringify(requests[0].body.messages), /\[1\]/, 'the evidence is numbered');
  const keys = Object.keys(r.body.sources);
  t.match(r.body.answer, new RegExp(`content \\[\\[${keys[0]}\\]\\]`), 'citations map to source keys');
  t.notMatch(r.body.answer, /\[9\]|SRC:0009/, 'a citation that points at nothing is removed');
  for (const m of r.body.answer.matchAll(MARKER)) t.equal(r.body.sources[m[1]].is_cited, true);

  // A vision-capable model describes the query image beside what OCR read.
  const png = readFileSync(new URL('../../fixtures/formats/sign.png', import.meta.url)).toString('base64');
  const withImage = await f.call('POST', `${base}:answer`, { query: 'what is this sign?', query_image: { data: png, media_type: 'image/png' } });
  t.equal(withImage.status, 200);
  t.match(withImage.body.image_description, /The image shows: A blue sign by a harbour \(data:image\/png;base64,\)/, "the model's description, from the image sent as a data URL");
  t.match(withImage.body.image_description, /harbour closed for maintenance/i, 'and the OCR reading');
});

async function waitRun(f: Fixture, url: string, headers = {}): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const r = await f.call('GET', url, undefined, headers);
    if (['succeeded', 'failed', 'canceled'].includes(r.body.status)) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`run ${url} did not finish`);
}

t.test('research runs: idempotent, staged, readable only by their creator', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seeded(f, 'ans7');
  t.equal((await f.call('POST', `${base}/research`, { query: 'x' })).body.error.code, 'invalid_request', 'Idempotency-Key is required');
  const created = await f.call('POST', `${base}/research`, { query: 'what causes tides?', mode: 'ultra' }, { 'idempotency-key': 'run-1' });
  t.equal(created.status, 202);
  t.match(created.body, { id: /^rsr_/, namespace: 'ans7', collection: 'docs', status: 'queued', mode: 'ultra', progress: null, answer: null, sources: null, image_description: null, usage: null, error: null, completed_at: null });
  const again = await f.call('POST', `${base}/research`, { query: 'what causes tides?', mode: 'ultra' }, { 'idempotency-key': 'run-1' });
  t.equal(again.body.id, created.body.id, 'a retry with the same key and body returns the same run');
  const conflict = await f.call('POST', `${base}/research`, { query: 'something else', mode: 'ultra' }, { 'idempotency-key': 'run-1' });
  t.equal(`${conflict.status} ${conflict.body.error.code}`, '409 idempotency_conflict');
  // The same key and body sent to another collection is another request: it never returns this
  // collection's run (found by an attack: a key moved off `docs` read its docs run through `hr`).
  await seedCollection(f, 'ans7', 'other');
  const elsewhere = await f.call('POST', '/namespaces/ans7/collections/other/research', { query: 'what causes tides?', mode: 'ultra' }, { 'idempotency-key': 'run-1' });
  t.equal(`${elsewhere.status} ${elsewhere.body.error?.code}`, '409 idempotency_conflict', 'another collection, same key: a conflict');
  t.notOk(elsewhere.text.includes(created.body.id), "and not a word of the first collection's run");
  const done = await waitRun(f, `${base}/research/${created.body.id}`);
  t.equal(done.status, 'succeeded');
  t.match(done.progress, { stage: 'verify', step: 5, total_steps: 5 }, 'ultra runs all five stages');
  t.match(done.answer, /moon/);
  t.match(done.usage, { credits: Number });
  t.ok(done.completed_at);
  checkCitations(t, done);

  const standard = await f.call('POST', `${base}/research`, { query: 'why do cats purr?' }, { 'idempotency-key': 'run-2' });
  const standardDone = await waitRun(f, `${base}/research/${standard.body.id}`);
  t.match(standardDone.progress, { stage: 'synthesize', step: 3, total_steps: 3 }, 'standard skips plan and verify');

  const other = (await f.call('POST', '/keys', { name: 'ans7-other', scope: { kind: 'namespace', namespace: 'ans7', actions: ['query'] } })).body.secret;
  t.equal((await f.call('GET', `${base}/research/${created.body.id}`, undefined, bearer(other))).status, 404, "another key cannot read the run");
  t.equal((await f.call('POST', `${base}/research/${created.body.id}:cancel`, undefined, bearer(other))).status, 404, 'nor cancel it');
  const mine = await f.call('POST', `${base}/research`, { query: 'solar panels' }, { ...bearer(other), 'idempotency-key': 'run-1' });
  t.equal(mine.status, 202, 'idempotency keys are per API key');
  t.not(mine.body.id, created.body.id);
  t.same((await f.call('GET', `${base}/research`, undefined, bearer(other))).body.items.map((r: any) => r.id), [mine.body.id], 'a key lists its own runs');
  const all = await f.call('GET', `${base}/research?limit=2`);
  t.same(all.body.items.map((r: any) => r.id), [mine.body.id, standard.body.id], 'a cluster key lists every run, newest first');
  const next = await f.call('GET', `${base}/research?limit=2&cursor=${encodeURIComponent(all.body.next_cursor)}`);
  t.same(next.body.items.map((r: any) => r.id), [created.body.id]);
  t.equal((await f.call('GET', `${base}/research?cursor=${encodeURIComponent(all.body.next_cursor)}`, undefined, bearer(other))).body.error.code, 'invalid_cursor', "another key's cursor");
  t.equal((await f.call('GET', `${base}/research/rsr_unknown`)).status, 404);
  // Idempotency records last 24 hours; after that the key names a new request.
  await f.rt.write(() => f.rt.db.prepare('UPDATE research_runs SET created_at = ? WHERE id = ?').run(new Date(Date.now() - 25 * 3600_000).toISOString(), created.body.id));
  const reused = await f.call('POST', `${base}/research`, { query: 'something else entirely', mode: 'ultra' }, { 'idempotency-key': 'run-1' });
  t.equal(reused.status, 202, 'after 24 hours the key can start a new run');
  t.not(reused.body.id, created.body.id);
  await waitRun(f, `${base}/research/${reused.body.id}`);
  const noSources = await f.call('POST', `${base}/research`, { query: 'why do cats purr?', return_sources: false }, { 'idempotency-key': 'run-3' });
  t.equal((await waitRun(f, `${base}/research/${noSources.body.id}`)).sources, null, 'return_sources false leaves sources null');
});

t.test('research runs survive a restart, can be canceled, and fail past their deadline', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-research-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let f = await startFixture({ dataDir, ephemeral: false, researchRunner: false });
  const { base } = await seeded(f, 'ans8');
  const queued = await f.call('POST', `${base}/research`, { query: 'what causes tides?' }, { 'idempotency-key': 'a' });
  const interrupted = await f.call('POST', `${base}/research`, { query: 'why do cats purr?' }, { 'idempotency-key': 'b' });
  const late = await f.call('POST', `${base}/research`, { query: 'solar panels' }, { 'idempotency-key': 'c' });
  const canceled = await f.call('POST', `${base}/research`, { query: 'solar panels output' }, { 'idempotency-key': 'd' });
  // A run a crashed daemon left running, and one whose time ran out while the daemon was down.
  await f.rt.write(() => f.rt.db.prepare("UPDATE research_runs SET status = 'running', progress = ? WHERE id = ?").run(JSON.stringify({ stage: 'retrieve', label: 'x', step: 1, total_steps: 3 }), interrupted.body.id));
  await f.rt.write(() => f.rt.db.prepare('UPDATE research_runs SET deadline_at = ? WHERE id = ?').run(Date.now() - 1000, late.body.id));
  const cancel = await f.call('POST', `${base}/research/${canceled.body.id}:cancel`);
  t.equal(cancel.body.status, 'canceled', 'a queued run can be canceled');
  t.ok(cancel.body.completed_at);
  t.equal((await f.call('POST', `${base}/research/${canceled.body.id}:cancel`)).body.status, 'canceled', 'canceling again changes nothing');
  await f.close();

  f = await startFixture({ dataDir, ephemeral: false });
  t.teardown(() => f.close());
  t.equal((await waitRun(f, `${base}/research/${queued.body.id}`)).status, 'succeeded', 'a queued run runs after a restart');
  t.equal((await waitRun(f, `${base}/research/${interrupted.body.id}`)).status, 'succeeded', 'a run left running starts over and finishes');
  const expired = await waitRun(f, `${base}/research/${late.body.id}`);
  t.match(expired, { status: 'failed', error: { code: 'deadline_exceeded', retryable: true } }, 'past its deadline a run fails with deadline_exceeded');
  t.equal((await f.call('GET', `${base}/research/${canceled.body.id}`)).body.status, 'canceled', 'a canceled run stays canceled');
  const finished = await f.call('POST', `${base}/research/${queued.body.id}:cancel`);
  t.equal(finished.body.status, 'succeeded', 'canceling a finished run returns it unchanged');
});

t.test('generator failures in the contract\'s terms (decisions.md §4)', async (t) => {
  const { asServiceError } = await import('../src/domain/answer/answer.js');
  const { GenerationError } = await import('../src/domain/answer/generator.js');
  t.match(asServiceError(new GenerationError('deadline_exceeded', 'late', true)), { code: 'temporarily_unavailable', retryable: true, details: { reason: 'deadline_exceeded' } }, 'an answer past its time limit is 503 deadline_exceeded');
  t.match(asServiceError(new GenerationError('unreachable', 'down', true)), { code: 'temporarily_unavailable', details: { reason: 'generation_unreachable' } });
  // The contract's table says temporarily_unavailable is retryable; the model server's own view is a detail.
  t.match(asServiceError(new GenerationError('upstream_error', 'bad', false, 400)), { code: 'temporarily_unavailable', retryable: true, details: { generator_retryable: false } });
  const other = new Error('x');
  t.equal(asServiceError(other), other, 'anything else passes through');
});
