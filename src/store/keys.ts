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
}

export function insertKey(db: Db, row: Omit<KeyRow, 'revoked_at'>): KeyRow {
  return stmt(db, 'INSERT INTO api_keys (id, name, prefix, secret_hash, scope, created_by, created_at) VALUES (@id, @name, @prefix, @secret_hash, @scope, @created_by, @created_at) RETURNING *').get(row) as KeyRow;
}

export function findKeyByPrefix(db: Db, prefix: string): KeyRow | undefined {
  return stmt(db, 'SELECT * FROM api_keys WHERE prefix = ?').get(prefix) as KeyRow | undefined;
}

export function findKeyByName(db: Db, name: string): KeyRow | undefined {
  return stmt(db, 'SELECT * FROM api_keys WHERE name = ?').get(name) as KeyRow | undefined;
}

export function replaceKeySecret(db: Db, id: string, prefix: string, secretHash: Buffer): void {
  stmt(db, 'UPDATE api_keys SET prefix = ?, secret_hash = ?, revoked_at = NULL WHERE id = ?').run(prefix, secretHash, id);
}
