// The word caches of the builtin embedder and of termsOf keep words, not the passages they were cut
// from (src/domain/detached.ts). Found by a review: a cached word of 13 characters or more was a view
// into its whole passage, so 30,000 passages with one new long word each pinned ~80 MB of text.
// Measured in a child process with --expose-gc; the bound is ten times what the caches need, and
// the old behaviour is ten times the bound.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const embedder = fileURLToPath(new URL('../src/domain/embed/builtin.js', import.meta.url));
const extractive = fileURLToPath(new URL('../src/domain/answer/extractive.js', import.meta.url));

t.test('30,000 passages with a new long word each: the caches keep the words only', async (t) => {
  const script = `
    const B = await import(${JSON.stringify(embedder)});
    const X = await import(${JSON.stringify(extractive)});
    const e = await B.loadBuiltinEmbedder({ cacheDir: process.env.CACHE, shippedPath: B.defaultShippedModelPath() });
    const filler = 'the quick brown fox jumps over the lazy dog and keeps running through the forest '.repeat(30);
    e.embedSync('warm up'); X.termsOf('warm up');
    global.gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 30000; i++) { const text = filler + ' uniquewordnumber' + i + 'x'; e.embedSync(text); X.termsOf(text); }
    global.gc();
    console.log(JSON.stringify({ retainedMb: (process.memoryUsage().heapUsed - before) / 1e6 }));
  `;
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const cache = mkdtempSync(join(tmpdir(), 'trove-wordcache-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { env: { ...process.env, CACHE: cache }, encoding: 'utf8', timeout: 120_000 });
  const { retainedMb } = JSON.parse(out.trim().split('\n').pop()!) as { retainedMb: number };
  t.ok(retainedMb < 35, `heap kept by the caches: ${retainedMb.toFixed(1)} MB (passages pinned: ~80 MB)`);
});
