// Keyword scores are BM25 over the live passages (k1 1.2, b 0.75, heading ×2, Lucene's IDF), after
// any sequence of adds, edits, deletes and reindexes, in an open collection and in an enforced one
// read by a principal who may read everything. The expected scores are computed here from scratch:
// the live passages' text, tokenized by a keyword index of its own built from nothing but that text.
// FTS5's bm25() kept counting deleted passages in N and the average length, and clamped the IDF of a
// term in more than half the passages to 1e-6.
import t from 'tap';
import fc from 'fast-check';
import { readerFor, retrievalScope } from '../src/domain/access/visibility.js';
import { keywordRanking } from '../src/domain/search/keyword-ranking.js';
import { buildMatchPhrases } from '../src/domain/search/query-text.js';
import { findCollection } from '../src/store/sqlite/collections.js';
import type { Db } from '../src/store/sqlite/db.js';
import { liveFiles } from '../src/store/sqlite/keyword-postings.js';
import { sqlite } from '../src/store/sqlite/sqlite.js';
import { bm25FromScratch, livePassages, relativeError } from './helpers/bm25.js';
import { waitFor } from './helpers/wait.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

let f: Fixture;
t.before(async () => {
  f = await startFixture();
});
t.teardown(() => f.close());

const expectedScores = (db: Db, collectionRid: number, query: string) => bm25FromScratch(livePassages(db, collectionRid), query);

/** What the keyword stage ranks for a collection (open: everyone; enforced: the given principals), unrounded. */
async function stageScores(db: Db, ns: string, col: string, query: string, principals?: string[]): Promise<Map<number, number>> {
  const store = f.rt.services.store;
  const nsRid = (sqlite(db).prepare('SELECT rid FROM namespaces WHERE name = ? AND deleted_at IS NULL').get(ns) as { rid: number }).rid;
  const row = findCollection(db, nsRid, col)!;
  const scope = await retrievalScope(store, row.rid, readerFor(row, principals), null);
  const ranking = await keywordRanking(store, { collectionRid: row.rid, collectionId: row.id, phrases: buildMatchPhrases(query)!, files: scope.readableFiles ?? liveFiles(db, row.rid), selectedFiles: null });
  return new Map(ranking.top(1_000_000).map((h) => [h.passageRid, h.score]));
}

const WORDS = ['lantern', 'harbour', 'ledger', 'orchard', 'quarry', 'signal', 'budget', 'weather'];
const QUERIES = ['report', 'lantern', 'harbour ledger', 'orchard quarry signal report', 'budget weather lantern'];

type Op = { kind: 'put'; file: number; heading: string[]; body: string[] } | { kind: 'delete'; file: number } | { kind: 'reindex' };
const words = fc.array(fc.constantFrom(...WORDS, 'report', 'report'), { minLength: 0, maxLength: 60 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('put' as const), file: fc.nat(5), heading: fc.array(fc.constantFrom(...WORDS, 'report'), { maxLength: 3 }), body: words }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), file: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reindex' as const) }) },
);

let run = 0;
t.test('keyword scores equal BM25 over the live passages after any adds, edits, deletes and reindexes', async (t) => {
  const db = f.rt.db;
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 9 }), async (ops) => {
      const ns = `live${run++}`;
      const processing = { semantic: false, chunk_tokens: 64, chunk_overlap: 0 };
      const open = await seedCollection(f, ns, 'open', { processing });
      const enforced = await seedCollection(f, ns, 'enforced', { processing, access_control: 'enforced' });
      await f.call('POST', `${enforced.base}/access-rules:batch`, { operations: [{ op: 'upsert', folder: '/', readers: ['all'] }] });
      const ids = new Map<string, string>();
      for (const [step, o] of ops.entries()) {
        for (const { base, col } of [open, enforced]) {
          const key = (file: number) => `${col}:${file}`;
          if (o.kind === 'put') {
            const text = `# ${o.heading.join(' ')}\n\n${o.body.join(' ')} report ${step}`;
            const r = await addInline(f, base, `/f${o.file}.md`, text, 'text/markdown');
            if (![200, 201, 202].includes(r.status)) throw new Error(`put answered ${r.status}: ${r.text}`);
            ids.set(key(o.file), r.body.file?.id ?? r.body.id);
          } else if (o.kind === 'delete') {
            const id = ids.get(key(o.file));
            if (id === undefined) continue;
            const r = await f.call('DELETE', `${base}/files/${id}`);
            if (![200, 202, 204].includes(r.status)) throw new Error(`delete answered ${r.status}: ${r.text}`);
            ids.delete(key(o.file));
          } else {
            const r = await f.call('POST', `${base}:reindex`, {});
            if (r.status !== 202) throw new Error(`reindex answered ${r.status}: ${r.text}`);
            // The reindex job marks the files pending when it runs: until then the collection looks idle.
            await waitFor('the reindex job', async () => ['succeeded', 'failed', 'canceled'].includes((await f.call('GET', `/jobs/${r.body.job.id}`)).body.status));
          }
          await f.waitForIdle(ns, col);
        }
        for (const query of QUERIES) {
          const scores = [await stageScores(db, ns, 'open', query), await stageScores(db, ns, 'enforced', query, ['all'])];
          for (const [which, got] of scores.entries()) {
            const nsRid = (sqlite(db).prepare('SELECT rid FROM namespaces WHERE name = ?').get(ns) as { rid: number }).rid;
            const expected = expectedScores(db, findCollection(db, nsRid, which === 0 ? 'open' : 'enforced')!.rid, query);
            if (got.size !== expected.size || [...expected.keys()].some((rid) => !got.has(rid)))
              throw new Error(`${which === 0 ? 'open' : 'enforced'} "${query}" after ${JSON.stringify(ops.slice(0, step + 1))}: passages ${[...got.keys()]} scored, ${[...expected.keys()]} expected`);
            for (const [rid, score] of expected) {
              const mine = got.get(rid);
              if (mine === undefined || !(relativeError(mine, score) <= 1e-9)) throw new Error(`${which === 0 ? 'open' : 'enforced'} "${query}" passage ${rid}: ${mine} where BM25 gives ${score}`);
              checked++;
            }
          }
          // Through the API: the same scores, rounded as responses round them; both collections alike.
          const body = { query, mode: 'keyword', result_unit: 'passage', limit: 100 };
          const openScores = ((await f.call('POST', `${open.base}:search`, body)).body.results ?? []).map((r: { score: number }) => r.score);
          const enforcedScores = ((await f.call('POST', `${enforced.base}:search`, { ...body, principals: ['all'] })).body.results ?? []).map((r: { score: number }) => r.score);
          const want = [...scores[0]!.values()].sort((a, b) => b - a);
          if (openScores.length !== want.length || openScores.some((s: number, i: number) => Math.abs(s - want[i]!) > 1e-6)) throw new Error(`open API scores ${openScores} vs ${want}`);
          if (JSON.stringify(enforcedScores) !== JSON.stringify(openScores)) throw new Error(`enforced API scores ${enforcedScores} vs open ${openScores}`);
        }
      }
    }),
    { numRuns: 6, seed: 34, endOnFailure: true },
  );
  t.ok(checked > 100, `${checked} scores checked against BM25 from scratch`);
});

t.test('a term in more than half the passages keeps a positive IDF and a real score', async (t) => {
  const { base } = await seedCollection(f, 'common', 'docs', { processing: { semantic: false } });
  const texts = ['The lantern report.', 'A lantern in the harbour.', 'Lantern, lantern, lantern.', 'An orchard by the quarry.'];
  for (const [i, text] of texts.entries()) await addInline(f, base, `/d${i}.txt`, text);
  await f.waitForIdle('common', 'docs');
  const results = (await f.call('POST', `${base}:search`, { query: 'lantern', mode: 'keyword', result_unit: 'file', limit: 10, explain: true })).body.results as { path: string; score: number; explain: { bm25: number } }[];
  t.same(results.map((r) => r.path), ['/d2.txt', '/d0.txt', '/d1.txt'], 'ranked by how often the word occurs and by length');
  // N = 4, n = 3: Lucene's IDF is ln(1 + 1.5 / 3.5) = 0.357; classic BM25's ln(1.5 / 3.5) is negative.
  const expected = expectedScores(f.rt.db, (sqlite(f.rt.db).prepare("SELECT rid FROM collections WHERE name = 'docs'").get() as { rid: number }).rid, 'lantern');
  const best = Math.max(...expected.values());
  t.ok(best > 0.3, `the best score is BM25's ${best}, not a clamped 1e-6`);
  t.ok(Math.abs(results[0]!.score - best) <= 1e-6, `its score ${results[0]!.score} is that BM25`);
  t.ok(results.every((r) => r.score > 0.1), `every score is well above zero: ${results.map((r) => r.score)}`);
});
