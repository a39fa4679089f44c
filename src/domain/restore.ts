// Restoring deleted buckets (collections) within the recovery window (workspace-api.md, POST
// .../buckets/{bucketId}/restore; decisions.md §5). A deleted collection keeps its data, so a
// restore brings it back whole without reindexing; work its delete job canceled is queued again.
// After the window, the sweeper (purgeExpired) removes it for good.
import { TroveError } from '../contract/errors.js';
import { nowIso } from '../contract/ids.js';
import type { Collection } from '../contract/schemas.js';
import type { NamespaceRow } from '../store/interface.js';
import type { Services } from './context.js';
import { canSeeCollection, type AuthenticatedKey } from './keys.js';
import { presentCollection } from './present.js';

/** decisions.md §5: deleted namespaces and collections stay restorable this long. */
export const RECOVERY_WINDOW_MS = 7 * 24 * 3600 * 1000;

export async function restoreBucket(s: Services, key: AuthenticatedKey, ns: NamespaceRow, ref: string): Promise<Collection> {
  const result = await s.store.write(async (tx) => {
    const col = await tx.collections.findDeleted(ns.rid, ref);
    const missing = new TroveError('not_found', `No deleted bucket '${ref}' in workspace '${ns.name}' (restorable for ${RECOVERY_WINDOW_MS / 86_400_000} days after deletion).`);
    if (!col || !canSeeCollection(key, ns, col)) throw missing;
    if (Date.parse(col.deleted_at!) < Date.now() - RECOVERY_WINDOW_MS) throw missing;
    if (await tx.collections.find(ns.rid, col.name)) throw new TroveError('already_exists', `A bucket named '${col.name}' exists again in workspace '${ns.name}'; delete or rename it before restoring.`);
    const restored = await tx.collections.restore(col.rid, nowIso());
    const requeued = await tx.jobs.requeueCollectionFiles(col.rid, nowIso());
    return { collection: await presentCollection(tx, restored, ns.name), requeued };
  });
  if (result.requeued > 0) s.notifyWork();
  return result.collection;
}

/**
 * The sweeper (decisions.md §5): collections and namespaces deleted longer ago than the recovery
 * window are removed for good, with their indexes and the uploaded bytes no other file uses.
 */
export async function purgeExpired(s: Services, now = Date.now()): Promise<{ collections: number; namespaces: number }> {
  const cutoff = new Date(now - RECOVERY_WINDOW_MS).toISOString();
  let collections = 0;
  const freed: string[] = [];
  const expiredNamespaces = await s.store.retention.namespacesDeletedBefore(cutoff);
  const targets = new Set(await s.store.retention.collectionsDeletedBefore(cutoff));
  for (const ns of expiredNamespaces) for (const rid of await s.store.collections.allRids(ns)) targets.add(rid);
  // One transaction per collection: a large purge does not hold other writers back for long.
  for (const rid of targets) {
    freed.push(...(await s.store.write((tx) => tx.retention.purgeCollection(rid))));
    collections++;
  }
  for (const ns of expiredNamespaces) await s.store.write((tx) => tx.retention.purgeNamespace(ns));
  // Content-addressed bytes may be shared: only those no remaining version uses go.
  for (const sha of new Set(freed)) if (!(await s.store.retention.blobInUse(sha))) await s.blobs.remove(sha);
  // Search snapshots also go when the next search is kept; this frees them when none comes.
  await s.store.write((tx) => tx.searchSnapshots.deleteExpired(now));
  return { collections, namespaces: expiredNamespaces.length };
}

/**
 * Restores a deleted workspace (namespace) and the collections its deletion took, within the
 * recovery window. Only the operator channel (the local user's session) calls it; the HTTP route
 * refuses every API key (workspace-api.md: "API keys cannot call this route").
 */
export async function restoreWorkspace(s: Services, ref: string): Promise<{ id: string }> {
  const result = await s.store.write(async (tx) => {
    const ns = await tx.namespaces.findDeleted(ref);
    if (!ns?.deleted_at || Date.parse(ns.deleted_at) < Date.now() - RECOVERY_WINDOW_MS) {
      throw new TroveError('not_found', `No deleted workspace '${ref}' (restorable for ${RECOVERY_WINDOW_MS / 86_400_000} days after deletion).`);
    }
    if (await tx.namespaces.find(ns.name)) throw new TroveError('already_exists', `A workspace named '${ns.name}' exists again; delete it before restoring.`);
    const now = nowIso();
    const cols = await tx.namespaces.restore(ns.rid, now);
    let requeued = 0;
    for (const rid of cols) requeued += await tx.jobs.requeueCollectionFiles(rid, now);
    return { id: ns.id, requeued };
  });
  if (result.requeued > 0) s.notifyWork();
  return { id: result.id };
}
