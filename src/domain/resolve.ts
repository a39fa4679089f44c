// Looking up the resources named in a URL, as the key may see them: absent and out-of-scope are the
// same 404 (retrieval-api.md, Authentication 3).
import { TroveError } from '../contract/errors.js';
import type { Db } from '../store/db.js';
import { findCollection, type CollectionRow } from '../store/collections.js';
import { findLiveFileById, findLiveFileByPath, type FileRow } from '../store/files.js';
import { findNamespace, type NamespaceRow } from '../store/namespaces.js';
import { canSeeCollection, canSeeNamespace, type AuthenticatedKey } from './keys.js';
import { hasPrefix } from '../contract/ids.js';

export function resolveNamespace(db: Db, key: AuthenticatedKey, ref: string): NamespaceRow {
  const ns = findNamespace(db, ref);
  if (!ns || !canSeeNamespace(key, ns)) throw new TroveError('not_found', `Namespace '${ref}' not found.`);
  return ns;
}

export function resolveCollection(db: Db, key: AuthenticatedKey, nsRef: string, colRef: string): { ns: NamespaceRow; col: CollectionRow } {
  const ns = resolveNamespace(db, key, nsRef);
  const col = findCollection(db, ns.rid, colRef);
  if (!col || !canSeeCollection(key, ns, col)) throw new TroveError('not_found', `Collection '${colRef}' not found in namespace '${ns.name}'.`);
  return { ns, col };
}

/** A file route segment is a `fil_` ID or the path encoded as one URL segment. */
export function resolveFile(db: Db, col: CollectionRow, ref: string): FileRow {
  const file = hasPrefix(ref, 'fil') && !ref.startsWith('/') ? findLiveFileById(db, col.rid, ref) : ref.startsWith('/') ? findLiveFileByPath(db, col.rid, ref) : undefined;
  if (!file) throw new TroveError('not_found', `File '${ref}' not found.`);
  return file;
}
