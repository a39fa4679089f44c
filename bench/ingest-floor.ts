// `npm run bench -- --only ingest`: SciFact (one POST per document, 16 concurrent clients) through
// trove's HTTP API until the collection reports every file ready, next to the floor,
// bench/floor-ingest.mjs (node:http, one POST and one transaction per document into one FTS5 table).
// Each round starts a fresh floor process and a fresh daemon per trove run: a keyword-only
// collection ({semantic: false}) and one with the default processing (keyword + semantic). Prints
// per side the median wall ms, docs/s, and the trove/floor ratios (issue 15's target: ≤ 2.5).
// The helpers here (the API caller, the 16-client POST loop, ingest-to-ready) serve bench/ingest-load.ts too.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Doc {
  _id: string;
  title?: string;
  text?: string;
}
export interface Daemon {
  url: string;
  pid: number;
  stop(): Promise<void>;
}
export type StartDaemon = (env?: Record<string, string>, argv?: string[]) => Promise<Daemon>;
export type Call = (method: string, path: string, body?: unknown) => Promise<Record<string, any>>;

export const BENCH_KEY = 'bench-cluster-key-0123456789';
export const CLIENTS = 16;
/**
 * Searches are measured on a settled index: once no job has run for a second, the indexing worker
 * merges the collection's keyword index into one segment (src/domain/ingest/worker-thread.ts), as
 * the floor's table, written in one transaction, already is. This is that second and the merge.
 */
export const SETTLE_MS = 2000;
const POLL_MS = 50;
const READY_TIMEOUT_MS = 15 * 60_000;

export const jsonl = <T>(f: string): T[] =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
export const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
export const median = (xs: number[]) => pct(xs, 0.5);
export const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A JSON caller for one daemon with the bench's cluster key; throws on a non-2xx answer. */
export function api(url: string, key = BENCH_KEY): Call {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return async (method, path, body) => {
    const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : {}) as Record<string, any>;
  };
}

/** A BEIR document as /work/shared/eval/beir.mjs sends it: one inline markdown file, "# title" then text. */
export const troveFile = (d: Doc) => ({
  path: `/docs/${d._id}.md`,
  source: { type: 'inline', content_type: 'text/markdown', text: `# ${d.title ?? ''}\n\n${d.text ?? ''}` },
});

/** `clients` concurrent loops sharing one cursor, one `post` per document; resolves when the last is answered. */
export async function postAll(docs: Doc[], post: (d: Doc) => Promise<unknown>, clients = CLIENTS): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < docs.length) await post(docs[next++]!);
    }),
  );
}

export interface Ingested {
  /** first POST → last POST answered */
  postedMs: number;
  /** first POST → the GET that shows every file ready (or failed) */
  readyMs: number;
  counts: { pending: number; indexing: number; ready: number; failed: number };
}

/**
 * Creates collection `col` in namespace `ns` (which must exist) and ingests `docs` into it; timed from
 * the first POST until a GET of the collection (every ~50 ms once all POSTs are answered) shows no
 * file pending or indexing and every document ready or failed.
 */
export async function ingestTrove(call: Call, ns: string, col: string, processing: Record<string, unknown>, docs: Doc[]): Promise<Ingested> {
  await call('POST', `/namespaces/${ns}/collections`, { name: col, processing });
  const t0 = performance.now();
  await postAll(docs, (d) => call('POST', `/namespaces/${ns}/collections/${col}/files`, troveFile(d)));
  const postedMs = performance.now() - t0;
  for (;;) {
    const { file_counts: c } = (await call('GET', `/namespaces/${ns}/collections/${col}`)) as { file_counts: Ingested['counts'] };
    if (c.pending + c.indexing === 0 && c.ready + c.failed >= docs.length) return { postedMs, readyMs: performance.now() - t0, counts: c };
    if (performance.now() - t0 > READY_TIMEOUT_MS) throw new Error(`${ns}/${col} not ready after ${READY_TIMEOUT_MS} ms: ${JSON.stringify(c)}`);
    await sleep(POLL_MS);
  }
}

export async function benchIngestFloor(opts: { data: string; startDaemon: StartDaemon; floorScript: string; runs: number }): Promise<void> {
  const corpusFile = join(opts.data, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'ingest', skipped: `no ${corpusFile}` }));
  const docs = jsonl<Doc>(corpusFile);
  const floor: number[] = [];
  const sides = { keyword: { processing: { semantic: false } }, semantic: { processing: {} } } as const;
  const trove = { keyword: [] as Ingested[], semantic: [] as Ingested[] };
  for (let r = 0; r < opts.runs; r++) {
    const f = await opts.startDaemon({}, [opts.floorScript]);
    try {
      const t0 = performance.now();
      await postAll(docs, async (d) => {
        const res = await fetch(f.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ heading: d.title ?? '', body: d.text ?? '' }) });
        const text = await res.text();
        if (res.status !== 201) throw new Error(`floor POST → ${res.status} ${text.slice(0, 200)}`);
      });
      floor.push(performance.now() - t0);
      const { docs: stored } = (await (await fetch(`${f.url}/health`)).json()) as { docs: number };
      if (stored !== docs.length) throw new Error(`floor holds ${stored} docs, expected ${docs.length}`);
    } finally {
      await f.stop();
    }
    for (const side of ['keyword', 'semantic'] as const) {
      const d = await opts.startDaemon({ TROVE_CLUSTER_KEY: BENCH_KEY });
      try {
        const call = api(d.url);
        await call('POST', '/namespaces', { name: 'bench' });
        trove[side].push(await ingestTrove(call, 'bench', side, sides[side].processing, docs));
      } finally {
        await d.stop();
      }
    }
  }
  const perSecond = (ms: number) => Math.round(docs.length / (ms / 1000));
  const troveStats = (runs: Ingested[]) => {
    const ms = median(runs.map((x) => x.readyMs));
    return {
      median_ms: round(ms),
      docs_per_second: perSecond(ms),
      posted_median_ms: round(median(runs.map((x) => x.postedMs))),
      // The indexing worker's backlog and the collection model's training: what the last POST's answer does not wait for.
      after_last_post_median_ms: round(median(runs.map((x) => x.readyMs - x.postedMs))),
      runs_ms: runs.map((x) => round(x.readyMs)),
      failed: runs.map((x) => x.counts.failed),
    };
  };
  const floorMs = median(floor);
  console.log(
    JSON.stringify({
      bench: 'ingest',
      what: `SciFact, one POST per doc, ${CLIENTS} clients, first POST → all ready: trove (fresh daemon per run; keyword-only collection, and default processing with semantic) vs bench/floor-ingest.mjs (node:http, one transaction per doc into FTS5)`,
      docs: docs.length,
      clients: CLIENTS,
      runs: opts.runs,
      floor: { median_ms: round(floorMs), docs_per_second: perSecond(floorMs), runs_ms: floor.map((x) => round(x)) },
      trove_keyword: troveStats(trove.keyword),
      trove_semantic: troveStats(trove.semantic),
      ratio_keyword: round(median(trove.keyword.map((x) => x.readyMs)) / floorMs, 2),
      ratio_semantic: round(median(trove.semantic.map((x) => x.readyMs)) / floorMs, 2),
      target_ratio: 2.5,
    }),
  );
}
