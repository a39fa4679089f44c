// Issue 16, item 2, through the API: a plugged-in provider whose vectors are strong gets a larger
// weight when the collection model is trained, and the ranking follows it; a provider whose
// vectors mean nothing keeps the default weight, and so does every enforced reader (the weight is
// learnt from every file). The corpus: test/helpers/concept-corpus.ts.
import t, { type Test } from 'tap';
import { defaultCacheDir } from '../src/domain/embed/config.js';
import { SEMANTIC_WEIGHT } from '../src/domain/search/fusion-weights.js';
import { conceptCorpus, conceptVector, embeddingServer, scrambledVector, type ConceptCorpus } from './helpers/concept-corpus.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

const corpus = conceptCorpus(90, { decoy: true });
/** Names concept 0, whose file never uses this word; the decoy (file 1) uses it once. */
const query = corpus.concepts[0]![0]!;

async function fixtureWith(t: Test, vectorOf: (text: string) => number[], model: string): Promise<Fixture> {
  const server = await embeddingServer(vectorOf);
  t.teardown(() => server.close());
  const f = await startFixture({ embedding: { provider: 'openai', model, url: server.url, cacheDir: defaultCacheDir() } });
  t.teardown(() => f.close());
  return f;
}

async function fill(t: Test, f: Fixture, base: string, files: ConceptCorpus['files']): Promise<void> {
  const statuses = [];
  for (const file of files) statuses.push((await addInline(f, base, file.path, file.text)).status);
  t.same(new Set(statuses), new Set([202]), `${files.length} files accepted`);
}

interface Result {
  path: string;
  explain: { semantic_weight: number };
}

/** The weight stored with the collection's model, and the provider it was fitted for. */
async function stored(f: Fixture, namespace: string, collection: string): Promise<{ semantic_weight: number | null; semantic_model: string | null } | undefined> {
  const store = f.rt.services.store;
  const col = await store.collections.find((await store.namespaces.find(namespace))!.rid, collection);
  const header = col && (await store.collectionModels.header(col.rid));
  return header ? { semantic_weight: header.semantic_weight, semantic_model: header.semantic_model } : undefined;
}

async function top(f: Fixture, base: string, extra: Record<string, unknown> = {}): Promise<Result[]> {
  const r = await f.call('POST', `${base}:search`, { query, mode: 'semantic', explain: true, limit: 5, ...extra });
  if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
  return r.body.results as Result[];
}

t.test('a strong provider earns a larger weight and the ranking follows it', async (t) => {
  const f = await fixtureWith(t, (x) => conceptVector(corpus, x), 'concepts-1');
  const { base } = await seedCollection(f, 'cal', 'strong');
  await fill(t, f, base, corpus.files);
  await f.waitForIdle('cal', 'strong');
  const results = await top(f, base);
  t.ok(results[0]!.explain.semantic_weight > SEMANTIC_WEIGHT, `calibrated weight ${results[0]!.explain.semantic_weight}`);
  t.same(await stored(f, 'cal', 'strong'), { semantic_weight: results[0]!.explain.semantic_weight, semantic_model: 'openai:concepts-1' }, 'stored with the model, for its provider');
  t.same(
    results.slice(0, 2).map((r) => r.path),
    ['/concept-000.txt', '/concept-001.txt'],
    'the file about the concept ranks above the file that only mentions its word',
  );
  const keyword = await f.call('POST', `${base}:search`, { query, mode: 'keyword', limit: 5 });
  t.same(keyword.body.results.map((r: Result) => r.path), ['/concept-001.txt'], 'keyword search finds only the decoy');

  // An enforced collection: the same files and provider, a reader of all of them.
  const enforced = await seedCollection(f, 'cal', 'enforced', { access_control: 'enforced' });
  t.equal((await f.call('POST', `${enforced.base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['all'] }] })).status, 200);
  await fill(t, f, enforced.base, corpus.files);
  await f.waitForIdle('cal', 'enforced');
  const reader = await top(f, enforced.base, { principals: ['all'] });
  t.equal(reader[0]!.explain.semantic_weight, SEMANTIC_WEIGHT, 'an enforced reader ranks with the default weight, which no hidden file moved');
  t.same(await stored(f, 'cal', 'enforced'), { semantic_weight: null, semantic_model: null }, 'and an enforced collection is not calibrated at all');
});

t.test('a provider whose vectors mean nothing keeps the default weight', async (t) => {
  const f = await fixtureWith(t, (x) => scrambledVector(x, 90), 'scrambled-1');
  const { base } = await seedCollection(f, 'cal', 'weak');
  await fill(t, f, base, corpus.files);
  await f.waitForIdle('cal', 'weak');
  const results = await top(f, base);
  t.equal(results[0]!.explain.semantic_weight, SEMANTIC_WEIGHT);
  t.same(await stored(f, 'cal', 'weak'), { semantic_weight: null, semantic_model: null }, 'no weight stored: the default');
  t.equal(results[0]!.path, '/concept-001.txt', 'the keyword match stays first');
});
