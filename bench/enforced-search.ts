// `npm run bench -- --only enforced`: what scoring an enforced search over only the reader's files
// costs (issue 16, item 4; budget: enforced p50 ≤ 1.5× the same search on an open collection).
// SciFact goes into an open collection and an enforced one whose rules let principal "all" read
// every file and principal "half" the files under /a/ (every other document). The same queries run
// interleaved against the open collection, the enforced one as "all" and as "half", keyword and
// semantic, file results at limit 10. Prints p50/p95 per side and the enforced/open ratios.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { api, BENCH_KEY, jsonl, pct, postAll, round, SETTLE_MS, type Doc } from './ingest-floor.js';

export async function benchEnforcedSearch(opts: { data: string; startDaemon: (env: Record<string, string>) => Promise<{ url: string; stop(): Promise<void> }>; queries?: number }): Promise<void> {
  const corpusFile = join(opts.data, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'enforced', skipped: `no ${corpusFile}` }));
  const docs = jsonl<Doc>(corpusFile);
  const queries = jsonl<{ text: string }>(join(opts.data, 'queries.jsonl'))
    .map((q) => q.text)
    .slice(0, opts.queries ?? 300);
  const d = await opts.startDaemon({ TROVE_CLUSTER_KEY: BENCH_KEY });
  const call = api(d.url);
  try {
    await call('POST', '/namespaces', { name: 'bench' });
    await call('POST', '/namespaces/bench/collections', { name: 'open' });
    await call('POST', '/namespaces/bench/collections', { name: 'enforced', access_control: 'enforced' });
    await call('POST', '/namespaces/bench/collections/enforced/access-rules:batch', {
      operations: [
        { op: 'upsert', folder: '/', readers: ['all'] },
        { op: 'upsert', folder: '/a/', readers: ['all', 'half'] },
      ],
    });
    // Every other document under /a/, the rest under /b/: "half" reads /a/.
    const file = (d: Doc, i: number) => ({ path: `/${i % 2 === 0 ? 'a' : 'b'}/${d._id}.md`, source: { type: 'inline', content_type: 'text/markdown', text: `# ${d.title ?? ''}\n\n${d.text ?? ''}` } });
    const index = new Map(docs.map((doc, i) => [doc, i]));
    for (const col of ['open', 'enforced']) await postAll(docs, (doc) => call('POST', `/namespaces/bench/collections/${col}/files`, file(doc, index.get(doc)!)));
    for (const col of ['open', 'enforced'])
      for (;;) {
        const c = (await call('GET', `/namespaces/bench/collections/${col}`)) as { file_counts: Record<string, number> };
        if (c.file_counts.pending! + c.file_counts.indexing! === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const sides = {
      open: (q: string, mode: string) => call('POST', '/namespaces/bench/collections/open:search', { query: q, mode, limit: 10 }),
      enforced_all: (q: string, mode: string) => call('POST', '/namespaces/bench/collections/enforced:search', { query: q, mode, limit: 10, principals: ['all'] }),
      enforced_half: (q: string, mode: string) => call('POST', '/namespaces/bench/collections/enforced:search', { query: q, mode, limit: 10, principals: ['half'] }),
    };
    for (const mode of ['keyword', 'semantic']) {
      for (const q of queries.slice(0, 20)) for (const ask of Object.values(sides)) await ask(q, mode);
      const times: Record<keyof typeof sides, number[]> = { open: [], enforced_all: [], enforced_half: [] };
      for (const q of queries)
        for (const [side, ask] of Object.entries(sides) as [keyof typeof sides, (q: string, mode: string) => Promise<unknown>][]) {
          const t0 = performance.now();
          await ask(q, mode);
          times[side].push(performance.now() - t0);
        }
      const p50 = (side: keyof typeof sides) => pct(times[side], 0.5);
      console.log(
        JSON.stringify({
          bench: 'enforced',
          mode,
          queries: queries.length,
          ...Object.fromEntries(Object.keys(sides).map((side) => [side, { p50_ms: round(p50(side as keyof typeof sides), 2), p95_ms: round(pct(times[side as keyof typeof sides], 0.95), 2) }])),
          ratio_p50_all: round(p50('enforced_all') / p50('open'), 2),
          ratio_p50_half: round(p50('enforced_half') / p50('open'), 2),
        }),
      );
    }
  } finally {
    await d.stop();
  }
}
