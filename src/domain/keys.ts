// API keys: secrets, hashing, verification, and the one permission check every route goes through.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Action } from '../contract/schemas.js';
import { TroveError } from '../contract/errors.js';
import { KEY_SECRET_SHAPE, keyPrefixOf } from '../contract/key-secret.js';
import { newId, nowIso } from '../contract/ids.js';
import type { KeyRow, NamespaceRow, Store, StoreReads, StoreTx, StoredScope } from '../store/interface.js';
import type { CollectionRow } from '../store/interface.js';

export type { StoredScope };

export interface AuthenticatedKey {
  id: string;
  name: string;
  scope: StoredScope;
}

export const CLUSTER_KEY_NAME = 'cluster';

const SECRET_SHAPE = KEY_SECRET_SHAPE;

export function hashSecret(secret: string): Buffer {
  // One-shot: a Hash object per request cost more than the digest itself (issue 15).
  return hash('sha256', secret, 'buffer');
}

/**
 * The non-secret prefix a secret is filed under. Secrets we mint carry it (decisions.md §1:
 * `trove_<prefix>_<random>`); a secret supplied through TROVE_CLUSTER_KEY may be any string, so its
 * prefix is derived from its hash.
 */
export function prefixOf(secret: string, secretHash?: Buffer): string {
  return keyPrefixOf(secret, secretHash);
}

/** Length of the random part of a minted secret: 32 random bytes in base64url (decisions.md §1). */
export const SECRET_RANDOM_CHARS = 43;
/** The least a chosen secret's random part may score in estimatedSecretBits. */
export const MIN_CHOSEN_SECRET_BITS = 128;

/**
 * What is wrong with a secret the caller chose instead of letting trove mint one (seed files: a
 * test suite must know its keys in advance), or null. It must have the minted secrets' format and
 * room for their 32 random bytes, and must not be a pattern: a length check alone would let
 * `trove_testtest_aaaa…` through.
 */
export function chosenSecretProblem(secret: string): string | null {
  const shape = SECRET_SHAPE.exec(secret);
  if (!shape) {
    return "must have the form trove_<prefix>_<random>: 'trove_', a prefix of 8-32 lowercase letters and digits, '_', then the random part in letters, digits, '-' and '_'";
  }
  const random = secret.slice('trove_'.length + shape[1]!.length + 1);
  if (random.length < SECRET_RANDOM_CHARS) {
    return `has a random part of ${random.length} characters; it needs at least ${SECRET_RANDOM_CHARS} (32 random bytes in base64url, or 64 hex digits)`;
  }
  const bits = estimatedSecretBits(random);
  if (bits < MIN_CHOSEN_SECRET_BITS) {
    return `looks guessable: its random part scores about ${Math.floor(bits)} bits once repeats and sequences are discounted, and at least ${MIN_CHOSEN_SECRET_BITS} are needed; generate it from 32 random bytes`;
  }
  return null;
}

/**
 * A deliberately pessimistic strength estimate: log2 of the alphabet the text draws from, for each
 * character that neither repeats a three-character chunk seen before nor continues a run or a
 * sequence (aa, ab, ba). Secrets from 32 random bytes score far above the bar (about 200 bits in
 * base64url, 150 in hex at worst); repeated words, keyboard runs and counting do not.
 */
export function estimatedSecretBits(text: string): number {
  let alphabet: number;
  if (/^[0-9]*$/.test(text)) alphabet = 10;
  else if (/^[0-9a-f]*$/.test(text) || /^[0-9A-F]*$/.test(text)) alphabet = 16;
  else alphabet = (/[a-z]/.test(text) ? 26 : 0) + (/[A-Z]/.test(text) ? 26 : 0) + (/[0-9]/.test(text) ? 10 : 0) + (/[^A-Za-z0-9]/.test(text) ? 2 : 0);
  const seenChunks = new Set<string>();
  let counted = 0;
  for (let i = 0; i < text.length; i++) {
    if (i >= 2) {
      const chunk = text.slice(i - 2, i + 1);
      if (seenChunks.has(chunk)) continue;
      seenChunks.add(chunk);
    }
    if (i > 0 && Math.abs(text.charCodeAt(i) - text.charCodeAt(i - 1)) <= 1) continue;
    counted++;
  }
  return counted * Math.log2(Math.max(alphabet, 1));
}

/** Whether a secret is the one whose hash was stored, in constant time. */
export function secretMatches(storedHash: Buffer, secret: string): boolean {
  const presented = hashSecret(secret);
  return storedHash.length === presented.length && timingSafeEqual(storedHash, presented);
}

export function mintSecret(): { secret: string; prefix: string } {
  const prefix = randomBytes(6).toString('hex').slice(0, 10);
  const secret = `trove_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix };
}

export async function authenticate(store: StoreReads, secret: string | undefined): Promise<AuthenticatedKey> {
  if (!secret) throw new TroveError('unauthenticated', 'Send an API key as "Authorization: Bearer <key>" or "X-API-Key: <key>".');
  const presented = hashSecret(secret);
  const row = await store.keys.byPrefix(prefixOf(secret, presented));
  // Compare even when no row matched, so timing does not reveal which prefixes exist.
  const expected = row?.secret_hash ?? Buffer.alloc(presented.length);
  const matches = expected.length === presented.length && timingSafeEqual(expected, presented);
  if (!row || !matches) throw new TroveError('unauthenticated', 'The API key is invalid.');
  if (row.revoked_at) throw new TroveError('unauthenticated', 'The API key has been revoked.');
  return { id: row.id, name: row.name, scope: row.scope };
}

/** How stale a key's recorded use may get: one write per key per minute at most, whatever the traffic. */
export const KEY_USE_RESOLUTION_MS = 60_000;
const lastNoted = new WeakMap<Store, Map<string, number>>();

/**
 * Records that `key` authenticated a request (workspace-api.md, Workspace API key: lastUsedAt), at
 * most once a minute per key and never in the request's way: the write joins whatever commits next,
 * and a failure to record is dropped (a request is never refused over it).
 */
export function noteKeyUse(store: Store, key: AuthenticatedKey, nowMs = Date.now()): void {
  let noted = lastNoted.get(store);
  if (!noted) lastNoted.set(store, (noted = new Map()));
  if (nowMs - (noted.get(key.id) ?? -Infinity) < KEY_USE_RESOLUTION_MS) return;
  if (noted.size >= 10_000) noted.clear();
  noted.set(key.id, nowMs);
  store.write((tx) => tx.keys.touchUse(key.id, new Date(nowMs).toISOString())).catch(() => undefined);
}

/**
 * Makes sure the cluster key exists. Returns the secret when one was minted (first start) or
 * supplied (TROVE_CLUSTER_KEY), so the daemon can write it to the key file; only its hash is stored.
 */
export async function ensureClusterKey(tx: StoreTx, supplied: string | undefined, mintNew = false): Promise<string | null> {
  const existing = await tx.keys.byName(null, CLUSTER_KEY_NAME);
  if (supplied) {
    if (existing) await tx.keys.replaceSecret(existing.id, prefixOf(supplied), hashSecret(supplied));
    else await insertClusterKey(tx, supplied, prefixOf(supplied));
    return supplied;
  }
  if (existing && !existing.revoked_at && !mintNew) return null;
  const { secret, prefix } = mintSecret();
  if (existing) await tx.keys.replaceSecret(existing.id, prefix, hashSecret(secret));
  else await insertClusterKey(tx, secret, prefix);
  return secret;
}

function insertClusterKey(tx: StoreTx, secret: string, prefix: string): Promise<KeyRow> {
  return tx.keys.insert({
    id: newId('key'),
    name: CLUSTER_KEY_NAME,
    prefix,
    secret_hash: hashSecret(secret),
    scope: { kind: 'cluster' },
    created_by: null,
    created_at: nowIso(),
  });
}

// ------------------------------------------------------------------ permissions

/** What a route needs. `action` routes accept a cluster key or a scoped key holding that action. */
export type Permission =
  | { kind: 'none' }
  | { kind: 'any_key' }
  | { kind: 'cluster' }
  /** A cluster or namespace key (key administration, the event log); collection keys get 403. */
  | { kind: 'namespace_or_cluster' }
  | { kind: 'action'; action: Action; denyCollectionKeys?: boolean };

/** The collections a collection key is limited to, by name; undefined for a key that sees them all. */
export const collectionsInScope = (key: AuthenticatedKey): readonly string[] | undefined => (key.scope.kind === 'collection' ? key.scope.collections : undefined);

export function hasAction(actions: readonly Action[], needed: Action): boolean {
  // "write includes read; search and query are independent" (retrieval-api.md, Key).
  return actions.includes(needed) || (needed === 'read' && actions.includes('write'));
}

export const ALL_ACTIONS: readonly Action[] = ['read', 'write', 'search', 'query'];

/** The actions a stored scope grants: a cluster key holds every action. */
export function actionsOf(scope: StoredScope): readonly Action[] {
  return scope.kind === 'cluster' ? ALL_ACTIONS : scope.actions;
}

/** A key whose actions bound another's: the caller of a change, or the key's creator. */
export interface ActionBound {
  /** How the error names it: "this key", "its creator". */
  role: string;
  scope: StoredScope;
}

/**
 * The one subset check every key-changing path goes through (retrieval-api.md, Authentication 5:
 * "A new key's actions must be a subset of its creator's"; the workspace API's PATCH: a role
 * "cannot exceed the owner's or the caller's role"). Actions are compared as sets, with `write`
 * covering `read` as the Key resource says, never by role rank: a `search`-only key must not be able
 * to mint or raise a key that reads files.
 */
export function assertActionsWithin(actions: readonly Action[], bounds: readonly ActionBound[]): void {
  for (const bound of bounds) {
    const held = actionsOf(bound.scope);
    const missing = actions.filter((a) => !hasAction(held, a));
    if (missing.length > 0) {
      throw new TroveError('forbidden', `A key's actions must be a subset of ${bound.role}'s; ${bound.role} lacks ${missing.map((a) => `'${a}'`).join(', ')}.`, { missing });
    }
  }
}

export function canSeeNamespace(key: AuthenticatedKey, ns: NamespaceRow): boolean {
  return key.scope.kind === 'cluster' || key.scope.namespace_id === ns.id;
}

export function canSeeCollection(key: AuthenticatedKey, ns: NamespaceRow, col: CollectionRow): boolean {
  if (!canSeeNamespace(key, ns)) return false;
  return key.scope.kind !== 'collection' || key.scope.collections.includes(col.name);
}

/**
 * The one permission decision (retrieval-api.md, Authentication 3-4): the caller has already
 * resolved the target through canSee* (outside the scope → 404); here a visible target without the
 * needed action or scope kind is 403.
 */
export function authorize(key: AuthenticatedKey, permission: Permission): void {
  if (permission.kind === 'none' || permission.kind === 'any_key' || key.scope.kind === 'cluster') return;
  if (permission.kind === 'cluster') throw new TroveError('forbidden', 'This operation needs a cluster key.');
  if (permission.kind === 'namespace_or_cluster') {
    if (key.scope.kind === 'namespace') return;
    throw new TroveError('forbidden', 'This operation needs a cluster or namespace key; a collection key cannot perform it.');
  }
  if (permission.denyCollectionKeys && key.scope.kind === 'collection') throw new TroveError('forbidden', 'A collection key cannot perform this operation.');
  if (!hasAction(key.scope.actions, permission.action)) throw new TroveError('forbidden', `This key lacks the '${permission.action}' action.`);
}

