// `trove webhooks create|list|get|update|delete|test|deliveries|replay|rotate`: the webhooks of a
// workspace (a namespace), through the workspace API (decisions.md §6; camelCase fields). Every
// command that takes a webhook takes its ID or its name (resolveWebhook).
import type { z } from 'zod';
import { hasPrefix, looksLikeId } from '../../contract/ids.js';
import type {
  CreateWebhookRequest,
  ReplayWebhookRequest,
  RotateWebhookSecretRequest,
  UpdateWebhookRequest,
  WebhookDeliveryDetail,
  WebhookDeliverySchema,
  WebhookSchema,
  WebhookWithSecret,
} from '../../contract/schemas.js';
import { CliApiError, CliError, type ApiClient } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { keyValues, table, write, writeJson, type Cell } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { closest } from '../../contract/suggest.js';
import { connect, fetchList, parseIntegerFlag, printList, runCommand, seg, type JsonOption, type ListOptions } from './resource-common.js';

/** A webhook as the workspace API shows it (the contract's schema). */
export type Webhook = z.infer<typeof WebhookSchema>;

type Delivery = z.infer<typeof WebhookDeliverySchema>;
type DeliveryDetail = z.infer<typeof WebhookDeliveryDetail>;
type WithSecret = z.infer<typeof WebhookWithSecret>;

interface Scoped extends JsonOption {
  namespace?: string;
}

export interface WebhookCreateOptions extends Scoped {
  eventType?: string[];
  bucket?: string[];
  owner?: string;
}

export interface WebhookUpdateOptions extends Scoped {
  name?: string;
  endpoint?: string;
  eventType?: string[];
  allEvents?: boolean;
  bucket?: string[];
  allBuckets?: boolean;
  enable?: boolean;
  disable?: boolean;
}

export interface WebhookDeleteOptions extends Scoped {
  yes?: boolean;
}

export interface WebhookDeliveriesOptions extends Scoped, ListOptions {
  status?: string;
}

export interface WebhookReplayOptions extends Scoped {
  since?: string;
  until?: string;
  onlyFailed?: boolean;
  event?: string[];
}

export interface WebhookRotateOptions extends Scoped {
  overlap?: string;
}

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'];
const MAX_OVERLAP_S = 604_800;

const base = (namespace: string | undefined) => `/v1/workspaces/${seg(namespace ?? 'default')}/webhooks`;
const one = (namespace: string | undefined, id: string) => `${base(namespace)}/${seg(id)}`;

const listOrAll = (values: string[] | null) => (values === null ? 'all' : values.join(', '));

export const webhookText = (w: Webhook) =>
  keyValues([
    ['id', w.id],
    ['name', w.name],
    ['url', w.url],
    ['enabled', w.enabled ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`],
    ['event types', listOrAll(w.eventTypes)],
    ['buckets', listOrAll(w.bucketIds)],
    ['owner', w.ownerKind],
    ['secret fingerprint', w.signing.secretFingerprint],
    ['created', w.createdAt],
    ['updated', w.updatedAt],
  ]);

async function client(globalOpts: GlobalOptions): Promise<ApiClient> {
  return (await connect(globalOpts)).client;
}

const MAX_LISTED = 10;

/**
 * The webhook a command argument names: a `whk_` ID as is (src/contract/ids.ts), otherwise a name
 * (workspace-api.md "Webhook": `name`), looked up in every page of the workspace's webhooks that the
 * key can see. No match is not_found (exit 5) naming the webhooks there and the closest name; a
 * name that several webhooks share is a usage error (exit 2) listing their IDs, since only an ID
 * says which one.
 */
export async function resolveWebhook(api: ApiClient, namespace: string | undefined, ref: string): Promise<{ id: string; webhook?: Webhook }> {
  if (looksLikeId(ref) && hasPrefix(ref, 'whk')) return { id: ref };
  const workspace = namespace ?? 'default';
  const { items } = await fetchList<Webhook>(api, base(namespace), { all: true });
  const matches = items.filter((w) => w.name === ref);
  if (matches.length === 1) return { id: matches[0]!.id, webhook: matches[0]! };
  if (matches.length > 1) {
    const ids = matches.map((w) => w.id);
    throw new CliError(`${matches.length} webhooks in workspace '${workspace}' are named '${ref}': ${ids.join(', ')}. Give the ID of the one you mean.`, 2, 'ambiguous_name');
  }
  const names = [...new Set(items.map((w) => w.name))];
  const guess = closest(ref, names);
  const listed = names.slice(0, MAX_LISTED).map((n) => `'${n}'`).join(', ') + (names.length > MAX_LISTED ? `, … (${names.length} in all)` : '');
  const message = [
    `No webhook named '${ref}' in workspace '${workspace}'.`,
    guess ? `Did you mean '${guess}'?` : '',
    names.length === 0 ? 'This key sees no webhooks there.' : `Webhooks this key can see there: ${listed}.`,
  ].filter(Boolean).join(' ');
  throw new CliApiError('not_found', message, null, 404, false, { webhook: ref, names });
}

/** The webhook's ID for a command argument that is its ID or its name. */
async function webhookId(api: ApiClient, namespace: string | undefined, ref: string): Promise<string> {
  return (await resolveWebhook(api, namespace, ref)).id;
}

export function runWebhookCreate(name: string, url: string, globalOpts: GlobalOptions, opts: WebhookCreateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    if (opts.owner !== undefined && opts.owner !== 'me' && opts.owner !== 'workspace') throw new CliError(`--owner is 'me' or 'workspace', got '${opts.owner}'.`, 2);
    const body: z.input<typeof CreateWebhookRequest> = { name, url };
    if (opts.eventType !== undefined) body.eventTypes = opts.eventType;
    if (opts.bucket !== undefined) body.bucketIds = opts.bucket;
    if (opts.owner !== undefined) body.owner = opts.owner;
    const created = await (await client(globalOpts)).request<WithSecret>('POST', base(opts.namespace), body);
    if (json) writeJson(created);
    else write(`${webhookText(created.webhook)}secret (shown once, store it now): ${created.secret}\n`);
  });
}

export function runWebhookList(globalOpts: GlobalOptions, opts: ListOptions & Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const result = await fetchList<Webhook>(await client(globalOpts), base(opts.namespace), opts);
    printList(
      json,
      result,
      ['id', 'name', 'enabled', 'owner', 'events', 'url'],
      (w) => [w.id, w.name, w.enabled ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`, w.ownerKind, listOrAll(w.eventTypes), w.url],
      'No webhooks.',
    );
  });
}

export function runWebhookGet(ref: string, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const api = await client(globalOpts);
    const webhook = await api.request<Webhook>('GET', one(opts.namespace, await webhookId(api, opts.namespace, ref)));
    if (json) writeJson(webhook);
    else write(webhookText(webhook));
  });
}

export function runWebhookUpdate(ref: string, globalOpts: GlobalOptions, opts: WebhookUpdateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const body: z.input<typeof UpdateWebhookRequest> = {};
    if (opts.name !== undefined) body.name = opts.name;
    if (opts.endpoint !== undefined) body.url = opts.endpoint;
    if (opts.eventType !== undefined && opts.allEvents) throw new CliError('Give --event-type or --all-events, not both.', 2);
    if (opts.eventType !== undefined) body.eventTypes = opts.eventType;
    if (opts.allEvents) body.eventTypes = null;
    if (opts.bucket !== undefined && opts.allBuckets) throw new CliError('Give --bucket or --all-buckets, not both.', 2);
    if (opts.bucket !== undefined) body.bucketIds = opts.bucket;
    if (opts.allBuckets) body.bucketIds = null;
    if (opts.enable && opts.disable) throw new CliError('Give --enable or --disable, not both.', 2);
    if (opts.enable) body.enabled = true;
    if (opts.disable) body.enabled = false;
    if (Object.keys(body).length === 0) throw new CliError('Nothing to update: pass --name, --endpoint, --event-type/--all-events, --bucket/--all-buckets, --enable or --disable.', 2);
    const api = await client(globalOpts);
    const webhook = await api.request<Webhook>('PATCH', one(opts.namespace, await webhookId(api, opts.namespace, ref)), body);
    if (json) writeJson(webhook);
    else write(webhookText(webhook));
  });
}

export function runWebhookDelete(ref: string, globalOpts: GlobalOptions, opts: WebhookDeleteOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const api = await client(globalOpts);
    // Read first, so that a wrong ID or name fails before anyone is asked to confirm it.
    const resolved = await resolveWebhook(api, opts.namespace, ref);
    const webhook = resolved.webhook ?? (await api.request<Webhook>('GET', one(opts.namespace, resolved.id)));
    await confirmOrRefuse(`Delete webhook ${webhook.name} (${webhook.id}) and its delivery log?`, { yes: opts.yes });
    await api.request('DELETE', one(opts.namespace, webhook.id));
    if (json) writeJson({ deleted: webhook.id });
    else write(`deleted webhook ${webhook.name} (${webhook.id})\n`);
  });
}

export function runWebhookTest(ref: string, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const api = await client(globalOpts);
    const id = await webhookId(api, opts.namespace, ref);
    const answer = await api.request<{ status: number | null; body: string; error?: string }>('POST', `${one(opts.namespace, id)}/test`, {});
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    if (json) writeJson(answer);
    else {
      const pairs: [string, Cell][] = [
        ['receiver answered', answer.status ?? 'nothing'],
        ['error', answer.error],
        ['body', answer.body.length > 0 ? answer.body : undefined],
      ];
      write(keyValues(pairs));
    }
    // The request worked either way; the exit status says whether the receiver accepted the event.
    return ok ? 0 : 1;
  });
}

export function runWebhookDeliveries(ref: string, deliveryId: string | undefined, globalOpts: GlobalOptions, opts: WebhookDeliveriesOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const api = await client(globalOpts);
    if (opts.status !== undefined && !DELIVERY_STATUSES.includes(opts.status)) throw new CliError(`--status is one of ${DELIVERY_STATUSES.join(', ')}, got '${opts.status}'.`, 2);
    const id = await webhookId(api, opts.namespace, ref);
    if (deliveryId !== undefined) {
      const d = await api.request<DeliveryDetail>('GET', `${one(opts.namespace, id)}/deliveries/${seg(deliveryId)}`);
      if (json) writeJson(d);
      else {
        write(keyValues([['delivery', d.id], ['event', `${d.eventId} (${d.eventType})`], ['status', d.status], ['attempts', d.attempts], ['created', d.createdAt], ['updated', d.updatedAt]]));
        if (d.attemptLog.length > 0) write('\n' + table(['at', 'answer', 'ms', 'error'], d.attemptLog.map((a) => [a.at, a.responseStatus, Math.round(a.durationMs), a.error])));
        write(`\nbody: ${JSON.stringify(d.body)}\n`);
      }
      return;
    }
    const result = await fetchList<Delivery>(api, `${one(opts.namespace, id)}/deliveries`, opts, opts.status ? { status: opts.status } : {});
    printList(json, result, ['id', 'event', 'type', 'status', 'attempts', 'updated'], (d) => [d.id, d.eventId, d.eventType, d.status, d.attempts, d.updatedAt], 'No deliveries.');
  });
}

export function runWebhookReplay(ref: string, globalOpts: GlobalOptions, opts: WebhookReplayOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const body: z.input<typeof ReplayWebhookRequest> = {};
    if (opts.event !== undefined) {
      if (opts.since !== undefined || opts.until !== undefined || opts.onlyFailed) throw new CliError('--event replays those events; it takes no --since, --until or --only-failed.', 2);
      body.eventIds = opts.event;
    } else {
      if (opts.since === undefined) throw new CliError('Say what to replay: --since <date-time> [--until <date-time>] [--only-failed], or --event <evt_…>.', 2);
      body.since = checkDate(opts.since, '--since');
      if (opts.until !== undefined) body.until = checkDate(opts.until, '--until');
      if (opts.onlyFailed) body.onlyFailed = true;
    }
    const api = await client(globalOpts);
    const res = await api.request<{ replayed: number }>('POST', `${one(opts.namespace, await webhookId(api, opts.namespace, ref))}/replay`, body);
    if (json) writeJson(res);
    else write(`replaying ${res.replayed} deliver${res.replayed === 1 ? 'y' : 'ies'}\n`);
  });
}

/** The API wants ISO 8601 with a timezone; a bare date or local time would be guessed differently by each side. */
function checkDate(value: string, flag: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new CliError(`${flag} takes an ISO 8601 date-time with a timezone, such as 2024-05-01T12:00:00Z; got '${value}'.`, 2);
  }
  return value;
}

export function runWebhookRotate(ref: string, globalOpts: GlobalOptions, opts: WebhookRotateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const body: z.input<typeof RotateWebhookSecretRequest> = {};
    if (opts.overlap !== undefined) body.previousSecretExpiresInSeconds = parseIntegerFlag(opts.overlap, '--overlap', 0, MAX_OVERLAP_S);
    const api = await client(globalOpts);
    const rotated = await api.request<WithSecret>('POST', `${one(opts.namespace, await webhookId(api, opts.namespace, ref))}/rotate-secret`, body);
    if (json) writeJson(rotated);
    else write(`${webhookText(rotated.webhook)}new secret (shown once, store it now): ${rotated.secret}\n`);
  });
}
