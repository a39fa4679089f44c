// `startTrove` (src/testing, published as `trove/testing`): a real daemon process for a test suite,
// seeded from an object or a file, searched over HTTP, and stopped without a trace.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startTrove, type SeedObject, type TroveFixture } from '../src/testing/index.js';
import { ROOT } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

const BUILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = path.join(ROOT, 'fixtures', 'seed.example.yaml');
const READER = `trove_helperread_${randomBytes(32).toString('base64url')}`;

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function searchPaths(t: TestContext, trove: TroveFixture, collection: string, query: string, key: string, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await fetch(`${trove.url}/namespaces/demo/collections/${collection}:search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, mode: 'keyword', ...extra }),
  });
  t.equal(res.status, 200, `search ${collection} for "${query}"`);
  return ((await res.json()) as { results: { path: string }[] }).results.map((r) => r.path).sort();
}

// startTrove's own temp dirs only (mkdtemp adds six characters): other test files run at the same
// time and make their own trove-seed-test-* dirs.
const seedDirs = async () => (await readdir(os.tmpdir())).filter((name) => /^trove-seed-[^-]{6}$/.test(name));

t.test('a seed object: searchable with its key as soon as startTrove resolves; stop() leaves nothing', async (t) => {
  const seedDirsBefore = await seedDirs();
  const notes = path.relative(process.cwd(), path.join(ROOT, 'fixtures', 'sample', 'notes.txt'));
  const seed: SeedObject = {
    namespaces: [{ name: 'demo' }],
    collections: [{ namespace: 'demo', name: 'docs', processing: { semantic: false } }, { namespace: 'demo', name: 'other' }],
    keys: [{ name: 'reader', secret: READER, scope: { kind: 'collection', namespace: 'demo', collections: ['docs'], actions: ['search'] } }],
    files: [
      { namespace: 'demo', collection: 'docs', path: '/cats.md', text: '# Cats\n\nCats purr when they are content.' },
      // Relative to the current directory: an object has no folder of its own.
      { namespace: 'demo', collection: 'docs', path: '/tea.txt', file: notes },
    ],
  };
  const trove = await startTrove({ seed });
  t.teardown(() => trove.stop());
  t.match(trove.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.match(trove.key, /^trove_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/, 'a random strong cluster key');
  t.ok(existsSync(trove.dataDir), 'the data dir exists while it runs');
  t.ok(alive(trove.pid));
  t.same(await seedDirs(), seedDirsBefore, 'the temporary seed file is gone once it listens');

  t.same(await searchPaths(t, trove, 'docs', 'cats purr', READER), ['/cats.md'], 'indexed before startTrove resolved');
  t.same(await searchPaths(t, trove, 'docs', 'oolong oxidation', READER), ['/tea.txt'], 'a local file from the seed object');
  const other = await fetch(`${trove.url}/namespaces/demo/collections/other:search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${READER}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'cats' }),
  });
  t.equal(other.status, 404, 'the seeded key sees only its collection');
  const info = await fetch(`${trove.url}/keys`, { headers: { authorization: `Bearer ${trove.key}` } });
  t.equal(info.status, 200, 'key is the cluster key');

  await trove.stop();
  t.notOk(alive(trove.pid), 'the process is gone');
  t.notOk(existsSync(trove.dataDir), 'the data dir is removed');
  await t.rejects(fetch(`${trove.url}/health`), 'nothing listens any more');
  await trove.stop();
  t.pass('stop() twice is harmless');
});

t.test('a seed file: the committed example, with a given cluster key', async (t) => {
  const clusterKey = `trove_helpercluster_${randomBytes(32).toString('base64url')}`;
  const trove = await startTrove({ seed: path.relative(process.cwd(), EXAMPLE), clusterKey });
  t.teardown(() => trove.stop());
  t.equal(trove.key, clusterKey);
  const docsKey = 'trove_exampledocs_auqtiqUkR0JL2SwpBGW3XcTmEqB8bMNvaLOyPmMzRjo';
  t.ok(readFileSync(EXAMPLE, 'utf8').includes(docsKey), 'the key the example declares');
  t.same(await searchPaths(t, trove, 'docs', 'annual harbour inspection', docsKey), ['/reports/harbour.pdf']);
  t.same(await searchPaths(t, trove, 'hr', 'salary bands Fridays', clusterKey, { principals: ['group:staff'] }), ['/handbook.md']);
  t.same(await searchPaths(t, trove, 'hr', 'salary bands Fridays', clusterKey, { principals: ['group:payroll'] }), ['/payroll/bands.md']);
});

t.test('args pass through to `trove daemon start`', async (t) => {
  const notes = path.join(ROOT, 'fixtures', 'sample', 'notes.txt');
  const seed: SeedObject = {
    namespaces: [{ name: 'demo' }],
    collections: [{ namespace: 'demo', name: 'docs', processing: { semantic: false } }],
    files: [{ namespace: 'demo', collection: 'docs', path: '/tea.txt', uri: pathToFileURL(notes).href }],
  };
  const trove = await startTrove({ seed, args: ['--allow-file-root', path.dirname(notes)] });
  t.teardown(() => trove.stop());
  t.same(await searchPaths(t, trove, 'docs', 'green tea temperature', trove.key), ['/tea.txt']);
  await trove.stop();

  await t.rejects(startTrove({ seed }), { message: /exited \(code 2\) before listening:[\s\S]*files\[0\] \(\/tea\.txt in demo\/docs\): POST .* was refused/ }, 'without the root, the file:// source is refused');
});

t.test('a bad seed rejects with the daemon\'s message, and leaves nothing', async (t) => {
  const seedDirsBefore = await seedDirs();
  const weak: SeedObject = { keys: [{ name: 'ci', secret: 'trove_weakweak_' + 'ab'.repeat(30), scope: { kind: 'cluster' } }] };
  await t.rejects(startTrove({ seed: weak }), { message: /trove daemon exited \(code 2\) before listening:[\s\S]*seed\.json:\d+:\d+: keys\[0\]\.secret: the secret looks guessable/ });
  await t.rejects(startTrove({ seed: { namespaces: [{ name: 'demo' }], files: [{ namespace: 'demo', collection: 'nope', path: '/a.md', text: 'a' }] } }), {
    message: /files\[0\]\.collection: collection 'demo\/nope' is not declared under collections/,
  });
  await t.rejects(startTrove({ seed: path.join(ROOT, 'fixtures', 'no-such-seed.yaml') }), { message: /Cannot read the seed file .*no-such-seed\.yaml/ });
  t.same(await seedDirs(), seedDirsBefore, 'the temporary seed files are removed');
});

t.test('a daemon that does not listen in time is stopped and reported', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'trove-helper-test-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  await t.rejects(startTrove({ timeoutMs: 1, env: { TMPDIR: tmp } }), { message: /trove daemon did not listen within 1 ms/ });
});

t.test("package.json exports './testing' at this module's place in the build", async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string; default: string }> };
  t.equal(pkg.name, 'trove');
  t.same(pkg.exports['.'], { types: './dist/src/index.d.ts', default: './dist/src/index.js' }, 'the main export (the typed client), types first');
  t.same(pkg.exports['./testing'], { types: './dist/src/testing/index.d.ts', default: './dist/src/testing/index.js' });
  t.ok(existsSync(path.join(BUILD, 'src', 'testing', 'index.js')), 'dist/ and this build share the layout the export names');
  t.ok(existsSync(path.join(BUILD, 'src', 'cli', 'run.js')), 'and the CLI startTrove runs sits at ../cli/run.js from it');

  // Self-reference: inside the repository the package imports itself by name.
  const specifier = 'trove/testing';
  const published = path.join(ROOT, 'dist', 'src', 'testing', 'index.js');
  if (existsSync(published)) {
    const mod = (await import(specifier)) as { startTrove?: unknown };
    t.type(mod.startTrove, 'function', "import('trove/testing') gives startTrove");
  } else {
    // Before `npm run build` the name still resolves, to exactly that file.
    await t.rejects(import(specifier), { code: 'ERR_MODULE_NOT_FOUND', message: new RegExp(published.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) });
  }
});

t.test('a runner that dies, even killed or exiting without stop(), takes its daemon and data dir with it', async (t) => {
  // Found by a packed-install test: the daemon outlived a killed runner (re-parented, port and temp
  // dir kept), and one that exited without stop() had its daemon SIGKILLed before it could remove
  // its data dir; an orphan stopped later died on EPIPE writing to the gone runner's pipe.
  const helper = pathToFileURL(path.join(BUILD, 'src', 'testing', 'index.js')).href;
  for (const [how, tail] of [
    ['SIGKILL', 'setInterval(() => {}, 1000);'],
    ['process.exit without stop()', 'process.exit(0);'],
  ] as const) {
    const { spawn } = await import('node:child_process');
    const runner = spawn(process.execPath, ['--input-type=module', '-e', `const { startTrove } = await import(${JSON.stringify(helper)}); const d = await startTrove(); console.log(JSON.stringify({ pid: d.pid, dataDir: d.dataDir })); ${tail}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve) => runner.stdout.once('data', (b: Buffer) => resolve(b.toString())));
    const { pid, dataDir } = JSON.parse(first) as { pid: number; dataDir: string };
    t.ok(existsSync(dataDir), `${how}: the daemon runs with its data dir`);
    if (how === 'SIGKILL') runner.kill('SIGKILL');
    await new Promise((resolve) => runner.once('exit', resolve));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor('the daemon gone with its data dir', () => !alive() && !existsSync(dataDir), undefined, 50).catch(() => undefined);
    t.notOk(alive(), `${how}: the daemon is gone`);
    t.notOk(existsSync(dataDir), `${how}: and so is its data dir`);
  }
});
