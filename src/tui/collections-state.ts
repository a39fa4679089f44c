// The collections view's state and how events change it. Counts are never guessed from events:
// an event names the collection it touched, and the view re-fetches that one collection. Jobs are
// the exception: a job.updated event carries the whole job, so the active-jobs list follows it exactly.
import { refKey, type CollectionItem, type CollectionRef, type JobItem, type NamespaceItem, type TroveEvent } from './types.js';

export type ActiveJob = Pick<JobItem, 'id' | 'type'> & { status: Extract<JobItem['status'], 'queued' | 'running'> };

export type CollectionEntry = CollectionItem;

export interface NamespaceEntry {
  name: string;
  collections: CollectionEntry[];
}

export interface CollectionsState {
  namespaces: NamespaceEntry[];
  /**
   * Queued and running jobs by where they run: "ns/col" for a collection's, "ns/" for the namespace's
   * own (delete_namespace). Kept apart from the collections so that a job of a collection not yet
   * loaded is not lost.
   */
  jobs: Record<string, Record<string, ActiveJob>>;
  /** Which collection a file belongs to, learnt from job and object events (file events do not say). */
  fileOwners: Record<string, string>;
}

export const emptyCollectionsState: CollectionsState = { namespaces: [], jobs: {}, fileOwners: {} };

/** Where a namespace's own jobs are kept in `jobs`. */
export const namespaceJobsKey = (namespace: string): string => `${namespace}/`;

const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);

const isActive = (status: string): status is ActiveJob['status'] => status === 'queued' || status === 'running';

/** The state after a full load: every namespace, its collections, and the jobs still queued or running. */
export function loadedState(namespaces: { namespace: NamespaceItem; collections: CollectionItem[]; jobs: JobItem[] }[]): CollectionsState {
  let state: CollectionsState = {
    namespaces: namespaces
      .map(({ namespace, collections }) => ({
        name: namespace.name,
        collections: collections.filter((c) => c.status !== 'deleting').sort(byName),
      }))
      .sort(byName),
    jobs: {},
    fileOwners: {},
  };
  for (const { jobs } of namespaces) for (const job of jobs) state = applyJob(state, job);
  return state;
}

export function findCollection(state: CollectionsState, ref: CollectionRef): CollectionEntry | undefined {
  return state.namespaces.find((n) => n.name === ref.namespace)?.collections.find((c) => c.name === ref.collection);
}

function findById(state: CollectionsState, id: string): CollectionEntry | undefined {
  for (const ns of state.namespaces) {
    const found = ns.collections.find((c) => c.id === id);
    if (found) return found;
  }
  return undefined;
}

function parseRef(key: string): CollectionRef {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), collection: key.slice(slash + 1) };
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

function updateNamespace(state: CollectionsState, name: string, change: (ns: NamespaceEntry) => NamespaceEntry): CollectionsState {
  const existing = state.namespaces.find((n) => n.name === name);
  const next = change(existing ?? { name, collections: [] });
  const others = state.namespaces.filter((n) => n.name !== name);
  return { ...state, namespaces: [...others, next].sort(byName) };
}

function applyJob(state: CollectionsState, job: JobItem): CollectionsState {
  const namespace = str(job.namespace);
  if (!namespace || !str(job.id)) return state;
  const collection = str(job.collection);
  const fileId = str(job.file_id);
  const where = collection ? refKey({ namespace, collection }) : namespaceJobsKey(namespace);
  const { [job.id]: _previous, ...others } = state.jobs[where] ?? {};
  const jobsThere = isActive(job.status) ? { ...others, [job.id]: { id: job.id, type: job.type, status: job.status } } : others;
  const { [where]: _old, ...otherPlaces } = state.jobs;
  return {
    ...state,
    jobs: Object.keys(jobsThere).length > 0 ? { ...otherPlaces, [where]: jobsThere } : otherPlaces,
    fileOwners: collection && fileId ? { ...state.fileOwners, [fileId]: where } : state.fileOwners,
  };
}

/**
 * Applies one event: returns the new state and the collection to re-fetch (if the event names one).
 * Events about research runs and webhooks leave the collections alone.
 */
export function applyEvent(state: CollectionsState, event: TroveEvent): { state: CollectionsState; refetch: CollectionRef | null } {
  const data = event.data;
  switch (event.type) {
    case 'job.updated': {
      const next = applyJob(state, data as unknown as JobItem);
      const namespace = str(data.namespace);
      const collection = str(data.collection);
      return { state: next, refetch: namespace && collection ? { namespace, collection } : null };
    }
    case 'collection.updated': {
      const namespace = str(data.namespace);
      const collection = str(data.name);
      return { state, refetch: namespace && collection ? { namespace, collection } : null };
    }
    case 'object.indexed':
    case 'object.indexing_failed': {
      const owner = str(data.bucketId) ? findById(state, data.bucketId as string) : undefined;
      if (!owner) return { state, refetch: null };
      const ref = { namespace: owner.namespace, collection: owner.name };
      const fileId = str(data.fileId);
      const next = fileId ? { ...state, fileOwners: { ...state.fileOwners, [fileId]: refKey(ref) } } : state;
      return { state: next, refetch: ref };
    }
    case 'file.updated':
    case 'file.ready':
    case 'file.failed':
    case 'file.deleted': {
      const fileId = str(data.id);
      const owner = fileId ? state.fileOwners[fileId] : undefined;
      return { state, refetch: owner ? parseRef(owner) : null };
    }
    default:
      return { state, refetch: null };
  }
}

/** Puts a re-fetched collection in place (or in, when new); null means it is gone (404 or deleting). */
export function applyCollection(state: CollectionsState, ref: CollectionRef, collection: CollectionItem | null): CollectionsState {
  if (!collection || collection.status === 'deleting') {
    if (!findCollection(state, ref)) return state;
    return updateNamespace(state, ref.namespace, (ns) => ({ ...ns, collections: ns.collections.filter((c) => c.name !== ref.collection) }));
  }
  return updateNamespace(state, collection.namespace, (ns) => {
    const entry: CollectionEntry = { id: collection.id, namespace: collection.namespace, name: collection.name, status: collection.status, file_counts: collection.file_counts };
    return { ...ns, collections: [...ns.collections.filter((c) => c.name !== collection.name), entry].sort(byName) };
  });
}

/** The collections in display order, for moving a selection through them. */
export function collectionOrder(state: CollectionsState): CollectionRef[] {
  return state.namespaces.flatMap((ns) => ns.collections.map((c) => ({ namespace: ns.name, collection: c.name })));
}

export function jobSummary(state: CollectionsState, key: string): { running: number; queued: number } {
  let running = 0;
  let queued = 0;
  for (const job of Object.values(state.jobs[key] ?? {})) {
    if (job.status === 'running') running++;
    else queued++;
  }
  return { running, queued };
}
