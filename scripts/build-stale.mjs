// Whether the compiled build (dist/) is older than its sources: `npm start` rebuilds only then
// (scripts/build-if-stale.mjs), instead of a full clean build on every start.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the runtime build is made from. Tests and benches are compiled too but do not affect `npm start`. */
export const BUILD_INPUTS = ['src', 'daemon', 'tsconfig.json'];
/** Written by scripts/build.mjs after a successful build, with its mtime set to when the build started. */
export const BUILD_STAMP = 'dist/.build-stamp';
/** Files a runnable build must have besides the stamp (the CLI entry, the shipped model). */
export const BUILD_OUTPUTS = ['dist/src/cli/run.js', 'dist/daemon/main.js', 'dist/model/glove-sg-100d.v1.bin'];

/**
 * The newest modification among `inputs` (files, or folders walked recursively). Folders count too:
 * deleting or renaming a file changes its folder's mtime, not any remaining file's.
 */
export function newestInput(root, inputs = BUILD_INPUTS) {
  let newest = { path: null, mtimeMs: -Infinity };
  const visit = (path) => {
    let st;
    try {
      st = statSync(path);
    } catch {
      return; // an input that does not exist (e.g. no daemon/ folder) has nothing to build
    }
    if (st.mtimeMs > newest.mtimeMs) newest = { path: relative(root, path), mtimeMs: st.mtimeMs };
    if (st.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
  };
  for (const input of inputs) visit(join(root, input));
  return newest;
}

/**
 * `{ stale: false }` when the build under `root` is current, else `{ stale: true, reason }` saying why
 * (no stamp, a missing output, or the input changed after the build started).
 */
export function buildState(root, { inputs = BUILD_INPUTS, stamp = BUILD_STAMP, outputs = BUILD_OUTPUTS } = {}) {
  let stampMs;
  try {
    stampMs = statSync(join(root, stamp)).mtimeMs;
  } catch {
    return { stale: true, reason: `no build yet (${stamp} is missing)` };
  }
  for (const output of outputs) {
    try {
      statSync(join(root, output));
    } catch {
      return { stale: true, reason: `${output} is missing` };
    }
  }
  const newest = newestInput(root, inputs);
  if (newest.mtimeMs > stampMs) return { stale: true, reason: `${newest.path} changed after the last build` };
  return { stale: false, reason: 'the build is current' };
}
