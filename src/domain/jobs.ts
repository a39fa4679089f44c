import { TroveError } from '../contract/errors.js';
import { newId, nowIso } from '../contract/ids.js';
import type { CollectionRow, JobRow, JobWrites, NamespaceRow, NewJob, StoreReads, StoreTx } from '../store/interface.js';
import type { Services } from './context.js';
import { canSeeCollection, canSeeNamespace, type AuthenticatedKey } from './keys.js';

export function enqueue(jobs: JobWrites, fields: Omit<NewJob, 'id' | 'created_at' | 'runnable'> & { runnable?: number }): Promise<JobRow> {
  return jobs.insert({ ...fields, id: newId('job'), runnable: fields.runnable ?? 1, created_at: nowIso() });
}

/** A job on a whole collection (reindex, delete, access-rule application). */
export function enqueueCollectionJob(tx: StoreTx, type: 'reindex_collection' | 'delete_collection' | 'apply_access_rule', ns: NamespaceRow, col: CollectionRow): Promise<JobRow> {
  return enqueue(tx.jobs, { type, namespace_rid: ns.rid, collection_rid: col.rid, namespace: ns.name, collection: col.name, file_rid: null, file_id: null, version_id: null });
}

/** A job is visible when its namespace (and collection, for collection keys) is in the key's scope. */
export async function resolveJob(store: StoreReads, key: AuthenticatedKey, jobId: string): Promise<JobRow> {
  const job = await store.jobs.byId(jobId);
  const missing = new TroveError('not_found', `Job '${jobId}' not found.`);
  if (!job) throw missing;
  if (key.scope.kind === 'cluster') return job;
  const ns = job.namespace_rid === null ? undefined : await store.namespaces.byRid(job.namespace_rid);
  if (!ns || !canSeeNamespace(key, ns)) throw missing;
  if (key.scope.kind === 'collection') {
    const col = job.collection_rid === null ? undefined : await store.collections.byRid(job.collection_rid);
    if (!col || !canSeeCollection(key, ns, col)) throw missing;
  }
  return job;
}


/** decisions.md §2: queued or running jobs end `canceled`; a finished job is returned unchanged. */
export async function cancelJob(s: Services, job: JobRow): Promise<JobRow> {
  // The rule change is already in effect; the job only moves files to it. Canceling it would leave
  // those files hidden for good, so it always runs to the end.
  if (job.type === 'apply_access_rule' && (job.status === 'queued' || job.status === 'running')) {
    throw new TroveError('invalid_request', 'An apply_access_rule job cannot be canceled: the rule change is already in effect and the job only moves files to it.');
  }
  const result = await s.store.write(async (tx) => {
    const now = nowIso();
    const changed = await tx.jobs.finish(job.rid, 'canceled', now, { code: 'canceled', message: 'The job was canceled.' });
    if (changed && job.type === 'index_file' && job.file_rid !== null) {
      const file = await tx.files.byRid(job.file_rid);
      // An older indexed version stays searchable; a file never indexed fails visibly.
      if (file && !file.deleted_at && file.version_id === job.version_id && file.status !== 'ready') {
        if (file.indexed_version_id) await tx.files.setStatus(file.rid, 'ready', now);
        else await tx.files.setStatus(file.rid, 'failed', now, { code: 'canceled', message: 'Indexing was canceled.' });
      }
    }
    return { changed, job: (await tx.jobs.byId(job.id))! };
  });
  if (result.changed) s.notifyCancel(job.id);
  return result.job;
}
