// `npm run bench -- --only cursors`: what keeping a search's first-page ranking for its cursor
// costs (src/domain/search/snapshot.ts). In one in-process runtime holding the data set's corpus
// (keyword only), the same first-page keyword searches run interleaved as the API runs them (ranked
// KEYWORD_FIRST_DEPTH deep and a snapshot written) and as one page only (`paged: false`, what a
// first page cost before snapshots), at limit 10 and 100, file and passage results. Prints p50/p95
// per side and their ratio.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openRuntime } from '../daemon/runtime.js';
import { authenticate } from '../src/domain/keys.js';
import { search } from '../src/domain/search/search.js';
import { jsonl, pct, round, type Doc } from './ingest-floor.js';

const KEY = 'bench-cursors-cluster-key-0123456789';

export async function benchSearchCursors(opts: { data: string; queries?: number }): Promise<void> {
  const corpusFile = join(opts.data, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'cursors', skipped: `no ${corpusFile}` }));
  const docs = jsonl<Doc>(corpusFile);
  const queries = jsonl<{ text: string }>(join(opts.data, 'queries.jsonl'))
    .map((q) => q.text)
    .slice(0, opts.queries ?? 300);
  const rt = await openRuntime({ ephemeral: true, clusterKey: KEY });
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await rt.app.handle({ method, url, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? null : Buffer.from(JSON.stringify(body)) });
    const text = res.body === null ? '' : res.body.toString();
    if (res.status >= 300) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };
  try {
    await call('POST', '/namespaces', { name: 'bench' });
    await call('POST', '/namespaces/bench/collections', { name: 'kw', processing: { semantic: false } });
    for (let i = 0; i < docs.length; i += 100) {
      await Promise.all(docs.slice(i, i + 100).map((d) => call('POST', '/namespaces/bench/collections/kw/files', { path: `/${d._id}.txt`, source: { type: 'inline', text: `${d.title ?? ''}\n\n${d.text ?? ''}` } })));
    }
    for (;;) {
      const c = await call('GET', '/namespaces/bench/collections/kw');
      if (c.file_counts.pending + c.file_counts.indexing === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const s = rt.services;
    const key = await authenticate(s.store, KEY);
    const row = (await s.store.collections.find((await s.store.namespaces.find('bench'))!.rid, 'kw'))!;
    for (const limit of [10, 100]) {
      for (const unit of ['file', 'passage'] as const) {
        const body = (query: string) => ({ query, mode: 'keyword' as const, interpretation: 'literal' as const, limit, result_unit: unit, filter: null, principals: null });
        const sides = { paged: {}, single: { paged: false } };
        const times: Record<keyof typeof sides, number[]> = { paged: [], single: [] };
        for (const q of queries.slice(0, 20)) for (const options of Object.values(sides)) await search(s, key, row, body(q), 'warm', options);
        for (const q of queries) {
          for (const [name, options] of Object.entries(sides) as [keyof typeof sides, object][]) {
            const t0 = performance.now();
            await search(s, key, row, body(q), 'bench', options);
            times[name].push(performance.now() - t0);
          }
        }
        const [pp50, pp95, sp50, sp95] = [pct(times.paged, 0.5), pct(times.paged, 0.95), pct(times.single, 0.5), pct(times.single, 0.95)];
        console.log(
          JSON.stringify({
            bench: 'cursors',
            limit,
            result_unit: unit,
            queries: queries.length,
            with_snapshot: { p50_ms: round(pp50, 2), p95_ms: round(pp95, 2) },
            one_page: { p50_ms: round(sp50, 2), p95_ms: round(sp95, 2) },
            ratio_p50: round(pp50 / sp50, 2),
            ratio_p95: round(pp95 / sp95, 2),
          }),
        );
      }
    }
  } finally {
    await rt.close();
  }
}
