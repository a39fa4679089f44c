import type { Db } from './db.js';
import { stmt } from './statements.js';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  secret_hash: Buffer;
  scope: string;
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
  /** The namespace of a namespace or collection key; null for cluster keys. */
  namespace_id: string | null;
  /** Bumped by every workspace API edit. */
  revision: number;
  /** When the key last authenticated a request (to the minute); null if never since migration 18. */
  last_used_at: string | null;
}

export function insertKey(db: Db, row: Omit<KeyRow, 'revoked_at' | 'namespace_id' | 'revision' | 'last_used_at'> & { namespace_id?: string | null }): KeyRow {
  return stmt(
    db,
    'INSERT INTO api_keys (id, name, prefix, secret_hash, scope, namespace_id, created_by, created_at) VALUES (@id, @name, @prefix, @secret_hash, @scope, @namespace_id, @created_by, @created_at) RETURNING *',
  ).get({ namespace_id: null, ...row }) as KeyRow;
}

export function findKeyByPrefix(db: Db, prefix: string): KeyRow | undefined {
  return stmt(db, 'SELECT * FROM api_keys WHERE prefix = ?').get(prefix) as KeyRow | undefined;
}

/** Key names are unique within a namespace, and among cluster keys (namespaceId null): migration 19. */
export function findKeyByName(db: Db, namespaceId: string | null, name: string): KeyRow | undefined {
  return stmt(db, 'SELECT * FROM api_keys WHERE name = ? AND namespace_id IS ?').get(name, namespaceId) as KeyRow | undefined;
}

export function replaceKeySecret(db: Db, id: string, prefix: string, secretHash: Buffer): void {
  stmt(db, 'UPDATE api_keys SET prefix = ?, secret_hash = ?, revoked_at = NULL WHERE id = ?').run(prefix, secretHash, id);
}

export function getKeyById(db: Db, id: string): KeyRow | undefined {
  return stmt(db, 'SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined;
}

/** Keys in creation order; `collectionKeysOf` narrows to the collection keys of one namespace. */
export function listKeys(db: Db, opts: { afterRid: number; limit: number; collectionKeysOf?: string | undefined }): (KeyRow & { rid: number })[] {
  return stmt(
    db,
    `SELECT rowid AS rid, * FROM api_keys WHERE rowid > @after
       AND (@ns IS NULL OR (namespace_id = @ns AND json_extract(scope, '$.kind') = 'collection'))
     ORDER BY rowid LIMIT @limit`,
  ).all({ after: opts.afterRid, limit: opts.limit, ns: opts.collectionKeysOf ?? null }) as (KeyRow & { rid: number })[];
}

export function markKeyRevoked(db: Db, id: string, now: string): KeyRow {
  return stmt(db, 'UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING *').get(now, id) as KeyRow;
}

export function updateKeyNameAndScope(db: Db, id: string, name: string, scope: string): KeyRow {
  return stmt(db, 'UPDATE api_keys SET name = ?, scope = ?, revision = revision + 1 WHERE id = ? RETURNING *').get(name, scope, id) as KeyRow;
}

/** Keys a key issued (its children in the creator chain). */
export function keysCreatedBy(db: Db, creatorId: string): KeyRow[] {
  return stmt(db, 'SELECT * FROM api_keys WHERE created_by = ? ORDER BY rowid').all(creatorId) as KeyRow[];
}

/** Records a use of the key; not an edit (its revision stays). */
export function touchKeyUse(db: Db, id: string, now: string): void {
  stmt(db, 'UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(now, id);
}
