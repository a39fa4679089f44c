// Who may see which event: one rule for GET /events (page and stream), webhook fan-out and the
// webhook delivery log. An event is visible to a key exactly when the resource it reports is
// readable by that key through its GET route (decisions.md §2, §6):
//  - job, file, object.* and collection events: the collection (or namespace, for namespace-level
//    jobs) is in the key's scope and the key holds `read` (write includes read);
//  - research events: only the key that created the run, while it holds `query` (the research GET
//    routes need it), or a cluster key. Research events carry answers and sources drawn under the
//    creator's principals, so no other scoped key may read them.
// A webhook sees what the key that created it may see (its creator's current scope, even after
// that key is revoked: a webhook survives its creator, workspace-api.md); a personal webhook of the
// operator sees everything in its workspace.
import type { EventAudience, StoreReads, WebhookRow } from '../store/interface.js';
import { hasAction, type StoredScope } from './keys.js';

export type { EventAudience } from '../store/interface.js';

/** The operator (the local user) and cluster keys see every event. */
export const EVERYTHING: EventAudience = { namespaceRid: null, collectionRids: null, resources: true, research: 'all' };

/** Matches no event: a key whose namespace is gone, a webhook whose creator cannot be found. */
const NOTHING: EventAudience = { namespaceRid: -1, collectionRids: [], resources: false, research: 'none' };

/** What a key with this scope may see of the outbox. */
export async function audienceOfKey(store: StoreReads, keyId: string, scope: StoredScope): Promise<EventAudience> {
  if (scope.kind === 'cluster') return EVERYTHING;
  const ns = await store.namespaces.byId(scope.namespace_id);
  if (!ns || ns.deleted_at) return NOTHING;
  let collectionRids: number[] | null = null;
  if (scope.kind === 'collection') {
    const found = await Promise.all(scope.collections.map((name) => store.collections.find(ns.rid, name)));
    collectionRids = found.flatMap((col) => (col ? [col.rid] : []));
  }
  return {
    namespaceRid: ns.rid,
    collectionRids,
    resources: hasAction(scope.actions, 'read'),
    research: hasAction(scope.actions, 'query') ? { ownerKeyId: keyId } : 'none',
  };
}

/**
 * What a webhook receives: its creator's audience within the webhook's workspace. Webhooks made
 * before the creator was recorded (schema version 10) get the namespace's resource events but no
 * research events, the most a key of the workspace could have been shown without knowing which.
 */
export async function audienceOfWebhook(store: StoreReads, w: Pick<WebhookRow, 'namespace_rid' | 'owner_kind' | 'created_by_key_id'>): Promise<EventAudience> {
  const within = (a: EventAudience): EventAudience => ({ ...a, namespaceRid: w.namespace_rid });
  if (w.owner_kind === 'me') return within(EVERYTHING);
  if (w.created_by_key_id === null) return within({ namespaceRid: w.namespace_rid, collectionRids: null, resources: true, research: 'none' });
  const creator = await store.keys.byId(w.created_by_key_id);
  if (!creator) return NOTHING;
  const a = await audienceOfKey(store, creator.id, creator.scope);
  // A scoped creator's audience names its own namespace; anything else would be a corrupt row.
  if (a.namespaceRid !== null && a.namespaceRid !== w.namespace_rid) return NOTHING;
  return within(a);
}

/**
 * True when `outer` may see every event `inner` may see: the same namespace (or all), its
 * collections (or all), resource events if `inner` has them, and every research event `inner` has
 * (all of them, or the runs of the one key whose runs `inner` sees).
 */
export function audienceCovers(outer: EventAudience, inner: EventAudience): boolean {
  if (outer.namespaceRid !== null && outer.namespaceRid !== inner.namespaceRid) return false;
  if (outer.collectionRids !== null && (inner.collectionRids === null || !inner.collectionRids.every((rid) => outer.collectionRids!.includes(rid)))) return false;
  if (inner.resources && !outer.resources) return false;
  if (inner.research === 'none' || outer.research === 'all') return true;
  return inner.research !== 'all' && typeof outer.research === 'object' && outer.research.ownerKeyId === inner.research.ownerKeyId;
}
