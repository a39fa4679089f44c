// Bad input on every route: fast-check drives malformed, mistyped, out-of-range and unauthorised
// requests through the in-process app and checks every answer against the contract
// (retrieval-api.md "Conventions", "Authentication", "Errors", "Limits"; decisions.md §2-4):
//   - never a 5xx;
//   - the body is exactly {error: {code, message, request_id, retryable, details}}, with `code` in
//     ERROR_TABLE and the status and retryable flag that table gives it;
//   - header x-request-id is present, equals error.request_id, and echoes a sent X-Request-Id;
//   - the specific documented code wherever the contract names one.
// A family may be marked `todo` while a known daemon bug waits for its fix, so the suite stays green.
import t from 'tap';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../src/contract/errors.js';
import { ID_PREFIXES, newId, nowIso } from '../src/contract/ids.js';
import { hashSecret, mintSecret } from '../src/domain/keys.js';
import type { RouteDef } from '../src/http/router.js';
import { dataPlaneRoutes } from '../src/http/routes.js';
import { addInline, CLUSTER_KEY, seedCollection, startFixture, type Call } from './helpers/trove.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];
type Headers = Record<string, string | undefined>;

interface Req {
  /** `METHOD /path/{template}` of the route this request targets, for the per-route count. */
  route: string;
  method: string;
  url: string;
  body: string | Buffer | null;
  headers: Headers;
}

interface Case {
  req: Req;
  /** Acceptable error codes. */
  expect: readonly string[];
  /** A 2xx answer is acceptable too (only used where the contract allows either outcome). */
  allowSuccess?: boolean;
}

interface Family {
  name: string;
  arb: fc.Arbitrary<Case>;
  runs: number;
  todo?: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const enc = encodeURIComponent;
const keyOf = (def: { method: string; path: string }) => `${def.method} ${def.path}`;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// ------------------------------------------------------------------------------------------------
// The world: a namespace with a collection holding ready files, a second namespace, an upload
// waiting for its bytes, a URI-sourced file, expendable targets for destructive routes, and a
// namespace-scoped read key of the second namespace.

const f = await startFixture();
t.teardown(() => f.close());

function must(call: Call, status: number, what: string): Call {
  assert.equal(call.status, status, `setup: ${what} answered ${call.status} ${call.text.slice(0, 300)}`);
  return call;
}

const { base } = await seedCollection(f, 'demo', 'notes');
const fileA = must(await addInline(f, base, '/a.md', '# Alpha\n\nthe quick brown fox jumps', 'text/markdown', { team: 'search' }), 202, 'add /a.md').body;
must(await addInline(f, base, '/b.md', 'a quick second note', 'text/markdown'), 202, 'add /b.md');
await f.waitForIdle('demo', 'notes');

await seedCollection(f, 'demo', 'victim');
must(await f.call('POST', '/namespaces', { name: 'victim-ns' }), 201, 'create an empty namespace');
const victimFile = must(await addInline(f, '/namespaces/demo/collections/victim', '/victim.md', 'victim text'), 202, 'add victim').body.file.id as string;
await seedCollection(f, 'other', 'oc');
const fileO = must(await addInline(f, '/namespaces/other/collections/oc', '/o.md', 'other namespace quick text'), 202, 'add /o.md').body;
await f.waitForIdle('other', 'oc');
await f.waitForIdle('demo', 'victim');

// An upload whose URL the upload family sends wrong bytes to (the first fails the file), and one
// that never receives its bytes.
await seedCollection(f, 'demo', 'uploads');
const UPLOAD_BYTES = Buffer.from('0123456789abcdef');
const addUpload = async (path: string) =>
  must(
    await f.call('POST', '/namespaces/demo/collections/uploads/files', {
      path,
      source: { type: 'upload', content_type: 'text/plain', bytes: UPLOAD_BYTES.length, checksum: `sha256:${sha256(UPLOAD_BYTES)}` },
    }),
    202,
    `add upload ${path}`,
  ).body;
const upload = await addUpload('/up.txt');
const pendingUpload = await addUpload('/pending.txt');
// A URI source (refused at fetch time: loopback), in a keyword-only collection.
await seedCollection(f, 'demo', 'ext', { processing: { semantic: false } });
const extFile = must(await f.call('POST', '/namespaces/demo/collections/ext/files', { path: '/remote.md', source: { type: 'uri', uri: 'http://127.0.0.1:9/remote.md' } }), 202, 'add uri file').body
  .file.id as string;
// Collection for the deep-metadata family, so whatever it does stays out of the other collections.
await seedCollection(f, 'demo', 'deep');
const deepTarget = must(await addInline(f, '/namespaces/demo/collections/deep', '/deep-target.md', 'deep target'), 202, 'add deep target').body.file.id as string;

const nsDemo = must(await f.call('GET', '/namespaces/demo'), 200, 'get demo').body;
const nsOther = must(await f.call('GET', '/namespaces/other'), 200, 'get other').body;
const nsVictim = must(await f.call('GET', '/namespaces/victim-ns'), 200, 'get victim-ns').body;
const colNotes = must(await f.call('GET', base), 200, 'get notes').body;
const colVictim = must(await f.call('GET', '/namespaces/demo/collections/victim'), 200, 'get victim').body;
const colOther = must(await f.call('GET', '/namespaces/other/collections/oc'), 200, 'get oc').body;
const content = must(await f.call('GET', `${base}/files/${fileA.file.id}/content`), 200, 'content url').body;

const W = {
  nsId: nsDemo.id as string,
  otherNsId: nsOther.id as string,
  victimNsId: nsVictim.id as string,
  colId: colNotes.id as string,
  victimColId: colVictim.id as string,
  otherColId: colOther.id as string,
  fileA: fileA.file.id as string,
  jobA: fileA.job.id as string,
  otherFile: fileO.file.id as string,
  otherJob: fileO.job.id as string,
  victimFile,
  uploadFile: upload.file.id as string,
  pendingUploadFile: pendingUpload.file.id as string,
  uploadToken: new URL(upload.upload.url as string).pathname.split('/').pop()!,
  downloadToken: new URL(content.url as string).pathname.split('/').pop()!,
  listCursor: must(await f.call('GET', `${base}/files?limit=1`), 200, 'files page').body.next_cursor as string,
  jobsCursor: must(await f.call('GET', '/namespaces/demo/jobs?limit=1'), 200, 'jobs page').body.next_cursor as string,
  searchCursor: must(await f.call('POST', `${base}:search`, { query: 'quick', mode: 'keyword', limit: 1 }), 200, 'search page').body.next_cursor as string,
};
assert.ok(W.listCursor && W.jobsCursor && W.searchCursor, 'setup: every cursor is present');

const EXISTING_NAMESPACES = ['demo', 'other', 'victim-ns'];
const EXISTING_COLLECTIONS = ['notes', 'victim', 'uploads', 'ext', 'deep', 'oc'];
const EXISTING_PATHS = ['/a.md', '/b.md', '/victim.md', '/o.md', '/up.txt', '/remote.md', '/deep-target.md'];

// A namespace key of `other` with only `read`: demo is outside its scope (404), and any action
// beyond read in `other` is forbidden (403). No key route exists yet, so it goes in through the store.
const scoped = mintSecret();
await f.rt.services.store.write((tx) =>
  tx.keys.insert({
    id: newId('key'),
    name: 'fuzz-other-reader',
    prefix: scoped.prefix,
    secret_hash: hashSecret(scoped.secret),
    scope: { kind: 'namespace', namespace_id: W.otherNsId, actions: ['read'] },
    created_by: null,
    created_at: nowIso(),
  }),
);
const SCOPED_AUTH = { authorization: `Bearer ${scoped.secret}` };
must(await f.call('GET', '/namespaces/other', undefined, SCOPED_AUTH), 200, 'scoped key reads its namespace');

const ROUTES = dataPlaneRoutes();
const APP_ROUTES = f.rt.app.routes;

// ------------------------------------------------------------------------------------------------
// Sending and checking

const sent = new Map<string, number>();

async function send(req: Req, rid?: string): Promise<Call> {
  sent.set(req.route, (sent.get(req.route) ?? 0) + 1);
  const headers: Headers = { ...req.headers };
  if (rid !== undefined) headers['x-request-id'] = rid;
  return f.raw(req.method, req.url, req.body, headers);
}

function describeReq(req: Req): string {
  const body = req.body === null ? '' : ` body=${JSON.stringify(String(req.body).slice(0, 160))}`;
  const auth = req.headers.authorization === undefined && 'authorization' in req.headers ? ' (no authorization)' : '';
  return `${req.method} ${req.url.slice(0, 200)}${body}${auth}`;
}

/** Checks the error envelope rules every failure obeys; returns the code. */
function checkEnvelope(res: Call, rid: string | undefined): string {
  assert.ok(res.status < 500, `status ${res.status} is a server error`);
  const header = res.headers['x-request-id'];
  assert.ok(typeof header === 'string' && header.length > 0, 'x-request-id header is present');
  if (rid !== undefined) assert.equal(header, rid, 'the X-Request-Id sent is echoed');
  assert.match(res.headers['content-type'] ?? '', /^application\/json/, 'error content type is JSON');
  const body: unknown = JSON.parse(res.text);
  assert.ok(isPlainObject(body), 'body is an object');
  assert.deepEqual(Object.keys(body), ['error'], 'body holds only `error`');
  const e = body.error;
  assert.ok(isPlainObject(e), 'error is an object');
  assert.deepEqual(Object.keys(e).sort(), ['code', 'details', 'message', 'request_id', 'retryable'], 'error has exactly the envelope fields');
  assert.equal(typeof e.code, 'string');
  assert.ok(Object.hasOwn(ERROR_TABLE, e.code as string), `code ${String(e.code)} is in ERROR_TABLE`);
  const row = ERROR_TABLE[e.code as ErrorCode];
  assert.equal(res.status, row.status, `status matches ERROR_TABLE for ${String(e.code)}`);
  // collection_not_ready is "true, or false when processing failed".
  if (e.code === 'collection_not_ready') assert.equal(typeof e.retryable, 'boolean');
  else assert.equal(e.retryable, row.retryable, `retryable matches ERROR_TABLE for ${String(e.code)}`);
  assert.ok(typeof e.message === 'string' && e.message.length > 0, 'message is a non-empty string');
  assert.equal(e.request_id, header, 'error.request_id equals the x-request-id header');
  assert.ok(isPlainObject(e.details), 'details is an object');
  if (res.status === 405) assert.ok((res.headers.allow ?? '').length > 0, '405 carries an Allow header');
  return e.code as string;
}

async function expectError(c: Case, rid: string | undefined): Promise<void> {
  const res = await send(c.req, rid);
  const where = `${describeReq(c.req)} → ${res.status} ${res.text.slice(0, 300)}`;
  if (c.allowSuccess && res.status < 400) {
    assert.ok(res.status < 300, `${where}: unexpected status`);
    assert.equal(res.headers['x-request-id'], rid ?? res.headers['x-request-id'], `${where}: X-Request-Id echoed`);
    return;
  }
  let code: string;
  try {
    code = checkEnvelope(res, rid);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
  assert.ok(c.expect.includes(code), `${where}: expected ${c.expect.join(' or ')}, got ${code}`);
}

/** Every family runs this many times its listed runs (kept well under a minute in total). */
const RUN_FACTOR = 2;

const ridArb = fc.option(fc.stringMatching(/^[\x21-\x7e]{1,64}$/), { nil: undefined, freq: 2 });

async function runFamily(tt: TestContext, fam: Family): Promise<void> {
  const details = await fc.check(
    fc.asyncProperty(fam.arb, ridArb, async (c, rid) => expectError(c, rid)),
    { numRuns: fam.todo ? fam.runs : fam.runs * RUN_FACTOR },
  );
  const extra: Record<string, unknown> = {};
  if (fam.todo) extra.todo = fam.todo;
  if (details.failed) extra.report = fc.defaultReportMessage(details);
  tt.ok(!details.failed, `${fam.name} (${details.numRuns} cases)`, extra);
}

// ------------------------------------------------------------------------------------------------
// Value arbitraries

const scalarJunk = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const containerJunk = fc.oneof(
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);
const notString = fc.oneof(scalarJunk, containerJunk);
const notBoolean = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 8 }), fc.constant(null), containerJunk);
const notObject = fc.oneof(fc.string({ maxLength: 20 }), scalarJunk, fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }));
const nonIntegerNumber = fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => !Number.isInteger(x));
const badInt = (min: number, max: number) =>
  fc.oneof(fc.integer({ max: min - 1 }), fc.integer({ min: max + 1 }), nonIntegerNumber, fc.string({ maxLength: 6 }), fc.boolean(), fc.constant(null), containerJunk);
const badEnum = (values: readonly string[]) => fc.oneof(fc.string({ maxLength: 12 }).filter((s) => !values.includes(s)), fc.constantFrom(...values.map((v) => v.toUpperCase())), notString);
const unknownKey = (known: readonly string[]) => fc.string({ minLength: 1, maxLength: 16 }).filter((k) => !known.includes(k));
/** Deeply nested arrays or objects, as text (JSON.stringify itself would recurse). */
const deepJsonText = fc.tuple(fc.integer({ min: 200, max: 1500 }), fc.boolean()).map(([n, arrays]) => (arrays ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n)));

const validName = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,30}$/).filter((n) => !/^(ns|col|fil|job|acr|key|rsr|evt|ver|whk|dlv)_[0-9a-z]+$/.test(n));
/** Strings a namespace, collection or key name can never be (retrieval-api.md, Namespace.name). */
const invalidName = fc.oneof(
  fc.constant(''),
  fc.tuple(validName, fc.stringMatching(/^[A-Z]$/), fc.nat()).map(([n, up, i]) => n.slice(0, i % (n.length + 1)) + up + n.slice(i % (n.length + 1))),
  fc.stringMatching(/^[a-z][a-z0-9_-]{63,90}$/),
  fc.tuple(fc.constantFrom(...ID_PREFIXES), fc.stringMatching(/^[0-9a-z]{1,24}$/)).map(([p, r]) => `${p}_${r}`),
  fc.tuple(fc.constantFrom('_', '-'), validName).map(([c, n]) => c + n),
  fc.tuple(validName, fc.constantFrom(' ', '.', '/', ':', 'é', '\u0000', '%', '+', '*', '\n', '☃')).map(([n, c]) => n + c),
);

const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._ -]{0,10}$/);
const validPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
const controlChar = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f })).map((c) => String.fromCharCode(c));
/** Paths the contract calls invalid ("File paths" convention); none contains a lone surrogate. */
const invalidPathNoSurrogate = fc.oneof(
  fc.constant('/'),
  validPath.map((p) => p.slice(1)).filter((p) => !p.startsWith('/')),
  validPath.map((p) => `${p}/`),
  fc.tuple(validPath, validPath).map(([a, b]) => `${a}/${b}`),
  fc.tuple(validPath, fc.constantFrom('.', '..'), fc.option(validPath, { nil: '' })).map(([a, dot, b]) => `${a}/${dot}${b}`),
  fc.tuple(fc.constantFrom('.', '..'), fc.option(validPath, { nil: '' })).map(([dot, b]) => `/${dot}${b}`),
  fc.tuple(validPath, controlChar, fc.nat()).map(([p, c, i]) => {
    const at = 1 + (i % p.length);
    return p.slice(0, at) + c + p.slice(at);
  }),
  fc.integer({ min: 1024, max: 1300 }).map((n) => `/${'a'.repeat(n)}`),
  fc.integer({ min: 342, max: 420 }).map((n) => `/${'€'.repeat(n)}`),
);
const invalidPath = fc.oneof(fc.constant(''), invalidPathNoSurrogate, validPath.map((p) => `${p}\ud800`));
const absentPath = validPath.filter((p) => !EXISTING_PATHS.includes(p));

const idOf = (prefix: string) => fc.stringMatching(/^[0-9a-z]{1,30}$/).map((r) => `${prefix}_${r}`);
const absentNsRef = fc.oneof(validName.filter((n) => !EXISTING_NAMESPACES.includes(n)), idOf('ns'));
const absentColRef = fc.oneof(validName.filter((n) => !EXISTING_COLLECTIONS.includes(n)), idOf('col'), fc.constant(W.otherColId));
const garbageRef = fc.oneof(invalidName.filter((n) => n !== '' && !n.startsWith('fil_') && !n.startsWith('job_')), fc.constantFrom('.', '..', '...', '~', 'null', 'undefined', '%', '-1'));

const validCursorLike = fc.string({ minLength: 1, maxLength: 200 });
/** A list cursor whose signed body is changed: the MAC no longer matches. */
const tamperedCursor = (cursor: string) =>
  fc.tuple(fc.nat(), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')).map(([i, ch]) => {
    const dot = cursor.indexOf('.');
    const at = i % dot;
    const replaced = cursor[at] === ch ? (ch === 'A' ? 'B' : 'A') : ch;
    return cursor.slice(0, at) + replaced + cursor.slice(at + 1);
  });
const isAcceptableLimit = (s: string) => {
  const n = Number(s);
  return Number.isInteger(n) && n >= 1 && n <= 100;
};
const badLimitText = fc.oneof(
  fc.integer({ max: 0 }).map(String),
  fc.integer({ min: 101 }).map(String),
  fc.constantFrom('0', '101', '-1', 'abc', '1.5', '', 'NaN', 'Infinity', '1e3', 'ten', '٥', 'null', 'true'),
  fc.string({ maxLength: 8 }).filter((s) => !isAcceptableLimit(s)),
);

const jsonContentTypes = (ct: string | undefined) => {
  if (ct === undefined) return false;
  const bare = ct.split(';')[0]!.trim().toLowerCase();
  return bare === 'application/json' || (bare.startsWith('application/') && bare.endsWith('+json'));
};
const wrongContentType = fc.oneof(
  fc.constantFrom(undefined, '', 'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'json', 'application/jsonx', 'application/octet-stream', '*/*'),
  fc.stringMatching(/^[a-z]{1,10}\/[a-z.+-]{1,12}$/).filter((ct) => !jsonContentTypes(ct)),
);
const malformedJson = fc
  .oneof(
    fc.json().map((s) => s.slice(0, Math.max(1, s.length - 1))),
    fc.json().map((s) => `${s}}`),
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.constantFrom('{', '{"name":}', "{'name':'x'}", '{"name":"x",}', 'undefined', 'NaN', '\uFEFF{}', '{"a":1}{"b":2}', '[1,]', '{"name":"x"\u0000}', ' '),
  )
  .filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return s.length > 0;
    }
  });
const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 32 }).map((b) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(b)]));
/** `{}` is the one body a route without one accepts (test/api-resources: "an empty JSON object"). */
function isEmptyObjectJson(body: string | Buffer): boolean {
  try {
    const v: unknown = JSON.parse(body.toString());
    return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
  } catch {
    return false;
  }
}
const anyNonEmptyBody = fc.oneof(fc.json(), fc.string({ minLength: 1, maxLength: 60 }), invalidUtf8) as fc.Arbitrary<string | Buffer>;

const authJunk: fc.Arbitrary<Headers> = fc.oneof(
  fc.constant({ authorization: undefined }),
  fc
    .stringMatching(/^[\x21-\x7e]{1,100}$/)
    .filter((s) => s !== CLUSTER_KEY && s !== scoped.secret)
    .chain((s) => fc.constantFrom<Headers>({ authorization: `Bearer ${s}` }, { authorization: undefined, 'x-api-key': s })),
  fc
    .constantFrom(
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      'Token abc',
      CLUSTER_KEY,
      `Bearer ${CLUSTER_KEY}x`,
      `Bearer ${CLUSTER_KEY.slice(0, -1)}`,
      `Bearer ${CLUSTER_KEY} extra`,
      `Bearer ${scoped.prefix}`,
      `Bearer trove_${scoped.prefix}_${'A'.repeat(43)}`,
      `Bearer key_${'a'.repeat(20)}`,
      '',
    )
    .map((v) => ({ authorization: v })),
  fc.constantFrom(' ', '').map((v) => ({ authorization: undefined, 'x-api-key': v })),
);

// ------------------------------------------------------------------------------------------------
// Routes: parameters, valid base bodies, query keys

const KNOWN_PARAMS = new Set(['namespace', 'collection', 'file', 'job', 'token']);
const paramNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
const unfillable = (def: RouteDef) => paramNames(def.path).some((p) => !KNOWN_PARAMS.has(p));

function fill(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? `zz-unknown-${name}`);
}

/** Destructive routes act on expendable targets, so a regression cannot take the shared fixtures down. */
const DESTRUCTIVE = new Set(['DELETE /namespaces/{namespace}', 'DELETE /namespaces/{namespace}/collections/{collection}', 'DELETE /namespaces/{namespace}/collections/{collection}/files/{file}', 'POST /namespaces/{namespace}/collections/{collection}:reindex']);

function validParam(def: RouteDef, name: string): fc.Arbitrary<string> {
  const destructive = DESTRUCTIVE.has(keyOf(def));
  switch (name) {
    case 'namespace':
      // DELETE /namespaces/{ns} acts on an empty namespace: a request wrongly accepted would delete it.
      return keyOf(def) === 'DELETE /namespaces/{namespace}' ? fc.constantFrom('victim-ns', W.victimNsId) : fc.constantFrom('demo', W.nsId);
    case 'collection':
      return destructive ? fc.constantFrom('victim', W.victimColId) : fc.constantFrom('notes', W.colId);
    case 'file':
      return destructive ? fc.constantFrom(W.victimFile, enc('/victim.md')) : fc.constantFrom(W.fileA, enc('/a.md'));
    case 'job':
      return fc.constant(W.jobA);
    case 'token':
      return fc.constant(def.path.startsWith('/uploads/') ? W.uploadToken : W.downloadToken);
    default:
      return fc.constant(`zz-unknown-${name}`);
  }
}

function validParams(def: RouteDef, override: Record<string, fc.Arbitrary<string>> = {}): fc.Arbitrary<Record<string, string>> {
  const rec: Record<string, fc.Arbitrary<string>> = {};
  for (const name of paramNames(def.path)) rec[name] = override[name] ?? validParam(def, name);
  return fc.record(rec);
}

/** A valid body per route; a family changes exactly one thing in it, so the request is invalid for one reason. */
function baseBody(def: RouteDef): Record<string, unknown> {
  switch (keyOf(def)) {
    case 'POST /namespaces':
      return { name: 'fuzz-never-created', exist_ok: false };
    case 'PATCH /namespaces/{namespace}':
      return { display_name: 'fuzz label' };
    case 'DELETE /namespaces/{namespace}':
      return { force: false };
    case 'POST /namespaces/{namespace}/collections':
      return { name: 'fuzz-never-created', exist_ok: false };
    case 'PATCH /namespaces/{namespace}/collections/{collection}':
      return { display_name: 'fuzz label' };
    case 'POST /namespaces/{namespace}/collections/{collection}:search':
      return { query: 'quick', mode: 'keyword' };
    case 'POST /namespaces/{namespace}/collections/{collection}/files':
      return { path: '/fuzz/never.md', source: { type: 'inline', text: 'x' }, metadata: {} };
    case 'PATCH /namespaces/{namespace}/collections/{collection}/files/{file}':
      return { metadata: { fuzz: true } };
    default:
      return {};
  }
}

function shapeKeys(schema: z.ZodType | undefined): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** Body routes with a required field (PATCH collection takes only optional ones; DELETE namespace defaults force). */
const REQUIRES_FIELDS = new Set([
  'POST /namespaces',
  'PATCH /namespaces/{namespace}',
  'POST /namespaces/{namespace}/collections',
  'POST /namespaces/{namespace}/collections/{collection}:search',
  'POST /namespaces/{namespace}/collections/{collection}/files',
  'PATCH /namespaces/{namespace}/collections/{collection}/files/{file}',
]);

const json = (value: unknown) => JSON.stringify(value);
const JSON_CT = { 'content-type': 'application/json' };

function request(def: RouteDef, params: Record<string, string>, opts: { query?: string; body?: string | Buffer | null; headers?: Headers; method?: string } = {}): Req {
  const q = opts.query ? `?${opts.query}` : '';
  return { route: keyOf(def), method: opts.method ?? def.method, url: fill(def.path, params) + q, body: opts.body ?? null, headers: opts.headers ?? {} };
}

/** A request with the route's valid base body (if it takes one) and `patch` merged in. */
function withBody(def: RouteDef, params: Record<string, string>, patch: Record<string, unknown> = {}, opts: { query?: string; headers?: Headers } = {}): Req {
  if (!def.body) return request(def, params, opts);
  return request(def, params, { ...opts, body: json({ ...baseBody(def), ...patch }), headers: { ...JSON_CT, ...opts.headers } });
}

const methodsAt = (path: string) => new Set(APP_ROUTES.filter((r) => r.path === path).map((r) => r.method as string));
const codes = (def: RouteDef, ...list: ErrorCode[]): string[] => (unfillable(def) ? [...list, 'not_found'] : list);

// ------------------------------------------------------------------------------------------------
// Families every route gets, derived from its definition

function genericFamilies(def: RouteDef): Family[] {
  const families: Family[] = [];
  const keyed = def.permission.kind !== 'none';
  const params = validParams(def);

  if (keyed) {
    families.push({
      name: 'missing, malformed or wrong key → 401 unauthenticated, whatever else is wrong',
      runs: 60,
      arb: fc
        .tuple(
          validParams(def, { namespace: fc.oneof(validParam(def, 'namespace'), absentNsRef) }),
          authJunk,
          fc.option(fc.oneof(malformedJson, fc.json()), { nil: undefined }),
          fc.option(fc.constantFrom('limit=0', 'zz=1', 'cursor=junk'), { nil: undefined }),
        )
        .map(([p, auth, body, query]) => ({
          req: def.body ? request(def, p, { body: body ?? json(baseBody(def)), headers: { ...JSON_CT, ...auth }, ...(query ? { query } : {}) }) : request(def, p, { headers: auth, ...(query ? { query } : {}) }),
          expect: ['unauthenticated'],
        })),
    });
  }

  // Wrong methods, including on `:verb` paths (where the plain path's methods must not leak through).
  const served = methodsAt(def.path);
  const verbSibling = /:\w+$/.test(def.path) ? methodsAt(def.path.replace(/:\w+$/, '')) : new Set<string>();
  const wrongMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT', 'PROPFIND'].filter((m) => !served.has(m) && !verbSibling.has(m));
  families.push({
    name: 'a method the path does not serve → 405 method_not_allowed',
    runs: 40,
    arb: fc
      .tuple(
        fc.oneof(fc.constantFrom(...wrongMethods), fc.stringMatching(/^[A-Z]{3,10}$/).filter((m) => !served.has(m) && !verbSibling.has(m))),
        params,
        fc.option(authJunk, { nil: undefined }),
      )
      .map(([method, p, auth]) => ({ req: request(def, p, { method, headers: auth ?? {} }), expect: ['method_not_allowed'] })),
  });
  // The plain path's methods, except those the :verb path serves itself (POST on access-rules:batch).
  const siblingOnly = [...verbSibling].filter((m) => !served.has(m));
  if (siblingOnly.length > 0) {
    families.push({
      name: `a method the :verb path does not serve (${siblingOnly.join(', ')}) → 405 method_not_allowed`,
      runs: 20,
      arb: fc.tuple(fc.constantFrom(...siblingOnly), params).map(([method, p]) => ({ req: request(def, p, { method }), expect: ['method_not_allowed'] })),
    });
  }

  const known = shapeKeys(def.query);
  families.push({
    name: 'unknown query parameters → 400 invalid_request',
    runs: 40,
    arb: fc
      .tuple(params, fc.array(fc.tuple(fc.string({ maxLength: 12 }).filter((k) => !known.includes(k)), fc.string({ maxLength: 20 })), { minLength: 1, maxLength: 3 }))
      .map(([p, entries]) => ({
        req: def.path.startsWith('/uploads/') ? request(def, p, { query: new URLSearchParams(entries).toString(), body: UPLOAD_BYTES }) : withBody(def, p, {}, { query: new URLSearchParams(entries).toString() }),
        expect: codes(def, 'invalid_request'),
      })),
  });

  if (!def.body && !def.streamBody) {
    families.push({
      name: 'a body on a route that takes none → 400 invalid_request',
      runs: 40,
      arb: fc
        .tuple(params, anyNonEmptyBody.filter((b) => !isEmptyObjectJson(b)), fc.oneof(fc.constant('application/json'), wrongContentType))
        .map(([p, body, ct]) => ({ req: request(def, p, { body, headers: { 'content-type': ct } }), expect: codes(def, 'invalid_request') })),
    });
  }

  if (def.body) {
    const fields = shapeKeys(def.body);
    families.push(
      {
        name: 'malformed JSON → 400 invalid_request',
        runs: 50,
        arb: fc.tuple(params, fc.oneof(malformedJson, invalidUtf8)).map(([p, body]) => ({ req: request(def, p, { body, headers: JSON_CT }), expect: codes(def, 'invalid_request') })),
      },
      {
        name: 'a valid body under a wrong or missing Content-Type → 400 invalid_request',
        runs: 40,
        arb: fc.tuple(params, wrongContentType).map(([p, ct]) => ({ req: request(def, p, { body: json(baseBody(def)), headers: { 'content-type': ct } }), expect: codes(def, 'invalid_request') })),
      },
      ...(REQUIRES_FIELDS.has(keyOf(def))
        ? [
            {
              name: 'an empty body (required fields missing) → 400 invalid_request',
              runs: 20,
              arb: fc.tuple(params, fc.constantFrom<Headers>(JSON_CT, {}, { 'content-type': 'text/plain' })).map(([p, headers]) => ({ req: request(def, p, { body: '', headers }), expect: codes(def, 'invalid_request') })),
            },
          ]
        : []),
      {
        name: 'a JSON body that is not an object → 400 invalid_request',
        runs: 30,
        arb: fc.tuple(params, notObject).map(([p, value]) => ({ req: request(def, p, { body: json(value), headers: JSON_CT }), expect: codes(def, 'invalid_request') })),
      },
      {
        name: 'unknown fields → 400 invalid_request',
        runs: 50,
        arb: fc
          .tuple(params, fc.dictionary(unknownKey(fields), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 }))
          .map(([p, extra]) => ({ req: withBody(def, p, extra), expect: codes(def, 'invalid_request') })),
      },
      {
        name: 'deeply nested junk as an unknown field or a whole body → 400 invalid_request',
        runs: 15,
        arb: fc.tuple(params, deepJsonText, fc.boolean()).map(([p, deep, whole]) => {
          const text = whole ? deep : `${json(baseBody(def)).slice(0, -1)}${Object.keys(baseBody(def)).length ? ',' : ''}"zz_nested":${deep}}`;
          return { req: request(def, p, { body: text, headers: JSON_CT }), expect: codes(def, 'invalid_request') };
        }),
      },
    );
  }

  // Unknown resources in the path; a valid body so that only the reference is wrong. An empty
  // segment matches no route of that shape (`/collections/:search` is not the search route), so
  // 405 from the route of the remaining shape is acceptable there.
  const invalidRefCodes = (ref: string) => (ref === '' ? ['not_found', 'invalid_request', 'method_not_allowed'] : ['not_found', 'invalid_request']);
  for (const name of paramNames(def.path)) {
    const absent: fc.Arbitrary<{ ref: string; expect: readonly string[] }> | null =
      name === 'namespace'
        ? fc.oneof(absentNsRef.map((r) => ({ ref: enc(r), expect: ['not_found'] })), invalidName.map((r) => ({ ref: enc(r), expect: invalidRefCodes(r) })))
        : name === 'collection'
          ? fc.oneof(absentColRef.map((r) => ({ ref: enc(r), expect: ['not_found'] })), invalidName.map((r) => ({ ref: enc(r), expect: invalidRefCodes(r) })))
          : name === 'file'
            ? fc.oneof(
                idOf('fil').map((r) => ({ ref: r, expect: ['not_found'] })),
                fc.constant({ ref: W.otherFile, expect: ['not_found'] }),
                absentPath.map((p) => ({ ref: enc(p), expect: ['not_found'] })),
                garbageRef.map((r) => ({ ref: enc(r), expect: ['not_found', 'invalid_request'] })),
              )
            : name === 'job'
              ? fc.oneof(idOf('job').map((r) => ({ ref: r, expect: ['not_found'] })), garbageRef.map((r) => ({ ref: enc(r), expect: ['not_found', 'invalid_request'] })))
              : name === 'token'
                ? fc.oneof(
                    fc.stringMatching(/^[A-Za-z0-9._~-]{1,120}$/).map((r) => ({ ref: r, expect: ['not_found', 'invalid_request'] })),
                    // A token for the other action, and a signed one with its body changed.
                    fc.constant({ ref: def.path.startsWith('/uploads/') ? W.downloadToken : W.uploadToken, expect: ['not_found'] }),
                    tamperedCursor(W.downloadToken).map((r) => ({ ref: r, expect: ['not_found'] })),
                  )
                : null;
    if (!absent) continue;
    families.push({
      name: `unknown or foreign {${name}} → 404 not_found`,
      runs: 50,
      arb: fc.tuple(params, absent).map(([p, a]) => ({
        req: def.path.startsWith('/uploads/') ? request(def, { ...p, [name]: a.ref }, { body: UPLOAD_BYTES }) : withBody(def, { ...p, [name]: a.ref }),
        expect: a.expect,
      })),
    });
  }

  if (keyed && paramNames(def.path).includes('namespace')) {
    // retrieval-api.md, Authentication 3: outside the key's scope is 404 even when it exists.
    families.push({
      name: "another namespace's key on this namespace → 404 not_found",
      runs: 25,
      arb: validParams(def).map((p) => ({ req: withBody(def, p, {}, { headers: SCOPED_AUTH }), expect: ['not_found'] })),
    });
    const needsMoreThanRead = def.permission.kind === 'cluster' || (def.permission.kind === 'action' && def.permission.action !== 'read');
    if (needsMoreThanRead) {
      // Authentication 4: a key that sees the resource but lacks the action gets 403.
      families.push({
        name: 'a read-only key of the namespace on a route needing more → 403 forbidden',
        runs: 15,
        arb: validParams(def, {
          namespace: fc.constantFrom('other', W.otherNsId),
          collection: fc.constantFrom('oc', W.otherColId),
          file: fc.constantFrom(W.otherFile, enc('/o.md')),
        }).map((p) => ({ req: withBody(def, p, {}, { headers: SCOPED_AUTH }), expect: ['forbidden'] })),
      });
    }
  }
  if (keyed && def.path === '/jobs/{job}:cancel') {
    families.push({
      name: "a read-only key cancelling its own namespace's job → 403 forbidden",
      runs: 10,
      arb: fc.constant({ req: request(def, { job: W.otherJob }, { headers: SCOPED_AUTH }), expect: ['forbidden'] }),
    });
    families.push({
      name: "a read-only namespace key cancelling another namespace's job or an unknown job → 404 not_found",
      runs: 10,
      arb: fc.oneof(fc.constant(W.jobA), idOf('job')).map((job) => ({ req: request(def, { job }, { headers: SCOPED_AUTH }), expect: ['not_found'] })),
    });
  }
  if (keyed && def.path === '/jobs/{job}') {
    families.push({
      name: "another namespace's job with a namespace key → 404 not_found",
      runs: 10,
      arb: fc.constant({ req: request(def, { job: W.jobA }, { headers: SCOPED_AUTH }), expect: ['not_found'] }),
    });
  }
  if (keyed && def.permission.kind === 'cluster' && !paramNames(def.path).includes('namespace')) {
    families.push({
      name: 'a namespace key on a cluster-only route → 403 forbidden',
      runs: 10,
      arb: fc.constant({ req: withBody(def, {}, {}, { headers: SCOPED_AUTH }), expect: ['forbidden'] }),
    });
  }
  return families;
}

// ------------------------------------------------------------------------------------------------
// Families specific to one route: each field with wrong types and out-of-range values

const processingJunk: fc.Arbitrary<unknown> = fc.oneof(
  notObject,
  fc.tuple(fc.constantFrom('keyword', 'semantic', 'ocr'), notBoolean).map(([k, v]) => ({ [k]: v })),
  badInt(64, 2048).map((v) => ({ chunk_tokens: v })),
  badInt(0, 1024).map((v) => ({ chunk_overlap: v })),
  fc.integer({ min: 64, max: 1024 }).map((n) => ({ chunk_tokens: n, chunk_overlap: n })),
  fc.tuple(unknownKey(['keyword', 'semantic', 'chunk_tokens', 'chunk_overlap', 'ocr']), fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => ({ keyword: true, [k]: v })),
);
const displayNameJunk = fc.oneof(notString.filter((v) => v !== null), fc.string({ minLength: 257, maxLength: 320 }));

const contentTypeJunk = fc.oneof(fc.constantFrom('', 'text', 'text/', '/plain', 'text plain', 'a b/c', `${'x'.repeat(300)}/y`, '☃/☃', 'text/pl ain'), notString);
const checksumJunk = fc.oneof(
  fc.constantFrom('', 'sha256', 'sha256:', `sha256:${'A'.repeat(64)}`, `sha256:${'a'.repeat(63)}`, `sha1:${'a'.repeat(40)}`, `md5:${'a'.repeat(31)}`, `crc32c:${'a'.repeat(9)}`, `SHA256:${'a'.repeat(64)}`),
  fc.string({ maxLength: 30 }).filter((s) => !/^(sha256:[0-9a-f]{64}|md5:[0-9a-f]{32}|crc32c:[0-9a-f]{8})$/.test(s)),
  notString,
);
const sourceJunk: fc.Arbitrary<unknown> = fc.oneof(
  notObject,
  fc.constantFrom({}, { type: 'inline' }, { type: 'uri' }, { type: 'upload' }, { text: 'x' }, { type: 'inline', text: 'x', uri: 'https://example.com/x' }),
  badEnum(['inline', 'uri', 'upload']).map((type) => ({ type, text: 'x' })),
  notString.map((text) => ({ type: 'inline', text })),
  contentTypeJunk.map((ct) => ({ type: 'inline', text: 'x', content_type: ct })),
  contentTypeJunk.map((ct) => ({ type: 'upload', content_type: ct })),
  notString.map((uri) => ({ type: 'uri', uri })),
  fc
    .constantFrom('', 'ftp://example.com/x', 'javascript:alert(1)', 'data:text/plain,hi', 'mailto:a@b.c', 'not a uri', '//example.com/x', 'http://', 'http://[::1', 'http://user:pw@example.com/x', 'https://user@example.com/x', 'file:///etc/passwd', 'file:///%ZZ', `https://example.com/${'x'.repeat(8200)}`)
    .map((uri) => ({ type: 'uri', uri })),
  fc.oneof(fc.integer({ max: -1 }), nonIntegerNumber, fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null)).map((bytes) => ({ type: 'upload', content_type: 'text/plain', bytes })),
  checksumJunk.map((checksum) => ({ type: 'upload', content_type: 'text/plain', checksum })),
  fc.tuple(unknownKey(['type', 'text', 'content_type']), fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => ({ type: 'inline', text: 'x', [k]: v })),
);
const metadataJunk: fc.Arbitrary<unknown> = fc.oneof(
  notObject,
  fc.constant({ '': 1 }),
  fc.integer({ min: 257, max: 400 }).map((n) => ({ ['k'.repeat(n)]: 1 })),
);

const SORT_FIELDS = ['score', 'path', 'content_type', 'bytes', 'created_at', 'updated_at'];
const sortJunk: fc.Arbitrary<unknown> = fc.oneof(
  notObject.filter((v) => !Array.isArray(v) && v !== null),
  fc.shuffledSubarray(SORT_FIELDS, { minLength: 5, maxLength: 6 }).map((fields) => fields.map((field) => ({ field, order: 'asc' }))),
  fc.constantFrom(...SORT_FIELDS).map((field) => [{ field, order: 'asc' }, { field, order: 'desc' }]),
  fc.oneof(fc.constantFrom('metadata.team', 'rank', 'relevance', 'name', 'SCORE'), fc.string({ maxLength: 10 }).filter((s) => !SORT_FIELDS.includes(s))).map((field) => [{ field, order: 'asc' }]),
  badEnum(['asc', 'desc']).map((order) => [{ field: 'path', order }]),
  fc.constantFrom([{ field: 'path' }], [{ order: 'asc' }], [{ field: 'path', order: 'asc', nulls: 'last' }], ['path'], [null]),
);

const VALID_COMPARISONS = [
  { field: 'path', op: 'prefix', value: '/a' },
  { field: 'bytes', op: 'gte', value: 0 },
  { field: 'status', op: 'in', value: ['ready', 'failed'] },
  { field: 'metadata.team', op: 'eq', value: 'search' },
  { field: 'created_at', op: 'lt', value: '2999-01-01T00:00:00Z' },
  { field: 'content_type', op: 'neq', value: 'image/png' },
];
const FILTER_FIELDS = ['path', 'content_type', 'bytes', 'created_at', 'updated_at', 'status'];
const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'prefix', 'in'];
const CLAUSE_KEYS = ['field', 'op', 'value', 'and', 'or', 'not'];
const nest = (clause: unknown, depth: number, how: 'not' | 'and' | 'or'): unknown => {
  let c = clause;
  for (let i = 0; i < depth; i++) c = how === 'not' ? { not: c } : { [how]: [c] };
  return c;
};
/** One defect: a clause the contract's "Filter clause" section makes invalid. */
const filterDefect: fc.Arbitrary<unknown> = fc.oneof(
  fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 })),
  fc.string({ maxLength: 20 }).filter((s) => !FILTER_FIELDS.includes(s) && !s.startsWith('metadata.')).map((field) => ({ field, op: 'eq', value: 'x' })),
  fc.constant({ field: 'metadata.', op: 'eq', value: 'x' }),
  fc.integer({ min: 257, max: 400 }).map((n) => ({ field: `metadata.${'k'.repeat(n)}`, op: 'eq', value: 'x' })),
  fc.string({ maxLength: 10 }).filter((s) => !FILTER_OPS.includes(s)).map((op) => ({ field: 'path', op, value: 'x' })),
  fc.constantFrom(
    { field: 'path', op: 'gt', value: '/a' },
    { field: 'content_type', op: 'lte', value: 'a' },
    { field: 'bytes', op: 'prefix', value: 1 },
    { field: 'status', op: 'gt', value: 'ready' },
    { field: 'status', op: 'prefix', value: 're' },
    { field: 'created_at', op: 'prefix', value: '2024' },
  ),
  fc.constantFrom(
    { field: 'bytes', op: 'eq', value: -1 },
    { field: 'bytes', op: 'gt', value: 1.5 },
    { field: 'bytes', op: 'eq', value: '10' },
    { field: 'bytes', op: 'eq', value: null },
    { field: 'status', op: 'eq', value: 'done' },
    { field: 'status', op: 'in', value: ['ready', 'bogus'] },
    { field: 'path', op: 'eq', value: 1 },
    { field: 'path', op: 'prefix', value: null },
    { field: 'created_at', op: 'gt', value: '2024-01-01T00:00:00' },
    { field: 'created_at', op: 'gt', value: '2024-01-01' },
    { field: 'updated_at', op: 'lt', value: 'yesterday' },
    { field: 'updated_at', op: 'lt', value: 1700000000 },
    { field: 'created_at', op: 'eq', value: '2024-02-30T00:00:00Z' },
    { field: 'metadata.team', op: 'eq', value: {} },
    { field: 'metadata.team', op: 'eq', value: ['a'] },
    { field: 'metadata.n', op: 'gt', value: true },
    { field: 'metadata.n', op: 'prefix', value: 1 },
  ),
  fc.constantFrom({ field: 'path', op: 'in', value: [] }, { field: 'path', op: 'in', value: '/a' }, { field: 'bytes', op: 'in', value: [1, 'x'] }),
  fc.integer({ min: 101, max: 150 }).map((n) => ({ field: 'path', op: 'in', value: Array.from({ length: n }, (_, i) => `/p${i}`) })),
  fc.constantFrom(
    {},
    { field: 'path', op: 'eq' },
    { op: 'eq', value: 'x' },
    { and: [] },
    { or: [] },
    { and: {} },
    { or: 'x' },
    { not: null },
    { not: [] },
    { and: [VALID_COMPARISONS[0]], or: [VALID_COMPARISONS[0]] },
    { ...VALID_COMPARISONS[0], not: VALID_COMPARISONS[0] },
  ),
  fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !CLAUSE_KEYS.includes(k)).map((k) => ({ field: 'path', op: 'eq', value: '/a', [k]: 1 })),
  fc.tuple(fc.integer({ min: 10, max: 40 }), fc.constantFrom<'not' | 'and' | 'or'>('not', 'and', 'or')).map(([n, how]) => nest(VALID_COMPARISONS[1], n, how)),
  fc.integer({ min: 101, max: 140 }).map((n) => ({ and: Array.from({ length: n }, () => VALID_COMPARISONS[1]) })),
);
/** A defect placed somewhere inside an otherwise valid filter (adding at most 3 levels). */
const badFilter: fc.Arbitrary<unknown> = fc
  .tuple(filterDefect, fc.array(fc.constantFrom(...VALID_COMPARISONS), { maxLength: 3 }), fc.constantFrom('bare', 'and', 'or', 'not', 'and-not'), fc.nat())
  .map(([defect, valid, how, i]) => {
    const list: unknown[] = [...valid];
    list.splice(i % (list.length + 1), 0, defect);
    switch (how) {
      case 'bare':
        return defect;
      case 'and':
        return { and: list };
      case 'or':
        return { or: list };
      case 'not':
        return { not: defect };
      default:
        return { and: [...valid, { not: defect }] };
    }
  });

function specificFamilies(def: RouteDef): Family[] {
  const params = validParams(def);
  const field = (name: string, runs: number, arb: fc.Arbitrary<Record<string, unknown>>, expect: string[] = ['invalid_request']): Family => ({
    name,
    runs,
    arb: fc.tuple(params, arb).map(([p, patch]) => ({ req: withBody(def, p, patch), expect })),
  });
  const query = (name: string, runs: number, arb: fc.Arbitrary<string>, expect: string[]): Family => ({
    name,
    runs,
    arb: fc.tuple(params, arb).map(([p, q]) => ({ req: request(def, p, { query: q }), expect })),
  });
  const qs = (entries: Record<string, string>) => new URLSearchParams(entries).toString();
  const listQueryFamilies = (otherCursor: string): Family[] => [
    query('limit 0, 101, -1, abc, … → 400 invalid_request', 50, badLimitText.map((limit) => qs({ limit })), ['invalid_request']),
    query(
      'junk, tampered or foreign cursor → 400 invalid_cursor',
      50,
      fc.oneof(validCursorLike, tamperedCursor(W.listCursor), tamperedCursor(W.jobsCursor), fc.constantFrom(otherCursor, W.searchCursor)).map((cursor) => qs({ cursor })),
      ['invalid_cursor'],
    ),
  ];

  switch (keyOf(def)) {
    case 'POST /namespaces':
      return [
        field('invalid name (uppercase, too long, ID-shaped, bad characters) → 400 invalid_request', 120, invalidName.map((name) => ({ name }))),
        field('name of a wrong type → 400 invalid_request', 40, notString.map((name) => ({ name }))),
        field('display_name of a wrong type or over 256 characters → 400 invalid_request', 40, displayNameJunk.map((display_name) => ({ display_name }))),
        field('exist_ok not a boolean → 400 invalid_request', 40, notBoolean.map((exist_ok) => ({ exist_ok }))),
        field('huge name → 400 invalid_request', 4, fc.integer({ min: 100_000, max: 1_000_000 }).map((n) => ({ name: 'a'.repeat(n) }))),
      ];
    case 'GET /namespaces':
      return listQueryFamilies(W.listCursor);
    case 'PATCH /namespaces/{namespace}':
      return [
        field('display_name of a wrong type or too long → 400 invalid_request', 80, displayNameJunk.map((display_name) => ({ display_name }))),
        { name: 'display_name missing → 400 invalid_request', runs: 20, arb: params.map((p) => ({ req: request(def, p, { body: '{}', headers: JSON_CT }), expect: ['invalid_request'] })) },
        field('name or id sent (immutable, not a field) → 400 invalid_request', 20, fc.constantFrom({ name: 'renamed' }, { id: 'ns_x' })),
      ];
    case 'DELETE /namespaces/{namespace}':
      return [
        field('force not a boolean → 400 invalid_request', 80, notBoolean.map((force) => ({ force }))),
        {
          // decisions.md §2: a namespace with collections needs force: true, else 400 invalid_request.
          name: 'deleting a namespace that has collections without force → 400 invalid_request',
          runs: 20,
          arb: fc.tuple(validParams(def, { namespace: fc.constantFrom('demo', W.nsId) }), fc.constantFrom<string | null>(null, '{}', '{"force":false}')).map(([p, body]) => ({ req: request(def, p, { body, headers: body === null ? {} : JSON_CT }), expect: ['invalid_request'] })),
        },
      ];
    case 'GET /namespaces/{namespace}/jobs':
      return [
        ...listQueryFamilies(W.listCursor),
        query('status or type outside the enum → 400 invalid_request', 60, fc.tuple(fc.constantFrom('status', 'type'), fc.string({ maxLength: 12 })).filter(([, v]) => !['queued', 'running', 'succeeded', 'failed', 'canceled', 'index_file', 'delete_file', 'reindex_collection', 'delete_collection', 'delete_namespace', 'apply_access_rule'].includes(v)).map(([k, v]) => qs({ [k]: v })), ['invalid_request']),
        query('collection unknown or from another namespace → 404 not_found', 40, fc.oneof(absentColRef, fc.constant('oc')).map((collection) => qs({ collection })), ['not_found']),
      ];
    case 'POST /namespaces/{namespace}/collections':
      return [
        field('invalid name → 400 invalid_request', 80, invalidName.map((name) => ({ name }))),
        field('name of a wrong type → 400 invalid_request', 30, notString.map((name) => ({ name }))),
        field('display_name junk → 400 invalid_request', 30, displayNameJunk.map((display_name) => ({ display_name }))),
        field('exist_ok not a boolean → 400 invalid_request', 30, notBoolean.map((exist_ok) => ({ exist_ok }))),
        field('access_control outside off/enforced → 400 invalid_request', 40, badEnum(['off', 'enforced']).map((access_control) => ({ access_control }))),
        field('processing junk (types, ranges, unknown flags) → 400 invalid_request', 80, processingJunk.map((processing) => ({ processing }))),
      ];
    case 'GET /namespaces/{namespace}/collections':
      return listQueryFamilies(W.jobsCursor);
    case 'PATCH /namespaces/{namespace}/collections/{collection}':
      return [
        field('display_name junk → 400 invalid_request', 40, displayNameJunk.map((display_name) => ({ display_name }))),
        field('access_control outside off/enforced → 400 invalid_request', 40, badEnum(['off', 'enforced']).map((access_control) => ({ access_control }))),
        field('processing junk → 400 invalid_request', 80, processingJunk.map((processing) => ({ processing }))),
        field('name sent (immutable) → 400 invalid_request', 10, fc.constant({ name: 'renamed' })),
      ];
    case 'POST /namespaces/{namespace}/collections/{collection}:search':
      return [
        field(
          'query empty, blank, over 32,000 characters or not a string → 400 invalid_request',
          60,
          fc.oneof(fc.constant(''), fc.stringMatching(/^[ \t\r\n]{1,20}$/), fc.integer({ min: 32_001, max: 40_000 }).map((n) => 'q'.repeat(n)), notString).map((query) => ({ query })),
        ),
        field(
          'mode, interpretation or result_unit outside its enum → 400 invalid_request',
          60,
          fc.oneof(
            badEnum(['keyword', 'semantic']).map((mode) => ({ mode })),
            badEnum(['literal', 'natural_language']).map((interpretation) => ({ interpretation })),
            badEnum(['file', 'passage']).map((result_unit) => ({ result_unit })),
          ),
        ),
        field('limit outside 1-100 or not an integer → 400 invalid_request', 50, badInt(1, 100).map((limit) => ({ limit }))),
        field('sort junk (5+ fields, duplicates, metadata or unknown fields, bad order) → 400 invalid_request', 50, sortJunk.map((sort) => ({ sort }))),
        field(
          'principals on an access_control "off" collection, or of a wrong shape → 400 invalid_request',
          50,
          fc.oneof(fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }), notObject.filter((v) => !Array.isArray(v) && v !== null), fc.array(notString.filter((v) => v !== null), { minLength: 1, maxLength: 3 })).map((principals) => ({ principals })),
        ),
        field('cursor not a string → 400 invalid_request', 20, notString.filter((v) => v !== null).map((cursor) => ({ cursor }))),
        field(
          'junk, tampered or foreign cursor → 400 invalid_cursor',
          50,
          fc.oneof(validCursorLike, tamperedCursor(W.searchCursor), fc.constantFrom(W.listCursor, W.jobsCursor)).map((cursor) => ({ cursor })),
          ['invalid_cursor'],
        ),
        field(
          'a search cursor sent with a different request → 400 invalid_cursor',
          20,
          fc.constantFrom({ query: 'fox' }, { limit: 2 }, { result_unit: 'passage' }, { filter: VALID_COMPARISONS[1] }).map((change) => ({ ...change, limit: (change as { limit?: number }).limit ?? 1, cursor: W.searchCursor })),
          ['invalid_cursor'],
        ),
        field('a filter with one defect → 400 invalid_filter', 200, badFilter.map((filter) => ({ filter })), ['invalid_filter']),
        field('a random JSON filter → 400 invalid_filter', 60, fc.jsonValue({ maxDepth: 4 }).filter((v) => v !== null).map((filter) => ({ filter })), ['invalid_filter']),
        field('huge query or filter value → 400', 4, fc.integer({ min: 100_000, max: 900_000 }).chain((n) => fc.constantFrom({ query: 'q'.repeat(n) }, { filter: { field: 'x'.repeat(n), op: 'eq', value: 1 } }, { cursor: 'c'.repeat(n) })), [
          'invalid_request',
          'invalid_filter',
          'invalid_cursor',
        ]),
      ];
    case 'POST /namespaces/{namespace}/collections/{collection}/files':
      return [
        field('invalid path (empty, relative, trailing /, empty/dot/parent segments, control characters, over 1,024 bytes, lone surrogate) → 400 invalid_request', 120, invalidPath.map((path) => ({ path }))),
        field('path of a wrong type → 400 invalid_request', 30, notString.map((path) => ({ path }))),
        field('source junk (types, schemes, content types, checksums, sizes, unknown fields) → 400 invalid_request', 150, sourceJunk.map((source) => ({ source }))),
        field('metadata not a map of 1-256 character keys → 400 invalid_request', 40, metadataJunk.map((metadata) => ({ metadata }))),
        field('huge path → 400 invalid_request', 3, fc.integer({ min: 100_000, max: 900_000 }).map((n) => ({ path: `/${'p'.repeat(n)}` }))),
      ];
    case 'GET /namespaces/{namespace}/collections/{collection}/files':
      return [
        ...listQueryFamilies(W.jobsCursor),
        query('path query that is not a valid path → 400 invalid_request', 60, fc.oneof(fc.constant(''), invalidPathNoSurrogate).map((path) => qs({ path })), ['invalid_request']),
        query('prefix empty or over 1,024 characters → 400 invalid_request', 20, fc.oneof(fc.constant(''), fc.integer({ min: 1025, max: 1500 }).map((n) => 'p'.repeat(n))).map((prefix) => qs({ prefix })), ['invalid_request']),
        query('both path and prefix → 400 invalid_request', 20, fc.tuple(validPath, fc.string({ minLength: 1, maxLength: 10 })).map(([path, prefix]) => qs({ path, prefix })), ['invalid_request']),
        query('status outside the file statuses → 400 invalid_request', 30, fc.string({ maxLength: 10 }).filter((s) => !['pending', 'indexing', 'ready', 'failed', 'deleting'].includes(s)).map((status) => qs({ status })), ['invalid_request']),
        query('a files cursor sent with different filters → 400 invalid_cursor', 10, fc.constantFrom('status=ready', 'prefix=%2F', 'path=%2Fa.md').map((q) => `${q}&cursor=${enc(W.listCursor)}`), ['invalid_cursor']),
      ];
    case 'PATCH /namespaces/{namespace}/collections/{collection}/files/{file}':
      return [
        { name: 'neither metadata nor source → 400 invalid_request', runs: 15, arb: params.map((p) => ({ req: request(def, p, { body: '{}', headers: JSON_CT }), expect: ['invalid_request'] })) },
        field('metadata junk → 400 invalid_request', 50, metadataJunk.map((metadata) => ({ metadata }))),
        field('source junk → 400 invalid_request', 120, sourceJunk.map((source) => ({ source }))),
        field('path sent (not a field) → 400 invalid_request', 10, validPath.map((path) => ({ path }))),
      ];
    case 'PUT /uploads/{token}': {
      // decisions.md §2: size and checksum are verified against what was declared; the first
      // refused upload fails the file with source_mismatch and uses the URL up, so the later ones
      // are refused as a used URL (both checked after the families).
      const wrongBytes = fc.oneof(
        fc.uint8Array({ maxLength: 64 }).filter((b) => b.length !== UPLOAD_BYTES.length),
        fc.uint8Array({ minLength: UPLOAD_BYTES.length, maxLength: UPLOAD_BYTES.length }).filter((b) => !Buffer.from(b).equals(UPLOAD_BYTES)),
      );
      return [
        {
          name: 'bytes of another size or checksum than declared → 400 invalid_request',
          runs: 120,
          arb: wrongBytes.map((b) => ({ req: request(def, { token: W.uploadToken }, { body: Buffer.from(b), headers: { 'content-type': 'text/plain' } }), expect: ['invalid_request'] })),
        },
      ];
    }
    default:
      return [];
  }
}

// ------------------------------------------------------------------------------------------------
// Run: every route of the app (dataPlaneRoutes plus /openapi.json)

const MIN_CASES_PER_ROUTE = 240;

for (const def of APP_ROUTES) {
  await t.test(keyOf(def), async (tt) => {
    const specific = specificFamilies(def);
    if (specific.length === 0) tt.comment('no route-specific families: generic bad input only');
    const families = [...genericFamilies(def), ...specific];
    // Hundreds of cases per route: routes with few families run each of them more often.
    const total = families.filter((fam) => !fam.todo).reduce((sum, fam) => sum + fam.runs, 0);
    const scale = Math.max(1, MIN_CASES_PER_ROUTE / total);
    for (const fam of families) await runFamily(tt, fam.todo ? fam : { ...fam, runs: Math.ceil(fam.runs * scale) });
  });
}

await t.test('routes that need no key ignore junk credentials', async (tt) => {
  for (const path of ['/health', '/ready', '/openapi.json']) {
    const details = await fc.check(
      fc.asyncProperty(authJunk, ridArb, async (auth, rid) => {
        const res = await send({ route: `GET ${path}`, method: 'GET', url: path, body: null, headers: auth }, rid);
        assert.equal(res.status, 200, `GET ${path} with ${JSON.stringify(auth)} → ${res.status} ${res.text.slice(0, 200)}`);
        assert.equal(res.headers['x-request-id'], rid ?? res.headers['x-request-id'], 'X-Request-Id echoed on success');
        assert.ok(res.headers['x-request-id'], 'x-request-id present on success');
      }),
      { numRuns: 40 },
    );
    tt.ok(!details.failed, `GET ${path}`, details.failed ? { report: fc.defaultReportMessage(details) } : {});
  }
});

await t.test('X-Request-Id: echoed when sent, generated when absent or unusable', async (tt) => {
  const sentId = 'client-req-0001';
  const ok = await send({ route: 'GET /info', method: 'GET', url: '/info', body: null, headers: { 'x-request-id': sentId } });
  tt.equal(ok.status, 200);
  tt.equal(ok.headers['x-request-id'], sentId, 'echoed on a 200');
  const err = await send({ route: 'GET /namespaces/{namespace}', method: 'GET', url: '/namespaces/nope-nope', body: null, headers: { 'x-request-id': sentId } });
  tt.equal(err.status, 404);
  tt.equal(err.headers['x-request-id'], sentId, 'echoed on an error');
  tt.equal(err.body.error.request_id, sentId, 'and in error.request_id');
  for (const unusable of ['', ' ', 'has space', 'x'.repeat(5000), 'tab\there']) {
    const res = await send({ route: 'GET /namespaces/{namespace}', method: 'GET', url: '/namespaces/nope-nope', body: null, headers: { 'x-request-id': unusable } });
    tt.equal(res.status, 404);
    const id = res.headers['x-request-id'];
    tt.ok(typeof id === 'string' && id.length > 0 && id.length <= 200, `a request id is present for X-Request-Id ${JSON.stringify(unusable.slice(0, 20))}`);
    tt.equal(res.body.error.request_id, id, 'error.request_id equals the header');
  }
  const a1 = await send({ route: 'GET /info', method: 'GET', url: '/info', body: null, headers: {} });
  const a2 = await send({ route: 'GET /info', method: 'GET', url: '/info', body: null, headers: {} });
  tt.ok(a1.headers['x-request-id'] && a1.headers['x-request-id'] !== a2.headers['x-request-id'], 'generated ids differ between requests');
});

await t.test('bodies over the route limit → 413 request_too_large', async (tt) => {
  for (const def of ROUTES.filter((r) => r.body)) {
    const limit = def.bodyLimit ?? 1_048_576;
    const body = Buffer.alloc(limit + 1, 0x20);
    body.write('{"zz":"', 0);
    body.write('"}', limit - 1);
    const params = fc.sample(validParams(def), 1)[0]!;
    const req = request(def, params, { body, headers: JSON_CT });
    const res = await send(req, 'too-large-1');
    let code = '';
    try {
      code = checkEnvelope(res, 'too-large-1');
    } catch (err) {
      tt.fail(`${keyOf(def)}: ${(err as Error).message}`);
      continue;
    }
    tt.equal(code, 'request_too_large', `${keyOf(def)} with ${limit + 1} bytes`);
    tt.equal(res.body.error.retryable, false);
  }
  // The search limit is 4,194,304 (retrieval-api.md, Limits): 1.5 MB is over the default but allowed.
  const filter = { or: Array.from({ length: 60 }, (_, i) => ({ field: 'path', op: 'eq', value: `/${i}${'x'.repeat(25_000)}` })) };
  const mid = json({ query: 'quick', mode: 'keyword', filter });
  tt.ok(mid.length > 1_048_576 && mid.length < 4_194_304, 'the search body is between the default and the search limit');
  const res = await send({ route: 'POST /namespaces/{namespace}/collections/{collection}:search', method: 'POST', url: `${base}:search`, body: mid, headers: JSON_CT });
  tt.equal(res.status, 200, 'a 1.5 MB search body is accepted');
});

await t.test('documented conflicts: pending upload, external source, collection not ready', async (tt) => {
  const pending = await send({ route: 'GET /namespaces/{namespace}/collections/{collection}/files/{file}/content', method: 'GET', url: `/namespaces/demo/collections/uploads/files/${W.pendingUploadFile}/content`, body: null, headers: {} }, 'conflict-1');
  tt.equal(checkEnvelope(pending, 'conflict-1'), 'operation_in_progress', 'content of an upload still waiting for bytes → 409 operation_in_progress');
  tt.equal(pending.body.error.retryable, true);
  const external = await send({ route: 'GET /namespaces/{namespace}/collections/{collection}/files/{file}/content', method: 'GET', url: `/namespaces/demo/collections/ext/files/${extFile}/content`, body: null, headers: {} }, 'conflict-2');
  tt.equal(checkEnvelope(external, 'conflict-2'), 'external_source', 'content of a uri source → 409 external_source');
  const notReady = await send({ route: 'POST /namespaces/{namespace}/collections/{collection}:search', method: 'POST', url: '/namespaces/demo/collections/uploads:search', body: json({ query: 'x', mode: 'keyword' }), headers: JSON_CT }, 'conflict-3');
  tt.equal(checkEnvelope(notReady, 'conflict-3'), 'collection_not_ready', 'search with no ready file → 409 collection_not_ready');
  tt.equal(notReady.body.error.retryable, true);
  const semanticOff = await send({ route: 'POST /namespaces/{namespace}/collections/{collection}:search', method: 'POST', url: '/namespaces/demo/collections/ext:search', body: json({ query: 'x', mode: 'semantic' }), headers: JSON_CT }, 'conflict-4');
  tt.equal(checkEnvelope(semanticOff, 'conflict-4'), 'invalid_request', 'semantic search on a collection with processing.semantic false → 400 invalid_request');
});

await t.test('refused uploads failed the file with source_mismatch and used the URL up', async (tt) => {
  // retrieval-api.md, File.source.checksum: "A mismatch fails processing with code source_mismatch".
  const file = await f.call('GET', `/namespaces/demo/collections/uploads/files/${W.uploadFile}`);
  tt.match(file.body, { status: 'failed', error: { code: 'source_mismatch' } }, 'the file failed');
  const again = await send({ route: 'PUT /uploads/{token}', method: 'PUT', url: `/uploads/${W.uploadToken}`, body: UPLOAD_BYTES, headers: { 'content-type': 'text/plain' } }, 'reuse-1');
  tt.equal(checkEnvelope(again, 'reuse-1'), 'invalid_request', 'the used upload URL refuses even the right bytes');
});

await t.test('regressions: invalid file paths and encodings, deep nesting, __proto__ keys', async (tt) => {
  const fileRoutes = APP_ROUTES.filter((r) => r.path.endsWith('{file}') || r.path.endsWith('{file}/content'));
  for (const def of fileRoutes) {
    await runFamily(tt, {
      name: `${keyOf(def)}: an encoded file path the contract calls invalid → 400 invalid_request`,
      runs: 30,
      arb: fc.tuple(validParams(def), invalidPathNoSurrogate.filter((p) => p.startsWith('/') && p !== '/')).map(([p, path]) => ({ req: withBody(def, { ...p, file: enc(path) }), expect: ['invalid_request'] })),
    });
  }
  await runFamily(tt, {
    name: 'invalid percent-encoding in a path segment → 400 invalid_request',
    runs: 40,
    arb: fc
      .tuple(fc.constantFrom('%ZZ', '%', '%E0%A4%A', '%C0%AF', '%F0%9F', 'a%2', '%%41'), fc.constantFrom('ns', 'col', 'file'))
      .map(([junk, where]) => ({
        req: {
          route: where === 'file' ? 'GET /namespaces/{namespace}/collections/{collection}/files/{file}' : where === 'col' ? 'GET /namespaces/{namespace}/collections/{collection}' : 'GET /namespaces/{namespace}',
          method: 'GET',
          url: where === 'file' ? `${base}/files/${junk}` : where === 'col' ? `/namespaces/demo/collections/${junk}` : `/namespaces/${junk}`,
          body: null,
          headers: {},
        },
        expect: ['invalid_request'],
      })),
  });
  for (const method of ['POST', 'PATCH'] as const) {
    await runFamily(tt, {
      name: `${method} file with metadata nested thousands of levels deep → never a 5xx`,
      runs: 6,
      arb: fc.tuple(fc.integer({ min: 3_000, max: 60_000 }), fc.boolean()).map(([n, arrays]) => {
        const deep = arrays ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n);
        const body = method === 'POST' ? `{"path":"/deep.md","source":{"type":"inline","text":"deep"},"metadata":{"k":${deep}}}` : `{"metadata":{"k":${deep}}}`;
        const url = method === 'POST' ? '/namespaces/demo/collections/deep/files' : `/namespaces/demo/collections/deep/files/${deepTarget}`;
        return {
          req: { route: method === 'POST' ? 'POST /namespaces/{namespace}/collections/{collection}/files' : 'PATCH /namespaces/{namespace}/collections/{collection}/files/{file}', method, url, body, headers: JSON_CT },
          expect: ['invalid_request', 'request_too_large'],
          allowSuccess: true,
        };
      }),
    });
  }
  // metadata is "map of string to any JSON value": a key is stored as sent, or the request refused.
  const added = await f.call('POST', '/namespaces/demo/collections/deep/files', { path: '/proto.md', source: { type: 'inline', text: 'proto' }, metadata: JSON.parse('{"__proto__":{"x":1},"k":2}') });
  const kept = added.status === 202 ? Object.hasOwn(added.body.file.metadata, '__proto__') : added.status === 400;
  tt.ok(kept, 'a metadata key "__proto__" is stored or refused, never silently dropped');
});

await t.test('ERROR_TABLE agrees with the contract (retrieval-api.md "Errors", decisions.md §4)', async (tt) => {
  const contract: Record<string, [number, boolean]> = {
    invalid_request: [400, false],
    invalid_filter: [400, false],
    invalid_cursor: [400, false],
    unauthenticated: [401, false],
    forbidden: [403, false],
    not_found: [404, false],
    already_exists: [409, false],
    idempotency_conflict: [409, false],
    collection_empty: [409, false],
    collection_not_ready: [409, true],
    operation_in_progress: [409, true],
    limit_exceeded: [409, false],
    external_source: [409, false],
    request_too_large: [413, false],
    temporarily_unavailable: [503, true],
    internal_error: [500, false],
    webhook_disabled: [409, false],
  };
  for (const [code, [status, retryable]] of Object.entries(contract)) {
    const row = ERROR_TABLE[code as ErrorCode];
    tt.same(row && [row.status, row.retryable], [status, retryable], code);
  }
  tt.same(ERROR_TABLE.method_not_allowed && [ERROR_TABLE.method_not_allowed.status, ERROR_TABLE.method_not_allowed.retryable], [405, false], 'method_not_allowed (added by the daemon)');
});

await t.test('every data-plane route got hundreds of bad requests', async (tt) => {
  for (const def of ROUTES) {
    const n = sent.get(keyOf(def)) ?? 0;
    tt.ok(n >= 200, `${keyOf(def)}: ${n} requests`);
  }
  tt.comment(`total requests: ${[...sent.values()].reduce((a, b) => a + b, 0)}`);
});
