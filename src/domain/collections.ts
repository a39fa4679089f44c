import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { newId, nowIso } from '../contract/ids.js';
import { ProcessingSchema, type Collection, type CreateCollectionRequest, type Processing, type ProcessingPatchSchema, type UpdateCollectionRequest } from '../contract/schemas.js';
import type { JobRow } from '../store/interface.js';
import type { CollectionRow, NamespaceRow } from '../store/interface.js';
import type { Services } from './context.js';
import { readCursor, requestBinding } from './cursors.js';
import { enqueueCollectionJob } from './jobs.js';
import { collectionsInScope, type AuthenticatedKey } from './keys.js';
import { pageOf } from './paging.js';
import { presentCollection } from './present.js';

export async function createCollection(s: Services, ns: NamespaceRow, body: z.output<typeof CreateCollectionRequest>): Promise<{ created: boolean; collection: Collection }> {
  return await s.store.write(async (tx) => {
    const existing = await tx.collections.find(ns.rid, body.name);
    if (existing) {
      if (!body.exist_ok) throw new TroveError('already_exists', `Collection '${body.name}' already exists in namespace '${ns.name}'.`);
      // exist_ok hands back the collection as it is (retrieval-api.md, success statuses), but never
      // an open one to a caller who asked for access rules: it would index and serve its files to
      // every reader believing they were enforced. The other way round is safe, and other settings
      // show in the answer (found by a bad-input attack).
      if (body.access_control === 'enforced' && existing.access_control !== 'enforced') {
        throw new TroveError('already_exists', `Collection '${body.name}' already exists in namespace '${ns.name}' with access_control '${existing.access_control}', not 'enforced'; PATCH it to 'enforced', or create another.`, { access_control: existing.access_control });
      }
      return { created: false, collection: await presentCollection(tx, existing, ns.name) };
    }
    const now = nowIso();
    const processing: Processing = body.processing ?? ProcessingSchema.parse({});
    const col = await tx.collections.insert({
      id: newId('col'),
      namespace_rid: ns.rid,
      name: body.name,
      display_name: body.display_name ?? null,
      processing,
      access_control: body.access_control,
      // Recorded when the first vectors are written (src/domain/ingest/pipeline.ts).
      embedding_model: null,
      created_at: now,
      updated_at: now,
    });
    return { created: true, collection: await presentCollection(tx, col, ns.name) };
  });
}

export async function listVisibleCollections(s: Services, key: AuthenticatedKey, ns: NamespaceRow, query: { cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'collections', ns.id]);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  const onlyNames = collectionsInScope(key);
  const rows = await s.store.collections.list({ namespaceRid: ns.rid, afterRid: after, limit: query.limit + 1, onlyNames });
  return pageOf(s, rows, query.limit, binding, (col) => presentCollection(s.store, col, ns.name));
}

/** The fields a PATCH sent over the collection's own, checked whole (chunk_overlap < chunk_tokens). */
function mergedProcessing(before: Processing, patch: z.output<typeof ProcessingPatchSchema>): Processing {
  const sent = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const merged = ProcessingSchema.safeParse({ ...before, ...sent });
  if (!merged.success) {
    const issue = merged.error.issues[0]!;
    throw new TroveError('invalid_request', `processing.${issue.path.join('.')}: ${issue.message} (after merging the fields sent with the collection's).`, { field: `processing.${issue.path.join('.')}` });
  }
  return merged.data;
}

/** Changes to how text is cut into passages need a reindex; labels and access mode apply at once. */
export async function patchCollection(
  s: Services,
  ns: NamespaceRow,
  col: CollectionRow,
  body: z.output<typeof UpdateCollectionRequest>,
): Promise<{ collection: Collection; job: JobRow | null }> {
  const result = await s.store.write(async (tx) => {
    const before = col.processing;
    const processing = body.processing === undefined ? before : mergedProcessing(before, body.processing);
    const needsReindex =
      (processing.chunk_tokens ?? null) !== (before.chunk_tokens ?? null) ||
      (processing.chunk_overlap ?? null) !== (before.chunk_overlap ?? null) ||
      (processing.keyword && !before.keyword) ||
      (processing.semantic && !before.semantic);
    const updated = await tx.collections.update(
      col.rid,
      {
        display_name: body.display_name === undefined ? col.display_name : body.display_name,
        processing,
        access_control: body.access_control ?? col.access_control,
      },
      nowIso(),
    );
    const job = needsReindex ? await enqueueCollectionJob(tx, 'reindex_collection', ns, updated) : null;
    return { collection: await presentCollection(tx, updated, ns.name), job };
  });
  if (result.job) s.notifyWork();
  return result;
}

export async function reindexCollection(s: Services, ns: NamespaceRow, col: CollectionRow): Promise<JobRow> {
  const job = await s.store.write((tx) => enqueueCollectionJob(tx, 'reindex_collection', ns, col));
  s.notifyWork();
  return job;
}

/** Hidden at once; its data stays for the recovery window (decisions.md §5). */
export async function deleteCollection(s: Services, ns: NamespaceRow, col: CollectionRow): Promise<JobRow> {
  const job = await s.store.write(async (tx) => {
    await tx.collections.markDeleted(col.rid, nowIso());
    return enqueueCollectionJob(tx, 'delete_collection', ns, col);
  });
  s.notifyWork();
  return job;
}
