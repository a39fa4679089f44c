// Where the package's own files are, whichever copy of the code is running. tsc writes modules to
// dist/src and dist/daemon; scripts/build.mjs also bundles the process entries (the CLI and the three
// worker threads) into dist/bundle, which is what bin/trove runs: one file and a few shared chunks
// instead of ~270 modules, because loading modules was most of the daemon's start-up (issue 15).
// Both copies keep every file flat in a directory at a fixed depth, so the package root is a fixed
// number of levels up from this module, wherever it was bundled into.
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = import.meta.url;

/** true in dist/bundle (bin/trove), false in the tsc modules (tests, the library entry points). */
export const runningBundled = fileURLToPath(here).includes(`${sep}dist${sep}bundle${sep}`);

/** The package's root (where package.json is): dist/bundle/x.js is two levels down, dist/src/contract/x.js three. */
export const packageRoot = fileURLToPath(new URL(runningBundled ? '../../' : '../../../', here));

/** A file of the package by its path from the root, e.g. 'package.json' or 'dist/model'. */
export function packageFile(relative: string): string {
  return packageRoot + relative;
}

/** The process and thread entries, in the copy that is running (scripts/build.mjs names the bundled ones). */
const ENTRIES = {
  cli: { bundled: 'dist/bundle/cli.js', module: 'dist/src/cli/run.js' },
  'ingest-worker': { bundled: 'dist/bundle/ingest-worker.js', module: 'dist/src/domain/ingest/worker-thread.js' },
  'dense-worker': { bundled: 'dist/bundle/dense-worker.js', module: 'dist/src/domain/search/dense-worker.js' },
  'model-helper': { bundled: 'dist/bundle/model-helper.js', module: 'dist/src/domain/search/model-helper-thread.js' },
} as const;

export type EntryName = keyof typeof ENTRIES;

export function entryFile(name: EntryName): string {
  const entry = ENTRIES[name];
  return packageFile(runningBundled ? entry.bundled : entry.module);
}
