// Semantic (hybrid) search: real vectors, vectors in step with passages, filters before top-k,
// matched_by, model records and switching, and the OpenAI-compatible provider's wire format.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { defaultCacheDir } from '../src/domain/embed/config.js';
import { loadBuiltinEmbedder } from '../src/domain/embed/builtin.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

t.test('the builtin vectors carry meaning', async (t) => {
  const embedder = await loadBuiltinEmbedder({ cacheDir: defaultCacheDir() });
  const [car, automobile, banana] = await embedder.embed(['car', 'automobile', 'banana']);
  t.ok(cosine(car!, automobile!) > cosine(car!, banana!), '"car" is nearer "automobile" than "banana"');
  const [a, b, c] = await embedder.embed(['the physician treated the patient', 'a doctor cared for someone who was ill', 'quarterly revenue beat forecasts']);
  t.ok(cosine(a!, b!) > cosine(a!, c!), 'paraphrases are nearer than unrelated sentences');
});

function vectorCount(f: Fixture, colId: string): { vectors: number; passages: number } {
  const col = f.rt.db.prepare('SELECT rid FROM collections WHERE id = ?').get(colId) as { rid: number };
  const vectors = (f.rt.db.prepare('SELECT count(*) AS n FROM vec_shared WHERE collection_rid = ?').get(col.rid) as { n: number }).n;
  const passages = (f.rt.db.prepare('SELECT count(*) AS n FROM passages p JOIN files f ON f.rid = p.file_rid WHERE f.collection_rid = ?').get(col.rid) as { n: number }).n;
  return { vectors, passages };
}

t.test('hybrid search: matched_by, meaning without shared words, filters before top-k, vectors in step', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'sem', 'docs');
  await addInline(f, base, '/vehicles.md', '# Vehicles\n\nAn automobile needs fuel, tyres and regular servicing.', 'text/markdown', { kind: 'a' });
  await addInline(f, base, '/fruit.md', '# Fruit\n\nBananas and apples are sweet and full of fibre.', 'text/markdown', { kind: 'b' });
  await addInline(f, base, '/cars.md', '# Cars\n\nMy car broke down on the motorway.', 'text/markdown', { kind: 'b' });
  for (let i = 0; i < 20; i++) await addInline(f, base, `/filler${i}.txt`, `Weather report number ${i}: rain and wind over the hills.`, 'text/plain', { kind: 'c' });
  const col = await f.waitForIdle('sem', 'docs');
  t.equal(col.status, 'ready');

  const meaning = await f.call('POST', `${base}:search`, { query: 'automobiles', limit: 3 });
  t.equal(meaning.status, 200);
  t.same(meaning.body.execution.stages, ['keyword', 'semantic']);
  const top = meaning.body.results[0];
  t.equal(top.path, '/vehicles.md', 'the stemmed keyword match ranks first');
  t.same(top.matched_by, ['keyword', 'semantic'], 'found by both stages');

  const onlyMeaning = await f.call('POST', `${base}:search`, { query: 'vehicle engine motor', limit: 5 });
  const cars = onlyMeaning.body.results.find((r: { path: string }) => r.path === '/cars.md');
  t.ok(cars, 'a document sharing no word with the query is found by meaning');
  t.same(cars?.matched_by, ['semantic']);
  const keywordMode = await f.call('POST', `${base}:search`, { query: 'vehicle engine motor', mode: 'keyword', limit: 5 });
  t.notOk(keywordMode.body.results.some((r: { path: string }) => r.path === '/cars.md'), 'keyword mode does not find it');

  const filtered = await f.call('POST', `${base}:search`, { query: 'weather rain', limit: 2, filter: { field: 'metadata.kind', op: 'eq', value: 'b' } });
  t.same(filtered.body.results.map((r: { path: string }) => r.path).sort(), ['/cars.md', '/fruit.md'], 'the filter applies before the top-k cut: both kind-b files come back though 20 better matches exist');
  for (const r of filtered.body.results) t.same(r.matched_by, ['semantic']);

  const passage = await f.call('POST', `${base}:search`, { query: 'servicing tyres', result_unit: 'passage', limit: 1 });
  t.equal(passage.body.results[0].path, '/vehicles.md');
  t.equal(passage.body.results[0].evidence.length, 1);

  const colId = col.id as string;
  let counts = vectorCount(f, colId);
  t.equal(counts.vectors, counts.passages, 'one vector per passage');
  await addInline(f, base, '/vehicles.md', '# Vehicles\n\nAn automobile needs fuel, tyres and regular servicing.\n\nTrucks carry freight on highways.', 'text/markdown');
  await f.waitForIdle('sem', 'docs');
  counts = vectorCount(f, colId);
  t.equal(counts.vectors, counts.passages, 'still after an update');
  const fruit = await f.call('GET', `${base}/files/${encodeURIComponent('/fruit.md')}`);
  await f.call('DELETE', `${base}/files/${fruit.body.id}`);
  const reindex = await f.call('POST', `${base}:reindex`);
  await waitFor('the reindex job', async () => (await f.call('GET', `/jobs/${reindex.body.job.id}`)).body.status === 'succeeded');
  counts = vectorCount(f, colId);
  t.equal(counts.vectors, counts.passages, 'still after a delete and a reindex');
  t.equal((await f.call('POST', `${base}:search`, { query: 'bananas apples', limit: 10 })).body.results.some((r: { path: string }) => r.path === '/fruit.md'), false, 'a deleted file is not found by meaning');
});

interface FakeServer {
  url: string;
  requests: { path: string; body: { model: string; input: string[] }; auth: string | undefined }[];
  close(): Promise<void>;
}

/** A local server speaking the OpenAI embeddings wire format: a bag-of-letters vector per text. */
async function fakeOpenAi(dimensions = 26): Promise<FakeServer> {
  const requests: FakeServer['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ path: req.url ?? '', body, auth: req.headers.authorization });
      if (req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const data = body.input.map((text, index) => {
        const v = new Array<number>(dimensions).fill(0);
        for (const ch of text.toLowerCase()) {
          const i = ch.charCodeAt(0) - 97;
          if (i >= 0 && i < dimensions) v[i]! += 1;
        }
        return { object: 'embedding', index, embedding: v };
      });
      // The real API may return items in any order; each carries its index.
      data.reverse();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

t.test('an OpenAI-compatible provider, and switching models needs a reindex', async (t) => {
  const server = await fakeOpenAi();
  t.teardown(() => server.close());
  process.env.TEST_EMBEDDING_KEY = 'sk-test-123';
  const dataDir = (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/trove-model-`);
  t.teardown(() => (import('node:fs').then((fs) => fs.rmSync(dataDir, { recursive: true, force: true }))));
  const openai = { provider: 'openai' as const, model: 'letters-1', url: server.url, apiKeyEnv: 'TEST_EMBEDDING_KEY', cacheDir: defaultCacheDir() };

  const first = await startFixture({ dataDir, ephemeral: false, embedding: openai });
  const { base } = await seedCollection(first, 'm', 'docs');
  await addInline(first, base, '/a.txt', 'zzz zzz zzz');
  await addInline(first, base, '/b.txt', 'aaa bbb');
  const col = await first.waitForIdle('m', 'docs');
  t.equal(col.status, 'ready');
  const info = await first.call('GET', '/info');
  t.same(info.body.embedding, { provider: 'openai', model: 'openai:letters-1', dimensions: 0 });
  t.ok(server.requests.length > 0, 'the server was asked');
  t.equal(server.requests[0]!.path, '/v1/embeddings');
  t.equal(server.requests[0]!.auth, 'Bearer sk-test-123', 'the API key comes from the named environment variable');
  t.equal(server.requests[0]!.body.model, 'letters-1');
  const found = await first.call('POST', `${base}:search`, { query: 'zz', limit: 1 });
  t.equal(found.body.results[0]?.path, '/a.txt', 'vectors from the server rank the results');
  t.same(found.body.results[0]?.matched_by, ['semantic']);
  await first.close();

  // The same data dir under the builtin model: mixing is refused until a reindex.
  const second = await startFixture({ dataDir, ephemeral: false });
  t.teardown(() => second.close());
  const refused = await second.call('POST', `${base}:search`, { query: 'zzz' });
  t.equal(refused.status, 409);
  t.match(refused.body.error, { code: 'collection_not_ready', retryable: false, details: { reason: 'embedding_model_mismatch', collection_model: 'openai:letters-1' } });
  t.equal((await second.call('POST', `${base}:search`, { query: 'zzz', mode: 'keyword' })).status, 200, 'keyword search still works');
  await addInline(second, base, '/c.txt', 'new file under another model');
  await second.waitForIdle('m', 'docs');
  const c = await second.call('GET', `${base}/files/${encodeURIComponent('/c.txt')}`);
  t.match(c.body, { status: 'failed', error: { code: 'embedding_model_mismatch' } }, 'a new file is not mixed in');
  const reindex = await second.call('POST', `${base}:reindex`);
  await waitFor('the reindex job', async () => (await second.call('GET', `/jobs/${reindex.body.job.id}`)).body.status === 'succeeded');
  const after = await second.call('POST', `${base}:search`, { query: 'new file under another model' });
  t.equal(after.status, 200, 'after a reindex the collection serves the new model');
  t.equal(after.body.results[0]?.path, '/c.txt', 'and the failed file was indexed by the reindex');
});

t.test('unchanged passages are not embedded again', async (t) => {
  const server = await fakeOpenAi();
  t.teardown(() => server.close());
  const f = await startFixture({ embedding: { provider: 'openai', model: 'letters-1', url: server.url, cacheDir: defaultCacheDir() } });
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'reuse', 'docs', { processing: { chunk_tokens: 64, chunk_overlap: 0 } });
  const para = (w: string) => Array.from({ length: 50 }, () => w).join(' ');
  await addInline(f, base, '/a.md', `# One\n\n${para('alpha')}\n\n# Two\n\n${para('beta')}`, 'text/markdown');
  await f.waitForIdle('reuse', 'docs');
  const embedded = () => server.requests.flatMap((r) => r.body.input);
  t.equal(embedded().length, 2, 'two passages embedded');
  await addInline(f, base, '/a.md', `# One\n\n${para('alpha')}\n\n# Two\n\n${para('beta')}\n\n# Three\n\n${para('gamma')}`, 'text/markdown');
  await f.waitForIdle('reuse', 'docs');
  t.equal(embedded().length, 3, 'a new version embeds only its new passage');
  t.match(embedded()[2], /^Three\ngamma/);
});

t.test('the Ollama provider speaks /api/embed; a missing optional transformers package is a clear error', async (t) => {
  const requests: { path: string; body: { model: string; input: string[] } }[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: body.model, embeddings: body.input.map((x) => [x.length, 1, 0]) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { createEmbedder } = await import('../src/domain/embed/config.js');
  const cacheDir = defaultCacheDir();
  const ollama = await createEmbedder({ provider: 'ollama', model: 'nomic-embed-text', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, cacheDir });
  const [v] = await ollama.embed(['abc']);
  t.equal(requests[0]?.path, '/api/embed');
  t.same(requests[0]?.body, { model: 'nomic-embed-text', input: ['abc'] });
  t.equal(ollama.dimensions, 3);
  t.ok(Math.abs(Math.hypot(...v!) - 1) < 1e-6, 'vectors come back unit-normalised');
  t.equal(ollama.id, 'ollama:nomic-embed-text');

  await t.rejects(createEmbedder({ provider: 'transformers', model: 'Xenova/all-MiniLM-L6-v2', cacheDir }), /npm install @huggingface\/transformers/);
});

t.test('file results fill the page when a few files hold most matching passages', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'dense', 'docs', { processing: { chunk_tokens: 64, chunk_overlap: 0 } });
  const para = (i: number) => `${'zebra '.repeat(30)}herd ${i}`;
  for (let i = 0; i < 5; i++) await addInline(f, base, `/big${i}.txt`, Array.from({ length: 40 }, (_, j) => para(j)).join('\n\n'));
  for (let i = 0; i < 15; i++) await addInline(f, base, `/small${i}.txt`, `One zebra was seen near river ${i} ${'while the long grass moved in the wind '.repeat(6)}`);
  await f.waitForIdle('dense', 'docs');
  for (const mode of ['semantic', 'keyword']) {
    const r = await f.call('POST', `${base}:search`, { query: 'zebra', mode, limit: 10 });
    t.equal(r.body.results.length, 10, `${mode}: ten files though the five big ones hold 200 better passages`);
    t.equal(new Set(r.body.results.map((x: { path: string }) => x.path)).size, 10);
  }
});
