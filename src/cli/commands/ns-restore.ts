// `trove ns restore <namespace>`: restores a deleted namespace (a workspace) within its recovery
// window, over the operator channel (decisions.md §1: restoring a deleted workspace is operator work).
import { reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { out } from '../io.js';
import { withOperator } from './operator-call.js';

export interface NamespaceRestoreOptions {
  json?: boolean;
}

export async function runNamespaceRestore(ref: string, globalOpts: GlobalOptions, opts: NamespaceRestoreOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { namespace } = await withOperator(globalOpts, (op) => op.client.workspace.restore.mutate({ ref }));
    if (json) out().write(JSON.stringify(namespace) + '\n');
    else {
      const { collections, files } = namespace.usage;
      out().write(`restored namespace ${namespace.name} (${namespace.id}) with ${collections} collection${collections === 1 ? '' : 's'} and ${files} file${files === 1 ? '' : 's'}\n`);
    }
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
