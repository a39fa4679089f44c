// PATCH /v1/workspaces/{workspaceId}/api-keys/{keyId} (workspace-api.md; decisions.md §5): the keys
// of /keys seen as workspace API keys. `role` follows the actions (admin: all four; editor: write,
// search, query; viewer: read, search, query); `bucketScope` {mode: all} is a namespace key,
// {mode: selected} a collection key. A PATCH renames, changes the role within the caller's own, or
// replaces the bucket list; it never changes the kind.
import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { issuesSentence } from '../contract/issues.js';
import { ResourceName, type Action, type PatchWorkspaceApiKeyRequest, type WorkspaceApiKeySchema } from '../contract/schemas.js';
import type { KeyRow, NamespaceRow, StoreReads } from '../store/interface.js';
import type { Services } from './context.js';
import { narrowIssuedKeys } from './key-admin.js';
import { ALL_ACTIONS, CLUSTER_KEY_NAME, assertActionsWithin, type AuthenticatedKey, type StoredScope } from './keys.js';

type Role = 'viewer' | 'editor' | 'admin';
type WorkspaceKey = z.infer<typeof WorkspaceApiKeySchema>;

export const ROLE_ACTIONS: Record<Role, Action[]> = {
  viewer: ['read', 'search', 'query'],
  editor: ['write', 'search', 'query'],
  admin: [...ALL_ACTIONS],
};

const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 };

export function roleOf(actions: readonly Action[]): Role {
  if (ROLE_ACTIONS.admin.every((a) => actions.includes(a))) return 'admin';
  return actions.includes('write') ? 'editor' : 'viewer';
}

async function present(store: StoreReads, ns: NamespaceRow, row: KeyRow): Promise<WorkspaceKey> {
  const scope = row.scope as Extract<StoredScope, { actions: Action[] }>;
  const bucketScope: WorkspaceKey['bucketScope'] =
    scope.kind === 'collection'
      ? { mode: 'selected', bucketIds: await Promise.all(scope.collections.map(async (name) => (await store.collections.find(ns.rid, name))?.id ?? name)) }
      : { mode: 'all' };
  return {
    id: row.id,
    workspaceId: ns.id,
    name: row.name,
    accessKeyId: row.prefix,
    ownerKind: 'workspace',
    ownerId: ns.id,
    role: roleOf(scope.actions),
    kind: scope.kind,
    bucketScope,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: null,
    revokedAt: row.revoked_at,
    revision: row.revision,
  };
}

export async function patchWorkspaceKey(s: Services, caller: AuthenticatedKey, ns: NamespaceRow, keyId: string, body: z.output<typeof PatchWorkspaceApiKeyRequest>): Promise<WorkspaceKey> {
  return await s.store.write(async (tx) => {
    const row = await tx.keys.byId(keyId);
    const scope = row?.scope;
    // The caller administers the key (a cluster key any; a namespace key the collection keys of its workspace).
    const visible =
      row && scope && scope.kind !== 'cluster' && scope.namespace_id === ns.id && (caller.scope.kind === 'cluster' || (caller.scope.kind === 'namespace' && scope.kind === 'collection'));
    if (!row || !scope || scope.kind === 'cluster' || !visible) throw new TroveError('not_found', `API key '${keyId}' not found in workspace '${ns.name}'.`);
    const actions = body.role !== undefined ? ROLE_ACTIONS[body.role] : scope.actions;
    // retrieval-api.md, Authentication 5 and this route's "cannot exceed the owner's or the caller's
    // role": the key's actions after any change stay a subset of the caller's and of its creator's,
    // compared as action sets (a role rank would let a search-only key raise a child to viewer,
    // which reads files). A key whose creator row is gone may only keep or lose actions.
    const creator = row.created_by ? await tx.keys.byId(row.created_by) : undefined;
    const creatorScope: StoredScope = row.created_by === null ? { kind: 'cluster' } : creator ? creator.scope : scope;
    const bounds = [
      { role: 'the calling key', scope: caller.scope },
      { role: `its creator${creator ? ` (${creator.name})` : ''}`, scope: creatorScope },
    ];
    assertActionsWithin(actions, bounds);
    // The role names are ranked too (viewer < editor < admin): as action sets editor and admin grant
    // the same (write covers read), but the document says a role cannot exceed the owner's or the
    // caller's, so an editor does not hand out the admin label.
    if (body.role !== undefined) {
      for (const bound of bounds) {
        if (bound.scope.kind === 'cluster') continue;
        const held = roleOf(bound.scope.actions);
        if (RANK[body.role] > RANK[held]) throw new TroveError('forbidden', `Role '${body.role}' exceeds the role of ${bound.role} (${held}).`);
      }
    }
    let next: StoredScope = { ...scope, actions };
    if (body.bucketScope !== undefined) {
      const wantsCollection = body.bucketScope.mode === 'selected';
      if (wantsCollection !== (scope.kind === 'collection')) {
        throw new TroveError('invalid_request', `bucketScope cannot change a ${scope.kind} key into a ${wantsCollection ? 'collection' : 'namespace'} key: the kind of a key never changes.`);
      }
      if (body.bucketScope.mode === 'selected') {
        const names: string[] = [];
        for (const ref of body.bucketScope.bucketIds) {
          const col = await tx.collections.find(ns.rid, ref);
          if (!col) throw new TroveError('not_found', `Bucket '${ref}' not found in workspace '${ns.name}'.`);
          names.push(col.name);
        }
        next = { kind: 'collection', namespace_id: ns.id, collections: [...new Set(names)], actions };
      }
    }
    let name = row.name;
    if (body.name !== undefined && body.name !== row.name) {
      const parsed = ResourceName.safeParse(body.name);
      if (!parsed.success) throw new TroveError('invalid_request', issuesSentence(parsed.error.issues, { schema: ResourceName, input: body.name, field: 'name' }));
      if (body.name === CLUSTER_KEY_NAME || (await tx.keys.byName(row.namespace_id, body.name))) throw new TroveError('already_exists', `A key named '${body.name}' already exists in this workspace.`);
      name = body.name;
    }
    const updated = await tx.keys.updateNameAndScope(row.id, name, next);
    await narrowIssuedKeys(tx, updated.id, actions);
    return present(tx, ns, updated);
  });
}
