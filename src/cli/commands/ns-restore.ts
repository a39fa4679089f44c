// `trove ns restore <namespace>`: restores a deleted namespace (a workspace) within its recovery
// window, over the operator channel (decisions.md §1: restoring a deleted workspace is operator work).
import type { GlobalOptions } from '../connection.js';

export interface NamespaceRestoreOptions {
  json?: boolean;
}

export async function runNamespaceRestore(_ref: string, _globalOpts: GlobalOptions, _opts: NamespaceRestoreOptions): Promise<number> {
  throw new Error('trove ns restore is not wired to the operator channel yet');
}
