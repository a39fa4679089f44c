// `npm start`'s prestart: builds only when a source changed since the last build (build-stale.mjs),
// so starting the daemon does not pay a full tsc build (and the model check) every time.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildState } from './build-stale.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const state = buildState(root);
if (state.stale) {
  console.error(`trove: building (${state.reason})`);
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit', cwd: root });
  process.exit(built.status ?? 1);
}
