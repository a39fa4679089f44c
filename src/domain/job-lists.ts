import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import type { ListJobsQuery } from '../contract/schemas.js';
import type { NamespaceRow } from '../store/interface.js';
import type { Services } from './context.js';
import { readCursor, requestBinding } from './cursors.js';
import { canSeeCollection, type AuthenticatedKey } from './keys.js';
import { pageOf } from './paging.js';
import { presentJob } from './present.js';

/** GET /namespaces/{ns}/jobs (decisions.md §2); a collection key sees its collections' jobs only. */
export async function listNamespaceJobs(s: Services, key: AuthenticatedKey, ns: NamespaceRow, query: z.output<typeof ListJobsQuery>) {
  const binding = requestBinding([key.id, 'jobs', ns.id, query.status ?? null, query.type ?? null, query.collection ?? null]);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  let collectionRids: number[] | undefined;
  if (query.collection !== undefined) {
    const col = await s.store.collections.find(ns.rid, query.collection);
    if (!col || !canSeeCollection(key, ns, col)) throw new TroveError('not_found', `Collection '${query.collection}' not found in namespace '${ns.name}'.`);
    collectionRids = [col.rid];
  } else if (key.scope.kind === 'collection') {
    const names = key.scope.collections;
    const found = await Promise.all(names.map((n) => s.store.collections.find(ns.rid, n)));
    collectionRids = found.flatMap((col) => (col ? [col.rid] : []));
  }
  const rows = await s.store.jobs.list({ namespaceRid: ns.rid, afterRid: after, limit: query.limit + 1, status: query.status, type: query.type, collectionRids });
  return pageOf(s, rows, query.limit, binding, presentJob);
}
