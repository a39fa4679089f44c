// `npm run bench`: prints the performance figures issues ask for. Never run by `npm test`.
//   npm run bench                 start-up, chunking, and SciFact keyword through the HTTP API
//   npm run bench -- --only startup|chunk|beir  [--data DIR] [--eval FILE] [--runs N]   (--help: usage)
//   npm run bench -- --only formats      extraction throughput per format (fixtures/build.mjs)
//   npm run bench -- --only bombs        peak RSS over idle while each decompression bomb is refused (bench/bombs.ts)
//   npm run bench -- --only fixture [--runs N]  startTrove() start and first semantic search; model load shipped/cold/warm
//   npm run bench -- --only ingest [--runs N]   SciFact through the API to all ready vs a node:http + FTS5 floor
//   npm run bench -- --only load         search and /health latency, idle and under a second SciFact ingest
//   npm run bench -- --only enforced     search p50 on an enforced collection (readers of all / half) vs an open one
//   npm run bench -- --only cursors      a first keyword page with its cursor's snapshot vs one page only
//   npm run bench -- --only collections [--collections N]  the cost of a collection as their number grows
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chunkDocument } from '../src/domain/ingest/chunk.js';
import { extractDocument, extractTextDocument } from '../src/domain/ingest/extract.js';
import { detectContentType } from '../src/domain/ingest/detect.js';
import { shutdownOcr } from '../src/domain/ingest/formats/ocr.js';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { openDatabase } from '../src/store/sqlite/db.js';
import { footprint } from '../src/store/sqlite/footprint.js';
import { keywordIndexSegments } from '../src/store/sqlite/passages.js';
import { keywordIndexOf } from '../src/store/sqlite/keyword-index.js';
import { tmpdir } from 'node:os';
import { benchSearchFloor } from './search-floor.js';
import { benchIngestFloor } from './ingest-floor.js';
import { benchIngestLoad } from './ingest-load.js';
import { benchEnforcedSearch } from './enforced-search.js';
import { benchBombs } from './bombs.js';
import { benchSearchCursors } from './search-cursors.js';
import { benchCollections } from './collections.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const defaults = {
  data: resolve(root, '..', 'shared', 'data', 'scifact'),
  eval: resolve(root, '..', 'shared', 'eval', 'beir.mjs'),
};
const usage = `Usage: npm run bench -- [--only NAME] [--data DIR] [--eval FILE] [--runs N] [--collections N]

Prints performance figures as JSON lines (never run by npm test).

  --only NAME   one bench: startup | chunk | beir | search | formats | bombs | fixture | semantic-scale | ingest | load | enforced | cursors | collections
                (bombs: peak RSS over idle while each decompression bomb is read and refused, one child process each)
                (search: keyword p50/p95 and response bytes at limit 10 and 100 vs a node:http + FTS5 floor)
                (ingest: the data set, one POST per doc from 16 clients, to all ready: a keyword-only and a
                 semantic collection, each in a fresh daemon, vs bench/floor-ingest.mjs, node:http with one
                 transaction per doc into FTS5; medians over --runs, default 3 here, and the ratios)
                (load: one daemon; keyword search p50/p95 and /health p99/max idle, then while a second
                 ingest of the data set runs to all ready; the load/idle p95 ratio)
                (collections: blocks of 500 collections of two files to ready; per block one more
                 create, a new collection's first file to ready, search p50, start at every 1,000)
                (default: startup, chunk and beir)
  --data DIR    a BEIR data set with corpus.jsonl, queries.jsonl, qrels/ (chunk, beir, search, semantic-scale, ingest, load)
                default ${defaults.data}${existsSync(join(defaults.data, 'corpus.jsonl')) ? '' : ' (MISSING: no corpus.jsonl there)'}
                others next to it: ${resolve(defaults.data, '..')}/{scifact,cranfield,cisi}
  --eval FILE   the BEIR evaluation script (beir)
                default ${defaults.eval}${existsSync(defaults.eval) ? '' : ' (MISSING)'}
  --runs N      repetitions for startup and fixture (default 10) and ingest (default 3); startup prints the median
                spawn → first answered /health of trove and of a bare node:http + SQLite floor
                (bench/floor-startup.mjs), and their ratio
  --collections N  how many collections the collections bench makes (default 4000; the target is read at 10000)
  -h, --help    this text
`;
const BENCHES = ['startup', 'chunk', 'beir', 'search', 'formats', 'bombs', 'fixture', 'semantic-scale', 'ingest', 'load', 'enforced', 'cursors', 'collections'];
let parsed: { values: { only?: string | undefined; data?: string | undefined; eval?: string | undefined; runs?: string | undefined; collections?: string | undefined; help?: boolean | undefined } };
try {
  parsed = parseArgs({
    options: {
      only: { type: 'string' },
      data: { type: 'string', default: defaults.data },
      eval: { type: 'string', default: defaults.eval },
      runs: { type: 'string' }, // default 10, or 3 for ingest: see below
      collections: { type: 'string', default: '4000' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${usage}`);
  process.exit(2);
}
const args = parsed.values;
if (args.help) {
  process.stdout.write(usage);
  process.exit(0);
}
if (args.only !== undefined && !BENCHES.includes(args.only)) {
  process.stderr.write(`Unknown bench '${args.only}'.\n\n${usage}`);
  process.exit(2);
}
const runsGiven = args.runs !== undefined;
args.runs ??= '10';
if (!(Number(args.runs) >= 1)) {
  process.stderr.write(`--runs must be a number from 1, got '${args.runs}'.\n`);
  process.exit(2);
}
const needsData = !args.only || ['chunk', 'beir', 'search', 'semantic-scale', 'ingest', 'load', 'enforced', 'cursors'].includes(args.only);
if (needsData && !existsSync(join(args.data!, 'corpus.jsonl'))) {
  process.stderr.write(`bench: no data set at ${args.data} (expected corpus.jsonl there; the BEIR sets live in ${resolve(defaults.data, '..')}): pass --data DIR. Benches that need it are skipped.\n`);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

interface Started {
  url: string;
  dataDir: string;
  pid: number;
  stop(): Promise<void>;
  startedMs: number;
}

/** Starts the built CLI's daemon and measures spawn → first answered /health. */
async function startDaemon(env: Record<string, string> = {}, argv = [join(root, 'bin', 'trove'), 'daemon', 'start', '--ephemeral', '--port', '0', '--json']): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { url, dataDir } = await new Promise<{ url: string; dataDir: string }>((resolveUrl, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.includes('"listening"'));
      if (line) {
        const event = JSON.parse(line) as { url: string; data_dir: string };
        resolveUrl({ url: event.url, dataDir: event.data_dir });
      }
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  const res = await fetch(`${url}/health`);
  if (res.status !== 200) throw new Error(`health answered ${res.status}`);
  const startedMs = performance.now() - t0;
  return {
    url,
    dataDir,
    pid: child.pid!,
    startedMs,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Spawn → first answered /health, trove against its floor (bench/floor-startup.mjs: bare node opening
 * the same kind of database with sqlite-vec and answering on node:http), interleaved run by run so
 * both see the same machine. Issue 15's target: ratio ≤ 2.5.
 */
async function benchStartup(): Promise<void> {
  const runs = Number(args.runs);
  const floorScript = join(root, 'bench', 'floor-startup.mjs');
  const trove: number[] = [];
  const floor: number[] = [];
  // One unmeasured start of each first: the OS file cache, not start-up, would dominate run one.
  for (const argv of [undefined, [floorScript]]) await (await startDaemon({}, argv)).stop();
  for (let i = 0; i < runs; i++) {
    const d = await startDaemon();
    trove.push(d.startedMs);
    await d.stop();
    const f = await startDaemon({}, [floorScript]);
    floor.push(f.startedMs);
    await f.stop();
  }
  const stats = (xs: number[]) => ({ median_ms: round(median(xs)), min_ms: round(Math.min(...xs)), max_ms: round(Math.max(...xs)) });
  console.log(
    JSON.stringify({
      bench: 'startup',
      what: 'spawn → first answered GET /health: `trove daemon start --ephemeral --port 0 --json` vs bench/floor-startup.mjs (bare node, same kind of db with sqlite-vec, node:http)',
      runs,
      trove: stats(trove),
      floor: stats(floor),
      ratio: round(median(trove) / median(floor), 2),
      target_ratio: 2.5,
    }),
  );
}

function benchChunk(): void {
  const corpusFile = join(args.data!, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'chunk', skipped: `no ${corpusFile}` }));
  const docs = readFileSync(corpusFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { title?: string; text?: string })
    .map((d) => Buffer.from(`# ${d.title ?? ''}\n\n${d.text ?? ''}`));
  const times: number[] = [];
  let passages = 0;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    passages = 0;
    for (const bytes of docs) passages += chunkDocument(extractTextDocument(bytes, 'text/markdown'), { chunkTokens: 400, chunkOverlap: 40 }).length;
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  console.log(JSON.stringify({ bench: 'extract+chunk', docs: docs.length, passages, median_ms: round(ms), docs_per_second: Math.round(docs.length / (ms / 1000)) }));
}

async function benchBeir(): Promise<void> {
  if (!existsSync(args.eval!) || !existsSync(args.data!)) return void console.log(JSON.stringify({ bench: 'beir', skipped: `need ${args.eval} and ${args.data}` }));
  const key = 'bench-cluster-key-0123456789';
  const d = await startDaemon({ TROVE_CLUSTER_KEY: key });
  try {
    const out = await new Promise<string>((done, reject) => {
      const child = spawn(process.execPath, [args.eval!, '--url', d.url, '--key', key, '--data', args.data!, '--mode', 'keyword'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buf = '';
      child.stdout.on('data', (c: Buffer) => (buf += c.toString()));
      child.on('exit', (code) => (code === 0 ? done(buf) : reject(new Error(`beir.mjs exited with ${code}`))));
    });
    const json = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<string, unknown>;
    console.log(JSON.stringify({ bench: 'beir-keyword', ...json }));
  } finally {
    await d.stop();
  }
}

/**
 * A generated collection of ~200,000 passages (20,000 files of ten 60-word paragraphs, chunked at 64
 * tokens; TROVE_BENCH_FILES sets the count), built through the HTTP API; then semantic and keyword
 * search latency as a client sees it, the daemon's RSS, and where the data dir's bytes go.
 */
async function benchSemanticScale(): Promise<void> {
  const corpusFile = join(args.data!, 'corpus.jsonl');
  if (!existsSync(corpusFile)) return void console.log(JSON.stringify({ bench: 'semantic-scale', skipped: `no ${corpusFile}` }));
  const words = readFileSync(corpusFile, 'utf8').toLowerCase().match(/[a-z]{3,}/g)!.slice(0, 400_000);
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const sentence = (n: number) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ') + '.';
  const key = 'bench-cluster-key-0123456789';
  const d = await startDaemon({ TROVE_CLUSTER_KEY: key });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(d.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as Record<string, any>;
  };
  try {
    const files = Number(process.env.TROVE_BENCH_FILES ?? 20_000);
    await call('POST', '/namespaces', { name: 'scale' });
    await call('POST', '/namespaces/scale/collections', { name: 'gen', processing: { chunk_tokens: 64, chunk_overlap: 0 } });
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < files) {
          const i = next++;
          const text = Array.from({ length: 10 }, () => `${sentence(12)} ${sentence(12)} ${sentence(12)} ${sentence(12)} ${sentence(12)}`).join('\n\n');
          await call('POST', '/namespaces/scale/collections/gen/files', { path: `/gen/${i}.txt`, source: { type: 'inline', text }, metadata: { group: i % 10 } });
        }
      }),
    );
    let col: Record<string, any>;
    for (;;) {
      col = await call('GET', '/namespaces/scale/collections/gen');
      if (col.file_counts.pending + col.file_counts.indexing === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    const queries = Array.from({ length: 200 }, () => sentence(6));
    const measure = async (body: (q: string) => unknown) => {
      const lat: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        await call('POST', '/namespaces/scale/collections/gen:search', body(q));
        lat.push(performance.now() - t);
      }
      lat.sort((a, b) => a - b);
      return { p50_ms: round(lat[Math.floor(lat.length * 0.5)]!), p95_ms: round(lat[Math.floor(lat.length * 0.95)]!) };
    };
    const first = performance.now();
    await call('POST', '/namespaces/scale/collections/gen:search', { query: 'warm up', limit: 10 });
    const firstMs = performance.now() - first;
    // Keyword search as ingest left the index, then once the worker has merged it (a second after
    // its last job, a bounded step at a time): how long settling takes is a figure too.
    const keywordUnsettled = await measure((q) => ({ query: q, mode: 'keyword', limit: 10 }));
    const settle = await settleKeywordIndex(d.dataDir, 'gen');
    const semantic = await measure((q) => ({ query: q, limit: 10 }));
    const semanticFiltered = await measure((q) => ({ query: q, limit: 10, filter: { field: 'metadata.group', op: 'eq', value: 3 } }));
    const keyword = await measure((q) => ({ query: q, mode: 'keyword', limit: 10 }));
    const rssKb = Number(readFileSync(`/proc/${d.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
    const disk = diskFootprint(d.dataDir);
    console.log(
      JSON.stringify({
        bench: 'semantic-scale',
        files,
        ready: col.file_counts.ready,
        ingest_seconds: round(ingestSeconds),
        first_query_ms: round(firstMs),
        keyword_before_merge: keywordUnsettled,
        keyword_index: settle,
        semantic,
        semantic_filtered: semanticFiltered,
        keyword,
        daemon_rss_mb: Math.round(rssKb / 1024),
        disk,
      }),
    );
  } finally {
    await d.stop();
  }
}

const mb = (bytes: number) => round(bytes / 2 ** 20);

/** Waits (at most 15 minutes) until the collection's own keyword index is one segment; what it took. */
async function settleKeywordIndex(dataDir: string, collection: string): Promise<{ segments_before: number; segments_after: number; settle_seconds: number }> {
  const db = openDatabase(join(dataDir, 'trove.db'), { readonly: true });
  try {
    const rid = (db.prepare('SELECT rid FROM collections WHERE name = ?').get(collection) as { rid: number }).rid;
    const before = keywordIndexSegments(db, rid);
    const t0 = performance.now();
    let now = before;
    // A collection still in the shared index is never merged into one segment (keyword-index.ts).
    while (now > 1 && !keywordIndexOf(db, rid).shared && performance.now() - t0 < 15 * 60_000) {
      await new Promise((r) => setTimeout(r, 1000));
      now = keywordIndexSegments(db, rid);
    }
    return { segments_before: before, segments_after: now, settle_seconds: round((performance.now() - t0) / 1000) };
  } finally {
    db.close();
  }
}

/**
 * The data dir on disk against two floors, the FTS5 index or the passages' text, each plus one
 * float32 copy of each vector (issue 15's target: at most 2×). Read through a second, read-only connection while the daemon
 * runs (an ephemeral data dir is gone once it stops); the WAL is counted as it stands.
 */
function diskFootprint(dataDir: string): Record<string, unknown> {
  const sizeOf = (path: string): number => {
    const st = statSync(path);
    return st.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0) : st.blocks * 512;
  };
  const db = openDatabase(join(dataDir, 'trove.db'), { readonly: true });
  try {
    const f = footprint(db);
    const dirBytes = sizeOf(dataDir);
    return {
      data_dir_mb: mb(dirBytes),
      db_pages_mb: mb(f.fileBytes),
      fts_mb: mb(f.ftsBytes),
      passages_mb: mb(f.passagesBytes),
      file_text_mb: mb(f.fileVersionsBytes),
      vectors_mb: mb(f.vectorBytes),
      vec0_mb: mb(f.vec0Bytes),
      other_mb: mb(f.otherBytes),
      largest_other_mb: Object.fromEntries(Object.entries(f.largestOther).map(([name, bytes]) => [name, mb(bytes)])),
      passages: f.passages,
      bytes_per_passage: f.passages ? Math.round(dirBytes / f.passages) : null,
      raw_mb: mb(f.rawBytes),
      ratio_to_raw: round(dirBytes / f.rawBytes, 2),
      raw_text_mb: mb(f.rawTextBytes),
      ratio_to_raw_text: round(dirBytes / f.rawTextBytes, 2),
      target_ratio: 2,
    };
  } finally {
    db.close();
  }
}

/**
 * Extraction (detect + extract + chunk) of each fixture format, in this process: median ms per
 * file over a few runs and the source throughput. OCR formats pay the OCR engine's start once,
 * outside the timed runs.
 */
async function benchFormats(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trove-bench-formats-'));
  try {
    const { buildFixtures } = (await import(join(root, 'fixtures', 'build.mjs'))) as { buildFixtures: (d: string) => Promise<string[]> };
    await buildFixtures(dir);
    const ctx = () => ({ ocr: true, maxPages: 2000, deadline: Date.now() + 300_000 });
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('corrupt') || name.startsWith('encrypted')) continue;
      const bytes = readFileSync(join(dir, name));
      const { contentType } = await detectContentType({ bytes, path: name });
      const once = async () => chunkDocument(await extractDocument(bytes, contentType, ctx()), { chunkTokens: 400, chunkOverlap: 40 }).length;
      let passages = await once(); // warm-up: loads libraries and the OCR engine
      const times: number[] = [];
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        passages = await once();
        times.push(performance.now() - t0);
      }
      const ms = median(times);
      console.log(JSON.stringify({ bench: 'formats', file: name, content_type: contentType, kb: round(bytes.length / 1024), passages, median_ms: round(ms), kb_per_second: Math.round(bytes.length / 1024 / (ms / 1000)) }));
    }
  } finally {
    await shutdownOcr();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What a test suite using `trove/testing` waits for: startTrove() until it listens, then the first
 * semantic search (which loads the embedding model), with an empty TROVE_CACHE_DIR each time, so
 * only the model shipped in dist/model can serve. Then the model load alone, in this process:
 * from the shipped file, converting the JSON into an empty cache (what every fresh CI run paid
 * before the model shipped), and from that warm cache.
 */
async function benchFixture(): Promise<void> {
  const { startTrove } = await import('../src/testing/index.js');
  const { createClient } = await import('../src/index.js');
  const { cacheFile, defaultShippedModelPath, loadBuiltinEmbedder } = await import('../src/domain/embed/builtin.js');
  const runs = Math.max(1, Math.min(Number(args.runs), 5));
  const starts: number[] = [];
  const firsts: number[] = [];
  for (let r = 0; r < runs; r++) {
    const cache = mkdtempSync(join(tmpdir(), 'trove-bench-cache-'));
    const t0 = performance.now();
    const trove = await startTrove({ env: { TROVE_CACHE_DIR: cache } });
    starts.push(performance.now() - t0);
    try {
      const client = createClient({ url: trove.url, key: trove.key });
      await client.namespaces.create({ name: 'b' });
      await client.collections.create('b', { name: 'c' });
      const { job } = await client.files.add('b', 'c', { path: '/a.txt', source: { type: 'inline', text: 'keyword only until a semantic search' } });
      await client.jobs.wait(job.id);
      const t1 = performance.now();
      await client.search('b', 'c', { query: 'throttling requests', mode: 'semantic' });
      firsts.push(performance.now() - t1);
    } finally {
      await trove.stop();
      rmSync(cache, { recursive: true, force: true });
    }
  }
  console.log(JSON.stringify({ bench: 'fixture', runs, start_ms_median: round(median(starts)), first_semantic_search_ms_median: round(median(firsts)), start_ms: starts.map((x) => round(x)), first_ms: firsts.map((x) => round(x)) }));

  const shipped = await loadBuiltinEmbedder({ cacheDir: join(tmpdir(), 'trove-bench-unused'), shippedPath: defaultShippedModelPath() });
  console.log(JSON.stringify({ bench: 'model-load', from: shipped.loadedFrom, load_ms: round(shipped.loadMs) }));
  const cache = mkdtempSync(join(tmpdir(), 'trove-bench-cache-'));
  try {
    const cold = await loadBuiltinEmbedder({ cacheDir: cache });
    console.log(JSON.stringify({ bench: 'model-load', from: cold.loadedFrom, convert_ms: round(cold.buildMs ?? 0), load_ms: round(cold.loadMs) }));
    const warm = await loadBuiltinEmbedder({ cacheDir: cache });
    console.log(JSON.stringify({ bench: 'model-load', from: warm.loadedFrom, load_ms: round(warm.loadMs), cache_file: cacheFile(cache) }));
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

const only = args.only;
if (only === 'fixture') await benchFixture();
if (only === 'formats') await benchFormats();
if (only === 'bombs') await benchBombs();
if (!only || only === 'startup') await benchStartup();
if (!only || only === 'chunk') benchChunk();
if (!only || only === 'beir') await benchBeir();
if (only === 'semantic-scale') await benchSemanticScale();
if (only === 'search') await benchSearchFloor({ data: args.data!, startDaemon, queries: Number(args.runs) > 10 ? Number(args.runs) : undefined });
if (only === 'ingest') await benchIngestFloor({ data: args.data!, startDaemon, floorScript: join(root, 'bench', 'floor-ingest.mjs'), runs: runsGiven ? Number(args.runs) : 3 });
if (only === 'load') await benchIngestLoad({ data: args.data!, startDaemon });
if (only === 'enforced') await benchEnforcedSearch({ data: args.data!, startDaemon });
if (only === 'collections') await benchCollections({ startDaemon, trove: join(root, 'bin', 'trove'), collections: Number(args.collections) });
if (only === 'cursors') await benchSearchCursors({ data: args.data!, queries: Number(args.runs) > 10 ? Number(args.runs) : undefined });
