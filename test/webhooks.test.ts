// Signed webhooks (workspace-api.md: Webhook, States, Verifying a delivery, Limits; decisions.md
// §5-6): routes, URL rules, Standard Webhooks signatures checked by a local receiver with the
// `standardwebhooks` verifier, the retry table on a compressed clock, rotation, replay, test sends,
// and pending deliveries surviving a dispatcher restart.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { Router } from '../src/http/router.js';
import { webhookRoutes } from '../src/http/workspace-routes.js';
import { startWebhookDispatcher, retryDelayMs, classify, progressAfterAttempt, turnOffReason, AUTO_OFF_WINDOW_MS, RETRY_SCHEDULE_MS, MAX_ATTEMPTS, type WebhookDispatcher } from '../src/domain/webhooks/dispatcher.js';
import { checkReceiverUrl, parseReceiverUrl } from '../src/domain/webhooks/transport.js';
import { openApiDocument } from '../src/http/openapi.js';
import { dataPlaneRoutes } from '../src/http/routes.js';
import { CLUSTER_KEY, startFixture, type Fixture } from './helpers/trove.js';
import { PATIENCE_MS } from './helpers/wait.js';

// ---------------------------------------------------------------- a receiver that verifies everything

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  verified: boolean;
  /** Which of the path's secrets verify this delivery on their own. */
  verifiedBy: string[];
  at: number;
}

type Behaviour = (n: number, req: Received) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

interface Receiver {
  url(path: string): string;
  secrets: Map<string, string[]>;
  behaviours: Map<string, Behaviour>;
  got(path: string): Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string[]>();
  const behaviours = new Map<string, Behaviour>();
  const log: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const own = secrets.get(path) ?? [];
      const verifiedBy = own.filter((secret) => {
        try {
          new Webhook(secret).verify(raw, headers);
          return true;
        } catch {
          return false;
        }
      });
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // recorded as unparsable
      }
      const r: Received = { path, headers: req.headers, raw, body, verified: verifiedBy.length > 0, verifiedBy, at: Date.now() };
      log.push(r);
      // A receiver answers 400 to a POST that fails verification (workspace-api.md).
      if (!r.verified) {
        res.writeHead(400).end('bad signature');
        return;
      }
      const n = log.filter((x) => x.path === path).length;
      const behaviour: Behaviour = behaviours.get(path) ?? (() => ({ status: 200 }));
      const answer = behaviour(n, r);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    secrets,
    behaviours,
    got: (path) => log.filter((r) => r.path === path),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------- harness

interface Harness {
  f: Fixture;
  router: Router;
  rx: Receiver;
  dispatcher: WebhookDispatcher;
  call(method: string, url: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  /** Makes one collection.updated event in the namespace (optionally in a given collection). */
  event(ns: string, col: string): Promise<void>;
  restart(options?: { retryScale?: number }): Promise<void>;
}

const SCALE = 0.0001; // 5 s → 0.5 ms; Retry-After 3600 s → 360 ms; 72 h → ~26 s

async function harness(t: { teardown(fn: () => unknown): void }, options: { retryScale?: number; timeoutMs?: number } = {}): Promise<Harness> {
  // The harness drives its own dispatcher (custom timeout, poll and restarts), so the runtime starts none.
  const f = await startFixture({ indexer: false, researchRunner: false, webhookDispatcher: false, webhooks: { allowInsecure: true, timeoutMs: options.timeoutMs ?? PATIENCE_MS } });
  const router = new Router(webhookRoutes(), f.rt.services, { error: (m, fields) => console.error(m, fields) });
  const rx = await startReceiver();
  const start = (scale: number) => startWebhookDispatcher(f.rt.services, { retryScale: scale, pollMs: 20 });
  const h: Harness = {
    f,
    router,
    rx,
    dispatcher: start(options.retryScale ?? SCALE),
    async call(method, url, body, key = CLUSTER_KEY) {
      const res = await router.handle({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? null : Buffer.from(JSON.stringify(body)),
      });
      const text = res.body === null ? '' : res.body.toString();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async event(ns, col) {
      const r = await f.call('PATCH', `/namespaces/${ns}/collections/${col}`, { display_name: `n${Math.random()}` });
      if (r.status !== 200) throw new Error(`event: ${r.status} ${r.text}`);
    },
    async restart(opts = {}) {
      await h.dispatcher.stop();
      h.dispatcher = start(opts.retryScale ?? SCALE);
    },
  };
  // A replay or re-enable wakes the harness's dispatcher, as it wakes the runtime's.
  f.rt.services.wakeWebhookDispatcher = () => h.dispatcher.wake();
  t.teardown(async () => {
    await h.dispatcher.stop();
    await rx.close();
    await f.close();
  });
  return h;
}

async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = PATIENCE_MS): Promise<NonNullable<T>> {
  const started = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

async function seed(h: Harness, ns = 'ws', cols = ['docs']): Promise<void> {
  await h.f.call('POST', '/namespaces', { name: ns, exist_ok: true });
  for (const c of cols) await h.f.call('POST', `/namespaces/${ns}/collections`, { name: c, exist_ok: true });
}

async function hook(h: Harness, path: string, extra: Record<string, unknown> = {}, ns = 'ws'): Promise<{ id: string; secret: string; webhook: any }> {
  const r = await h.call('POST', `/v1/workspaces/${ns}/webhooks`, { name: path, url: h.rx.url(path), ...extra });
  if (r.status !== 201) throw new Error(`create ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  h.rx.secrets.set(path, [r.body.secret]);
  return { id: r.body.webhook.id, secret: r.body.secret, webhook: r.body.webhook };
}

const deliveries = async (h: Harness, id: string, query = '') => (await h.call('GET', `/v1/workspaces/ws/webhooks/${id}/deliveries${query}`)).body.items as any[];

// ---------------------------------------------------------------- tests

t.test('schedule and retry table (pure)', async (t) => {
  t.equal(RETRY_SCHEDULE_MS.length, MAX_ATTEMPTS - 1, 'ten attempts: the first plus nine retries');
  const totalH = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0) / 3600_000;
  t.ok(totalH > 74 && totalH < 77, `about 75 hours (${totalH.toFixed(2)} h)`);
  t.equal(retryDelayMs(1, undefined), 5_000);
  t.equal(retryDelayMs(1, 3_600_000), 3_600_000, 'Retry-After longer than the schedule is honoured');
  t.equal(retryDelayMs(1, 100 * 3_600_000), 24 * 3_600_000, '… up to 24 hours');
  t.equal(retryDelayMs(5, 1_000), RETRY_SCHEDULE_MS[4], 'a shorter Retry-After does not shorten the schedule');
  const c = (status: number | null) => classify({ status, headers: {} });
  t.same(c(204), { kind: 'succeeded' });
  t.same(c(301), { kind: 'failed', disable: false }, '3xx fails; redirects are not followed');
  t.same(c(404), { kind: 'failed', disable: false });
  t.same(c(410), { kind: 'failed', disable: true });
  t.match(c(429), { kind: 'retry' });
  t.match(c(503), { kind: 'retry' });
  t.match(c(null), { kind: 'retry' }, 'no answer / network error is retried');
  t.same(classify({ status: 429, headers: { 'retry-after': '120' } }), { kind: 'retry', retryAfterMs: 120_000 });
});

t.test('a delivery after an attempt, and when its webhook is turned off (pure)', async (t) => {
  const now = 1_000_000_000;
  const fresh = { attempts: 0, round_attempts: 0 };
  const retry = { kind: 'retry', retryAfterMs: undefined } as const;
  t.same(progressAfterAttempt(fresh, { kind: 'succeeded' }, now, 1), { status: 'succeeded', attempts: 1, round_attempts: 1, next_attempt_ms: null });
  t.same(progressAfterAttempt(fresh, retry, now, 1), { status: 'pending', attempts: 1, round_attempts: 1, next_attempt_ms: now + 5_000 }, 'due again after the first wait');
  t.same(progressAfterAttempt(fresh, retry, now, 0.001), { status: 'pending', attempts: 1, round_attempts: 1, next_attempt_ms: now + 5 }, 'the wait times the retry scale');
  t.equal(progressAfterAttempt(fresh, { kind: 'retry', retryAfterMs: 60_000 }, now, 1).next_attempt_ms, now + 60_000, 'a longer Retry-After');
  t.same(progressAfterAttempt({ attempts: 12, round_attempts: MAX_ATTEMPTS - 1 }, retry, now, 1), { status: 'failed', attempts: 13, round_attempts: MAX_ATTEMPTS, next_attempt_ms: null }, 'the last attempt of a round fails');
  t.equal(progressAfterAttempt(fresh, { kind: 'failed', disable: false }, now, 1).status, 'failed', 'a 4xx fails at once');

  const day = 24 * 3600_000;
  const young = { created_ms: now - day, last_success_at: null };
  const old = { created_ms: now - 4 * day, last_success_at: null };
  t.equal(turnOffReason(young, { kind: 'failed', disable: true }, now, 1), 'receiver answered 410');
  t.equal(turnOffReason(young, retry, now, 1), null, 'failing for less than 72 hours');
  t.equal(turnOffReason(old, retry, now, 1), 'no 2xx answer for 72 hours');
  t.equal(turnOffReason({ ...old, last_success_at: now - day }, retry, now, 1), null, 'a success within 72 hours keeps it on');
  t.equal(turnOffReason({ created_ms: now - AUTO_OFF_WINDOW_MS * 0.01 - 1, last_success_at: null }, { kind: 'failed', disable: false }, now, 0.01), 'no 2xx answer for 72 hours', 'the window times the retry scale');
});

t.test('routes: documented in OpenAPI, no clash with the data plane', async (t) => {
  const routes = [...dataPlaneRoutes(), ...webhookRoutes()];
  const doc = openApiDocument(routes) as { paths: Record<string, Record<string, unknown>> };
  const ours = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/workspaces/') && p.includes('/webhooks'));
  t.equal(ours.length, 7, 'seven webhook paths');
  t.equal(ours.reduce((n, p) => n + Object.keys(doc.paths[p]!).length, 0), 10, 'ten operations');
  const seen = new Set(routes.map((r) => `${r.method} ${r.path}`));
  t.equal(seen.size, routes.length, 'no duplicate method and path');
});

t.test('URL rules', async (t) => {
  const secure = { allowInsecure: false };
  const insecure = { allowInsecure: true };
  t.throws(() => parseReceiverUrl('http://example.com/hook', secure), /https/, 'http refused by default');
  t.throws(() => parseReceiverUrl('ftp://example.com/hook', insecure), /https/);
  t.throws(() => parseReceiverUrl('https://user:pw@example.com/hook', secure), /user name or password/);
  t.throws(() => parseReceiverUrl('https://user@example.com/hook', secure), /user name or password/);
  t.throws(() => parseReceiverUrl('https://example.com/hook#frag', secure), /fragment/);
  t.throws(() => parseReceiverUrl('https://example.com/hook#', secure), /fragment/, 'even an empty fragment');
  t.ok(parseReceiverUrl('https://example.com:8443/hook?x=1&y=2', secure), 'a query string and any port are fine');
  await t.rejects(checkReceiverUrl('https://127.0.0.1/hook', secure), /not public/, 'loopback refused by default');
  await t.rejects(checkReceiverUrl('https://10.1.2.3/hook', insecure), /not public/, 'private refused even when insecure is allowed');
  await t.rejects(checkReceiverUrl('https://169.254.169.254/latest', insecure), /not public/, 'link-local (metadata) refused');
  await t.rejects(checkReceiverUrl('https://[::ffff:127.0.0.1]/x', secure), /not public/, 'mapped loopback refused');
  await t.rejects(checkReceiverUrl('https://localhost/hook', secure), /not public/, 'a name resolving to loopback refused');
  await t.rejects(checkReceiverUrl('http://93.184.216.34/hook', insecure), /loopback/, 'insecure allows http only to loopback');
  t.ok(await checkReceiverUrl('http://127.0.0.1:9/hook', insecure), 'http to loopback with --allow-insecure-webhooks');
  t.ok(await checkReceiverUrl('https://93.184.216.34/hook', secure), 'a public address literal');

  const h = await harness(t);
  await seed(h);
  const bad = async (url: string) => (await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'x', url })).body?.error?.code;
  t.equal(await bad('https://u:p@127.0.0.1/x'), 'invalid_request', 'route: userinfo');
  t.equal(await bad('http://127.0.0.1/x#f'), 'invalid_request', 'route: fragment');
  t.equal(await bad('http://10.0.0.1/x'), 'invalid_request', 'route: private address');
  const webhookConfig = h.f.rt.services.webhooks;
  webhookConfig.allowInsecure = false;
  t.equal(await bad(h.rx.url('/x')), 'invalid_request', 'route: http refused when insecure webhooks are not allowed');
  webhookConfig.allowInsecure = true;
  const ok = await hook(h, '/ok');
  webhookConfig.allowInsecure = false;
  t.equal((await h.call('PATCH', `/v1/workspaces/ws/webhooks/${ok.id}`, { url: h.rx.url('/other') })).status, 400, 'checked again at update');
  // …and at every connection: the test send is refused before any byte leaves.
  const test = await h.call('POST', `/v1/workspaces/ws/webhooks/${ok.id}/test`);
  t.equal(test.status, 200);
  t.equal(test.body.status, null, 'no answer: the connection was refused');
  t.match(test.body.error, /https|loopback|public/);
  t.equal(h.rx.got('/ok').length, 0, 'nothing reached the receiver');
  webhookConfig.allowInsecure = true;
});

t.test('CRUD, fields, permissions', async (t) => {
  const h = await harness(t);
  await seed(h, 'ws', ['docs', 'other']);
  await seed(h, 'elsewhere', ['x']);
  const created = await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'main', url: h.rx.url('/main'), eventTypes: ['collection.updated'], bucketIds: ['docs'] });
  t.equal(created.status, 201);
  t.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, 'whsec_ + base64');
  t.ok(Buffer.from(created.body.secret.slice(6), 'base64').length >= 24, '24+ random bytes');
  const w = created.body.webhook;
  const colId = (await h.f.call('GET', '/namespaces/ws/collections/docs')).body.id;
  t.match(w, {
    id: /^whk_/,
    name: 'main',
    url: h.rx.url('/main'),
    eventTypes: ['collection.updated'],
    bucketIds: [colId],
    enabled: true,
    ownerKind: 'workspace',
    disabledReason: null,
    signing: { secretFingerprint: /^sha256:[0-9a-f]{16}$/ },
    createdAt: String,
    updatedAt: String,
  });
  t.notOk(JSON.stringify(w).includes(created.body.secret.slice(6)), 'the secret is never in the webhook');
  const nsId = (await h.f.call('GET', '/namespaces/ws')).body.id;
  t.same((await h.call('GET', `/v1/workspaces/${nsId}/webhooks/${w.id}`)).body, w, 'workspaceId takes the ns_ ID too');
  const list = await h.call('GET', '/v1/workspaces/ws/webhooks');
  t.equal(list.status, 200);
  t.same(list.body, { items: [w], next_cursor: null });

  t.equal((await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'x', url: h.rx.url('/x'), eventTypes: ['nope'] })).status, 400, 'unknown event type');
  t.equal((await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'x', url: h.rx.url('/x'), bucketIds: ['missing'] })).status, 400, 'unknown bucket');
  t.equal((await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'x', url: h.rx.url('/x'), extra: 1 })).status, 400, 'unknown field');
  t.equal((await h.call('GET', '/v1/workspaces/nope/webhooks')).status, 404);
  t.equal((await h.call('GET', '/v1/workspaces/elsewhere/webhooks/' + w.id)).status, 404, 'another workspace’s ID');

  const patched = await h.call('PATCH', `/v1/workspaces/ws/webhooks/${w.id}`, { name: 'renamed', eventTypes: null, bucketIds: null });
  t.equal(patched.status, 200);
  t.match(patched.body, { name: 'renamed', eventTypes: null, bucketIds: null });
  t.equal((await h.call('PATCH', `/v1/workspaces/ws/webhooks/${w.id}`, {})).status, 400, 'an empty patch');

  // Keys: any workspace key creates and reads webhooks ("created by a workspace API key at any role
  // ... visible to every workspace API key"); changing one needs write; another workspace's key sees 404.
  const mk = async (name: string, scope: unknown) => (await h.f.call('POST', '/keys', { name, scope })).body.secret as string;
  const reader = await mk('reader', { kind: 'namespace', namespace: 'ws', actions: ['read'] });
  const writer = await mk('writer', { kind: 'namespace', namespace: 'ws', actions: ['read', 'write'] });
  const stranger = await mk('stranger', { kind: 'namespace', namespace: 'elsewhere', actions: ['read', 'write', 'search', 'query'] });
  const colKey = await mk('colkey', { kind: 'collection', namespace: 'ws', collections: ['docs'], actions: ['read', 'write'] });
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${w.id}`, undefined, reader)).status, 200, 'read: get');
  // Regression (issue 13.10): a viewer-role key was refused with 403 (`write` required).
  const byReader = await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'r', url: h.rx.url('/r') }, reader);
  t.equal(byReader.status, 201, 'a viewer-role key creates a workspace webhook');
  t.equal(byReader.body.webhook?.ownerKind, 'workspace');
  t.equal((await h.call('PATCH', `/v1/workspaces/ws/webhooks/${w.id}`, { name: 'r' }, reader)).status, 403, 'read cannot update');
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks`, undefined, stranger)).status, 404, 'out of scope is 404');
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${w.id}`, undefined, stranger)).status, 404);
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks`, undefined, colKey)).status, 200, 'a collection key (a workspace key with a bucket scope) lists them');
  t.equal((await h.call('PATCH', `/v1/workspaces/ws/webhooks/${w.id}`, { name: 'c' }, colKey)).status, 403, 'a collection key cannot change a workspace webhook');
  const byWriter = await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'w', url: h.rx.url('/w') }, writer);
  t.equal(byWriter.status, 201);
  t.equal(byWriter.body.webhook.ownerKind, 'workspace', 'workspace is the default for an API key');
  t.equal((await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'p', url: h.rx.url('/p'), owner: 'me' }, writer)).status, 403, "an API key cannot own a personal webhook");
  const personal = await h.call('POST', '/v1/workspaces/ws/webhooks', { name: 'p', url: h.rx.url('/p'), owner: 'me' });
  t.equal(personal.body.webhook.ownerKind, 'me', 'the local user (cluster key) may');
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${personal.body.webhook.id}`, undefined, reader)).status, 404, 'a non-admin key does not see personal webhooks');
  t.equal((await h.call('GET', '/v1/workspaces/ws/webhooks', undefined, reader)).body.items.length, 3);

  // Paging
  const p1 = await h.call('GET', '/v1/workspaces/ws/webhooks?limit=3');
  t.equal(p1.body.items.length, 3);
  t.type(p1.body.next_cursor, 'string');
  const p2 = await h.call('GET', `/v1/workspaces/ws/webhooks?limit=3&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
  t.equal(p2.body.items.length, 1);
  t.equal(p2.body.next_cursor, null);

  const del = await h.call('DELETE', `/v1/workspaces/ws/webhooks/${w.id}`);
  t.equal(del.status, 204);
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${w.id}`)).status, 404);
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${w.id}/deliveries`)).status, 404, 'its log went too');
});

t.test('deliveries: signed, one event per POST, filters, only events after creation', async (t) => {
  const h = await harness(t);
  await seed(h, 'ws', ['docs', 'other']);
  await h.event('ws', 'docs'); // before any webhook: never delivered
  const all = await hook(h, '/all');
  const docsOnly = await hook(h, '/docs', { bucketIds: ['docs'], eventTypes: ['collection.updated'] });
  const jobsOnly = await hook(h, '/jobs', { eventTypes: ['job.updated'] });
  await seed(h, 'elsewhere', ['x']);
  await h.f.call('PATCH', '/namespaces/elsewhere/collections/x', { display_name: 'other workspace' });
  await h.event('ws', 'docs');
  await h.event('ws', 'other');
  await waitFor('two deliveries to /all', () => h.rx.got('/all').length >= 2);
  await waitFor('one delivery to /docs', () => h.rx.got('/docs').length >= 1);
  await h.dispatcher.idle();
  const got = h.rx.got('/all');
  t.equal(got.length, 2, 'only events after creation, only this workspace');
  t.ok(got.every((r) => r.verified), 'every delivery verifies with the standardwebhooks verifier');
  for (const r of got) {
    t.equal(r.headers['webhook-id'], r.body.id, 'webhook-id is the event ID');
    t.match(r.body, { id: /^evt_/, type: 'collection.updated', timestamp: String, data: { namespace: 'ws' } });
    t.same(Object.keys(r.body).sort(), ['data', 'id', 'timestamp', 'type']);
    t.match(r.headers['webhook-signature'], /^v1,[A-Za-z0-9+/=]+$/, 'one signature outside a rotation');
    t.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'unix seconds');
    t.equal(r.headers['content-type'], 'application/json');
  }
  t.equal(h.rx.got('/docs').length, 1, 'bucketIds narrows to that bucket');
  t.equal(h.rx.got('/docs')[0]!.body.data.name, 'docs');
  t.equal(h.rx.got('/jobs').length, 0, 'eventTypes narrows');

  const items = await deliveries(h, all.id);
  t.equal(items.length, 2);
  t.match(items[0], { id: /^dlv_/, eventId: /^evt_/, eventType: 'collection.updated', status: 'succeeded', attempts: 1, createdAt: String, updatedAt: String });
  const one = await h.call('GET', `/v1/workspaces/ws/webhooks/${all.id}/deliveries/${items[0].id}`);
  t.equal(one.status, 200);
  t.same(one.body.body, got.find((r) => r.body.id === items[0].eventId)!.body, 'the exact body');
  t.match(one.body.attemptLog, [{ at: String, responseStatus: 200, error: null, durationMs: Number }]);
  t.equal((await deliveries(h, all.id, '?status=failed')).length, 0);
  t.equal((await deliveries(h, all.id, '?status=succeeded')).length, 2);
  t.equal((await h.call('GET', `/v1/workspaces/ws/webhooks/${all.id}/deliveries/dlv_nope`)).status, 404);
  void docsOnly;
  void jobsOnly;
});

t.test('retry table: 500 then 200; 429 with Retry-After; 410; no answer', async (t) => {
  // A receiver that never answers fails its attempt at the answer timeout; the others answer at once.
  const h = await harness(t, { timeoutMs: 2_000 });
  await seed(h);
  const flaky = await hook(h, '/flaky');
  h.rx.behaviours.set('/flaky', (n) => (n <= 2 ? { status: 500 } : { status: 200 }));
  const slow = await hook(h, '/slow');
  h.rx.behaviours.set('/slow', (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '3600' } } : { status: 204 }));
  const gone = await hook(h, '/gone');
  h.rx.behaviours.set('/gone', () => ({ status: 410 }));
  const mute = await hook(h, '/mute');
  h.rx.behaviours.set('/mute', () => 'hang');
  const moved = await hook(h, '/moved');
  h.rx.behaviours.set('/moved', () => ({ status: 302, headers: { location: h.rx.url('/all') } }));
  await h.event('ws', 'docs');

  await waitFor('flaky succeeded', async () => (await deliveries(h, flaky.id))[0]?.status === 'succeeded');
  const f = (await deliveries(h, flaky.id))[0];
  t.equal(f.attempts, 3, '500, 500, then 200');
  const fd = await h.call('GET', `/v1/workspaces/ws/webhooks/${flaky.id}/deliveries/${f.id}`);
  t.same(fd.body.attemptLog.map((a: any) => a.responseStatus), [500, 500, 200]);
  const fr = h.rx.got('/flaky');
  t.equal(new Set(fr.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every retry');
  t.equal(new Set(fr.map((r) => r.raw)).size, 1, 'the same body on every retry');

  await waitFor('429 retried', async () => (await deliveries(h, slow.id))[0]?.status === 'succeeded');
  const sr = h.rx.got('/slow');
  t.equal(sr.length, 2);
  const gap = sr[1]!.at - sr[0]!.at;
  t.ok(gap >= 3600_000 * SCALE - 20, `Retry-After honoured beyond the 5 s step (gap ${gap} ms, scaled 1 h = ${3600_000 * SCALE} ms)`);

  await waitFor('410 failed', async () => (await deliveries(h, gone.id))[0]?.status === 'failed');
  const g = await h.call('GET', `/v1/workspaces/ws/webhooks/${gone.id}`);
  t.match(g.body, { enabled: false, disabledReason: 'failing' }, '410 turns the webhook off');
  t.equal(h.rx.got('/gone').length, 1, 'not retried');

  await waitFor('302 failed', async () => (await deliveries(h, moved.id))[0]?.status === 'failed');
  t.equal(h.rx.got('/all').length, 0, 'the redirect is not followed');

  await waitFor('two unanswered attempts', async () => (await deliveries(h, mute.id))[0]?.attempts >= 2);
  const m = (await deliveries(h, mute.id))[0];
  t.equal(m.status, 'pending', 'no answer is retried');
  const md = await h.call('GET', `/v1/workspaces/ws/webhooks/${mute.id}/deliveries/${m.id}`);
  t.match(md.body.attemptLog[0], { responseStatus: null, error: /no answer|aborted/i });

  // Turning it off ends pending deliveries as failed.
  const off = await h.call('PATCH', `/v1/workspaces/ws/webhooks/${mute.id}`, { enabled: false });
  t.match(off.body, { enabled: false, disabledReason: null });
  t.equal((await deliveries(h, mute.id))[0].status, 'failed', 'pending ended as failed');
  t.equal((await h.call('POST', `/v1/workspaces/ws/webhooks/${mute.id}/replay`, { since: '2000-01-01T00:00:00Z' })).body.error.code, 'webhook_disabled');
  t.equal((await h.call('POST', `/v1/workspaces/ws/webhooks/${mute.id}/replay`, { since: '2000-01-01T00:00:00Z' })).status, 409);
  // Regression (issue 13.11): the off state is reported before the body's completeness.
  for (const body of [{}, { onlyFailed: true }, { onlyFailed: false }]) {
    const r = await h.call('POST', `/v1/workspaces/ws/webhooks/${mute.id}/replay`, body);
    t.same([r.status, r.body.error?.code], [409, 'webhook_disabled'], `replay ${JSON.stringify(body)} on an off webhook`);
  }
});

t.test('72-hour auto-off on a compressed clock', async (t) => {
  const h = await harness(t, { retryScale: 0.000002 }); // 72 h → ~518 ms; the whole schedule ~545 ms
  await seed(h);
  const down = await hook(h, '/down');
  h.rx.behaviours.set('/down', () => ({ status: 503 }));
  await new Promise((r) => setTimeout(r, 600));
  await h.event('ws', 'docs');
  await waitFor('turned off', async () => (await h.call('GET', `/v1/workspaces/ws/webhooks/${down.id}`)).body.enabled === false);
  const w = (await h.call('GET', `/v1/workspaces/ws/webhooks/${down.id}`)).body;
  t.equal(w.disabledReason, 'failing');
  t.equal((await deliveries(h, down.id))[0].status, 'failed');
  // Off records no events.
  await h.event('ws', 'docs');
  await new Promise((r) => setTimeout(r, 100));
  t.equal((await deliveries(h, down.id)).length, 1, 'an off webhook records no events');
  const on = await h.call('PATCH', `/v1/workspaces/ws/webhooks/${down.id}`, { enabled: true });
  t.match(on.body, { enabled: true, disabledReason: null });
});

t.test('a delivery that keeps failing ends failed after 10 attempts', async (t) => {
  const h = await harness(t, { retryScale: 0.000002 });
  await seed(h);
  const down = await hook(h, '/down');
  h.rx.behaviours.set('/down', () => ({ status: 500 }));
  await h.event('ws', 'docs');
  await waitFor('failed', async () => (await deliveries(h, down.id))[0]?.status === 'failed');
  const d = (await deliveries(h, down.id))[0];
  // Within 72 (scaled) hours of creation the webhook stays on, so the round runs to its end.
  t.ok(d.attempts === MAX_ATTEMPTS || (await h.call('GET', `/v1/workspaces/ws/webhooks/${down.id}`)).body.disabledReason === 'failing', `attempts ${d.attempts}`);
  t.ok(h.rx.got('/down').length <= MAX_ATTEMPTS, 'never more than 10 attempts');
});

t.test('rotate-secret: two signatures during the overlap; a second rotation stops the oldest', async (t) => {
  const h = await harness(t);
  await seed(h);
  const w = await hook(h, '/rot');
  const first = w.secret;
  const r1 = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/rotate-secret`, { previousSecretExpiresInSeconds: 3600 });
  t.equal(r1.status, 200);
  const second = r1.body.secret as string;
  t.not(second, first);
  t.not(r1.body.webhook.signing.secretFingerprint, w.webhook.signing.secretFingerprint, 'the fingerprint follows the secret');
  h.rx.secrets.set('/rot', [first, second]);
  await h.event('ws', 'docs');
  const a = await waitFor('delivery after rotation', () => h.rx.got('/rot')[0]);
  t.equal(String(a.headers['webhook-signature']).split(' ').length, 2, 'two space-separated signatures');
  t.same(a.verifiedBy.sort(), [first, second].sort(), 'either secret verifies');

  const r2 = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/rotate-secret`, {});
  const third = r2.body.secret as string;
  h.rx.secrets.set('/rot', [first, second, third]);
  await h.event('ws', 'docs');
  const b = await waitFor('delivery after second rotation', () => h.rx.got('/rot')[1]);
  t.equal(String(b.headers['webhook-signature']).split(' ').length, 2);
  t.same(b.verifiedBy.sort(), [second, third].sort(), 'the oldest secret stopped at once');

  const r3 = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/rotate-secret`, { previousSecretExpiresInSeconds: 0 });
  const fourth = r3.body.secret as string;
  h.rx.secrets.set('/rot', [second, third, fourth]);
  await h.event('ws', 'docs');
  const c = await waitFor('delivery after rotation with no overlap', () => h.rx.got('/rot')[2]);
  t.same(c.verifiedBy, [fourth], '0 stops the previous secret at once');
  t.equal((await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/rotate-secret`, { previousSecretExpiresInSeconds: 604801 })).status, 400);
});

t.test('replay: same event ID and body, new signature; onlyFailed; eventIds', async (t) => {
  const h = await harness(t);
  await seed(h);
  const w = await hook(h, '/rp');
  h.rx.behaviours.set('/rp', (n) => (n === 2 ? { status: 400 } : { status: 200 }));
  await h.event('ws', 'docs');
  await waitFor('first', () => h.rx.got('/rp').length >= 1);
  await h.event('ws', 'docs');
  await waitFor('second', () => h.rx.got('/rp').length >= 2);
  await h.dispatcher.idle();
  const items = await deliveries(h, w.id);
  t.same(items.map((d) => d.status).sort(), ['failed', 'succeeded'], '400 fails without retry');

  await new Promise((r) => setTimeout(r, 1100)); // a new timestamp second
  // Regression (issue 13.11): onlyFailed alone, with no since and no eventIds, was refused with 400.
  const onlyFailed = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, { onlyFailed: true });
  t.equal(onlyFailed.status, 202);
  t.same(onlyFailed.body, { replayed: 1 });
  await waitFor('replayed', () => h.rx.got('/rp').length >= 3);
  const [, failedOnce, replayed] = h.rx.got('/rp');
  t.equal(replayed!.headers['webhook-id'], failedOnce!.headers['webhook-id'], 'same event ID');
  t.equal(replayed!.raw, failedOnce!.raw, 'same body');
  t.not(replayed!.headers['webhook-timestamp'], failedOnce!.headers['webhook-timestamp'], 'new timestamp');
  t.not(replayed!.headers['webhook-signature'], failedOnce!.headers['webhook-signature'], 'new signature');
  t.ok(replayed!.verified);
  await h.dispatcher.idle();
  t.ok((await deliveries(h, w.id)).every((d) => d.status === 'succeeded'));

  const firstId = h.rx.got('/rp')[0]!.body.id;
  const byId = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, { eventIds: [firstId] });
  t.same(byId.body, { replayed: 1 });
  await waitFor('replayed by ID', () => h.rx.got('/rp').length >= 4);
  t.equal(h.rx.got('/rp')[3]!.body.id, firstId);
  const future = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, { since: '2999-01-01T00:00:00Z' });
  t.same(future.body, { replayed: 0 });
  t.equal((await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, {})).status, 400, 'a replay names what to send');
  t.equal((await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, { onlyFailed: false })).status, 400, 'onlyFailed: false alone selects nothing in particular');
  const past = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/replay`, { until: '2000-01-01T00:00:00Z' });
  t.same([past.status, past.body], [202, { replayed: 0 }], 'until alone is a window');
});

t.test('test endpoint: signed webhook.test, answer returned, not logged, works while off', async (t) => {
  const h = await harness(t);
  await seed(h);
  const w = await hook(h, '/t');
  h.rx.behaviours.set('/t', () => ({ status: 202, body: 'thanks' }));
  const r = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/test`);
  t.equal(r.status, 200);
  t.same(r.body, { status: 202, body: 'thanks' });
  const got = h.rx.got('/t')[0]!;
  t.ok(got.verified);
  t.match(got.body, { id: /^evt_/, type: 'webhook.test', data: { webhookId: w.id } });
  t.equal(got.headers['webhook-id'], got.body.id);
  t.equal((await deliveries(h, w.id)).length, 0, 'not in the delivery log');
  await h.call('PATCH', `/v1/workspaces/ws/webhooks/${w.id}`, { enabled: false });
  h.rx.behaviours.set('/t', () => ({ status: 500, body: 'boom' }));
  const off = await h.call('POST', `/v1/workspaces/ws/webhooks/${w.id}/test`);
  t.same(off.body, { status: 500, body: 'boom' }, 'works while off, no retries');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(h.rx.got('/t').length, 2);
});

t.test('pending deliveries survive a dispatcher restart; stopping cuts off requests in flight', async (t) => {
  const h = await harness(t, { timeoutMs: 10_000 });
  await seed(h);
  const w = await hook(h, '/rs');
  let up = false;
  h.rx.behaviours.set('/rs', () => (up ? { status: 200 } : 'hang'));
  await h.event('ws', 'docs');
  await waitFor('first attempt', () => h.rx.got('/rs').length >= 1);
  const stopping = Date.now();
  await h.dispatcher.stop();
  t.ok(Date.now() - stopping < 10_000, 'stop does not wait out the 10 s answer timeout');
  t.equal((await deliveries(h, w.id))[0].status, 'pending', 'the cut-off delivery stays pending');
  // While stopped, the event log keeps growing; the new dispatcher picks up both.
  await h.event('ws', 'docs');
  up = true;
  await h.restart();
  await waitFor('both delivered', async () => {
    const items = await deliveries(h, w.id);
    return items.length === 2 && items.every((d) => d.status === 'succeeded');
  });
  t.pass('delivered after restart');
});

t.test("our signing passes the Standard Webhooks library's published test vector", async (t) => {
  const { signedHeaders } = await import('../src/domain/webhooks/signing.js');
  // The vector of the standard-webhooks libraries' own tests: key, message ID, timestamp, payload.
  const headers = signedHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', '{"test": 2432232314}', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], new Date(1614265330 * 1000));
  t.equal(headers['webhook-id'], 'msg_p5jXN8AQM9LWM0D4loKWxJek');
  t.equal(headers['webhook-timestamp'], '1614265330');
  t.equal(headers['webhook-signature'], 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  const two = signedHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', '{"test": 2432232314}', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_' + Buffer.alloc(24, 7).toString('base64')], new Date(1614265330 * 1000));
  t.match(two['webhook-signature'], /^v1,g0hM9SsE\+OTPJTGt\/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,\S+$/, 'two space-separated signatures during a rotation');
});
