// `explain: true` on POST ...:search (an optional request field, retrieval-api.md Versioning rule 3)
// and `trove search --explain`, plus the CLI's colour decision seen end to end.
import t from 'tap';
import type { z } from 'zod';
import { SearchResponse } from '../src/contract/schemas.js';
import { SEMANTIC_WEIGHT } from '../src/domain/search/fusion-weights.js';
import { apiOf, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';
import { addInline, seedCollection, startFixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

type Explained = z.infer<typeof SearchResponse>['results'][number];

const DOCS: [string, string][] = [
  ['/limits.md', '# Limits\n\nThe rate limiter refuses requests above the configured rate; the limit resets every minute.'],
  ['/cars.md', '# Cars\n\nAn automobile needs fuel, tyres and regular servicing at the garage.'],
  ['/vehicles.md', '# Vehicles\n\nMy car broke down on the motorway and the limit of my patience was reached.'],
  ['/tea.md', '# Tea\n\nGreen tea is brewed at a lower temperature than black tea.'],
];

t.test('the API: explain on gives consistent parts, off gives none, a bad type is invalid_request', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'ex', 'docs');
  for (const [path, text] of DOCS) await addInline(f, base, path, text, 'text/markdown');
  await f.waitForIdle('ex', 'docs');

  for (const unit of ['file', 'passage'] as const) {
    const on = await f.call('POST', `${base}:search`, { query: 'car limit', result_unit: unit, explain: true });
    t.equal(on.status, 200, `semantic ${unit}`);
    t.ok(SearchResponse.safeParse(on.body).success, 'the response matches the contract schema');
    const results = on.body.results as Explained[];
    t.ok(results.length >= 2);
    for (const r of results) {
      const e = r.explain!;
      t.ok(e, `${r.path} carries explain`);
      t.equal(e.fusion, 'minmax');
      t.equal(e.score, r.score, 'explain.score is the result score');
      t.ok(Math.abs(e.keyword_part + e.semantic_part - r.score) <= 2e-6, `parts add up to the score (${e.keyword_part} + ${e.semantic_part} = ${r.score})`);
      t.equal(e.semantic_weight, SEMANTIC_WEIGHT);
      t.ok(e.cosine_scaled !== null && Math.abs(e.semantic_part - SEMANTIC_WEIGHT * e.cosine_scaled) <= 2e-6, 'semantic part = weight × scaled cosine');
      if (r.matched_by.includes('keyword')) {
        t.type(e.bm25, 'number', 'a keyword hit has its BM25');
        t.equal(e.keyword_part, e.bm25_scaled);
        t.ok(e.bm25_scaled! >= 0 && e.bm25_scaled! <= 1, 'scaled BM25 is within 0..1');
      } else {
        t.equal(e.bm25, null, 'BM25 did not find it');
        t.equal(e.keyword_part, 0);
      }
    }
    const off = await f.call('POST', `${base}:search`, { query: 'car limit', result_unit: unit });
    t.notOk((off.body.results as Explained[]).some((r) => 'explain' in r), 'no explain without the field');
    t.same(
      (off.body.results as Explained[]).map((r) => [r.path, r.score, r.rank]),
      results.map((r) => [r.path, r.score, r.rank]),
      'explain changes no score and no rank',
    );
    const no = await f.call('POST', `${base}:search`, { query: 'car limit', result_unit: unit, explain: false });
    t.notOk((no.body.results as Explained[]).some((r) => 'explain' in r), 'explain: false is the same as none');
  }

  const keyword = await f.call('POST', `${base}:search`, { query: 'limit', mode: 'keyword', explain: true });
  t.equal(keyword.status, 200);
  for (const r of keyword.body.results as Explained[]) {
    t.match(r.explain, { fusion: 'keyword', keyword_part: r.score, semantic_part: 0, semantic_weight: 0, score: r.score, cosine: null });
    t.ok(Math.abs(r.explain!.bm25! - r.score) <= 1e-6, 'the score is BM25 itself');
  }

  for (const bad of ['yes', 1, null, { on: true }]) {
    const r = await f.call('POST', `${base}:search`, { query: 'limit', explain: bad });
    t.equal(r.status, 400, `explain: ${JSON.stringify(bad)}`);
    t.equal(r.body.error.code, 'invalid_request');
    t.match(r.body.error.message, /explain/);
  }

  // A cursor stays good when only explain changes: it never changes what the pages hold.
  const first = await f.call('POST', `${base}:search`, { query: 'the', mode: 'keyword', limit: 1 });
  t.type(first.body.next_cursor, 'string', 'there is a second page');
  const next = await f.call('POST', `${base}:search`, { query: 'the', mode: 'keyword', limit: 1, cursor: first.body.next_cursor, explain: true });
  t.equal(next.status, 200, 'a page cursor works with explain added');
  t.ok((next.body.results as Explained[])[0]?.explain);

  // Checked by path, not by matching the whole document: a failed match would print all of it.
  const spec = await f.call('GET', '/openapi.json');
  const op = spec.body.paths['/namespaces/{namespace}/collections/{collection}:search'].post;
  const request = op.requestBody.content['application/json'].schema;
  t.equal(request.properties.explain?.type, 'boolean', '/openapi.json documents the request field');
  t.notOk(request.required?.includes('explain'), 'and it is optional');
  const result = op.responses['200'].content['application/json'].schema.properties.results.items;
  t.ok(result.properties.explain?.properties?.keyword_part, '/openapi.json documents the response object');
  t.notOk(result.required?.includes('explain'), 'which results carry only on request');
});

t.test('the CLI: --explain prints a line per result; colour only on request, never with NO_COLOR or --json', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const api = apiOf(daemon);
  t.equal((await api('POST', '/namespaces', { name: 'cli' })).status, 201);
  t.equal((await api('POST', '/namespaces/cli/collections', { name: 'docs' })).status, 201);
  for (const [path, text] of DOCS) {
    const r = await api('POST', '/namespaces/cli/collections/docs/files', { path, source: { type: 'inline', text, content_type: 'text/markdown' } });
    t.ok(r.status < 300, `added ${path} (${r.status})`);
  }
  await waitFor('the collection to be ready', async () => (await api<{ status: string }>('GET', '/namespaces/cli/collections/docs')).body.status === 'ready');
  // tap runs tests with NO_COLOR set: each run states both variables, empty meaning unset.
  const env = { TROVE_URL: daemon.url, TROVE_KEY: daemon.key, NO_COLOR: '', FORCE_COLOR: '' };
  const ANSI = /\u001B\[[0-9;]*m/;

  // The real entry, once: exit code, stdout and stderr as a process of its own gives them; the other
  // runs are in-process (runCliInProcess).
  const explained = await runCli(['search', 'cli/docs', 'rate limit', '--mode', 'semantic', '--explain'], { env });
  t.equal(explained.code, 0, explained.stderr);
  t.equal(explained.stderr, '');
  t.match(explained.stdout, /1\. \/limits\.md {2}\(score [0-9.]+\)\n {7}explain: bm25 [0-9.]+ → [0-9.]+ {2}\+ {2}cosine/, 'the explain line follows the result line');
  t.notMatch(explained.stdout, ANSI, 'piped output is plain');
  const keywordOnly = await runCliInProcess(['search', 'cli/docs', 'rate limit', '--mode', 'keyword', '--explain'], { env });
  t.match(keywordOnly.stdout, /explain: bm25 [0-9.]+ = score [0-9.]+/);
  const plainRun = await runCliInProcess(['search', 'cli/docs', 'rate limit', '--mode', 'keyword'], { env });
  t.notMatch(plainRun.stdout, /explain:/, 'no explain line without --explain');

  const forced = await runCliInProcess(['search', 'cli/docs', 'rate limit', '--mode', 'keyword'], { env: { ...env, FORCE_COLOR: '1' } });
  t.match(forced.stdout, /\u001B\[1m/, 'FORCE_COLOR styles even into a pipe');
  t.match(forced.stdout.replace(/\u001B\[(?:22|39)m/g, ''), /\u001B\[(?:1|33)m(?:\u001B\[(?:1|33)m)?rate/, 'the matched word is the styled one');
  const noColour = await runCliInProcess(['search', 'cli/docs', 'rate limit', '--mode', 'keyword'], { env: { ...env, FORCE_COLOR: '1', NO_COLOR: '1' } });
  t.notMatch(noColour.stdout, ANSI, 'NO_COLOR wins');
  const json = await runCliInProcess(['search', 'cli/docs', 'rate limit', '--mode', 'keyword', '--json', '--explain'], { env: { ...env, FORCE_COLOR: '1' } });
  t.notMatch(json.stdout, ANSI, '--json is never styled');
  const body = JSON.parse(json.stdout) as { results: Explained[] };
  t.equal(body.results[0]!.explain!.fusion, 'keyword', '--json carries the explain object');
});
