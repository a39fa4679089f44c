// The indexing worker yields the CPU to requests (issue 15: search p95 while a second ingest runs):
// its thread runs BACKGROUND_NICE_STEPS nicer than the process, and the HTTP thread keeps the
// process's priority. Linux only: elsewhere lowerThisThreadPriority does nothing.
import './helpers/plain-children.js';
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { startTrove } from '../src/testing/index.js';
import { BACKGROUND_NICE_STEPS, lowerThisThreadPriority } from '../src/domain/threads.js';
import { PATIENCE_MS } from './helpers/wait.js';

const linux = process.platform === 'linux';

/** A thread's nice value: field 19 of /proc/<pid>/task/<tid>/stat (after the parenthesised name). */
function niceOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}
const threadNices = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => ({ tid: Number(tid), nice: niceOf(`/proc/${pid}/task/${tid}/stat`) }));

t.test('on the main thread it refuses: renicing the main thread would slow the whole daemon', { skip: !linux && 'Linux only' }, async (t) => {
  const before = niceOf('/proc/thread-self/stat');
  t.equal(lowerThisThreadPriority(), null);
  t.equal(niceOf('/proc/thread-self/stat'), before);
});

t.test('in a worker thread it lowers that thread only', { skip: !linux && 'Linux only' }, async (t) => {
  const module = new URL('../src/domain/threads.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { readFileSync } = require('node:fs');
     import(workerData.module).then((m) => {
       const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
       const first = m.lowerThisThreadPriority();
       // Counted from the process's priority, so a second call (or a thread a lowered thread started) lands at the same level.
       parentPort.postMessage({ tid, result: first, again: m.lowerThisThreadPriority() });
       setTimeout(() => {}, 60_000); // stays alive until terminated, so the test can read its nice value
     });`,
    { eval: true, workerData: { module } },
  );
  t.teardown(() => worker.terminate());
  const { tid, result, again } = await new Promise<{ tid: number; result: number | null; again: number | null }>((resolve) => worker.once('message', resolve));
  const base = niceOf(`/proc/${process.pid}/task/${process.pid}/stat`);
  const expected = Math.min(19, base + BACKGROUND_NICE_STEPS);
  t.equal(result, expected, 'it reports the new nice value');
  t.equal(again, expected, 'lowering again does not go further');
  t.equal(niceOf(`/proc/${process.pid}/task/${tid}/stat`), expected, 'the worker thread runs nicer');
  t.equal(niceOf(`/proc/${process.pid}/task/${process.pid}/stat`), base, 'the main thread is unchanged');
});

t.test('a daemon: the indexing worker runs nicer than the HTTP thread', { skip: !linux && 'Linux only' }, async (t) => {
  const trove = await startTrove();
  t.teardown(() => trove.stop());
  const main = threadNices(trove.pid).find((th) => th.tid === trove.pid)!;
  const isNicer = (th: { nice: number }) => th.nice === Math.min(19, main.nice + BACKGROUND_NICE_STEPS);
  // The worker starts beside the listener and lowers itself once its module has loaded: wait for it.
  const deadline = Date.now() + PATIENCE_MS;
  while (!threadNices(trove.pid).some(isNicer) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const nicer = threadNices(trove.pid).filter(isNicer);
  t.equal(main.nice, niceOf(`/proc/${process.pid}/stat`), 'the HTTP thread keeps the priority the daemon was started with');
  t.equal(nicer.length, 1, 'exactly one thread (the indexing worker) is nicer');
});
