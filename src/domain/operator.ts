// What the operator channel (src/rpc/router.ts) reads, as domain calls: the cluster's counts, the
// event log of every namespace from a cursor, and a restored workspace read back. The operator is
// the local user and sees the whole cluster (decisions.md §1).
import { TroveError } from '../contract/errors.js';
import { hasPrefix } from '../contract/ids.js';
import type { Namespace } from '../contract/schemas.js';
import type { ClusterCounts, EventRow } from '../store/interface.js';
import type { Services } from './context.js';
import { EVERYTHING } from './event-audience.js';
import { presentNamespace } from './present.js';
import { restoreWorkspace } from './restore.js';

export function clusterCounts(s: Services): Promise<ClusterCounts> {
  return s.store.operator.clusterCounts();
}

/** Where an operator's event stream starts: after `lastEventId` when given (it must exist), else after the newest event. */
export async function operatorEventCursor(s: Services, lastEventId: string | null | undefined): Promise<number> {
  if (!lastEventId) return s.store.events.lastRid();
  if (!hasPrefix(lastEventId, 'evt')) throw new TroveError('invalid_request', "'lastEventId' takes an event ID (evt_…).");
  const rid = await s.store.events.findRid(lastEventId);
  if (rid === undefined) throw new TroveError('invalid_request', `No event '${lastEventId}' (events are kept 30 days); subscribe without lastEventId.`);
  return rid;
}

/** Every namespace's events after the cursor, oldest first. */
export function operatorEventsAfter(s: Services, cursor: number, limit: number): Promise<EventRow[]> {
  return s.store.events.after({ afterRid: cursor, limit, audience: EVERYTHING });
}

/** Restores a deleted workspace and returns it as the API presents it. */
export async function restoreWorkspaceForOperator(s: Services, ref: string): Promise<{ id: string; name: string; namespace: Namespace }> {
  const { id } = await restoreWorkspace(s, ref);
  const ns = await s.store.namespaces.find(id);
  if (!ns) throw new TroveError('internal_error', `Workspace ${id} was restored but cannot be read back.`);
  return { id, name: ns.name, namespace: await presentNamespace(s.store, ns) };
}
