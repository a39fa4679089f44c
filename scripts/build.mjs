// `npm run build` (and prepack): a clean tsc build of dist/, the bundled process entries in
// dist/bundle, then the converted embedding model in dist/model, then the build stamp that
// scripts/build-if-stale.mjs compares sources against. With --shipped (prepack) tsc compiles only
// what the package ships (tsconfig.package.json): the tests and benchmarks are a third of the
// compile and none of the tarball. `--out <dir>` builds there instead of dist/ (a test builds into
// a folder of its own, since the suite runs from dist/).
//
// The build is made in a temporary folder beside dist/ and swapped in when complete: a daemon or
// CLI running from dist/ while it builds (bin/trove, `npm start`, the tests) never meets a dist/
// that is half deleted or half written, as it did when the build emptied dist/ first (20 s to
// minutes under load). The swap is two renames (dist/ aside, the new build in), microseconds apart;
// bin/trove looks again when it finds no build in between.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { BUILD_STAMP } from './build-stale.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outFlag = process.argv.indexOf('--out');
const dist = outFlag < 0 ? join(root, 'dist') : resolve(process.argv[outFlag + 1] ?? '');
if (outFlag >= 0 && !process.argv[outFlag + 1]) {
  console.error('build: --out takes a folder');
  process.exit(2);
}
// The stamp carries the time the build started, so a source saved while tsc ran counts as newer.
const started = new Date();

// Beside dist/ (same filesystem, so the swap is a rename), named as .gitignore ignores (.build-*/).
mkdirSync(dirname(dist), { recursive: true });
const scratch = (kind, pid) => join(dirname(dist), `.build-${basename(dist)}-${kind}-${pid}`);
const building = scratch('new', process.pid);
const aside = scratch('old', process.pid);
// What a build that was killed left behind (a live one's folders are its own).
for (const entry of readdirSync(dirname(dist))) {
  const left = new RegExp(`^\\.build-${basename(dist).replace(/[^\w-]/g, '\\$&')}-(new|old)-(\\d+)$`).exec(entry);
  if (left && (Number(left[2]) === process.pid || !alive(Number(left[2])))) rmSync(join(dirname(dist), entry), { recursive: true, force: true });
}
mkdirSync(building, { recursive: true });
let swapped = false;
process.on('exit', () => {
  if (!swapped) rmSync(building, { recursive: true, force: true });
});

// The converted model (45 MB, ~5 s to make) does not depend on the TypeScript sources: the new build
// starts from the current one's files (hard links: no copy, and the model is only ever replaced by
// a rename, never written in place), and build-model.mjs rebuilds it only when it is out of date.
const currentModel = join(dist, 'model');
if (existsSync(currentModel)) {
  mkdirSync(join(building, 'model'));
  for (const entry of readdirSync(currentModel, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const from = join(currentModel, entry.name);
    const to = join(building, 'model', entry.name);
    try {
      linkSync(from, to);
    } catch {
      copyFileSync(from, to);
    }
  }
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = process.argv.includes('--shipped') ? 'tsconfig.package.json' : 'tsconfig.json';
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, project), '--outDir', building], { stdio: 'inherit', cwd: root });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

// The process entries bundled (src/contract/package-files.ts): the daemon's start-up was mostly Node
// loading ~270 modules (95 of them zod's); one file per entry plus shared chunks loads in a fraction.
// Bundled: our code and the pure-JS packages on the request paths. Left to node_modules: native
// addons, packages that find their own files on disk (workers, language data), and the format, TUI
// and prompt libraries that load on first use anyway.
const BUNDLED_PACKAGES = new Set(['zod', '@trpc/server', '@trpc/client', 'ws', 'commander', 'yaml', 'standardwebhooks', 'ipaddr.js', 'crc-32', '@modelcontextprotocol/sdk', 'ignore', 'chokidar']);
// zod's classic API re-exports every one of its ~60 error-message translations (a third of its
// code); trove's messages are English (zod's default) and never switch locale, so the bundle gets the
// English one only. The build fails, rather than ship a broken bundle, if zod moves that file.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/]/.test(args.importer)) return undefined;
      const english = join(dirname(args.importer), '..', 'locales', 'en.js');
      if (!existsSync(english)) throw new Error(`zod-english-only: ${english} is gone; update scripts/build.mjs for this zod`);
      return { path: english.replace(/en\.js$/, 'english-only.js'), namespace: 'zod-locales', pluginData: english };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.pluginData)};`,
      resolveDir: dirname(args.pluginData),
    }));
  },
};
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
await esbuild.build({
  entryPoints: {
    cli: join(building, 'src/cli/run.js'),
    'ingest-worker': join(building, 'src/domain/ingest/worker-thread.js'),
    'dense-worker': join(building, 'src/domain/search/dense-worker.js'),
    'model-helper': join(building, 'src/domain/search/model-helper-thread.js'),
  },
  outdir: join(building, 'bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(manifest.dependencies).filter((name) => !BUNDLED_PACKAGES.has(name)),
  // CommonJS packages in the bundle call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __troveCreateRequire } from 'node:module'; const require = __troveCreateRequire(import.meta.url);" },
  chunkNames: 'chunk-[hash]',
  logLevel: 'warning',
  plugins: [zodEnglishOnly],
  minifyWhitespace: true,
  minifySyntax: true,
});

const model = spawnSync(process.execPath, [join(root, 'scripts', 'build-model.mjs'), building], { stdio: 'inherit', cwd: root });
if (model.status !== 0) process.exit(model.status ?? 1);

const stamp = join(building, basename(BUILD_STAMP));
writeFileSync(stamp, JSON.stringify({ started_at: started.toISOString() }) + '\n');
utimesSync(stamp, started, started);

// The swap. rename(2) cannot put a folder over a non-empty one, so the current build steps aside
// first; then it is removed (a process still running from it has its modules loaded). Another
// build finishing at the same moment may put its dist/ back in between: that one steps aside too.
for (let attempt = 0; !swapped; attempt++) {
  rmSync(aside, { recursive: true, force: true });
  try {
    renameSync(dist, aside);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    renameSync(building, dist);
    swapped = true;
  } catch (err) {
    if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt >= 3) throw err;
  }
}
rmSync(aside, { recursive: true, force: true });

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
