// API keys as the store keeps them: a secret's hash filed under its prefix, and a scope.
import type { Action } from '../../contract/schemas.js';

/** A key's scope as stored: namespace and collection scopes name the namespace by its immutable ID. */
export type StoredScope =
  | { kind: 'cluster' }
  | { kind: 'namespace'; namespace_id: string; actions: Action[] }
  | { kind: 'collection'; namespace_id: string; collections: string[]; actions: Action[] };

export interface KeyRow {
  /** Creation order; list cursors carry it. */
  rid: number;
  id: string;
  name: string;
  prefix: string;
  secret_hash: Buffer;
  scope: StoredScope;
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
  /** The namespace of a namespace or collection key; null for cluster keys. */
  namespace_id: string | null;
  /** Bumped by every workspace API edit. */
  revision: number;
  /** When the key last authenticated a request (to the minute); null if never recorded. */
  last_used_at: string | null;
}

/** A key to insert: its namespace is its scope's, and the rest starts blank. */
export type NewKey = Pick<KeyRow, 'id' | 'name' | 'prefix' | 'secret_hash' | 'scope' | 'created_by' | 'created_at'>;

export interface KeyReads {
  /** The key a presented secret is filed under (prefixes are unique). */
  byPrefix(prefix: string): Promise<KeyRow | undefined>;
  /** Key names are unique within a namespace, and among cluster keys (namespaceId null). */
  byName(namespaceId: string | null, name: string): Promise<KeyRow | undefined>;
  byId(id: string): Promise<KeyRow | undefined>;
  /** Keys in creation order after `afterRid`; `collectionKeysOf` narrows to one namespace's collection keys. */
  list(opts: { afterRid: number; limit: number; collectionKeysOf?: string | undefined }): Promise<KeyRow[]>;
  /** The keys a key issued (its children in the creator chain), in creation order. */
  createdBy(creatorId: string): Promise<KeyRow[]>;
}

/** The writes that name a key by `id` need one that exists: the engine rejects otherwise. */
export interface KeyWrites {
  /** The key's namespace is its scope's (null for a cluster key). */
  insert(key: NewKey): Promise<KeyRow>;
  /** A new secret for a key, which is live again (the cluster key at start-up). */
  replaceSecret(id: string, prefix: string, secretHash: Buffer): Promise<void>;
  /** Revoked once: a later revoke keeps the first time. */
  markRevoked(id: string, now: string): Promise<KeyRow>;
  /** An edit: bumps the revision. */
  updateNameAndScope(id: string, name: string, scope: StoredScope): Promise<KeyRow>;
  /** Records a use of the key; not an edit (its revision stays). */
  touchUse(id: string, now: string): Promise<void>;
}
