// Permissions and scope of every data-plane route, checked against the documents, not the code:
// retrieval-api.md (Endpoints' Permission column, Key, Authentication) and decisions.md §2 (the
// "Who" column for routes the contract does not list). The expected table below is written from
// those documents; the route list is imported only so that a route the table does not cover fails.
//
//  1. Matrix: every route × {cluster key, namespace keys with each of the 15 action subsets,
//     collection keys with each of the 15 subsets} → 403 forbidden when the documents forbid it,
//     the real success status when they allow it.
//  2. Scope: resources outside a key's scope are 404 even when they exist (Authentication 3),
//     IDs of another namespace or collection are 404 under this one's paths, revoked keys are
//     401, secrets appear only in the create response.
import t from 'tap';
import { dataPlaneRoutes } from '../src/http/routes.js';
import { CLUSTER_KEY, addInline, seedCollection, startFixture, type Call, type Fixture } from './helpers/trove.js';

// ------------------------------------------------------------------ the documents' rules

type Action = 'read' | 'write' | 'search' | 'query';
const ACTIONS: readonly Action[] = ['read', 'write', 'search', 'query'];
/** The 15 non-empty subsets of the four actions. */
const SUBSETS: Action[][] = [];
for (let m = 1; m < 16; m++) SUBSETS.push(ACTIONS.filter((_, i) => m & (1 << i)));

/** retrieval-api.md, Key: "`write` includes `read`; `search` and `query` are independent and do not include `read`." */
function holds(actions: readonly Action[], needed: Action): boolean {
  return actions.includes(needed) || (needed === 'read' && actions.includes('write'));
}

type Who =
  /** No key at all (health, ready, openapi, the signed URLs themselves). */
  | { who: 'none' }
  | { who: 'any_key' }
  | { who: 'cluster' }
  /** "cluster key, or scoped key with <action>"; `noCollectionKeys`: a collection key is 403 even with the action. */
  | { who: 'action'; action: Action; noCollectionKeys?: true }
  /** "cluster key, or namespace key managing collection keys in its namespace": collection keys are 403. */
  | { who: 'key_admin' }
  /** decisions.md §2 GET /events: "cluster or namespace key". */
  | { who: 'cluster_or_namespace' }
  /** decisions.md §2 research reads: "the creating key or a cluster key". */
  | { who: 'creator' };

interface Expectation {
  who: Who;
  /** The documented success statuses, or 'any' when the outcome past authorization is not predictable here. */
  ok: number[] | 'any';
  doc: string;
}

const NS = '/namespaces/{}';
const COL = `${NS}/collections/{}`;
const A = 'retrieval-api.md Endpoints';
const D = 'decisions.md §2';

/** Keyed by `METHOD path`, every path parameter written `{}`. */
const EXPECTED: Record<string, Expectation> = {
  'GET /health': { who: { who: 'none' }, ok: [200], doc: `${A}: GET /health | none` },
  'GET /ready': { who: { who: 'none' }, ok: [200], doc: `${D}: GET /ready | no key` },
  'GET /openapi.json': { who: { who: 'none' }, ok: [200], doc: `${D}: GET /openapi.json | no key` },
  // decisions.md §2: "PUT {upload.url} | the signed URL itself", "GET {content.url} | the signed URL itself".
  // Their paths are not documented; the test checks below that the URLs the service hands out match these.
  'PUT /uploads/{}': { who: { who: 'none' }, ok: [200], doc: `${D}: PUT {upload.url} | the signed URL itself` },
  'GET /downloads/{}': { who: { who: 'none' }, ok: [200], doc: `${D}: GET {content.url} | the signed URL itself` },

  'GET /info': { who: { who: 'any_key' }, ok: [200], doc: `${A}: GET /info | any key` },

  'POST /namespaces': { who: { who: 'cluster' }, ok: [201], doc: `${D}: POST /namespaces | cluster key` },
  'GET /namespaces': { who: { who: 'any_key' }, ok: [200], doc: `${D}: GET /namespaces | any key` },
  [`GET ${NS}`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${A}: GET /namespaces/{namespace} | cluster key, or scoped key with read` },
  [`PATCH ${NS}`]: { who: { who: 'cluster' }, ok: [200], doc: `${A}: PATCH /namespaces/{namespace} | cluster key` },
  [`DELETE ${NS}`]: { who: { who: 'cluster' }, ok: [202], doc: `${D}: DELETE /namespaces/{ns} | cluster key` },
  [`GET ${NS}/jobs`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET /namespaces/{ns}/jobs | read` },

  [`POST ${NS}/collections`]: {
    who: { who: 'action', action: 'write', noCollectionKeys: true },
    ok: [201],
    doc: `${D}: POST /namespaces/{ns}/collections | cluster, or namespace key with write; retrieval-api.md Key: a collection key "Cannot create collections"`,
  },
  [`GET ${NS}/collections`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET /namespaces/{ns}/collections | read` },
  [`GET ${COL}`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET /namespaces/{ns}/collections/{col} | read` },
  [`PATCH ${COL}`]: { who: { who: 'action', action: 'write' }, ok: [200], doc: `${D}: PATCH /namespaces/{ns}/collections/{col} | write` },
  [`DELETE ${COL}`]: { who: { who: 'action', action: 'write', noCollectionKeys: true }, ok: [202], doc: `${D}: DELETE /namespaces/{ns}/collections/{col} | write (not a collection key)` },
  [`POST ${COL}:reindex`]: { who: { who: 'action', action: 'write' }, ok: [202], doc: `${D}: POST ...:reindex | write` },

  [`POST ${COL}:search`]: { who: { who: 'action', action: 'search' }, ok: [200], doc: `${A}: POST ...:search | cluster key, or scoped key with search` },
  [`POST ${COL}:answer`]: { who: { who: 'action', action: 'query' }, ok: 'any', doc: `${A}: POST ...:answer | cluster key, or scoped key with query` },
  [`POST ${COL}/research`]: { who: { who: 'action', action: 'query' }, ok: [202], doc: `${A}: POST .../research | cluster key, or scoped key with query` },
  [`GET ${COL}/research`]: { who: { who: 'creator' }, ok: [200], doc: `${D}: GET .../research | the creating key (its runs) or a cluster key` },
  [`GET ${COL}/research/{}`]: { who: { who: 'creator' }, ok: [200], doc: `${D}: GET .../research/{run_id} | the creating key or a cluster key` },
  [`POST ${COL}/research/{}:cancel`]: { who: { who: 'creator' }, ok: [200], doc: `${D}: POST .../research/{run_id}:cancel | the creating key or a cluster key` },

  [`POST ${COL}/files`]: { who: { who: 'action', action: 'write' }, ok: [202], doc: `${D}: POST .../files | write` },
  [`GET ${COL}/files`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${A}: GET .../files | cluster key, or scoped key with read` },
  [`GET ${COL}/files/{}`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET .../files/{file} | read` },
  [`PATCH ${COL}/files/{}`]: { who: { who: 'action', action: 'write' }, ok: [200], doc: `${D}: PATCH .../files/{file} | write` },
  [`DELETE ${COL}/files/{}`]: { who: { who: 'action', action: 'write' }, ok: [202], doc: `${D}: DELETE .../files/{file} | write` },
  [`GET ${COL}/files/{}/content`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${A}: GET .../files/{file}/content | cluster key, or scoped key with read` },

  [`POST ${COL}/access-rules`]: { who: { who: 'action', action: 'write' }, ok: [201], doc: `${D}: POST .../access-rules | write` },
  [`GET ${COL}/access-rules`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET .../access-rules | read` },
  [`GET ${COL}/access-rules/{}`]: { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET .../access-rules/{rule_id} | read` },
  [`PATCH ${COL}/access-rules/{}`]: { who: { who: 'action', action: 'write' }, ok: [200], doc: `${A}: PATCH .../access-rules/{rule_id} | cluster key, or scoped key with write` },
  [`DELETE ${COL}/access-rules/{}`]: { who: { who: 'action', action: 'write' }, ok: [204], doc: `${D}: DELETE .../access-rules/{rule_id} | write` },
  [`POST ${COL}/access-rules:batch`]: { who: { who: 'action', action: 'write' }, ok: [200], doc: `${D}: POST .../access-rules:batch | write` },

  'POST /keys': { who: { who: 'key_admin' }, ok: [201], doc: `${A}: POST /keys | cluster key, or namespace key managing collection keys in its namespace` },
  'GET /keys': { who: { who: 'key_admin' }, ok: [200], doc: `${A}: GET /keys | same as create key` },
  'GET /keys/{}': { who: { who: 'key_admin' }, ok: [200], doc: `${D}: GET /keys/{key_id} | as list keys` },
  'POST /keys/{}:revoke': { who: { who: 'key_admin' }, ok: [200], doc: `${D}: POST /keys/{key_id}:revoke | as create key` },

  'GET /jobs/{}': { who: { who: 'action', action: 'read' }, ok: [200], doc: `${D}: GET /jobs/{job} | read in the job's namespace/collection` },
  'POST /jobs/{}:cancel': { who: { who: 'action', action: 'write' }, ok: [200], doc: `${D}: POST /jobs/{job}:cancel | write` },

  'GET /events': { who: { who: 'cluster_or_namespace' }, ok: [200], doc: `${D}: GET /events | cluster or namespace key` },
};

// ------------------------------------------------------------------ keys under test

type Kind = 'cluster' | 'namespace' | 'collection';
interface TestKey {
  label: string;
  kind: Kind;
  actions: Action[];
  secret: string;
  id: string;
}

function allowed(who: Who, k: TestKey): boolean {
  switch (who.who) {
    case 'none':
    case 'any_key':
      return true;
    case 'cluster':
      return k.kind === 'cluster';
    case 'action':
      if (k.kind === 'cluster') return true;
      if (who.noCollectionKeys && k.kind === 'collection') return false;
      return holds(k.actions, who.action);
    case 'key_admin':
    case 'cluster_or_namespace':
      return k.kind !== 'collection';
    case 'creator':
      // The key under test creates the run itself when it can (query); otherwise the cluster key does.
      return k.kind === 'cluster' || holds(k.actions, 'query');
  }
}

const norm = (path: string) => path.replace(/\{[^}]*\}/g, '{}');
const routeKey = (method: string, path: string) => `${method} ${norm(path)}`;

// ------------------------------------------------------------------ fixture state

/** The resources one family of requests runs against. */
interface Ctx {
  ns: string;
  col: string;
  file: string;
  rule: string;
  job: string;
  key: string;
  run: string;
  /** The collection a collection key tries to delete (must be in that key's scope). */
  victim: string;
  /** The collection reindexed (kept apart from `col` so search never meets a reindex). */
  spare: string;
}

let f: Fixture;
let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;

function must(r: Call, status: number, what: string): Call {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text.slice(0, 400)}`);
  return r;
}

const cluster: TestKey = { label: 'cluster', kind: 'cluster', actions: [...ACTIONS], secret: CLUSTER_KEY, id: '' };
const matrixKeys: TestKey[] = [cluster];
let alpha: Ctx;
let beta: Ctx;
let sibling: Ctx;
let nsAll: TestKey; // namespace key of alpha with every action
let nsSearchOnly: TestKey; // namespace key of alpha with search only
let colAll: TestKey; // collection key of alpha/{main,victim} with every action
let colReadOnly: TestKey;
let uploadUrl = '';
let downloadUrl = '';

const as = (k: TestKey, method: string, url: string, body?: unknown, headers: Record<string, string | undefined> = {}) =>
  f.call(method, url, body, { authorization: `Bearer ${k.secret}`, ...headers });

async function createKey(name: string, scope: unknown, by: TestKey = cluster): Promise<Call> {
  return as(by, 'POST', '/keys', { name, scope });
}

async function freshNamespace(): Promise<string> {
  const name = uniq('ns');
  must(await f.call('POST', '/namespaces', { name }), 201, 'fresh namespace');
  return name;
}
async function freshCollection(ns: string): Promise<string> {
  const name = uniq('col');
  must(await f.call('POST', `/namespaces/${ns}/collections`, { name }), 201, 'fresh collection');
  return name;
}
const base = (c: Ctx) => `/namespaces/${c.ns}/collections/${c.col}`;
async function freshFile(c: Ctx): Promise<string> {
  return must(await addInline(f, base(c), `/${uniq('doomed')}.txt`, 'short lived'), 202, 'fresh file').body.file.id;
}
async function freshRule(c: Ctx): Promise<string> {
  return must(await f.call('POST', `${base(c)}/access-rules`, { file: `/${uniq('ruled')}.txt`, readers: ['reader-1'] }), 201, 'fresh rule').body.id;
}
async function freshCollectionKey(c: Ctx): Promise<string> {
  return must(await createKey(uniq('victim-key'), { kind: 'collection', namespace: c.ns, collections: [c.col], actions: ['read'] }), 201, 'fresh key').body.id;
}
/** An upload-source file stays pending, its index_file job queued, until the bytes arrive. */
async function freshQueuedJob(c: Ctx): Promise<string> {
  const r = must(await f.call('POST', `${base(c)}/files`, { path: `/${uniq('waiting')}.txt`, source: { type: 'upload', content_type: 'text/plain' } }), 202, 'upload file');
  return r.body.job.id;
}
async function runFor(k: TestKey, c: Ctx): Promise<string> {
  const creator = k.kind === 'cluster' || holds(k.actions, 'query') ? k : cluster;
  const r = await as(creator, 'POST', `${base(c)}/research`, { query: 'stable', principals: ['reader-1'] }, { 'idempotency-key': uniq('idem') });
  return r.body?.id ?? 'rsr_missing';
}

interface Req {
  params?: Partial<Ctx>;
  body?: unknown;
  headers?: Record<string, string>;
}
type Driver = (k: TestKey, c: Ctx) => Req | Promise<Req>;

const searchBody = { query: 'stable', principals: ['reader-1'] };

/** A valid request per route; destructive routes get fresh resources. */
const DRIVERS: Record<string, Driver> = {
  'GET /info': () => ({}),
  'POST /namespaces': () => ({ body: { name: uniq('made') } }),
  'GET /namespaces': () => ({}),
  [`GET ${NS}`]: () => ({}),
  [`PATCH ${NS}`]: () => ({ body: { display_name: uniq('label') } }),
  // A scoped key is aimed at its own namespace (which has collections: without force even a wrong
  // "yes" cannot delete it); the cluster key gets a fresh, empty one.
  [`DELETE ${NS}`]: async (k) => (k.kind === 'cluster' ? { params: { ns: await freshNamespace() } } : {}),
  [`GET ${NS}/jobs`]: () => ({}),
  [`POST ${NS}/collections`]: () => ({ body: { name: uniq('made') } }),
  [`GET ${NS}/collections`]: () => ({}),
  [`GET ${COL}`]: () => ({}),
  [`PATCH ${COL}`]: () => ({ body: { display_name: uniq('label') } }),
  [`DELETE ${COL}`]: async (k, c) => (k.kind === 'collection' ? { params: { col: c.victim } } : { params: { col: await freshCollection(c.ns) } }),
  [`POST ${COL}:reindex`]: (_k, c) => ({ params: { col: c.spare } }),
  [`POST ${COL}:search`]: () => ({ body: searchBody }),
  [`POST ${COL}:answer`]: () => ({ body: searchBody }),
  [`POST ${COL}/research`]: () => ({ body: searchBody, headers: { 'idempotency-key': uniq('idem') } }),
  [`GET ${COL}/research`]: () => ({}),
  [`GET ${COL}/research/{}`]: async (k, c) => ({ params: { run: await runFor(k, c) } }),
  [`POST ${COL}/research/{}:cancel`]: async (k, c) => ({ params: { run: await runFor(k, c) } }),
  [`POST ${COL}/files`]: () => ({ body: { path: `/${uniq('added')}.txt`, source: { type: 'inline', text: 'added text' } } }),
  [`GET ${COL}/files`]: () => ({}),
  [`GET ${COL}/files/{}`]: () => ({}),
  [`PATCH ${COL}/files/{}`]: () => ({ body: { metadata: { touched: uniq('m') } } }),
  [`DELETE ${COL}/files/{}`]: async (_k, c) => ({ params: { file: await freshFile(c) } }),
  [`GET ${COL}/files/{}/content`]: () => ({}),
  [`POST ${COL}/access-rules`]: () => ({ body: { file: `/${uniq('ruled')}.txt`, readers: ['reader-1'] } }),
  [`GET ${COL}/access-rules`]: () => ({}),
  [`GET ${COL}/access-rules/{}`]: () => ({}),
  [`PATCH ${COL}/access-rules/{}`]: () => ({ body: { add_readers: [uniq('reader')] } }),
  [`DELETE ${COL}/access-rules/{}`]: async (_k, c) => ({ params: { rule: await freshRule(c) } }),
  [`POST ${COL}/access-rules:batch`]: () => ({ body: { operations: [{ op: 'upsert', file: `/${uniq('batch')}.txt`, readers: ['reader-1'] }] } }),
  // A namespace key may issue collection keys in its namespace with actions ⊆ its own: ask for exactly its own.
  'POST /keys': (k, c) => ({ body: { name: uniq('issued'), scope: { kind: 'collection', namespace: c.ns, collections: [c.col], actions: k.kind === 'cluster' ? [...ACTIONS] : k.actions } } }),
  'GET /keys': () => ({}),
  'GET /keys/{}': () => ({}),
  'POST /keys/{}:revoke': async (_k, c) => ({ params: { key: await freshCollectionKey(c) } }),
  'GET /jobs/{}': () => ({}),
  'POST /jobs/{}:cancel': async (_k, c) => ({ params: { job: await freshQueuedJob(c) } }),
  'GET /events': () => ({}),
};

/** Which Ctx field fills a `{}` segment: decided by the documented collection name before it. */
const PARAM_AFTER: Record<string, keyof Ctx> = {
  namespaces: 'ns',
  collections: 'col',
  files: 'file',
  'access-rules': 'rule',
  jobs: 'job',
  keys: 'key',
  research: 'run',
};

function fill(template: string, c: Ctx): string {
  const segs = template.split('/');
  return segs
    .map((seg, i) => {
      if (!seg.startsWith('{}')) return seg;
      const field = PARAM_AFTER[segs[i - 1] ?? ''];
      if (!field) throw new Error(`cannot fill ${template}`);
      return encodeURIComponent(c[field]) + seg.slice(2);
    })
    .join('/');
}

async function send(routeK: string, k: TestKey, c: Ctx, auth: Record<string, string | undefined> | null = null): Promise<{ r: Call; url: string }> {
  const [method, template] = routeK.split(' ') as [string, string];
  const req = await DRIVERS[routeK]!(k, c);
  const url = fill(template, { ...c, ...req.params });
  const headers = { ...(req.headers ?? {}), ...(auth ?? { authorization: `Bearer ${k.secret}` }) };
  const r = await f.call(method, url, req.body, headers);
  return { r, url };
}

const show = (r: Call) => `${r.status} ${r.body?.error?.code ?? ''} ${r.body?.error?.message ?? ''}`.trim();

// ------------------------------------------------------------------ route inventory

const implemented = dataPlaneRoutes();
const implKeys = implemented.map((r) => routeKey(r.method, r.path));
/** Destructive routes on shared resources run last, so a wrong "yes" cannot hide later checks. */
const LAST = [`DELETE ${COL}`, `DELETE ${NS}`];
const keyedRoutes = implKeys.filter((k) => EXPECTED[k] && EXPECTED[k].who.who !== 'none' && DRIVERS[k]).sort((a, b) => LAST.indexOf(a) - LAST.indexOf(b));

t.before(async () => {
  f = await startFixture();

  // alpha: main (enforced, the collection under test), victim (for collection keys' delete and for reindex), sibling.
  const a = await seedCollection(f, 'alpha', 'main', { access_control: 'enforced' });
  await seedCollection(f, 'alpha', 'victim');
  await seedCollection(f, 'alpha', 'sibling', { access_control: 'enforced' });
  await seedCollection(f, 'beta', 'main', { access_control: 'enforced' });

  async function stable(ns: string, col: string, victim: string, spare: string): Promise<Ctx> {
    const b = `/namespaces/${ns}/collections/${col}`;
    // reader-1 reads the stable file: to principals who read no file the collection is empty, and answers and research runs are refused.
    must(await f.call('POST', `${b}/access-rules`, { file: '/stable.txt', readers: ['reader-1'] }), 201, 'rule of the stable file');
    const added = must(await addInline(f, b, '/stable.txt', 'stable words for a stable search'), 202, 'stable file');
    const rule = must(await f.call('POST', `${b}/access-rules`, { file: '/ruled.txt', readers: ['reader-1'] }), 201, 'stable rule');
    const key = must(await createKey(uniq(`${ns}-${col}-target`), { kind: 'collection', namespace: ns, collections: [col], actions: ['read'] }), 201, 'stable key');
    return { ns, col, file: added.body.file.id, rule: rule.body.id, job: added.body.job.id, key: key.body.id, run: 'rsr_none', victim, spare };
  }
  alpha = await stable('alpha', 'main', 'victim', 'victim');
  beta = await stable('beta', 'main', 'main', 'main');
  sibling = await stable('alpha', 'sibling', 'sibling', 'sibling');
  await f.waitForIdle('alpha', 'main');
  await f.waitForIdle('beta', 'main');
  await f.waitForIdle('alpha', 'sibling');

  for (const actions of SUBSETS) {
    const tag = actions.map((x) => x[0]).join('');
    const n = must(await createKey(`ns-${tag}`, { kind: 'namespace', namespace: 'alpha', actions }), 201, 'namespace key');
    matrixKeys.push({ label: `namespace key [${actions.join(',')}]`, kind: 'namespace', actions, secret: n.body.secret, id: n.body.id });
  }
  for (const actions of SUBSETS) {
    const tag = actions.map((x) => x[0]).join('');
    const c = must(await createKey(`col-${tag}`, { kind: 'collection', namespace: 'alpha', collections: ['main', 'victim'], actions }), 201, 'collection key');
    matrixKeys.push({ label: `collection key [${actions.join(',')}]`, kind: 'collection', actions, secret: c.body.secret, id: c.body.id });
  }
  const find = (kind: Kind, acts: Action[]) => matrixKeys.find((k) => k.kind === kind && k.actions.join() === acts.join())!;
  nsAll = find('namespace', [...ACTIONS]);
  nsSearchOnly = find('namespace', ['search']);
  colAll = find('collection', [...ACTIONS]);
  colReadOnly = find('collection', ['read']);

  const up = must(await f.call('POST', `${a.base}/files`, { path: '/uploaded.txt', source: { type: 'upload', content_type: 'text/plain' } }), 202, 'upload');
  uploadUrl = up.body.upload.url;
  downloadUrl = must(await f.call('GET', `${a.base}/files/${alpha.file}/content`), 200, 'content').body.url;
});
t.teardown(() => f?.close());

// ------------------------------------------------------------------ 0. the table covers the routes

t.test('every implemented route has a documented permission in this test', async (t) => {
  const uncovered = implKeys.filter((k) => !EXPECTED[k]);
  t.same(uncovered, [], 'routes with no expected permission from the documents (add them to EXPECTED)');
  const undriven = implKeys.filter((k) => EXPECTED[k] && EXPECTED[k].who.who !== 'none' && !DRIVERS[k]);
  t.same(undriven, [], 'keyed routes with no request driver');
  t.equal(new Set(implKeys).size, implKeys.length, 'no route is declared twice');
  for (const k of Object.keys(EXPECTED)) {
    if (!implKeys.includes(k)) t.comment(`documented but not implemented (not checked): ${k} — ${EXPECTED[k]!.doc}`);
  }
});

t.test('only health, ready, openapi and the signed URLs need no key', async (t) => {
  const noneImpl = implemented.filter((r) => r.permission.kind === 'none').map((r) => routeKey(r.method, r.path));
  const noneDocs = implKeys.filter((k) => EXPECTED[k]?.who.who === 'none');
  t.same([...noneImpl].sort(), [...noneDocs].sort(), 'the routes marked "no key" are exactly the documented ones');

  // The signed-URL entries must be the URLs the service really hands out.
  const pathOf = (u: string) => new URL(u, 'http://x').pathname;
  const matches = (template: string, path: string) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\}/g, '[^/]+')}$`).test(path);
  t.ok(matches('/uploads/{}', pathOf(uploadUrl)), `upload.url ${pathOf(uploadUrl)} is the PUT /uploads/{} route`);
  t.ok(matches('/downloads/{}', pathOf(downloadUrl)), `content url ${pathOf(downloadUrl)} is the GET /downloads/{} route`);

  const noKey = { authorization: undefined };
  t.equal((await f.call('GET', '/health', undefined, noKey)).status, 200, 'GET /health without a key');
  if (implKeys.includes('GET /ready')) t.equal((await f.call('GET', '/ready', undefined, noKey)).status, 200, 'GET /ready without a key');
  if (implKeys.includes('GET /openapi.json')) t.equal((await f.call('GET', '/openapi.json', undefined, noKey)).status, 200, 'GET /openapi.json without a key');
  const u = new URL(uploadUrl, 'http://x');
  const put = await f.raw('PUT', u.pathname + u.search, 'uploaded bytes', { authorization: undefined, 'content-type': 'text/plain' });
  t.equal(put.status, 200, `PUT upload URL without a key: ${show(put)}`);
  const d = new URL(downloadUrl, 'http://x');
  const got = await f.raw('GET', d.pathname + d.search, null, noKey);
  t.equal(got.status, 200, 'GET download URL without a key');
  t.equal(got.text, 'stable words for a stable search');
});

t.test('every keyed route is 401 without a key, with an unknown key', async (t) => {
  for (const rk of keyedRoutes) {
    const missing = await send(rk, cluster, alpha, { authorization: undefined });
    t.equal(missing.r.status, 401, `${rk} without a key: ${show(missing.r)}`);
    t.equal(missing.r.body?.error?.code, 'unauthenticated', `${rk} without a key: code`);
    const bogus = await send(rk, cluster, alpha, { authorization: 'Bearer trove_abcdefgh_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    t.equal(bogus.r.status, 401, `${rk} with an unknown key: ${show(bogus.r)}`);
  }
});

// ------------------------------------------------------------------ 1. the permission matrix

t.test('permission matrix: route × key kind × actions', async (t) => {
  t.equal(matrixKeys.length, 31, 'cluster + 15 namespace + 15 collection keys');
  for (const rk of keyedRoutes) {
    const exp = EXPECTED[rk]!;
    await t.test(rk, async (t) => {
      for (const k of matrixKeys) {
        const { r, url } = await send(rk, k, alpha);
        const what = `${k.label} ${rk.split(' ')[0]} ${url}`;
        if (allowed(exp.who, k)) {
          if (exp.ok === 'any') t.notOk([401, 403, 404].includes(r.status), `${what} is allowed: got ${show(r)} (${exp.doc})`);
          else t.ok(exp.ok.includes(r.status), `${what} is allowed → ${exp.ok.join('/')}: got ${show(r)} (${exp.doc})`);
          if (rk === 'POST /jobs/{}:cancel' && r.status === 200) t.equal(r.body.status, 'canceled', `${what}: the job ends canceled`);
          if (rk === 'POST /keys/{}:revoke' && r.status === 200) t.type(r.body.revoked_at, 'string', `${what}: revoked_at is set`);
          if (rk === 'POST /keys' && r.status === 201) t.type(r.body.secret, 'string', `${what}: the create response carries the secret`);
        } else if (exp.who.who === 'creator') {
          // "Only the creating key, or a cluster key": the documents do not say 403 or 404 for others.
          t.ok([403, 404].includes(r.status), `${what} is refused (not the creator): got ${show(r)} (${exp.doc})`);
        } else {
          t.equal(r.status, 403, `${what} is forbidden: got ${show(r)} (${exp.doc})`);
          t.equal(r.body?.error?.code, 'forbidden', `${what}: error.code`);
        }
      }
    });
  }
});

// ------------------------------------------------------------------ 2. scope

const namesParam = (rk: string) => rk.includes('{}');

t.test("a namespace key asking for another namespace's resources gets 404, whatever its actions", async (t) => {
  for (const k of [nsAll, nsSearchOnly]) {
    for (const rk of keyedRoutes.filter(namesParam)) {
      const { r, url } = await send(rk, k, beta);
      t.equal(r.status, 404, `${k.label} ${rk.split(' ')[0]} ${url} (beta's): got ${show(r)}`);
      t.equal(r.body?.error?.code, 'not_found', `${k.label} ${url}: code`);
    }
  }
  // By immutable ID as well as by name.
  const betaNs = (await f.call('GET', '/namespaces/beta')).body;
  const betaCol = (await f.call('GET', '/namespaces/beta/collections/main')).body;
  for (const url of [`/namespaces/${betaNs.id}`, `/namespaces/${betaNs.id}/collections/${betaCol.id}`, `/namespaces/beta/collections/${betaCol.id}/files`]) {
    const r = await as(nsAll, 'GET', url);
    t.equal(r.status, 404, `${nsAll.label} GET ${url}: got ${show(r)}`);
  }
  // Existing and absent look the same.
  const there = await as(nsAll, 'GET', '/namespaces/beta');
  const absent = await as(nsAll, 'GET', '/namespaces/no-such-namespace');
  t.same([there.status, there.body?.error?.code], [absent.status, absent.body?.error?.code], 'an out-of-scope namespace answers like an absent one');
  // A key naming another namespace in its body: that namespace is outside the key's scope (Authentication 3).
  for (const ns of ['beta', 'no-such-namespace']) {
    const r = await createKey(uniq('cross'), { kind: 'collection', namespace: ns, collections: ['main'], actions: ['read'] }, nsAll);
    t.equal(r.status, 404, `${nsAll.label} POST /keys for a collection of namespace ${ns}: got ${show(r)}`);
  }
  // Lists show only what the key can see.
  const nss = await as(nsAll, 'GET', '/namespaces?limit=100');
  t.same(nss.body.items.map((n: { name: string }) => n.name), ['alpha'], 'GET /namespaces lists only the key\'s namespace');
});

t.test('a collection key asking for a sibling collection gets 404, whatever its actions', async (t) => {
  const colRoutes = keyedRoutes.filter((rk) => rk.includes('/collections/{}'));
  for (const k of [colAll, colReadOnly]) {
    for (const rk of colRoutes) {
      const { r, url } = await send(rk, k, sibling);
      t.equal(r.status, 404, `${k.label} ${rk.split(' ')[0]} ${url} (sibling's): got ${show(r)}`);
      t.equal(r.body?.error?.code, 'not_found', `${k.label} ${url}: code`);
    }
    for (const rk of ['GET /jobs/{}', 'POST /jobs/{}:cancel'].filter((x) => keyedRoutes.includes(x))) {
      const { r, url } = await send(rk, k, sibling);
      t.equal(r.status, 404, `${k.label} ${rk.split(' ')[0]} ${url} (sibling's job): got ${show(r)}`);
    }
  }
  const sib = (await f.call('GET', '/namespaces/alpha/collections/sibling')).body;
  const r = await as(colAll, 'GET', `/namespaces/alpha/collections/${sib.id}`);
  t.equal(r.status, 404, `sibling by its col_ ID: got ${show(r)}`);

  // Its lists show only its collections, and only their jobs.
  const cols = await as(colAll, 'GET', '/namespaces/alpha/collections?limit=100');
  t.equal(cols.status, 200);
  t.same(cols.body.items.map((c: { name: string }) => c.name).sort(), ['main', 'victim'], 'GET collections lists only the key\'s collections');
  const seen = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: Call = await as(colAll, 'GET', `/namespaces/alpha/jobs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.equal(page.status, 200, 'GET /namespaces/alpha/jobs');
    if (page.status !== 200) break;
    for (const j of page.body.items) seen.add(String(j.collection));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.notOk(seen.has('sibling'), `the job list of a collection key shows no job of a sibling collection (saw ${[...seen].join(', ')})`);
  // A collection key with read may read its containing namespace (retrieval-api.md GET /namespaces/{namespace}).
  t.equal((await as(colReadOnly, 'GET', '/namespaces/alpha')).status, 200, 'a collection key with read reads its namespace');
});

t.test('IDs of another namespace or collection are 404 under this collection\'s path', async (t) => {
  const m = '/namespaces/alpha/collections/main';
  const cases = (foreign: Ctx) => [
    ['GET', `${m}/files/${foreign.file}`, undefined],
    ['PATCH', `${m}/files/${foreign.file}`, { metadata: { x: 1 } }],
    ['GET', `${m}/files/${foreign.file}/content`, undefined],
    ['DELETE', `${m}/files/${foreign.file}`, undefined],
    ['GET', `${m}/access-rules/${foreign.rule}`, undefined],
    ['PATCH', `${m}/access-rules/${foreign.rule}`, { add_readers: ['x'] }],
    ['DELETE', `${m}/access-rules/${foreign.rule}`, undefined],
  ] as const;
  const betaCol = (await f.call('GET', '/namespaces/beta/collections/main')).body;
  for (const k of [cluster, nsAll, colAll]) {
    for (const foreign of [beta, sibling]) {
      for (const [method, url, body] of cases(foreign)) {
        const r = await as(k, method, url, body);
        t.equal(r.status, 404, `${k.label} ${method} ${url} (${foreign.ns}/${foreign.col}'s ID under alpha/main): got ${show(r)}`);
        t.equal(r.body?.error?.code, 'not_found', `${k.label} ${method} ${url}: code`);
      }
    }
    const r = await as(k, 'GET', `/namespaces/alpha/collections/${betaCol.id}`);
    t.equal(r.status, 404, `${k.label}: beta's col_ ID under namespace alpha: got ${show(r)}`);
  }
  for (const [method, url] of [
    ['GET', `/jobs/${beta.job}`],
    ['GET', `/keys/${beta.key}`],
    ['POST', `/keys/${beta.key}:revoke`],
  ] as const) {
    const r = await as(nsAll, method, url);
    t.equal(r.status, 404, `${nsAll.label} ${method} ${url} (beta's): got ${show(r)}`);
  }
  // The foreign resources are untouched.
  t.equal((await f.call('GET', `/namespaces/beta/collections/main/files/${beta.file}`)).status, 200, "beta's file still exists");
  t.equal((await f.call('GET', `/namespaces/beta/collections/main/access-rules/${beta.rule}`)).status, 200, "beta's rule still exists");
  t.notOk((await f.call('GET', `/keys/${beta.key}`)).body.revoked_at, "beta's key is not revoked");
});

t.test('key issuing by a namespace key: collection keys in its namespace, actions within its own', async (t) => {
  const issuer = must(await createKey(uniq('issuer'), { kind: 'namespace', namespace: 'alpha', actions: ['read', 'search'] }), 201, 'issuer');
  const k: TestKey = { label: 'namespace key [read,search]', kind: 'namespace', actions: ['read', 'search'], secret: issuer.body.secret, id: issuer.body.id };
  const col = (actions: Action[]) => ({ kind: 'collection', namespace: 'alpha', collections: ['main'], actions });
  for (const actions of [['read'], ['search'], ['read', 'search']] as Action[][]) {
    const r = await createKey(uniq('ok'), col(actions), k);
    t.equal(r.status, 201, `a collection key with [${actions}] ⊆ [read,search]: got ${show(r)}`);
  }
  for (const actions of [['write'], ['query'], ['read', 'write'], ['search', 'query']] as Action[][]) {
    const r = await createKey(uniq('no'), col(actions), k);
    t.equal(r.status, 403, `a collection key with [${actions}] ⊄ [read,search]: got ${show(r)}`);
    t.equal(r.body?.error?.code, 'forbidden');
  }
  const nsScope = await createKey(uniq('no'), { kind: 'namespace', namespace: 'alpha', actions: ['read'] }, k);
  t.equal(nsScope.status, 403, `a namespace key cannot issue a namespace key: got ${show(nsScope)}`);
  t.equal(nsScope.body?.error?.code, 'forbidden');
  const clusterScope = await createKey(uniq('no'), { kind: 'cluster' }, k);
  t.equal(clusterScope.status, 403, `a namespace key cannot issue a cluster key: got ${show(clusterScope)}`);
  for (const scope of [col(['read']), { kind: 'namespace', namespace: 'alpha', actions: ['read'] }, { kind: 'cluster' }]) {
    const r = await createKey(uniq('no'), scope, colAll);
    t.equal(r.status, 403, `a collection key cannot issue keys (${JSON.stringify(scope)}): got ${show(r)}`);
  }
  // GET /keys by a namespace key: "sees the collection keys within its namespace".
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const page: Call = await as(k, 'GET', `/keys?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.equal(page.status, 200);
    if (page.status !== 200) break;
    items.push(...page.body.items);
    cursor = page.body.next_cursor;
  } while (cursor);
  t.ok(items.length > 0, 'the namespace key sees some keys');
  t.ok(
    items.every((x) => x.scope.kind === 'collection' && x.scope.namespace === 'alpha'),
    'a namespace key lists only collection keys of its namespace',
  );
  t.notOk(items.some((x) => x.id === beta.key), "beta's key is not listed");
});

t.test('a revoked key gets 401 on its next request', async (t) => {
  const made = must(await createKey(uniq('short'), { kind: 'namespace', namespace: 'alpha', actions: ['read'] }), 201, 'key');
  const k: TestKey = { label: 'to revoke', kind: 'namespace', actions: ['read'], secret: made.body.secret, id: made.body.id };
  t.equal((await as(k, 'GET', '/namespaces/alpha')).status, 200, 'works before revocation');
  const rev = await f.call('POST', `/keys/${k.id}:revoke`);
  t.equal(rev.status, 200);
  t.type(rev.body.revoked_at, 'string');
  for (const [method, url] of [
    ['GET', '/namespaces/alpha'],
    ['GET', '/info'],
    ['GET', '/namespaces'],
  ] as const) {
    const r = await as(k, method, url);
    t.equal(r.status, 401, `revoked key ${method} ${url}: got ${show(r)}`);
    t.equal(r.body?.error?.code, 'unauthenticated');
  }
  const viaHeader = await f.call('GET', '/namespaces/alpha', undefined, { authorization: undefined, 'x-api-key': k.secret });
  t.equal(viaHeader.status, 401, 'revoked key via X-API-Key');
  t.equal((await f.call('POST', `/keys/${k.id}:revoke`)).status, 200, 'revoking again is a no-op');

  // A collection key revoked by the namespace key that administers it.
  const child = must(await createKey(uniq('child'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['read'] }, nsAll), 201, 'child');
  t.equal((await f.call('GET', '/namespaces/alpha/collections/main', undefined, { authorization: `Bearer ${child.body.secret}` })).status, 200);
  t.equal((await as(nsAll, 'POST', `/keys/${child.body.id}:revoke`)).status, 200, 'the namespace key revokes its collection key');
  const after = await f.call('GET', '/namespaces/alpha/collections/main', undefined, { authorization: `Bearer ${child.body.secret}` });
  t.equal(after.status, 401, `revoked collection key: got ${show(after)}`);
});

t.test('a key secret appears only in the create response', async (t) => {
  const made = must(await createKey(uniq('secretive'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['read'] }), 201, 'key');
  const secret: string = made.body.secret;
  t.type(secret, 'string', 'the create response carries the secret');
  t.ok(secret.startsWith(`trove_${made.body.prefix}_`), 'secret has the form trove_<prefix>_<random> (decisions.md §1)');
  t.equal(made.headers.location, `/keys/${made.body.id}`, 'Location by ID');

  for (const [who, k] of [
    ['cluster', cluster],
    ['namespace key', nsAll],
  ] as const) {
    let cursor: string | null = null;
    let found = false;
    do {
      const page: Call = await as(k, 'GET', `/keys?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      t.equal(page.status, 200);
      if (page.status !== 200) break;
      t.notOk(page.text.includes(secret), `GET /keys (${who}) never contains the secret`);
      t.ok(page.body.items.every((x: object) => !('secret' in x)), `GET /keys (${who}) items have no secret field`);
      if (page.body.items.some((x: { id: string }) => x.id === made.body.id)) found = true;
      cursor = page.body.next_cursor;
    } while (cursor);
    t.ok(found, `GET /keys (${who}) lists the key`);
    const one = await as(k, 'GET', `/keys/${made.body.id}`);
    t.equal(one.status, 200);
    t.notOk('secret' in (one.body ?? {}), `GET /keys/{id} (${who}) has no secret field`);
    t.notOk(one.text.includes(secret), `GET /keys/{id} (${who}) never contains the secret`);
  }
  const rev = await f.call('POST', `/keys/${made.body.id}:revoke`);
  t.notOk('secret' in (rev.body ?? {}), 'the revoke response has no secret');
  t.notOk(rev.text.includes(secret));
});

// ------------------------------------------------------------------ 3. the workspace key route

/** decisions.md §5: the actions each workspace role stands for. */
const ROLE: Record<'viewer' | 'editor' | 'admin', Action[]> = { viewer: ['read', 'search', 'query'], editor: ['write', 'search', 'query'], admin: [...ACTIONS] };
const within = (actions: readonly Action[], bound: readonly Action[]) => actions.every((a) => holds(bound, a));
/** decisions.md §5 role of an action set, and the rank the workspace document orders roles by. */
const roleRank = (actions: readonly Action[]) => (ACTIONS.every((a) => actions.includes(a)) ? 3 : actions.includes('write') ? 2 : 1);
const RANK_OF = { viewer: 1, editor: 2, admin: 3 } as const;
const wsKey = (keyId: string) => `/v1/workspaces/alpha/api-keys/${keyId}`;

t.test('workspace key route × key kind: cluster and namespace keys administer, collection keys are 403', async (t) => {
  for (const k of matrixKeys) {
    // The target is a collection key the caller issued itself (the cluster key issues it for collection keys).
    const issuer = k.kind === 'collection' ? cluster : k;
    const child = must(await createKey(uniq('ws-target'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: k.actions }, issuer), 201, 'target');
    const r = await as(k, 'PATCH', wsKey(child.body.id), { name: uniq('renamed') });
    if (k.kind === 'collection') t.same([r.status, r.body?.error?.code], [403, 'forbidden'], `${k.label}: ${show(r)}`);
    else t.equal(r.status, 200, `${k.label} renames a key it issued: ${show(r)}`);
  }
});

t.test("PATCH role never grants an action the caller or the key's creator lacks (Authentication 5)", async (t) => {
  for (const k of matrixKeys.filter((x) => x.kind === 'namespace')) {
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const child = must(await createKey(uniq('child'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: k.actions }, k), 201, 'child');
      const r = await as(k, 'PATCH', wsKey(child.body.id), { role });
      // Within the caller's (here also the creator's) actions, and a role no higher than its own.
      const ok = within(ROLE[role], k.actions) && RANK_OF[role] <= roleRank(k.actions);
      if (ok) t.equal(r.status, 200, `${k.label} → ${role}: ${show(r)}`);
      else t.same([r.status, r.body?.error?.code], [403, 'forbidden'], `${k.label} → ${role} exceeds its actions: ${show(r)}`);
      const now = must(await f.call('GET', `/keys/${child.body.id}`), 200, 'child').body.scope.actions as Action[];
      t.ok(within(now, k.actions), `${k.label} → ${role}: the child holds [${now}] ⊆ [${k.actions}]`);
      // What the child can actually do never exceeds what its creator can.
      const childKey: TestKey = { label: 'child', kind: 'collection', actions: now, secret: child.body.secret, id: child.body.id };
      const files = await as(childKey, 'GET', `${base(alpha)}/files`);
      t.equal(files.status, holds(k.actions, 'read') ? 200 : 403, `${k.label} → ${role}: the child lists files only if its creator may`);
    }
  }

  // The attack as reported: search-only issues a search-only child, then raises it to viewer.
  const child = must(await createKey(uniq('raise'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['search'] }, nsSearchOnly), 201, 'child');
  for (const role of ['viewer', 'editor', 'admin']) {
    const r = await as(nsSearchOnly, 'PATCH', wsKey(child.body.id), { role });
    t.same([r.status, r.body?.error?.code], [403, 'forbidden'], `search-only → ${role}: ${show(r)}`);
  }
  const secret = { authorization: `Bearer ${child.body.secret}` };
  t.equal((await f.call('GET', `${base(alpha)}/files`, undefined, secret)).status, 403, 'the child still cannot list files');
  t.equal((await f.call('GET', `${base(alpha)}/files/${alpha.file}/content`, undefined, secret)).status, 403, 'nor read their bytes');
  t.equal((await f.call('POST', `${base(alpha)}:answer`, searchBody, secret)).status, 403, 'nor get answers');

  // A write-only key cannot raise its child to editor (editor holds search and query).
  const writeOnly = matrixKeys.find((x) => x.kind === 'namespace' && x.actions.join() === 'write')!;
  const wChild = must(await createKey(uniq('w'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['write'] }, writeOnly), 201, 'w child');
  const w = await as(writeOnly, 'PATCH', wsKey(wChild.body.id), { role: 'editor' });
  t.same([w.status, w.body?.error?.code], [403, 'forbidden'], `write-only → editor: ${show(w)}`);

  // The creator bounds every later change, even by a cluster key.
  const raised = await f.call('PATCH', wsKey(child.body.id), { role: 'viewer' });
  t.same([raised.status, raised.body?.error?.code], [403, 'forbidden'], `cluster raising a search-only key's child past its creator: ${show(raised)}`);
});

t.test("lowering a key's role narrows the keys it issued", async (t) => {
  const parent = must(await createKey(uniq('parent'), { kind: 'namespace', namespace: 'alpha', actions: [...ACTIONS] }), 201, 'parent');
  const pk: TestKey = { label: 'parent', kind: 'namespace', actions: [...ACTIONS], secret: parent.body.secret, id: parent.body.id };
  const writer = must(await createKey(uniq('writer'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['write', 'query'] }, pk), 201, 'writer');
  const searcher = must(await createKey(uniq('searcher'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['search'] }, pk), 201, 'searcher');
  must(await f.call('PATCH', wsKey(parent.body.id), { role: 'viewer' }), 200, 'lower the parent');
  const w = must(await f.call('GET', `/keys/${writer.body.id}`), 200, 'writer').body;
  t.same(w.scope.actions, ['query'], 'the child loses write');
  t.notOk(w.revoked_at, 'and keeps working with what is left');
  const sr = must(await f.call('GET', `/keys/${searcher.body.id}`), 200, 'searcher').body;
  t.same(sr.scope.actions, ['search'], 'a child within the new role is untouched');
  // A child left with no action is revoked.
  const viewerParent = must(await createKey(uniq('vp'), { kind: 'namespace', namespace: 'alpha', actions: ['write'] }), 201, 'vp');
  const only = must(await createKey(uniq('only'), { kind: 'collection', namespace: 'alpha', collections: ['main'], actions: ['write'] }, { ...pk, secret: viewerParent.body.secret }), 201, 'only');
  must(await f.call('PATCH', wsKey(viewerParent.body.id), { role: 'viewer' }), 200, 'viewer role drops write');
  t.type(must(await f.call('GET', `/keys/${only.body.id}`), 200, 'only').body.revoked_at, 'string', 'a child left with no action is revoked');
});

// ------------------------------------------------------------------ 4. the event channels

t.test('GET /events per key: resource events need read, research events only to their creator', async (t) => {
  // Research runs exist by now: the matrix started some with every key that holds query.
  const runCreators = new Map<string, string>();
  for (const k of matrixKeys) {
    if (k.kind === 'collection' || !(k.kind === 'cluster' || holds(k.actions, 'query'))) continue;
    const run = await runFor(k, alpha);
    runCreators.set(run, k.label);
  }
  for (const k of matrixKeys) {
    const r = await as(k, 'GET', '/events?limit=100');
    if (k.kind === 'collection') {
      t.equal(r.status, 403, `${k.label}: the event log is for cluster and namespace keys`);
      continue;
    }
    t.equal(r.status, 200, `${k.label}: ${show(r)}`);
    // Walk to the end so the newest runs are included.
    const items: any[] = [...r.body.items];
    let cursor: string | null = r.body.next_cursor;
    while (cursor) {
      const page = await as(k, 'GET', `/events?limit=100&cursor=${encodeURIComponent(cursor)}`);
      items.push(...page.body.items);
      cursor = page.body.next_cursor;
    }
    const resource = items.filter((e) => /^(file|object|job|collection)\./.test(e.type));
    const research = items.filter((e) => e.type.startsWith('research.'));
    if (k.kind === 'cluster' || holds(k.actions, 'read')) t.ok(resource.length > 0, `${k.label} (read): sees resource events`);
    else t.equal(resource.length, 0, `${k.label} (no read): sees no file, job or collection event`);
    const others = research.filter((e) => runCreators.has(e.data.id) && runCreators.get(e.data.id) !== k.label);
    if (k.kind === 'cluster') t.ok(others.length > 0, 'the cluster key sees every run');
    else {
      t.equal(others.length, 0, `${k.label}: no research event of another key's run`);
      if (holds(k.actions, 'query')) t.ok(research.length > 0, `${k.label}: sees its own runs`);
      else t.equal(research.length, 0, `${k.label}: no query, no research events`);
    }
  }
});
