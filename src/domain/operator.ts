// What the operator channel (src/rpc/router.ts) reads, as domain calls: the cluster's counts, the
// event log of every namespace from a cursor, and a restored workspace read back. The operator is
// the local user and sees the whole cluster (decisions.md §1).
import { TroveError } from '../contract/errors.js';
import { hasPrefix } from '../contract/ids.js';
import type { Namespace } from '../contract/schemas.js';
import { eventsAfter, findEventRid, lastEventRid, type EventRow } from '../store/sqlite/events.js';
import { findNamespace } from '../store/sqlite/namespaces.js';
import { clusterCounts as countCluster } from '../store/sqlite/operator.js';
import type { Services } from './context.js';
import { EVERYTHING } from './event-audience.js';
import { presentNamespace } from './present.js';
import { restoreWorkspace } from './restore.js';

export function clusterCounts(s: Services): ReturnType<typeof countCluster> {
  return countCluster(s.db);
}

/** Where an operator's event stream starts: after `lastEventId` when given (it must exist), else after the newest event. */
export function operatorEventCursor(s: Services, lastEventId: string | null | undefined): number {
  if (!lastEventId) return lastEventRid(s.db);
  if (!hasPrefix(lastEventId, 'evt')) throw new TroveError('invalid_request', "'lastEventId' takes an event ID (evt_…).");
  const rid = findEventRid(s.db, lastEventId);
  if (rid === undefined) throw new TroveError('invalid_request', `No event '${lastEventId}' (events are kept 30 days); subscribe without lastEventId.`);
  return rid;
}

/** Every namespace's events after the cursor, oldest first. */
export function operatorEventsAfter(s: Services, cursor: number, limit: number): EventRow[] {
  return eventsAfter(s.db, { afterRid: cursor, limit, audience: EVERYTHING });
}

/** Restores a deleted workspace and returns it as the API presents it. */
export async function restoreWorkspaceForOperator(s: Services, ref: string): Promise<{ id: string; name: string; namespace: Namespace }> {
  const { id } = await restoreWorkspace(s, ref);
  const ns = findNamespace(s.db, id);
  if (!ns) throw new TroveError('internal_error', `Workspace ${id} was restored but cannot be read back.`);
  return { id, name: ns.name, namespace: presentNamespace(s.db, ns) };
}
