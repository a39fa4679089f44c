// `trove roots list|add <dir>|rm <dir>`: the directories file:// sources may read, changed while
// the daemon runs (over the operator channel). Granted roots survive restarts; the start-up ones
// (--allow-file-root, TROVE_FILE_ROOTS) are listed but cannot be removed here.
import type { inferRouterOutputs } from '@trpc/server';
import type { OperatorRouter } from '../../rpc/router.js';
import { reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { fromCwd, out } from '../io.js';
import { withOperator } from './operator-call.js';

/** A root as the operator channel lists it. */
type RootEntry = inferRouterOutputs<OperatorRouter>['roots']['list']['roots'][number];

export interface RootsOptions {
  json?: boolean;
}

function formatRoots(roots: RootEntry[]): string {
  if (roots.length === 0) return 'No file roots: file:// sources are refused. Grant one with `trove roots add <dir>`.\n';
  return roots.map((r) => `${r.path}  ${r.source === 'startup' ? 'start-up flag' : `granted ${r.granted_at}`}${r.exists ? '' : '  (missing)'}\n`).join('');
}

export async function runRootsList(globalOpts: GlobalOptions, opts: RootsOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { roots } = await withOperator(globalOpts, (op) => op.client.roots.list.query());
    out().write(json ? JSON.stringify({ roots }) + '\n' : formatRoots(roots));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** A relative dir means the caller's working directory, as everywhere on the command line. */
export async function runRootsAdd(dir: string, globalOpts: GlobalOptions, opts: RootsOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const result = await withOperator(globalOpts, (op) => op.client.roots.add.mutate({ path: fromCwd(dir) }));
    if (json) out().write(JSON.stringify(result) + '\n');
    else out().write(result.added ? `allowed file:// sources under ${result.root.path}\n` : `${result.root.path} is already allowed (${result.root.source === 'startup' ? 'start-up flag' : 'granted'}): nothing changed\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runRootsRemove(dir: string, globalOpts: GlobalOptions, opts: RootsOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const result = await withOperator(globalOpts, (op) => op.client.roots.remove.mutate({ path: fromCwd(dir) }));
    out().write(json ? JSON.stringify(result) + '\n' : `file:// sources under ${result.removed} are refused from now on\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
