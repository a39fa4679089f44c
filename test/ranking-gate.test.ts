// A ranking gate (issue 17, item 8): 400 Cranfield abstracts and 40 judged queries
// (fixtures/ranking/README.md), searched through the API in both modes. A change that breaks
// ranking quality fails here, in CI, not only in the benchmarks. The floors sit a query or two
// below what the current ranking scores, so they catch a breakage, not noise; the full figures
// come from ../shared/eval/beir.mjs (docs/ranking.md).
import t from 'tap';
import { jsonlFixtures } from './helpers/jsonl.js';
import { seedCollection, startFixture } from './helpers/trove.js';

const jsonl = jsonlFixtures('ranking');
const corpus = jsonl<{ id: string; title: string; text: string }>('corpus.jsonl');
const queries = jsonl<{ id: string; text: string; relevant: string[] }>('queries.jsonl');

/**
 * Floors: hit@3 (share of queries with a relevant document in the top 3) and mean nDCG@10 (binary
 * gains). When the gate was written: keyword 0.875 and 0.5849, semantic 0.900 and 0.6351.
 */
const FLOORS = {
  keyword: { hitAt3: 0.825, ndcgAt10: 0.56 },
  semantic: { hitAt3: 0.85, ndcgAt10: 0.61 },
} as const;
/** Semantic mode must beat keyword mode by this much nDCG@10 (it does by 0.05), or it no longer earns its name. */
const SEMANTIC_MARGIN = 0.02;

function ndcgAt10(ranked: readonly string[], relevant: ReadonlySet<string>): number {
  let dcg = 0;
  ranked.slice(0, 10).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

t.test('ranking quality holds on a judged corpus', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'gate', 'cranfield');
  const statuses = new Set<number>();
  for (const doc of corpus) statuses.add((await f.call('POST', `${base}/files`, { path: `/${doc.id}.txt`, source: { type: 'inline', text: `${doc.title}\n\n${doc.text}`, content_type: 'text/plain' } })).status);
  t.same([...statuses], [202], `${corpus.length} documents accepted`);
  await f.waitForIdle('gate', 'cranfield');

  const ndcgByMode: Record<string, number> = {};
  for (const mode of ['keyword', 'semantic'] as const) {
    let hits = 0;
    let ndcg = 0;
    for (const q of queries) {
      const r = await f.call('POST', `${base}:search`, { query: q.text, mode, limit: 10 });
      if (r.status !== 200) throw new Error(`${mode} search: ${r.status} ${r.text}`);
      const ranked = (r.body.results as { path: string }[]).map((x) => x.path.slice(1, -'.txt'.length));
      const relevant = new Set(q.relevant);
      if (ranked.slice(0, 3).some((id) => relevant.has(id))) hits++;
      ndcg += ndcgAt10(ranked, relevant);
    }
    const hitAt3 = hits / queries.length;
    const mean = ndcg / queries.length;
    t.ok(hitAt3 >= FLOORS[mode].hitAt3, `${mode}: hit@3 ${hitAt3.toFixed(3)} (floor ${FLOORS[mode].hitAt3})`);
    t.ok(mean >= FLOORS[mode].ndcgAt10, `${mode}: nDCG@10 ${mean.toFixed(4)} (floor ${FLOORS[mode].ndcgAt10})`);
    ndcgByMode[mode] = mean;
  }
  t.ok(ndcgByMode.semantic! >= ndcgByMode.keyword! + SEMANTIC_MARGIN, `semantic beats keyword by ${(ndcgByMode.semantic! - ndcgByMode.keyword!).toFixed(4)} (at least ${SEMANTIC_MARGIN})`);
});
