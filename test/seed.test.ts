// Seed files (`trove daemon start --seed`, docs/fixture-mode.md): the loader's checks and messages,
// applying a seed in-process and checking its effects through the API, re-applying it on the same
// data dir, and the daemon refusing a bad seed with exit code 2 and nothing left behind.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { openRuntime, type Runtime, type RuntimeOptions } from '../daemon/runtime.js';
import { applySeed, loadSeedFile, parseSeedText, SeedError, type LoadedSeed } from '../daemon/seed.js';
import type { SeedObject } from '../src/contract/seed.js';
import { TroveError } from '../src/contract/errors.js';
import { createKey, createKeyWithSecret } from '../src/domain/key-admin.js';
import { authenticate, chosenSecretProblem, estimatedSecretBits } from '../src/domain/keys.js';
import { findNamespace } from '../src/store/sqlite/namespaces.js';
import { BIN, cleanEnv, newClusterKey, ROOT, runCli } from './helpers/cli.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const EXAMPLE = path.join(ROOT, 'fixtures', 'seed.example.yaml');
const CLUSTER_KEY = 'test-cluster-key-0123456789abcdef';
/** A secret the way the docs say to make one. */
const strongSecret = (prefix = randomBytes(5).toString('hex')) => `trove_${prefix}_${randomBytes(32).toString('base64url')}`;

/** The problems the loader reports for a YAML text (it must refuse it). */
function problemsOf(t: TestContext, text: string, name = 'seed.yaml', baseDir = ROOT): string[] {
  try {
    parseSeedText(text, { name, baseDir });
  } catch (err) {
    if (err instanceof SeedError) {
      t.match(err.message, `The seed ${name} is invalid:`, 'the message names the seed');
      return err.problems;
    }
    throw err;
  }
  t.fail('the seed was accepted');
  return [];
}

const objectProblems = (t: TestContext, seed: unknown) => problemsOf(t, JSON.stringify(seed, null, 2), 'seed.json');

interface Reply {
  status: number;
  body: any;
}

function client(rt: Runtime) {
  return async (method: string, url: string, body?: unknown, key = CLUSTER_KEY): Promise<Reply> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await rt.app.handle({ method, url, headers, body: body === undefined ? null : Buffer.from(JSON.stringify(body)) });
    const text = res.body === null ? '' : res.body.toString();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

const paths = (reply: Reply): string[] => (reply.body.results as { path: string }[]).map((r) => r.path).sort();

async function open(t: TestContext, options: RuntimeOptions = {}): Promise<Runtime> {
  const rt = await openRuntime({ ephemeral: true, clusterKey: CLUSTER_KEY, ...options });
  t.teardown(() => rt.close());
  return rt;
}

const seedOf = (seed: SeedObject, baseDir = ROOT): LoadedSeed => parseSeedText(JSON.stringify(seed), { name: 'seed.json', baseDir, format: 'json' });

// ---------------------------------------------------------------- the loader

t.test('the committed example seed loads, with defaults filled in', async (t) => {
  const loaded = loadSeedFile(EXAMPLE);
  t.equal(loaded.baseDir, path.join(ROOT, 'fixtures'), 'relative files are read from the seed file\'s folder');
  t.equal(loaded.seed.wait, true);
  t.same(loaded.seed.namespaces.map((n) => n.name), ['demo']);
  t.same(loaded.seed.collections.map((c) => `${c.namespace}/${c.name}:${c.access_control ?? 'off'}`), ['demo/docs:off', 'demo/hr:enforced']);
  t.equal(loaded.seed.collections[0]!.processing?.semantic, false, 'processing options as the API parses them');
  t.equal(loaded.seed.files.length, 5);
  t.same(parseSeedText('{}', { name: 'empty.json', baseDir: ROOT }).seed, { wait: true, namespaces: [], collections: [], keys: [], rules: [], files: [] }, 'every list is optional and wait defaults to true');
});

t.test('bad YAML and bad JSON name the line', async (t) => {
  const yamlProblems = problemsOf(t, 'namespaces:\n  - name: demo\n   extra: [\n');
  t.ok(yamlProblems.length > 0);
  t.match(yamlProblems[0], /^seed\.yaml:\d+:\d+: not valid YAML: /);
  t.match(problemsOf(t, 'namespaces:\n  - name: a\n    name: b\n')[0], /^seed\.yaml:3:5: not valid YAML: .*unique/, 'a repeated key is an error, not a silent overwrite');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-seed-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'seed.json'), '{"namespaces": [{"name": "demo"},]}');
  t.throws(() => loadSeedFile(path.join(dir, 'seed.json')), { name: 'SeedError', message: /seed\.json.*not valid JSON/ }, '.json files are strict JSON');
  await writeFile(path.join(dir, 'seed.json'), '{"namespaces": [{"name": "demo"}]}');
  t.same(loadSeedFile(path.join(dir, 'seed.json')).seed.namespaces, [{ name: 'demo' }]);
  t.throws(() => loadSeedFile(path.join(dir, 'missing.yaml')), { name: 'SeedError', message: /Cannot read the seed file .*missing\.yaml: no such file/ });
  t.match(problemsOf(t, '')[0], /the seed is empty/);
  t.match(problemsOf(t, '- name: demo\n')[0], /^seed\.yaml:1:1: The seed must be an object \(got an array\)$/);
});

t.test('unknown fields are refused where they are', async (t) => {
  const problems = problemsOf(
    t,
    ['namespaces:', '  - name: demo', 'colections: []', 'collections:', '  - namespace: demo', '    name: docs', '    proccessing: { semantic: false }', '    processing: { chunk_size: 100 }'].join('\n'),
  );
  t.same(problems, [
    'seed.yaml:3:1: colections: unknown field',
    'seed.yaml:7:5: collections[0].proccessing: unknown field',
    'seed.yaml:8:19: collections[0].processing.chunk_size: unknown field',
  ]);
  t.same(objectProblems(t, { files: [{ namespace: 'demo', collection: 'docs', path: '/a.md', text: 'x', source: {} }], namespaces: [{ name: 'demo' }], collections: [{ namespace: 'demo', name: 'docs' }] }), [
    'seed.json:8:7: files[0].source: unknown field',
  ]);
});

t.test('fields are checked as the API checks them', async (t) => {
  const problems = objectProblems(t, {
    wait: 'yes',
    namespaces: [{ name: 'Demo' }, {}],
    collections: [{ namespace: 'demo', name: 'docs', processing: { chunk_tokens: 10 } }],
    keys: [{ name: 'k', secret: strongSecret(), scope: { kind: 'everything' } }],
    files: [{ namespace: 'demo', collection: 'docs', path: 'no-slash.md', text: 'x' }],
  });
  t.match(problems, [
    /wait must be true or false \(got the string "yes"\)/,
    /namespaces\[0\]\.name must be 1-63 lowercase.* \(got "Demo"\)$/,
    /namespaces\[1\]\.name is required$/,
    /collections\[0\]\.processing\.chunk_tokens must be an integer from 64 to 2048 \(got 10\)$/,
    /keys\[0\]\.scope\.kind must be one of cluster, namespace, collection \(got "everything"\)/,
    /files\[0\]\.path must /,
  ]);
  t.match(objectProblems(t, { namespaces: [{ name: 'demo' }], collections: [{ namespace: 'demo', name: 'docs' }], files: [{ namespace: 'demo', collection: 'docs', path: '/a.md' }] }), [/files\[0\]: set exactly one of text, file and uri/]);
  t.match(
    objectProblems(t, { namespaces: [{ name: 'demo' }], collections: [{ namespace: 'demo', name: 'docs' }], files: [{ namespace: 'demo', collection: 'docs', path: '/a.md', text: 'x', uri: 'https://example.com/a.md' }] }),
    [/files\[0\]: set exactly one of text, file and uri/],
  );
  t.match(
    objectProblems(t, { namespaces: [{ name: 'demo' }], collections: [{ namespace: 'demo', name: 'hr', access_control: 'enforced' }], rules: [{ namespace: 'demo', collection: 'hr', file: '/a.md', readers: ['u'], sealed: true }] }),
    [/rules\[0\]\.sealed: only folder rules can be sealed/],
  );
});

t.test('a weak or malformed secret is refused, without echoing it', async (t) => {
  const seedWith = (secret: string) => ({ keys: [{ name: 'ci', secret, scope: { kind: 'cluster' } }] });
  const cases: [string, RegExp][] = [
    ['hunter2', /must have the form trove_<prefix>_<random>/],
    ['trove_ab_' + randomBytes(32).toString('base64url'), /must have the form trove_<prefix>_<random>/],
    ['trove_cisecret_' + randomBytes(16).toString('base64url'), /random part of 22 characters; it needs at least 43/],
    ['trove_cisecret_' + 'a'.repeat(60), /looks guessable: its random part scores about \d+ bits/],
    ['trove_cisecret_' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', /looks guessable/],
    ['trove_cisecret_' + 'password-'.repeat(6), /looks guessable/],
    ['trove_cisecret_' + '0123456789'.repeat(5), /looks guessable/],
  ];
  for (const [secret, expected] of cases) {
    const problems = objectProblems(t, seedWith(secret));
    t.equal(problems.length, 1, secret);
    t.match(problems[0], /^seed\.json:\d+:\d+: keys\[0\]\.secret: the secret /);
    t.match(problems[0], expected, secret);
    t.notOk(problems[0]!.includes(secret), 'the message does not repeat the secret');
  }
  // What the docs tell people to generate always passes: base64url and hex of 32 random bytes.
  for (let i = 0; i < 200; i++) {
    t.equal(chosenSecretProblem(strongSecret()), null);
    t.equal(chosenSecretProblem(`trove_hexsecret_${randomBytes(32).toString('hex')}`), null);
  }
  t.ok(estimatedSecretBits(randomBytes(32).toString('base64url')) >= 128);
  t.ok(estimatedSecretBits('ab'.repeat(40)) < 20, 'repetition scores next to nothing');
});

t.test('references must be declared in the seed, and names must be unique', async (t) => {
  const secret = strongSecret('dupprefix');
  const problems = objectProblems(t, {
    namespaces: [{ name: 'demo' }, { name: 'demo' }],
    collections: [
      { namespace: 'demo', name: 'docs' },
      { namespace: 'demo', name: 'docs' },
      { namespace: 'ghost', name: 'docs' },
    ],
    keys: [
      { name: 'ci', secret, scope: { kind: 'collection', namespace: 'demo', collections: ['docs', 'nope'], actions: ['search'] } },
      { name: 'ci', secret: strongSecret('dupprefix'), scope: { kind: 'namespace', namespace: 'elsewhere', actions: ['read'] } },
      { name: 'cluster', secret: strongSecret(), scope: { kind: 'cluster' } },
    ],
    rules: [
      { namespace: 'demo', collection: 'docs', folder: '/', readers: ['u'] },
      { namespace: 'demo', collection: 'nope', folder: '/', readers: ['u'] },
    ],
    files: [
      { namespace: 'demo', collection: 'docs', path: '/a.md', text: 'a' },
      { namespace: 'demo', collection: 'docs', path: '/a.md', text: 'again' },
      { namespace: 'demo', collection: 'missing', path: '/b.md', text: 'b' },
    ],
  });
  const expected = [
    /namespaces\[1\]\.name: duplicate namespace 'demo' \(first at namespaces\[0\]\)/,
    /collections\[1\]\.name: duplicate collection 'demo\/docs' \(first at collections\[0\]\)/,
    /collections\[2\]\.namespace: namespace 'ghost' is not declared under namespaces/,
    /keys\[0\]\.scope\.collections\[1\]: collection 'demo\/nope' is not declared under collections/,
    /keys\[1\]\.name: duplicate key name 'ci' \(first at keys\[0\]\)/,
    /keys\[1\]\.secret:? has the same prefix as the secret of keys\[0\]/,
    /keys\[1\]\.scope\.namespace: namespace 'elsewhere' is not declared under namespaces/,
    /keys\[2\]\.name: 'cluster' is the daemon's own key/,
    /rules\[0\]\.collection: collection 'demo\/docs' needs access_control: enforced/,
    /rules\[1\]\.collection: collection 'demo\/nope' is not declared under collections/,
    /files\[1\]\.path: duplicate file '\/a\.md' in 'demo\/docs' \(first at files\[0\]\)/,
    /files\[2\]\.collection: collection 'demo\/missing' is not declared under collections/,
  ];
  for (const pattern of expected) t.ok(problems.some((p) => pattern.test(p)), `reports ${pattern}`);
  t.equal(problems.length, expected.length, 'and nothing else');
  t.ok(problems.every((p) => /^seed\.json:\d+:\d+: /.test(p)), 'each problem names its line');
});

t.test('a local file must exist, relative to the seed file', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-seed-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'here.md'), '# Here\n');
  const text = ['namespaces: [{ name: demo }]', 'collections: [{ namespace: demo, name: docs }]', 'files:', '  - { namespace: demo, collection: docs, path: /here.md, file: here.md }', '  - { namespace: demo, collection: docs, path: /gone.md, file: gone.md }'].join('\n');
  await writeFile(path.join(dir, 'seed.yaml'), text);
  t.throws(() => loadSeedFile(path.join(dir, 'seed.yaml')), { name: 'SeedError', problems: [new RegExp(`seed\\.yaml:5:\\d+: files\\[1\\]\\.file: no file at ${path.join(dir, 'gone.md').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)] });
  await writeFile(path.join(dir, 'seed.yaml'), text.replace('file: gone.md', 'file: here.md'));
  t.equal(loadSeedFile(path.join(dir, 'seed.yaml')).seed.files.length, 2, 'with the file there, it loads');
});

// ---------------------------------------------------------------- keys with a chosen secret

t.test('createKeyWithSecret: the rules of POST /keys, a strong secret, and only its hash stored', async (t) => {
  const rt = await open(t);
  const call = client(rt);
  t.equal((await call('POST', '/namespaces', { name: 'demo' })).status, 201);
  t.equal((await call('POST', '/namespaces/demo/collections', { name: 'docs' })).status, 201);
  const cluster = await authenticate(rt.services.store, CLUSTER_KEY);
  const scope = { kind: 'collection' as const, namespace: 'demo', collections: ['docs'], actions: ['search' as const] };

  const weak = () => createKeyWithSecret(rt.services, cluster, { name: 'weak', scope }, 'trove_weakweak_' + 'x'.repeat(50));
  await t.rejects(weak, { code: 'invalid_request', message: /The secret of key 'weak' looks guessable/ });
  t.equal((await rt.services.store.keys.byName(findNamespace(rt.db, 'demo')!.id, 'weak')), undefined, 'nothing stored');

  const secret = strongSecret('chosen01');
  const key = await createKeyWithSecret(rt.services, cluster, { name: 'chosen', scope }, secret);
  t.match(key, { name: 'chosen', prefix: 'chosen01', scope });
  t.notOk('secret' in key, 'the result carries no secret');
  const row = (await rt.services.store.keys.byName(findNamespace(rt.db, 'demo')!.id, 'chosen'))!;
  t.same(row.secret_hash, createHash('sha256').update(secret).digest(), 'the hash is stored');
  t.notOk(JSON.stringify({ ...row, secret_hash: row.secret_hash.toString('base64') }).includes(secret.slice(16)), 'the secret is not');
  t.equal((await authenticate(rt.services.store, secret)).name, 'chosen', 'it authenticates');

  await t.rejects(() => createKeyWithSecret(rt.services, cluster, { name: 'chosen', scope }, strongSecret()), { code: 'already_exists', message: /A key named 'chosen'/ });
  await t.rejects(() => createKeyWithSecret(rt.services, cluster, { name: 'other', scope }, strongSecret('chosen01')), { code: 'already_exists', message: /prefix 'chosen01'/ });
  await t.rejects(() => createKeyWithSecret(rt.services, cluster, { name: 'nowhere', scope: { ...scope, collections: ['nope'] } }, strongSecret()), { code: 'not_found' });
  const nsKey = await authenticate(rt.services.store, (await createKey(rt.services, cluster, { name: 'ns', scope: { kind: 'namespace', namespace: 'demo', actions: ['read'] } })).secret);
  await t.rejects(() => createKeyWithSecret(rt.services, nsKey, { name: 'wider', scope }, strongSecret()), { code: 'forbidden' }, "a new key's actions stay within its creator's");
  await t.rejects(() => createKeyWithSecret(rt.services, cluster, { name: 'cluster', scope: { kind: 'cluster' } }, strongSecret()), TroveError);

  const minted = await createKey(rt.services, cluster, { name: 'minted', scope });
  t.match(minted.key.secret, /^trove_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/, 'minted keys are unchanged');
  t.equal(chosenSecretProblem(minted.secret), null, 'and would pass as chosen ones');
});

// ---------------------------------------------------------------- applying

t.test('applying the example seed in-process: everything it lists exists and behaves', async (t) => {
  const rt = await open(t);
  const call = client(rt);
  const loaded = loadSeedFile(EXAMPLE);
  const report = await applySeed(rt, loaded);
  t.same(report, {
    namespaces: { created: 1, existing: 0 },
    collections: { created: 2, existing: 0 },
    keys: { created: 2, existing: 0 },
    rules: { created: 2, existing: 0 },
    files: { created: 5, existing: 0 },
    waited: true,
  });

  t.same((await call('GET', '/namespaces')).body.items.map((n: { name: string }) => n.name), ['demo']);
  const docs = (await call('GET', '/namespaces/demo/collections/docs')).body;
  t.match(docs, { access_control: 'off', processing: { semantic: false, keyword: true }, file_counts: { pending: 0, indexing: 0, ready: 3, failed: 0 } }, 'indexed before applySeed returned');
  const hr = (await call('GET', '/namespaces/demo/collections/hr')).body;
  t.match(hr, { access_control: 'enforced', file_counts: { ready: 2, pending: 0, indexing: 0 } });

  const cats = (await call('GET', `/namespaces/demo/collections/docs/files/${encodeURIComponent('/cats.md')}`)).body;
  t.match(cats, { status: 'ready', source: { type: 'inline', content_type: 'text/markdown' }, metadata: { topic: 'pets' } });
  const pdf = (await call('GET', `/namespaces/demo/collections/docs/files/${encodeURIComponent('/reports/harbour.pdf')}`)).body;
  t.match(pdf, { status: 'ready', source: { type: 'upload', content_type: 'application/pdf' } }, 'a local file is uploaded with its bytes');

  // The seeded collection key searches its collection, and nothing else exists for it.
  const docsKey = loaded.seed.keys.find((k) => k.name === 'docs-reader')!.secret;
  const search = (col: string, query: string, key: string, extra: Record<string, unknown> = {}) =>
    call('POST', `/namespaces/demo/collections/${col}:search`, { query, mode: 'keyword', ...extra }, key);
  let r = await search('docs', 'why do cats purr', docsKey);
  t.equal(r.status, 200);
  t.equal(r.body.results[0]?.path, '/cats.md');
  r = await search('docs', 'annual harbour inspection', docsKey);
  t.same(paths(r), ['/reports/harbour.pdf'], 'the PDF is searchable');
  r = await search('docs', 'BM25 evidence', docsKey);
  t.same(paths(r), ['/guides/getting-started.md']);
  t.equal((await search('hr', 'salary', docsKey)).status, 404, 'another collection is not there for the collection key');
  t.equal((await call('GET', '/keys', undefined, docsKey)).status, 403, 'a collection key administers no keys');
  const keys = (await call('GET', '/keys')).body.items.map((k: { name: string; scope: { kind: string } }) => `${k.name}:${k.scope.kind}`);
  t.same(keys.sort(), ['cluster:cluster', 'demo-admin:namespace', 'docs-reader:collection']);
  const adminKey = loaded.seed.keys.find((k) => k.name === 'demo-admin')!.secret;
  t.equal((await call('POST', '/namespaces/demo/collections', { name: 'more' }, adminKey)).status, 201, 'the namespace key may write');

  // The rules filter by principal as they say: staff read /, the sealed /payroll/ only payroll.
  t.same(paths(await search('hr', 'Fridays salary bands', CLUSTER_KEY, { principals: ['group:staff'] })), ['/handbook.md']);
  t.same(paths(await search('hr', 'Fridays salary bands', CLUSTER_KEY, { principals: ['group:payroll'] })), ['/payroll/bands.md']);
  t.same(paths(await search('hr', 'Fridays salary bands', CLUSTER_KEY, { principals: ['user:nobody'] })), []);
  const rules = (await call('GET', '/namespaces/demo/collections/hr/access-rules')).body.items;
  t.match(rules.sort((a: { folder: string }, b: { folder: string }) => a.folder.localeCompare(b.folder)), [
    { folder: '/', readers: ['group:staff'], sealed: false },
    { folder: '/payroll/', readers: ['group:payroll'], sealed: true },
  ]);
});

t.test('uri sources go through the API rules: allowed roots index, others are refused', async (t) => {
  const notes = path.join(ROOT, 'fixtures', 'sample', 'notes.txt');
  const seed: SeedObject = {
    namespaces: [{ name: 'demo' }],
    collections: [{ namespace: 'demo', name: 'docs', processing: { semantic: false } }],
    files: [{ namespace: 'demo', collection: 'docs', path: '/tea.txt', uri: pathToFileURL(notes).href, metadata: { from: 'disk' } }],
  };
  const allowed = await open(t, { fileRoots: [path.dirname(notes)] });
  await applySeed(allowed, seedOf(seed));
  const r = await client(allowed)('POST', '/namespaces/demo/collections/docs:search', { query: 'oolong oxidation', mode: 'keyword' });
  t.same(paths(r), ['/tea.txt']);

  const refused = await open(t);
  await t.rejects(applySeed(refused, seedOf(seed)), { name: 'SeedError', message: /^Seeding from seed\.json failed: files\[0\] \(\/tea\.txt in demo\/docs\): POST .* was refused \(invalid_request: / });
});

t.test('a seeded file that fails to index fails the seed, naming it', async (t) => {
  const rt = await open(t);
  const seed: SeedObject = {
    namespaces: [{ name: 'demo' }],
    collections: [{ namespace: 'demo', name: 'docs', processing: { semantic: false } }],
    files: [
      { namespace: 'demo', collection: 'docs', path: '/fine.md', text: 'fine' },
      { namespace: 'demo', collection: 'docs', path: '/broken.pdf', file: 'fixtures/formats/corrupt.pdf' },
    ],
  };
  await t.rejects(applySeed(rt, seedOf(seed)), { name: 'SeedError', problems: [/^files\[1\] \(\/broken\.pdf in demo\/docs\): not indexed \(extraction_failed: /] });

  // With wait: false nothing is waited for, so nothing fails: the test suite checks itself.
  const quick = await open(t);
  const report = await applySeed(quick, seedOf({ ...seed, wait: false }));
  t.equal(report.waited, false);
  t.equal(report.files.created, 2);
});

t.test('re-applying on the same data dir leaves what exists as it is', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-seed-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const loaded = loadSeedFile(EXAMPLE);
  const docsKey = loaded.seed.keys.find((k) => k.name === 'docs-reader')!.secret;
  const snapshot = async (rt: Runtime) => {
    const call = client(rt);
    const files = [];
    for (const col of ['docs', 'hr']) files.push(...(await call('GET', `/namespaces/demo/collections/${col}/files?limit=100`)).body.items);
    const rules = (await call('GET', '/namespaces/demo/collections/hr/access-rules')).body.items;
    const keys = (await call('GET', '/keys')).body.items;
    const collections = (await call('GET', '/namespaces/demo/collections')).body.items.map((c: Record<string, unknown>) => ({ id: c.id, updated_at: c.updated_at }));
    return { files: files.map((f: Record<string, unknown>) => ({ id: f.id, path: f.path, updated_at: f.updated_at, status: f.status })), rules, keys, collections };
  };

  let rt = await openRuntime({ dataDir, clusterKey: CLUSTER_KEY });
  await applySeed(rt, loaded);
  const before = await snapshot(rt);
  await rt.close();

  rt = await openRuntime({ dataDir, clusterKey: CLUSTER_KEY });
  t.teardown(() => rt.close());
  const report = await applySeed(rt, loadSeedFile(EXAMPLE));
  t.same(report, {
    namespaces: { created: 0, existing: 1 },
    collections: { created: 0, existing: 2 },
    keys: { created: 0, existing: 2 },
    rules: { created: 0, existing: 2 },
    files: { created: 0, existing: 5 },
    waited: true,
  });
  t.same(await snapshot(rt), before, 'no new versions, rules, keys or collections');
  const r = await client(rt)('POST', '/namespaces/demo/collections/docs:search', { query: 'cats purr', mode: 'keyword' }, docsKey);
  t.equal(r.body.results[0]?.path, '/cats.md', 'the seeded key still works');

  // The same name with another secret is a conflict, not a silent replacement.
  const changed = loadSeedFile(EXAMPLE);
  changed.seed.keys[0]!.secret = strongSecret();
  await t.rejects(applySeed(rt, changed), { name: 'SeedError', message: /keys\[0\] \(docs-reader\): a key named 'docs-reader' already exists with another secret/ });
  t.equal((await authenticate(rt.services.store, docsKey)).name, 'docs-reader', 'the stored key is untouched');

  const revoked = (await rt.services.store.keys.byName(findNamespace(rt.db, 'demo')!.id, 'demo-admin'))!;
  t.equal((await client(rt)('POST', `/keys/${revoked.id}:revoke`)).status, 200);
  await t.rejects(applySeed(rt, loadSeedFile(EXAMPLE)), { name: 'SeedError', message: /keys\[1\] \(demo-admin\): the key 'demo-admin' was revoked/ });
});

t.test('a signal while seeding aborts it', async (t) => {
  const rt = await open(t);
  const abort = new AbortController();
  abort.abort();
  await t.rejects(applySeed(rt, seedOf({ namespaces: [{ name: 'demo' }] }), { signal: abort.signal }), { name: 'AbortError' });
  t.same((await client(rt)('GET', '/namespaces')).body.items, [], 'nothing was created');
});

// ---------------------------------------------------------------- the daemon

t.test('trove daemon start --seed: a bad seed exits 2 with its message and leaves nothing behind', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'trove-seed-test-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const daemonTmp = path.join(tmp, 'daemon-tmp');
  await mkdir(daemonTmp);
  const env = { TROVE_CLUSTER_KEY: newClusterKey(), TMPDIR: daemonTmp };
  const start = (seedFile: string, json = true) => runCli(['daemon', 'start', '--ephemeral', '--port', '0', ...(json ? ['--json'] : []), '--seed', seedFile], { env });

  const weak = path.join(tmp, 'weak.yaml');
  await writeFile(weak, 'keys:\n  - name: ci\n    secret: trove_weakweak_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n    scope: { kind: cluster }\n');
  let run = await start(weak);
  t.equal(run.code, 2, 'exit code 2');
  t.equal(run.stdout, '', 'no listening line');
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, '--json: the error is one line');
  const envelope = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
  t.equal(envelope.error.code, 'invalid_seed');
  t.match(envelope.error.message, /weak\.yaml:3:5: keys\[0\]\.secret: the secret looks guessable/);
  t.same(await readdir(daemonTmp), [], 'no data dir was made');

  run = await start(path.join(tmp, 'absent.yaml'), false);
  t.equal(run.code, 2);
  t.match(run.stderr, /^error: Cannot read the seed file .*absent\.yaml: no such file/);

  // Failing after the daemon opened: it stops whole, and its ephemeral data dir goes with it.
  const failing = path.join(tmp, 'failing.yaml');
  await writeFile(
    failing,
    ['namespaces: [{ name: demo }]', 'collections: [{ namespace: demo, name: docs, processing: { semantic: false } }]', 'files:', `  - { namespace: demo, collection: docs, path: /broken.pdf, file: ${path.join(ROOT, 'fixtures', 'formats', 'corrupt.pdf')} }`].join('\n'),
  );
  run = await start(failing, false);
  t.equal(run.code, 2);
  t.equal(run.stdout, '');
  t.match(run.stderr, /error: Seeding from .*failing\.yaml failed: a seeded file did not index:\n {2}files\[0\] \(\/broken\.pdf in demo\/docs\): not indexed \(extraction_failed/);
  t.same(await readdir(daemonTmp), [], 'the ephemeral data dir was removed');
});

t.test('trove daemon start --seed: "listening" comes once the files are searchable, and tells no secret', async (t) => {
  const key = newClusterKey();
  const child = spawn(process.execPath, [BIN, 'daemon', 'start', '--ephemeral', '--port', '0', '--json', '--seed', EXAMPLE], { cwd: ROOT, env: cleanEnv({ TROVE_CLUSTER_KEY: key }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  const listening = JSON.parse(first) as Record<string, unknown>;
  t.same(Object.keys(listening).filter((k) => !['event', 'url', 'data_dir', 'cluster_key_file', 'operator_socket'].includes(k)), [], 'nothing new in the listening line');
  t.equal(listening.event, 'listening');
  for (const secret of [key, ...loadSeedFile(EXAMPLE).seed.keys.map((k) => k.secret)]) t.notOk(first.includes(secret), 'no secret in it');
  t.match(stderr, /seeded from .*seed\.example\.yaml/);

  const docsKey = loadSeedFile(EXAMPLE).seed.keys.find((k) => k.name === 'docs-reader')!.secret;
  const res = await fetch(`${listening.url}/namespaces/demo/collections/docs:search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${docsKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'annual harbour inspection', mode: 'keyword' }),
  });
  t.equal(res.status, 200);
  t.same(((await res.json()) as { results: { path: string }[] }).results.map((r) => r.path), ['/reports/harbour.pdf'], 'searchable at once');

  child.kill('SIGTERM');
  t.equal(await exited, 0);
});

t.test('trove daemon start --seed: SIGTERM while waiting for the seed stops the daemon cleanly', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'trove-seed-test-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const daemonTmp = path.join(tmp, 'daemon-tmp');
  await mkdir(daemonTmp);
  // A source that never answers keeps the seed waiting; its request says the wait has begun.
  const sockets = new Set<Socket>();
  let fetched!: () => void;
  const fetchStarted = new Promise<void>((resolve) => (fetched = resolve));
  const server = createServer(() => fetched());
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const seedFile = path.join(tmp, 'slow.yaml');
  await writeFile(seedFile, ['namespaces: [{ name: demo }]', 'collections: [{ namespace: demo, name: docs, processing: { semantic: false } }]', 'files:', `  - { namespace: demo, collection: docs, path: /slow.md, uri: 'http://127.0.0.1:${port}/slow.md' }`].join('\n'));

  const child = spawn(process.execPath, [BIN, 'daemon', 'start', '--ephemeral', '--port', '0', '--json', '--allow-private-sources', '--seed', seedFile], {
    cwd: ROOT,
    env: cleanEnv({ TROVE_CLUSTER_KEY: newClusterKey(), TMPDIR: daemonTmp }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await Promise.race([fetchStarted, exited.then((code) => Promise.reject(new Error(`exited ${code}: ${stderr}`)))]);
  t.equal((await readdir(daemonTmp)).length, 1, 'the ephemeral data dir exists while seeding');
  child.kill('SIGTERM');
  for (const socket of sockets) socket.destroy();
  t.equal(await exited, 0, 'a clean stop');
  t.equal(stdout, '', 'it never reported listening');
  t.same(await readdir(daemonTmp), [], 'and removed its data dir');
});
