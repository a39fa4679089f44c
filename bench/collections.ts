// `npm run bench -- --only collections [--collections N]`: how the cost of a collection grows with
// the number of collections. One daemon on a data dir of its own; collections of two small files
// each are created 8 at a time in blocks of 500 (default processing), each block timed until its
// last collection is ready. After each block: creating one more collection, the first file of a
// new collection until ready, and a keyword search's p50 on the first collection; at every 1,000
// collections the daemon restarts and spawn → first /health is timed. Prints one line per block.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const KEY = 'bench-collections-cluster-key-0123456789';
const BLOCK = 500;
const CONCURRENCY = 8;
const RESTART_EVERY = 1000;

interface Daemon {
  url: string;
  startedMs: number;
  stop(): Promise<void>;
}

type StartDaemon = (env: Record<string, string>, argv: string[]) => Promise<Daemon>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchCollections(opts: { startDaemon: StartDaemon; trove: string; collections: number }): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-bench-collections-'));
  const argv = [opts.trove, 'daemon', 'start', '--data-dir', dataDir, '--port', '0', '--json'];
  let d = await opts.startDaemon({ TROVE_CLUSTER_KEY: KEY }, argv);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(d.url + path, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };
  const base = '/namespaces/bench/collections';
  const text = (n: number, i: number) => `Collection ${n}, note ${i}: the quarterly report on orchard yields and irrigation, kiwi and apple rows.`;
  /** Collection `c<n>` with two files; resolves when both were accepted. */
  const fill = async (n: number) => {
    await call('POST', base, { name: `c${n}` });
    for (const i of [1, 2]) await call('POST', `${base}/c${n}/files`, { path: `/note-${i}.txt`, source: { type: 'inline', text: text(n, i) } });
  };
  const ready = async (name: string) => {
    for (;;) {
      const c = await call('GET', `${base}/${name}`);
      if (c.file_counts.pending + c.file_counts.indexing === 0) return;
      await sleep(10);
    }
  };
  let made = 0;
  let probes = 0;
  let firstBlockMs = 0;
  try {
    await call('POST', '/namespaces', { name: 'bench' });
    while (made < opts.collections) {
      const target = Math.min(opts.collections, made + BLOCK);
      const started = performance.now();
      let next = made;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < target) await fill(next++);
        }),
      );
      await ready(`c${target - 1}`);
      const blockMs = performance.now() - started;
      if (made === 0) firstBlockMs = blockMs;
      made = target;

      const creates: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await call('POST', base, { name: `p${probes++}` });
        creates.push(performance.now() - t);
      }
      const probe = `p${probes++}`;
      const t = performance.now();
      await call('POST', base, { name: probe });
      await call('POST', `${base}/${probe}/files`, { path: '/first.txt', source: { type: 'inline', text: text(-1, 0) } });
      await ready(probe);
      const firstReadyMs = performance.now() - t;
      const searches: number[] = [];
      for (let i = 0; i < 21; i++) {
        const s = performance.now();
        await call('POST', `${base}/c0:search`, { query: i % 2 ? 'orchard irrigation' : 'kiwi report', mode: 'keyword', limit: 10 });
        searches.push(performance.now() - s);
      }
      let startMs: number | undefined;
      if (made % RESTART_EVERY === 0 || made === opts.collections) {
        await d.stop();
        d = await opts.startDaemon({ TROVE_CLUSTER_KEY: KEY }, argv);
        startMs = d.startedMs;
      }
      console.log(
        JSON.stringify({
          bench: 'collections',
          collections: made + probes,
          block_ms: Math.round(blockMs),
          block_ratio_to_first: Math.round((blockMs / firstBlockMs) * 100) / 100,
          create_ms: round(median(creates)),
          first_file_ready_ms: Math.round(firstReadyMs),
          search_p50_ms: round(median(searches)),
          ...(startMs === undefined ? {} : { start_ms: Math.round(startMs) }),
        }),
      );
    }
  } finally {
    await d.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
