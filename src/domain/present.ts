// Rows → the resources of the contract. Valueless optional fields are left out (retrieval-api.md, File).
import { fileResource } from '../contract/file-resource.js';
import type { Collection, FileResource, Job, Namespace } from '../contract/schemas.js';
import type { CollectionRow, FileCounts, FileRow, JobRow, NamespaceRow, StoreReads } from '../store/interface.js';

/**
 * `onlyCollections`: the collections the caller may see (a collection key's), by name; usage then
 * counts those alone, so a collection key learns nothing of files outside its scope (found by an
 * attack: its totals moved when a file was added to a collection it cannot see).
 */
export async function presentNamespace(store: StoreReads, ns: NamespaceRow, onlyCollections?: readonly string[]): Promise<Namespace> {
  const usage = await store.namespaces.usage(ns.rid, onlyCollections);
  return {
    id: ns.id,
    name: ns.name,
    display_name: ns.display_name,
    usage: { collections: usage.collections, files: usage.files, source_bytes: usage.source_bytes.toString(), index_bytes: '0' },
    created_at: ns.created_at,
    updated_at: ns.updated_at,
  };
}

/**
 * Collection status follows from its files (docs/decisions.md): no living files → empty; any
 * pending or indexing → indexing; otherwise ready, degraded (some failed) or failed (all failed).
 */
export function collectionStatus(col: CollectionRow, counts: FileCounts): Collection['status'] {
  if (col.deleted_at) return 'deleting';
  const total = counts.pending + counts.indexing + counts.ready + counts.failed;
  if (total === 0) return 'empty';
  if (counts.pending + counts.indexing > 0) return 'indexing';
  if (counts.failed === 0) return 'ready';
  return counts.ready > 0 ? 'degraded' : 'failed';
}

export function indexGeneration(col: CollectionRow, counts: FileCounts): string | null {
  return counts.ready > 0 ? `gen-${col.generation}` : null;
}

export async function presentCollection(store: StoreReads, col: CollectionRow, namespaceName: string): Promise<Collection> {
  const counts = await store.collections.fileCounts(col.rid);
  return {
    id: col.id,
    namespace: namespaceName,
    name: col.name,
    display_name: col.display_name,
    status: collectionStatus(col, counts),
    processing: { ...col.processing },
    access_control: col.access_control,
    index_generation: indexGeneration(col, counts),
    file_counts: counts,
    created_at: col.created_at,
    updated_at: col.updated_at,
  };
}

/**
 * Files as the contract shows them (src/contract/file-resource.ts, the one serializer of a file).
 * `governing_rule` is present only in collections that enforce access rules, and only when a rule
 * governs the file (retrieval-api.md, File). `known`: collection rows the caller read in the same
 * transaction as the files, not read again.
 */
export async function presentFiles(store: StoreReads, files: readonly FileRow[], known: readonly Pick<CollectionRow, 'rid' | 'access_control'>[] = []): Promise<FileResource[]> {
  const enforced = new Set<number>();
  for (const rid of new Set(files.map((f) => f.collection_rid))) {
    const col = known.find((c) => c.rid === rid) ?? (await store.collections.byRid(rid));
    if (col?.access_control === 'enforced') enforced.add(rid);
  }
  const ruleRids = files.filter((f) => enforced.has(f.collection_rid) && f.governing_rule_rid !== null).map((f) => f.governing_rule_rid!);
  const rules = new Map((await store.accessRules.byRids([...new Set(ruleRids)])).map((r) => [r.rid, r]));
  return files.map((file) =>
    fileResource(file, file.governing_rule_rid === null || !enforced.has(file.collection_rid) ? undefined : rules.get(file.governing_rule_rid)),
  );
}

export async function presentFile(store: StoreReads, file: FileRow, known: readonly Pick<CollectionRow, 'rid' | 'access_control'>[] = []): Promise<FileResource> {
  return (await presentFiles(store, [file], known))[0]!;
}

export function presentJob(job: JobRow): Job {
  const out: Job = { id: job.id, type: job.type, status: job.status, error: null, created_at: job.created_at, updated_at: job.updated_at };
  if (job.namespace) out.namespace = job.namespace;
  if (job.collection) out.collection = job.collection;
  if (job.file_id) out.file_id = job.file_id;
  if (job.error_code) out.error = { code: job.error_code, message: job.error_message ?? '' };
  return out;
}
