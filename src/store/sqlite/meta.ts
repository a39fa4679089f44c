import { randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import { stmt } from './statements.js';

export function getMeta(db: Db, key: string): string | undefined {
  const row = stmt(db, 'SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}


/** A random secret created once per data dir (cursor and signed-URL HMAC keys). */
export function getOrCreateSecret(db: Db, key: string): Buffer {
  const existing = getMeta(db, key);
  if (existing) return Buffer.from(existing, 'base64');
  const secret = randomBytes(32);
  stmt(db, 'INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(key, secret.toString('base64'));
  return Buffer.from(getMeta(db, key)!, 'base64');
}
