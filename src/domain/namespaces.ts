import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { newId, nowIso } from '../contract/ids.js';
import type { CreateNamespaceRequest, Namespace } from '../contract/schemas.js';
import type { JobRow, NamespaceRow } from '../store/interface.js';
import type { Services } from './context.js';
import { collectionsInScope, type AuthenticatedKey } from './keys.js';
import { presentNamespace } from './present.js';
import { readCursor, requestBinding } from './cursors.js';
import { pageOf } from './paging.js';


export async function createNamespace(s: Services, body: z.output<typeof CreateNamespaceRequest>): Promise<{ created: boolean; namespace: Namespace }> {
  return await s.store.write(async (tx) => {
    const existing = await tx.namespaces.find(body.name);
    if (existing) {
      if (!body.exist_ok) throw new TroveError('already_exists', `Namespace '${body.name}' already exists.`);
      return { created: false, namespace: await presentNamespace(tx, existing) };
    }
    const now = nowIso();
    const ns = await tx.namespaces.insert({ id: newId('ns'), name: body.name, display_name: body.display_name ?? null, created_at: now, updated_at: now });
    return { created: true, namespace: await presentNamespace(tx, ns) };
  });
}

export async function listVisibleNamespaces(s: Services, key: AuthenticatedKey, query: { cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'namespaces']);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  let only: number[] | undefined;
  if (key.scope.kind !== 'cluster') {
    const ns = await s.store.namespaces.byId(key.scope.namespace_id);
    only = ns ? [ns.rid] : [];
  }
  const rows = await s.store.namespaces.list({ afterRid: after, limit: query.limit + 1, onlyRids: only });
  return pageOf(s, rows, query.limit, binding, (ns) => presentNamespace(s.store, ns, collectionsInScope(key)));
}

/** A namespace as `key` may see it: a collection key's usage counts its own collections only. */
export function presentNamespaceTo(s: Services, key: AuthenticatedKey, ns: NamespaceRow): Promise<Namespace> {
  return presentNamespace(s.store, ns, collectionsInScope(key));
}

export async function renameNamespaceLabel(s: Services, ns: NamespaceRow, displayName: string | null): Promise<Namespace> {
  return presentNamespace(s.store, await s.store.write((tx) => tx.namespaces.updateDisplayName(ns.rid, displayName, nowIso())));
}

/** decisions.md §2: 202 {job}; a namespace with collections needs force. Data is kept for the recovery window. */
export async function deleteNamespace(s: Services, ns: NamespaceRow, force: boolean): Promise<JobRow> {
  const job = await s.store.write(async (tx) => {
    const collections = await tx.collections.liveRids(ns.rid);
    if (collections.length > 0 && !force) {
      throw new TroveError('invalid_request', `Namespace '${ns.name}' still has ${collections.length} collection(s); send {"force": true} to delete them too.`, { collections: collections.length });
    }
    const now = nowIso();
    for (const rid of collections) await tx.collections.markDeleted(rid, now);
    await tx.namespaces.markDeleted(ns.rid, now);
    return tx.jobs.insert({
      id: newId('job'),
      type: 'delete_namespace',
      namespace_rid: ns.rid,
      collection_rid: null,
      namespace: ns.name,
      collection: null,
      file_rid: null,
      file_id: null,
      version_id: null,
      runnable: 1,
      created_at: now,
    });
  });
  s.notifyWork();
  return job;
}
