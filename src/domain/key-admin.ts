// Key administration (retrieval-api.md: Key, POST /keys, GET /keys, Authentication 5; decisions.md
// §2: GET /keys/{key_id}, POST /keys/{key_id}:revoke). Who may see a key: a cluster key sees every
// key; a namespace key sees the collection keys of its namespace. Outside that, a key is 404.
import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { hasPrefix, newId, nowIso } from '../contract/ids.js';
import type { Action, CreateKeyRequest, KeyScope } from '../contract/schemas.js';
import type { KeyRow, StoreTx } from '../store/interface.js';
import type { Services } from './context.js';
import { readCursor, requestBinding } from './cursors.js';
import { CLUSTER_KEY_NAME, assertActionsWithin, hasAction, canSeeNamespace, chosenSecretProblem, hashSecret, mintSecret, prefixOf, type AuthenticatedKey, type StoredScope } from './keys.js';
import { pageOf } from './paging.js';

export interface KeyResource {
  id: string;
  name: string;
  prefix: string;
  scope: KeyScope;
  created_at: string;
  revoked_at?: string;
  secret?: string;
}

export async function presentKey(s: Services, row: KeyRow): Promise<KeyResource> {
  const stored = row.scope;
  let scope: KeyScope;
  if (stored.kind === 'cluster') scope = { kind: 'cluster' };
  else {
    // Keys keep naming their namespace after it is deleted; the ID stands in if the row is gone.
    const namespace = (await s.store.namespaces.byId(stored.namespace_id))?.name ?? stored.namespace_id;
    scope = stored.kind === 'namespace' ? { kind: 'namespace', namespace, actions: stored.actions } : { kind: 'collection', namespace, collections: stored.collections, actions: stored.actions };
  }
  const out: KeyResource = { id: row.id, name: row.name, prefix: row.prefix, scope, created_at: row.created_at };
  if (row.revoked_at) out.revoked_at = row.revoked_at;
  return out;
}

/**
 * The key a request was made with, as the Key resource shows it (no secret). GET /info returns it
 * so that any key can learn its own scope and actions: a client (the MCP server) decides from it
 * which operations to offer, without trying them. Not an administrative read: every key sees itself.
 */
export async function presentCaller(s: Services, caller: AuthenticatedKey): Promise<KeyResource> {
  return presentKey(s, (await s.store.keys.byId(caller.id))!);
}

/** A key the caller may administer, or 404: one rule for get, list and revoke. */
function canAdminister(caller: AuthenticatedKey, row: KeyRow): boolean {
  if (caller.scope.kind === 'cluster') return true;
  if (caller.scope.kind !== 'namespace') return false;
  return row.scope.kind === 'collection' && row.scope.namespace_id === caller.scope.namespace_id;
}

export async function resolveKey(s: Services, caller: AuthenticatedKey, keyId: string): Promise<KeyRow> {
  if (!hasPrefix(keyId, 'key')) throw new TroveError('invalid_request', "A key is named by its 'key_' ID (not its secret).");
  const row = await s.store.keys.byId(keyId);
  if (!row || !canAdminister(caller, row)) throw new TroveError('not_found', `Key '${keyId}' not found.`);
  return row;
}

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

/** POST /keys: 201 with the secret, shown this once; only its hash is stored. */
export async function createKey(s: Services, caller: AuthenticatedKey, body: z.output<typeof CreateKeyRequest>): Promise<{ key: KeyResource; secret: string }> {
  const { secret, prefix } = mintSecret();
  const key = await insertNewKey(s, caller, body, secret, prefix);
  return { key: { ...key, secret }, secret };
}

/**
 * A key whose secret the caller chose (seed files: a test suite must know its keys in advance).
 * The same scope and name rules as POST /keys; the secret must look like a minted one
 * (chosenSecretProblem). Only its hash is stored, and the result carries no secret.
 */
export async function createKeyWithSecret(s: Services, caller: AuthenticatedKey, body: z.output<typeof CreateKeyRequest>, secret: string): Promise<KeyResource> {
  const problem = chosenSecretProblem(secret);
  if (problem) throw new TroveError('invalid_request', `The secret of key '${body.name}' ${problem}.`);
  return insertNewKey(s, caller, body, secret, prefixOf(secret));
}

async function insertNewKey(s: Services, caller: AuthenticatedKey, body: z.output<typeof CreateKeyRequest>, secret: string, prefix: string): Promise<KeyResource> {
  const stored = await scopeToStore(s, caller, body.scope);
  const row = await s.store.write(async (tx) => {
    const namespaceId = stored.kind === 'cluster' ? null : stored.namespace_id;
    // Unique within the key's namespace (or among cluster keys): a name taken in another tenant is free here.
    if (body.name === CLUSTER_KEY_NAME || (await tx.keys.byName(namespaceId, body.name))) {
      throw new TroveError('already_exists', `A key named '${body.name}' already exists${namespaceId === null ? ' among cluster keys' : ' in this namespace'}.`);
    }
    // Keys are found by prefix at every request, so a chosen secret cannot share one.
    if (await tx.keys.byPrefix(prefix)) throw new TroveError('already_exists', `Another key already uses the prefix '${prefix}'; give the secret of key '${body.name}' a prefix of its own.`);
    return tx.keys.insert({
      id: newId('key'),
      name: body.name,
      prefix,
      secret_hash: hashSecret(secret),
      scope: stored,
      created_by: caller.id,
      created_at: nowIso(),
    });
  });
  return presentKey(s, row);
}

/**
 * The scope rules of key creation (retrieval-api.md, Authentication 5 and Key): a namespace key
 * issues collection keys in its own namespace only; a new key's actions are a subset of its
 * creator's. A namespace or collection the caller cannot see is 404, even when it exists.
 */
async function scopeToStore(s: Services, caller: AuthenticatedKey, scope: KeyScope): Promise<StoredScope> {
  const callerKind = caller.scope.kind;
  if (scope.kind === 'cluster') {
    if (callerKind !== 'cluster') throw new TroveError('forbidden', 'Only a cluster key can create cluster keys.');
    return { kind: 'cluster' };
  }
  const ns = await s.store.namespaces.find(scope.namespace);
  if (!ns || !canSeeNamespace(caller, ns)) throw new TroveError('not_found', `Namespace '${scope.namespace}' not found.`);
  const actions = unique(scope.actions);
  // The creator is the caller here; PATCH (workspace-keys.ts) bounds by both.
  assertActionsWithin(actions, [{ role: 'its creator (this key)', scope: caller.scope }]);
  if (scope.kind === 'namespace') {
    if (callerKind !== 'cluster') throw new TroveError('forbidden', 'A namespace key can issue collection keys only.');
    return { kind: 'namespace', namespace_id: ns.id, actions };
  }
  const collections = unique(scope.collections);
  for (const name of collections) {
    const col = await s.store.collections.find(ns.rid, name);
    if (!col) throw new TroveError('not_found', `Collection '${name}' not found in namespace '${ns.name}'.`);
    if (col.id === name) throw new TroveError('invalid_request', `Name collections in a key's scope by name, not ID ('${name}' is collection '${col.name}').`);
  }
  return { kind: 'collection', namespace_id: ns.id, collections, actions };
}

export async function listAdministeredKeys(s: Services, caller: AuthenticatedKey, query: { cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([caller.id, 'keys']);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  const collectionKeysOf = caller.scope.kind === 'namespace' ? caller.scope.namespace_id : undefined;
  const rows = await s.store.keys.list({ afterRid: after, limit: query.limit + 1, collectionKeysOf });
  return pageOf(s, rows, query.limit, binding, (row) => presentKey(s, row));
}

/**
 * Revoking is final and repeatable: a revoked key answers 401 from its next request. The keys it
 * issued go with it, and theirs in turn: a key's actions stay a subset of its creator's, and a
 * revoked key holds none (narrowIssuedKeys). Found by an attack: a namespace key's collection keys
 * kept full access after it was revoked, so whoever held it kept its reach through them.
 */
export async function revokeKey(s: Services, row: KeyRow): Promise<KeyResource> {
  if (row.name === CLUSTER_KEY_NAME && row.scope.kind === 'cluster' && row.created_by === null) {
    throw new TroveError('invalid_request', "The daemon's own cluster key cannot be revoked through the API; delete <data-dir>/cluster-key and restart, or start with TROVE_CLUSTER_KEY, to replace it.");
  }
  return presentKey(
    s,
    await s.store.write(async (tx) => {
      const revoked = await tx.keys.markRevoked(row.id, nowIso());
      await narrowIssuedKeys(tx, row.id, []);
      return revoked;
    }),
  );
}

/**
 * Keeps "a key's actions are always a subset of its creator's" (retrieval-api.md, Authentication 5)
 * true after a key loses actions: the keys it issued lose the same ones, and theirs in turn. A key
 * left with no action can do nothing and is revoked, since scoped keys need non-empty actions.
 * Runs inside the caller's transaction.
 */
export async function narrowIssuedKeys(tx: StoreTx, creatorId: string, held: readonly Action[]): Promise<void> {
  for (const child of await tx.keys.createdBy(creatorId)) {
    const scope = child.scope;
    if (scope.kind === 'cluster') {
      // A cluster key holds every action whatever its creator lost, but not past its creator's
      // revocation: it and what it issued go too (found by a review of the cascade).
      if (held.length === 0) {
        await tx.keys.markRevoked(child.id, nowIso());
        await narrowIssuedKeys(tx, child.id, []);
      }
      continue;
    }
    const kept = scope.actions.filter((a) => hasAction(held, a));
    if (kept.length === scope.actions.length) continue;
    if (kept.length === 0) await tx.keys.markRevoked(child.id, nowIso());
    else await tx.keys.updateNameAndScope(child.id, child.name, { ...scope, actions: kept });
    await narrowIssuedKeys(tx, child.id, kept);
  }
}
