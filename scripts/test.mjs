// `npm test` after the build: tap with an environment of the suite's own. Tests must not depend on
// the machine they run on: a developer's saved CLI defaults and keys (under HOME and the XDG dirs),
// TROVE_* settings in their shell, or the daemon the README told them to start would otherwise leak
// into what the CLI under test finds. So the suite runs with a HOME and XDG dirs of its own, removed
// afterwards, and without the caller's TROVE_* variables. npm's own cache stays where it is, so the
// package test installs from it offline.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const home = mkdtempSync(join(tmpdir(), 'trove-test-home-'));
const env = {};
for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('TROVE_') && !name.startsWith('XDG_')) env[name] = value;
env.npm_config_cache ??= join(process.env.HOME ?? home, '.npm');
Object.assign(env, {
  HOME: home,
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_DATA_HOME: join(home, '.local', 'share'),
  XDG_CACHE_HOME: join(home, '.cache'),
  XDG_STATE_HOME: join(home, '.local', 'state'),
});

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const child = spawn(process.execPath, [bin, ...process.argv.slice(2)], { stdio: 'inherit', env });
const forward = (signal) => child.kill(signal);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
child.on('exit', (code, signal) => {
  rmSync(home, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
