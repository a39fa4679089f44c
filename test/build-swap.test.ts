// `npm run build` while trove runs from the build: scripts/build.mjs makes the new build beside the
// current one and swaps it in whole, so a CLI started at any moment of the build finds a complete
// build (it used to empty dist/ first: for the 20 s to minutes of tsc, bin/trove said "not built").
//
// The suite itself runs from dist/, so the build here goes to a package root of its own inside the
// repository (`--out`; node_modules resolves from there as from dist/), seeded with a copy of this
// build, as a developer's dist/ is when they rebuild.
import t from 'tap';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './helpers/cli.js';

t.setTimeout(20 * 60_000);

/** The build this test runs from (dist/, or a helper's own out dir). */
const CURRENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODEL = 'glove-sg-100d.v1.bin';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('a CLI started while the build runs always finds a whole build; the model is carried over, not rebuilt', async (t) => {
  // .build-*/ is ignored by git; inside the repository so that node_modules resolves.
  const pkg = mkdtempSync(path.join(ROOT, '.build-swap-test-'));
  t.teardown(() => rmSync(pkg, { recursive: true, force: true }));
  const out = path.join(pkg, 'dist');
  mkdirSync(path.join(pkg, 'bin'));
  copyFileSync(path.join(ROOT, 'bin', 'trove'), path.join(pkg, 'bin', 'trove'));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  for (const part of ['bundle', 'src', 'daemon']) cpSync(path.join(CURRENT, part), path.join(out, part), { recursive: true });
  cpSync(path.join(CURRENT, '.build-stamp'), path.join(out, '.build-stamp'));
  mkdirSync(path.join(out, 'model'));
  linkSync(path.join(CURRENT, 'model', MODEL), path.join(out, 'model', MODEL));
  const modelBefore = statSync(path.join(out, 'model', MODEL)).ino;
  const stampBefore = JSON.parse(readFileSync(path.join(out, '.build-stamp'), 'utf8')).started_at as string;
  const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  const cli = () => run([path.join(pkg, 'bin', 'trove'), '--version']);
  t.equal((await cli()).stdout.trim(), version, 'the seeded build runs');

  let building = true;
  const build = run([path.join(ROOT, 'scripts', 'build.mjs'), '--shipped', '--out', out]).finally(() => (building = false));
  const runs: { code: number | null; stdout: string; stderr: string }[] = [];
  while (building) runs.push(await cli());
  const built = await build;
  t.equal(built.code, 0, `the build succeeds${built.code === 0 ? '' : `: ${built.stderr}`}`);

  t.ok(runs.length >= 3, `the CLI ran while the build ran (${runs.length} times)`);
  const broken = runs.filter((r) => r.code !== 0 || r.stdout.trim() !== version);
  t.same(
    broken.map((r) => `exit ${r.code}: ${(r.stderr || r.stdout).trim().split('\n')[0]}`),
    [],
    'every run found a complete build',
  );

  t.ok(JSON.parse(readFileSync(path.join(out, '.build-stamp'), 'utf8')).started_at > stampBefore, 'the new build is in place, with its stamp');
  t.equal(statSync(path.join(out, 'model', MODEL)).ino, modelBefore, 'the converted model was carried over (the same file), not converted again');
  t.same(
    readdirSync(pkg).filter((name) => name.startsWith('.build-')),
    [],
    'no temporary build folder is left beside it',
  );
  t.equal((await cli()).stdout.trim(), version, 'the new build runs');
});
