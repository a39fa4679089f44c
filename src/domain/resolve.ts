// Looking up the resources named in a URL, as the key may see them: absent and out-of-scope are the
// same 404 (retrieval-api.md, Authentication 3).
import { TroveError } from '../contract/errors.js';
import type { CollectionRow, FileRow, NamespaceRow, StoreReads } from '../store/interface.js';
import { canSeeCollection, canSeeNamespace, type AuthenticatedKey } from './keys.js';
import { hasPrefix } from '../contract/ids.js';
import { filePathProblem } from '../contract/paths.js';

export async function resolveNamespace(store: StoreReads, key: AuthenticatedKey, ref: string): Promise<NamespaceRow> {
  const ns = await store.namespaces.find(ref);
  if (!ns || !canSeeNamespace(key, ns)) throw new TroveError('not_found', `Namespace '${ref}' not found.`);
  return ns;
}

export async function resolveCollection(store: StoreReads, key: AuthenticatedKey, nsRef: string, colRef: string): Promise<{ ns: NamespaceRow; col: CollectionRow }> {
  const ns = await resolveNamespace(store, key, nsRef);
  const col = await store.collections.find(ns.rid, colRef);
  if (!col || !canSeeCollection(key, ns, col)) throw new TroveError('not_found', `Collection '${colRef}' not found in namespace '${ns.name}'.`);
  return { ns, col };
}

/** A file route segment is a `fil_` ID or the path encoded as one URL segment. */
export async function resolveFile(store: StoreReads, col: CollectionRow, ref: string): Promise<FileRow> {
  if (ref.startsWith('/')) {
    // retrieval-api.md, Conventions: such paths are invalid, not merely absent.
    const problem = filePathProblem(ref);
    if (problem) throw new TroveError('invalid_request', `The file path ${problem}.`);
  } else if (!hasPrefix(ref, 'fil')) {
    throw new TroveError('invalid_request', "A file is named by its 'fil_' ID or by its path encoded as one URL segment (each '/' as %2F).");
  }
  const file = ref.startsWith('/') ? await store.files.findLiveByPath(col.rid, ref) : await store.files.findLiveById(col.rid, ref);
  if (!file) throw new TroveError('not_found', `File '${ref}' not found.`);
  return file;
}
