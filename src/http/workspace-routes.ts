// Webhook routes of the workspace API (workspace-api.md; decisions.md §5-6):
// /v1/workspaces/{workspaceId}/webhooks…, camelCase fields. The workspace is a namespace (ID or
// name); out of the key's scope it is 404. Who may do what: see anyWorkspaceKey below.
import { z } from 'zod';
import * as S from '../contract/schemas.js';
import type { Services } from '../domain/context.js';
import type { AuthenticatedKey } from '../domain/keys.js';
import { resolveNamespace } from '../domain/resolve.js';
import {
  createWebhook,
  getWebhookDelivery,
  listWebhookDeliveries,
  listWorkspaceWebhooks,
  patchWebhook,
  presentWebhook,
  removeWebhook,
  replayWebhook,
  resolveWebhook,
  rotateSecret,
  testWebhook,
} from '../domain/webhooks/webhooks.js';
import { route, type RouteDef } from './router.js';
import { restoreBucket } from '../domain/restore.js';
import { patchWorkspaceKey } from '../domain/workspace-keys.js';
import { authenticate } from '../domain/keys.js';
import { TroveError } from '../contract/errors.js';
import type { WebhookRow } from '../store/interface.js';

// `namespace` is the parameter the router resolves (404 outside the key's scope) before authorizing.
const BASE = '/v1/workspaces/{namespace}/webhooks';
const ONE = `${BASE}/{webhookId}`;
// workspace-api.md, Webhook ownership: "A workspace webhook can be created by a workspace API key at
// any role ... is visible to every workspace API key". Every key of the workspace (namespace or
// collection key, whatever its actions) creates and reads webhooks; what a webhook receives, and
// what a caller sees of a delivery log, is bounded by event visibility (src/domain/event-audience.ts).
// Changing one needs `write` on the whole workspace: a collection key cannot alter a workspace-level
// resource that other keys' webhooks share.
const anyWorkspaceKey = { kind: 'any_key' } as const;
const write = { kind: 'action', action: 'write', denyCollectionKeys: true } as const;

const err = (description: string) => ({ description, schema: S.ErrorEnvelope });
const common = { 400: err('invalid_request'), 401: err('unauthenticated'), 403: err('forbidden'), 404: err('not_found') };

// Resolved in the handler, after the permission check: a key of the workspace lacking the action is
// 403 whatever the webhook ID, as on every other workspace-scoped route.
const webhookTarget = async (s: Services, key: AuthenticatedKey, params: Record<'namespace' | 'webhookId', string>): Promise<WebhookRow> =>
  resolveWebhook(s, key, await resolveNamespace(s.store, key, params.namespace), params.webhookId);

export function webhookRoutes(): RouteDef[] {
  return [
    route({
      method: 'PATCH',
      path: '/v1/workspaces/{namespace}/api-keys/{keyId}',
      summary: 'Edit a workspace API key: name, role (within the caller\'s), bucket list; never its kind',
      permission: { kind: 'namespace_or_cluster' },
      body: S.PatchWorkspaceApiKeyRequest,
      responses: { 200: { description: 'the workspace API key', schema: S.WorkspaceApiKeySchema }, 409: err('already_exists'), ...common },
      handler: async ({ s, key, ns, params, body }) => ({ status: 200, body: await patchWorkspaceKey(s, key, ns, params.keyId, body) }),
    }),
    // ---------------------------------------------------------------- restores (workspace-api.md; decisions.md §5)
    route({
      method: 'POST',
      path: '/v1/workspaces/{namespace}/buckets/{bucketId}/restore',
      summary: 'Restore a deleted bucket within its recovery window (editor or higher)',
      permission: { kind: 'action', action: 'write' },
      responses: { 200: { description: 'the restored bucket (collection)', schema: S.CollectionSchema }, 409: err('already_exists'), ...common },
      handler: async ({ s, key, ns, params }) => ({ status: 200, body: await restoreBucket(s, key, ns, params.bucketId) }),
    }),
    route({
      method: 'POST',
      path: '/v1/workspaces/{workspaceId}/restore',
      summary: 'Restore a deleted workspace (operator channel only; API keys get 403)',
      permission: { kind: 'none' },
      responses: { 401: err('unauthenticated'), 403: err('forbidden') },
      handler: async ({ s, req }) => {
        // A human session (the operator channel) restores workspaces; no API key may, whatever its kind.
        const auth = req.headers.authorization;
        const secret = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1] : req.headers['x-api-key'];
        await authenticate(s.store, secret);
        throw new TroveError('forbidden', 'Restoring a workspace needs the operator channel (the local user); API keys cannot restore workspaces.');
      },
    }),

    route({
      method: 'POST',
      path: BASE,
      summary: 'Register a webhook; the signing secret is returned once',
      permission: anyWorkspaceKey,
      body: S.CreateWebhookRequest,
      responses: { 201: { description: 'created', schema: S.WebhookWithSecret }, ...common },
      handler: async ({ s, key, ns, body }) => ({ status: 201, body: await createWebhook(s, key, ns, body) }),
    }),
    route({
      method: 'GET',
      path: BASE,
      summary: "List the workspace's webhooks",
      permission: anyWorkspaceKey,
      query: S.ListQuery,
      responses: { 200: { description: 'page', schema: z.object({ items: z.array(S.WebhookSchema), next_cursor: z.string().nullable() }) }, ...common },
      handler: async ({ s, key, ns, query }) => ({ status: 200, body: await listWorkspaceWebhooks(s, key, ns, query) }),
    }),
    route({
      method: 'GET',
      path: ONE,
      summary: 'Get a webhook',
      permission: anyWorkspaceKey,
      responses: { 200: { description: 'webhook', schema: S.WebhookSchema }, ...common },
      handler: async ({ s, key, params }) => ({ status: 200, body: presentWebhook(await webhookTarget(s, key, params)) }),
    }),
    route({
      method: 'PATCH',
      path: ONE,
      summary: 'Edit a webhook; enabled: false ends pending deliveries as failed',
      permission: write,
      body: S.UpdateWebhookRequest,
      responses: { 200: { description: 'webhook', schema: S.WebhookSchema }, ...common },
      handler: async ({ s, key, ns, body, params }) => ({ status: 200, body: await patchWebhook(s, key, ns, await webhookTarget(s, key, params), body) }),
    }),
    route({
      method: 'DELETE',
      path: ONE,
      summary: 'Delete a webhook and its delivery log',
      permission: write,
      responses: { 204: { description: 'deleted' }, ...common },
      handler: async ({ s, key, params }) => {
        await removeWebhook(s, await webhookTarget(s, key, params));
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: `${ONE}/test`,
      summary: "Send one signed webhook.test event and return the receiver's answer (not logged, no retries)",
      permission: write,
      body: z.strictObject({}),
      responses: { 200: { description: "the receiver's answer", schema: z.object({ status: z.number().nullable(), body: z.string(), error: z.string().optional() }) }, ...common },
      handler: async ({ s, ns, key, params }) => ({ status: 200, body: await testWebhook(s, ns, await webhookTarget(s, key, params)) }),
    }),
    route({
      method: 'POST',
      path: `${ONE}/rotate-secret`,
      summary: 'Replace the signing secret; the previous one keeps signing during the overlap',
      permission: write,
      body: S.RotateWebhookSecretRequest,
      responses: { 200: { description: 'rotated', schema: S.WebhookWithSecret }, ...common },
      handler: async ({ s, body, key, params }) => ({ status: 200, body: await rotateSecret(s, key, await webhookTarget(s, key, params), body.previousSecretExpiresInSeconds) }),
    }),
    route({
      method: 'POST',
      path: `${ONE}/replay`,
      summary: 'Send logged events again (same ID and body, new timestamp and signature)',
      permission: write,
      body: S.ReplayWebhookRequest,
      responses: { 202: { description: 'queued', schema: z.object({ replayed: z.number() }) }, 409: err('webhook_disabled'), ...common },
      handler: async ({ s, body, key, params }) => ({ status: 202, body: await replayWebhook(s, await webhookTarget(s, key, params), body) }),
    }),
    route({
      method: 'GET',
      path: `${ONE}/deliveries`,
      summary: "A page of the webhook's delivery log, newest first",
      permission: anyWorkspaceKey,
      query: S.WebhookDeliveriesQuery,
      responses: { 200: { description: 'page', schema: z.object({ items: z.array(S.WebhookDeliverySchema), next_cursor: z.string().nullable() }) }, ...common },
      handler: async ({ s, key, query, params }) => ({ status: 200, body: await listWebhookDeliveries(s, key, await webhookTarget(s, key, params), query) }),
    }),
    route({
      method: 'GET',
      path: `${ONE}/deliveries/{deliveryId}`,
      summary: 'One delivery: its exact body and every attempt',
      permission: anyWorkspaceKey,
      responses: { 200: { description: 'delivery', schema: S.WebhookDeliveryDetail }, ...common },
      handler: async ({ s, params, key }) => ({ status: 200, body: await getWebhookDelivery(s, key, await webhookTarget(s, key, params), params.deliveryId) }),
    }),
  ];
}
