// `npm run bench -- --only load`: search and /health while a second ingest runs. One daemon; SciFact
// into collection A (keyword-only) until ready. IDLE: the SciFact queries once each, sequential,
// keyword mode, limit 10, against A. LOAD: SciFact again into collection B (keyword-only, 16 clients)
// and, until B reports every file ready, the same queries (repeated as needed) against A. In both
// phases a loop in a worker thread (so this process's own event loop cannot delay it) GETs /health
// every 10 ms. B's 16 ingest clients run in a worker thread of their own too: in this thread, their
// responses and next POSTs queued ahead of a search's answer and counted as the daemon's latency.
// Prints search p50/p95 per phase and their p95 ratio (issue 15's target: ≤ 2), /health
// p99 and max per phase (target: max ≤ 100 ms under load), the counts, and B's ingest time.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { api, BENCH_KEY, CLIENTS, SETTLE_MS, ingestTrove, jsonl, pct, round, type Call, type Doc, type Ingested, type StartDaemon } from './ingest-floor.js';

const HEALTH_EVERY_MS = 10;

// CommonJS, run with eval: GET /health, wait out the rest of the 10 ms, again, until told to stop;
// then post back every latency and the non-200 count.
const HEALTH_LOOP = `
const { parentPort, workerData } = require('node:worker_threads');
let stop = false;
parentPort.on('message', () => (stop = true));
(async () => {
  const lat = [];
  let errors = 0;
  await (await fetch(workerData.url + '/health')).text(); // opens the connection, unmeasured
  while (!stop) {
    const t = performance.now();
    try {
      const res = await fetch(workerData.url + '/health');
      await res.text();
      if (res.status !== 200) errors++;
    } catch {
      errors++;
    }
    const ms = performance.now() - t;
    lat.push(ms);
    if (ms < workerData.every) await new Promise((r) => setTimeout(r, workerData.every - ms));
  }
  parentPort.postMessage({ lat, errors });
})();
`;

function startHealthLoop(url: string): { stop(): Promise<{ lat: number[]; errors: number }> } {
  const worker = new Worker(HEALTH_LOOP, { eval: true, workerData: { url, every: HEALTH_EVERY_MS } });
  const done = new Promise<{ lat: number[]; errors: number }>((resolve, reject) => {
    worker.once('message', (m: { lat: number[]; errors: number }) => resolve(m));
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const out = await done;
      await worker.terminate();
      return out;
    },
  };
}

// CommonJS, run with eval: ingestTrove (./ingest-floor.js) for collection B, in its own event loop.
const INGEST_IN_WORKER = `
const { parentPort, workerData: w } = require('node:worker_threads');
import(w.module)
  .then(async (m) => parentPort.postMessage({ ok: await m.ingestTrove(m.api(w.url), w.ns, w.col, w.processing, m.jsonl(w.corpus)) }))
  .catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));
`;

function ingestInWorker(url: string, ns: string, col: string, corpus: string): Promise<Ingested> {
  const module = new URL('./ingest-floor.js', import.meta.url).href;
  const worker = new Worker(INGEST_IN_WORKER, { eval: true, workerData: { module, url, ns, col, processing: { semantic: false }, corpus } });
  return new Promise<Ingested>((resolve, reject) => {
    worker.once('message', (m: { ok?: Ingested; error?: string }) => (m.ok ? resolve(m.ok) : reject(new Error(m.error))));
    worker.once('error', reject);
  }).finally(() => void worker.terminate());
}

const searchStats = (lat: number[]) => ({ searches: lat.length, p50_ms: round(pct(lat, 0.5), 2), p95_ms: round(pct(lat, 0.95), 2), max_ms: round(Math.max(...lat), 2) });
const healthStats = (h: { lat: number[]; errors: number }) => ({ checks: h.lat.length, errors: h.errors, p50_ms: round(pct(h.lat, 0.5), 2), p99_ms: round(pct(h.lat, 0.99), 2), max_ms: round(Math.max(...h.lat), 2) });

export async function benchIngestLoad(opts: { data: string; startDaemon: StartDaemon }): Promise<void> {
  const corpusFile = join(opts.data, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'load', skipped: `no ${corpusFile}` }));
  const docs = jsonl<Doc>(corpusFile);
  const queries = jsonl<{ text: string }>(join(opts.data, 'queries.jsonl')).map((q) => q.text);
  const d = await opts.startDaemon({ TROVE_CLUSTER_KEY: BENCH_KEY });
  try {
    const call: Call = api(d.url);
    await call('POST', '/namespaces', { name: 'load' });
    const a = await ingestTrove(call, 'load', 'a', { semantic: false }, docs);
    const search = async (q: string) => {
      const t = performance.now();
      await call('POST', '/namespaces/load/collections/a:search', { query: q, mode: 'keyword', limit: 10 });
      return performance.now() - t;
    };
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const q of queries.slice(0, 20)) await search(q); // warm-up, unmeasured

    // IDLE: each query once.
    let health = startHealthLoop(d.url);
    const idleT0 = performance.now();
    const idle: number[] = [];
    for (const q of queries) idle.push(await search(q));
    const idleMs = performance.now() - idleT0;
    const idleHealth = await health.stop();

    // LOAD: B's ingest, with the queries against A, round and round, until B is ready.
    health = startHealthLoop(d.url);
    let ingesting = true;
    const b: Promise<Ingested> = ingestInWorker(d.url, 'load', 'b', corpusFile).finally(() => (ingesting = false));
    const load: number[] = [];
    let bIngest: Ingested;
    let loadHealth: { lat: number[]; errors: number };
    try {
      for (let i = 0; ingesting; i++) load.push(await search(queries[i % queries.length]!));
      bIngest = await b;
    } finally {
      loadHealth = await health.stop();
    }
    const alive = (() => {
      try {
        process.kill(d.pid, 0);
        return true;
      } catch {
        return false;
      }
    })();

    const idleS = searchStats(idle);
    const loadS = searchStats(load);
    const loadH = healthStats(loadHealth);
    console.log(
      JSON.stringify({
        bench: 'load',
        what: `SciFact keyword search (sequential, limit 10) and GET /health (every ${HEALTH_EVERY_MS} ms, worker thread) against one daemon: idle, then while a second SciFact ingest (${CLIENTS} clients in a worker thread, keyword-only) runs to all ready`,
        docs: docs.length,
        a_ingest_ms: round(a.readyMs),
        idle: { ms: round(idleMs), search: idleS, health: healthStats(idleHealth) },
        load: { ms: round(bIngest.readyMs), search: loadS, health: loadH },
        b_ingest: { posted_ms: round(bIngest.postedMs), ready_ms: round(bIngest.readyMs), docs_per_second: Math.round(docs.length / (bIngest.readyMs / 1000)), file_counts: bIngest.counts },
        ratio_search_p95_load_idle: round(loadS.p95_ms / idleS.p95_ms, 2),
        target_ratio: 2,
        health_max_under_load_ms: loadH.max_ms,
        target_health_max_ms: 100,
        daemon_alive: alive,
      }),
    );
  } finally {
    await d.stop();
  }
}
