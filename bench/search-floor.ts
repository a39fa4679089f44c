// `npm run bench -- --only search`: keyword search through trove's HTTP API next to the floor, a
// minimal node:http server answering the same queries from one FTS5 table with bm25() ORDER BY
// LIMIT n. Both hold SciFact; the same queries run interleaved against both at limit 10 and 100.
// Prints p50/p95 per side, the trove/floor ratios, and the median response size in bytes.
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildMatchPhrases } from '../src/domain/search/query-text.js';
import { SETTLE_MS } from './ingest-floor.js';

interface Doc {
  _id: string;
  title?: string;
  text?: string;
}

const jsonl = <T>(f: string): T[] =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** The floor: one FTS5 table (trove's tokenizer and column weights), one POST per search, ids and scores back. */
function startFloor(docs: Doc[]): Promise<{ url: string; server: Server }> {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, heading, body, tokenize = 'porter unicode61 remove_diacritics 2')");
  const insert = db.prepare('INSERT INTO docs (doc_id, heading, body) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const d of docs) insert.run(d._id, d.title ?? '', d.text ?? '');
  })();
  const query = db.prepare('SELECT doc_id AS id, -bm25(docs, 0, 2.0, 1.0) AS score FROM docs WHERE docs MATCH ? ORDER BY score DESC LIMIT ?');
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { match, limit } = JSON.parse(body) as { match: string; limit: number };
      const out = JSON.stringify({ results: query.all(match, limit) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server })));
}

/** The same FTS5 expression trove's keyword mode runs: the query's words (stopwords dropped), quoted, OR'd. */
function floorMatch(q: string): string | null {
  return buildMatchPhrases(q)?.join(' OR ') ?? null;
}

export async function benchSearchFloor(opts: { data: string; startDaemon: (env: Record<string, string>) => Promise<{ url: string; stop(): Promise<void> }>; queries?: number }): Promise<void> {
  const corpusFile = join(opts.data, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'search', skipped: `no ${corpusFile}` }));
  const docs = jsonl<Doc>(corpusFile);
  const queries = jsonl<{ text: string }>(join(opts.data, 'queries.jsonl'))
    .map((q) => q.text)
    .slice(0, opts.queries ?? 300);
  const floor = await startFloor(docs);
  const key = 'bench-cluster-key-0123456789';
  const d = await opts.startDaemon({ TROVE_CLUSTER_KEY: key });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(d.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
    return text;
  };
  try {
    await call('POST', '/namespaces', { name: 'bench' });
    await call('POST', '/namespaces/bench/collections', { name: 'kw', processing: { semantic: false } });
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < docs.length) {
          const doc = docs[next++]!;
          await call('POST', '/namespaces/bench/collections/kw/files', { path: `/docs/${doc._id}.md`, source: { type: 'inline', content_type: 'text/markdown', text: `# ${doc.title ?? ''}\n\n${doc.text ?? ''}` } });
        }
      }),
    );
    for (;;) {
      const col = JSON.parse(await call('GET', '/namespaces/bench/collections/kw')) as { file_counts: Record<string, number> };
      if (col.file_counts.pending! + col.file_counts.indexing! === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const askFloor = async (q: string, limit: number) => {
      const match = floorMatch(q);
      const res = await fetch(floor.url, { method: 'POST', body: JSON.stringify({ match, limit }) });
      return (await res.text()).length;
    };
    const askTrove = async (q: string, limit: number, unit: string) => (await call('POST', '/namespaces/bench/collections/kw:search', { query: q, mode: 'keyword', limit, result_unit: unit })).length;
    for (const limit of [10, 100]) {
      for (const unit of ['file', 'passage']) {
        // Warm both sides on a few queries, then measure.
        for (const q of queries.slice(0, 20)) await Promise.all([askFloor(q, limit), askTrove(q, limit, unit)]);
        const t: { floor: number[]; trove: number[]; floorBytes: number[]; troveBytes: number[] } = { floor: [], trove: [], floorBytes: [], troveBytes: [] };
        for (const q of queries) {
          let t0 = performance.now();
          t.floorBytes.push(await askFloor(q, limit));
          t.floor.push(performance.now() - t0);
          t0 = performance.now();
          t.troveBytes.push(await askTrove(q, limit, unit));
          t.trove.push(performance.now() - t0);
        }
        const [fp50, fp95, tp50, tp95] = [pct(t.floor, 0.5), pct(t.floor, 0.95), pct(t.trove, 0.5), pct(t.trove, 0.95)];
        console.log(
          JSON.stringify({
            bench: 'search',
            limit,
            result_unit: unit,
            queries: queries.length,
            floor: { p50_ms: round(fp50), p95_ms: round(fp95), median_bytes: pct(t.floorBytes, 0.5) },
            trove: { p50_ms: round(tp50), p95_ms: round(tp95), median_bytes: pct(t.troveBytes, 0.5) },
            ratio_p50: round(tp50 / fp50),
            ratio_p95: round(tp95 / fp95),
          }),
        );
      }
    }
  } finally {
    await d.stop();
    floor.server.close();
  }
}
