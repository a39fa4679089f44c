// `trove ingest [folder] [-n NS] [-c COL]`: the folder, namespace and collection from the arguments,
// else from the defaults `trove init` saved (src/cli/defaults.ts has the rules), then the ingest
// itself (ingest.ts, or ingest-watch.ts with --watch).
import { readCliConfig } from '../cli-config.js';
import { reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { resolveIngestTarget, savedExcludes } from '../defaults.js';
import { cliCwd, errOut } from '../io.js';
import { runIngest, type IngestOptions } from './ingest.js';

export async function runIngestWithDefaults(folder: string | undefined, globalOpts: GlobalOptions, opts: IngestOptions, cwd: string = cliCwd()): Promise<number> {
  let target;
  let exclude: string[];
  try {
    const saved = await readCliConfig();
    target = resolveIngestTarget({ folder, namespaceFlag: opts.namespace, collectionFlag: opts.collection }, saved, cwd);
    exclude = [...savedExcludes(saved), ...(opts.exclude ?? [])];
  } catch (err) {
    return reportError(err, Boolean(opts.json));
  }
  // Said on stderr (stdout stays the plan or the summary): a bare `trove ingest` should show what it mirrors.
  if (target.savedFolder && !opts.json) errOut().write(`syncing the saved folder ${target.folder} into ${target.namespace}/${target.collection}\n`);
  return runIngest(target.folder, globalOpts, { ...opts, namespace: target.namespace, collection: target.collection, exclude });
}
