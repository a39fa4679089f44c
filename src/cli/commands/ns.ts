// `trove ns create|list|get|delete`: namespaces (restore lives in ns-restore.ts, over the operator channel).
import type { CreateNamespaceInput, Job, Namespace } from '../../client/index.js';
import { CliError, namespacePath } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { keyValues, write, writeJson } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { connect, fetchList, jobText, printList, runCommand, type JsonOption, type ListOptions } from './resource-common.js';

export interface NamespaceCreateOptions extends JsonOption {
  displayName?: string;
  existOk?: boolean;
}

export interface NamespaceDeleteOptions extends JsonOption {
  force?: boolean;
  yes?: boolean;
}

const namespaceText = (ns: Namespace) =>
  keyValues([
    ['id', ns.id],
    ['name', ns.name],
    ['display name', ns.display_name],
    ['collections', ns.usage.collections],
    ['files', ns.usage.files],
    ['source bytes', ns.usage.source_bytes],
    ['index bytes', ns.usage.index_bytes],
    ['created', ns.created_at],
    ['updated', ns.updated_at],
  ]);

export function runNamespaceCreate(name: string, globalOpts: GlobalOptions, opts: NamespaceCreateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client } = await connect(globalOpts);
    const body: CreateNamespaceInput = { name, exist_ok: Boolean(opts.existOk) };
    if (opts.displayName !== undefined) body.display_name = opts.displayName;
    const ns = await client.request<Namespace>('POST', '/namespaces', body);
    if (json) writeJson(ns);
    else write(namespaceText(ns));
  });
}

export function runNamespaceList(globalOpts: GlobalOptions, opts: ListOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client } = await connect(globalOpts);
    const result = await fetchList<Namespace>(client, '/namespaces', opts);
    printList(json, result, ['id', 'name', 'collections', 'files', 'display name'], (ns) => [ns.id, ns.name, ns.usage.collections, ns.usage.files, ns.display_name], 'No namespaces.');
  });
}

export function runNamespaceGet(ref: string, globalOpts: GlobalOptions, opts: JsonOption): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client } = await connect(globalOpts);
    const ns = await client.request<Namespace>('GET', namespacePath(ref));
    if (json) writeJson(ns);
    else write(namespaceText(ns));
  });
}

export function runNamespaceDelete(ref: string, globalOpts: GlobalOptions, opts: NamespaceDeleteOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client } = await connect(globalOpts);
    // Read first, so that a wrong name fails before anyone is asked to confirm it.
    const ns = await client.request<Namespace>('GET', namespacePath(ref));
    if (ns.usage.collections > 0 && !opts.force) {
      throw new CliError(`Namespace ${ns.name} still has ${ns.usage.collections} collection(s); pass --force to delete them with it.`, 2);
    }
    const what = ns.usage.collections > 0 ? ` and its ${ns.usage.collections} collection(s)` : '';
    await confirmOrRefuse(`Delete namespace ${ns.name} (${ns.id})${what}?`, { yes: opts.yes });
    const res = await client.request<{ job: Job }>('DELETE', namespacePath(ns.id), { force: Boolean(opts.force) });
    if (json) writeJson(res);
    else write(`deleting namespace ${ns.name} (${ns.id}); restorable during the recovery window (7 days by default) with \`trove ns restore ${ns.name}\`\n${jobText(res.job)}`);
  });
}
