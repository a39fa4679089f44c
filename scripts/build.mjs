// `npm run build` (and prepack): a clean tsc build of dist/, the bundled process entries in
// dist/bundle, then the converted embedding model in dist/model, then the build stamp that
// scripts/build-if-stale.mjs compares sources against. With --shipped (prepack) tsc compiles only
// what the package ships (tsconfig.package.json): the tests and benchmarks are a third of the
// compile and none of the tarball.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { BUILD_STAMP } from './build-stale.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
// The stamp carries the time the build started, so a source saved while tsc ran counts as newer.
const started = new Date();

// Compiled files of deleted sources must not linger, but the converted model (45 MB, ~5 s to make)
// does not depend on the TypeScript sources: build-model.mjs rebuilds it only when it is out of date.
mkdirSync(dist, { recursive: true });
for (const entry of readdirSync(dist)) if (entry !== 'model') rmSync(join(dist, entry), { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = process.argv.includes('--shipped') ? 'tsconfig.package.json' : 'tsconfig.json';
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, project)], { stdio: 'inherit', cwd: root });
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
    cli: join(dist, 'src/cli/run.js'),
    'ingest-worker': join(dist, 'src/domain/ingest/worker-thread.js'),
    'dense-worker': join(dist, 'src/domain/search/dense-worker.js'),
    'model-helper': join(dist, 'src/domain/search/model-helper-thread.js'),
  },
  outdir: join(dist, 'bundle'),
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

const model = spawnSync(process.execPath, [join(root, 'scripts', 'build-model.mjs')], { stdio: 'inherit', cwd: root });
if (model.status !== 0) process.exit(model.status ?? 1);

const stamp = join(root, BUILD_STAMP);
writeFileSync(stamp, JSON.stringify({ started_at: started.toISOString() }) + '\n');
utimesSync(stamp, started, started);
