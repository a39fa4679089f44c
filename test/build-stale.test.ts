// `npm start` rebuilds only when the build is out of date (scripts/build-if-stale.mjs): the stale check.
import t from 'tap';
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './helpers/cli.js';

// scripts/ is plain JavaScript run by npm before any build, so the compiled test loads it from the repo.
const { BUILD_INPUTS, BUILD_OUTPUTS, BUILD_STAMP, buildState } = (await import(pathToFileURL(join(ROOT, 'scripts', 'build-stale.mjs')).href)) as typeof import('../scripts/build-stale.mjs');

const root = mkdtempSync(join(tmpdir(), 'trove-stale-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

const T0 = new Date('2026-01-01T00:00:00Z');
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
function write(path: string, when: Date): void {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, path);
  utimesSync(full, when, when);
}
/** Folders get their mtime from their last change; set them too so only what a test touches is newer. */
function age(path: string, when: Date): void {
  utimesSync(join(root, path), when, when);
}

t.test('the inputs are the runtime sources', async (t) => {
  t.same(BUILD_INPUTS, ['src', 'daemon', 'tsconfig.json']);
  t.ok(BUILD_OUTPUTS.includes('dist/model/glove-sg-100d.v1.bin'), 'the shipped model is part of a build');
});

t.test('stale until a stamp exists, current after, stale again when a source changes', async (t) => {
  write('src/cli/main.ts', T0);
  write('src/domain/x.ts', T0);
  write('daemon/main.ts', T0);
  write('tsconfig.json', T0);
  for (const folder of ['src/cli', 'src/domain', 'src', 'daemon']) age(folder, T0);
  t.match(buildState(root), { stale: true, reason: /no build yet/ });

  for (const output of BUILD_OUTPUTS) write(output, later(5));
  write(BUILD_STAMP, later(1));
  t.same(buildState(root), { stale: false, reason: 'the build is current' });

  write('src/domain/x.ts', later(10));
  t.match(buildState(root), { stale: true, reason: 'src/domain/x.ts changed after the last build' });
  write(BUILD_STAMP, later(11));
  t.equal(buildState(root).stale, false);

  write('tsconfig.json', later(20));
  t.match(buildState(root), { stale: true, reason: /tsconfig\.json/ });
  write(BUILD_STAMP, later(21));

  // Deleting or renaming a file touches only its folder.
  renameSync(join(root, 'src/domain/x.ts'), join(root, 'src/domain/y.ts'));
  utimesSync(join(root, 'src/domain/y.ts'), T0, T0);
  t.match(buildState(root), { stale: true, reason: /src\/domain/ });
  // The rename stamped the folder with the kernel's clock, which can run a fraction of a millisecond
  // ahead of Date.now(); a stamp a second after the folder's own mtime is unambiguously later.
  write(BUILD_STAMP, new Date(statSync(join(root, 'src/domain')).mtimeMs + 1000));
  t.equal(buildState(root).stale, false);

  // Tests are compiled by the build but do not make `npm start` rebuild.
  write('test/new.test.ts', new Date(statSync(join(root, BUILD_STAMP)).mtimeMs + 60_000));
  t.equal(buildState(root).stale, false);
});

t.test('a missing output makes the build stale', async (t) => {
  rmSync(join(root, 'dist/model'), { recursive: true });
  t.match(buildState(root), { stale: true, reason: 'dist/model/glove-sg-100d.v1.bin is missing' });
});
