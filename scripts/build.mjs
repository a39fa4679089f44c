// `npm run build` (and prepack): a clean tsc build of dist/, then the converted embedding model in
// dist/model, then the build stamp that scripts/build-if-stale.mjs compares sources against.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit', cwd: root });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

const model = spawnSync(process.execPath, [join(root, 'scripts', 'build-model.mjs')], { stdio: 'inherit', cwd: root });
if (model.status !== 0) process.exit(model.status ?? 1);

const stamp = join(root, BUILD_STAMP);
writeFileSync(stamp, JSON.stringify({ started_at: started.toISOString() }) + '\n');
utimesSync(stamp, started, started);
