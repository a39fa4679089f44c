import type { KeyReads, KeyRow, KeyWrites, NewKey, StoredScope } from '../aggregates/keys.js';
import type { Db } from './db.js';
import { stmt } from './statements.js';

/** api_keys as stored: the scope is JSON. */
interface KeyRecord extends Omit<KeyRow, 'scope'> {
  scope: string;
}

const keyOf = (record: KeyRecord): KeyRow => ({ ...record, scope: JSON.parse(record.scope) as StoredScope });
const maybeKey = (record: unknown): KeyRow | undefined => (record === undefined ? undefined : keyOf(record as KeyRecord));

export function sqliteKeys(db: Db): KeyReads & KeyWrites {
  return {
    async byPrefix(prefix) {
      return maybeKey(stmt(db, 'SELECT rowid AS rid, * FROM api_keys WHERE prefix = ?').get(prefix));
    },
    async byName(namespaceId, name) {
      return maybeKey(stmt(db, 'SELECT rowid AS rid, * FROM api_keys WHERE name = ? AND namespace_id IS ?').get(name, namespaceId));
    },
    async byId(id) {
      return maybeKey(stmt(db, 'SELECT rowid AS rid, * FROM api_keys WHERE id = ?').get(id));
    },
    async list(opts) {
      const records = stmt(
        db,
        `SELECT rowid AS rid, * FROM api_keys WHERE rowid > @after
           AND (@ns IS NULL OR (namespace_id = @ns AND json_extract(scope, '$.kind') = 'collection'))
         ORDER BY rowid LIMIT @limit`,
      ).all({ after: opts.afterRid, limit: opts.limit, ns: opts.collectionKeysOf ?? null }) as KeyRecord[];
      return records.map(keyOf);
    },
    async createdBy(creatorId) {
      return (stmt(db, 'SELECT rowid AS rid, * FROM api_keys WHERE created_by = ? ORDER BY rowid').all(creatorId) as KeyRecord[]).map(keyOf);
    },
    async insert(key) {
      return insertKey(db, key);
    },
    async replaceSecret(id, prefix, secretHash) {
      stmt(db, 'UPDATE api_keys SET prefix = ?, secret_hash = ?, revoked_at = NULL WHERE id = ?').run(prefix, secretHash, id);
    },
    async markRevoked(id, now) {
      return keyOf(stmt(db, 'UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING rowid AS rid, *').get(now, id) as KeyRecord);
    },
    async updateNameAndScope(id, name, scope) {
      return keyOf(stmt(db, 'UPDATE api_keys SET name = ?, scope = ?, revision = revision + 1 WHERE id = ? RETURNING rowid AS rid, *').get(name, JSON.stringify(scope), id) as KeyRecord);
    },
    async touchUse(id, now) {
      stmt(db, 'UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(now, id);
    },
  };
}

function insertKey(db: Db, key: NewKey): KeyRow {
  const namespaceId = key.scope.kind === 'cluster' ? null : key.scope.namespace_id;
  const record = stmt(
    db,
    `INSERT INTO api_keys (id, name, prefix, secret_hash, scope, namespace_id, created_by, created_at)
     VALUES (@id, @name, @prefix, @secret_hash, @scope, @namespace_id, @created_by, @created_at) RETURNING rowid AS rid, *`,
  ).get({ ...key, scope: JSON.stringify(key.scope), namespace_id: namespaceId }) as KeyRecord;
  return keyOf(record);
}
