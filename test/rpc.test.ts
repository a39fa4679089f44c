// The operator channel (decisions.md §1): tRPC on a Unix socket in the data dir (0600), the local
// user's own session. In-process: a daemon from startDaemon, clients from connectOperator.
import './helpers/plain-children.js';
import t from 'tap';
import { waitFor } from './helpers/wait.js';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { connectOperator, describeOperatorError, NO_DAEMON_EXIT_CODE, OperatorUnavailableError, type OperatorConnection } from '../src/rpc/client.js';
import { ensurePrivateTempFolder, fallbackSocketPath, MAX_SOCKET_PATH_BYTES, socketPointerFile } from '../src/rpc/socket.js';

const KEY = 'test-cluster-key-operator-0123456789';
// Several daemons start and stop in turn; a busy 2-core machine needs more than the default.
const H = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

interface Envelope {
  id: string;
  data: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
}

async function api(d: RunningDaemon, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(d.url + path, { method, headers: H, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}


async function waitIdle(d: RunningDaemon, ns: string, col: string): Promise<any> {
  return waitFor(`${ns}/${col} to settle`, async () => {
    const r = await api(d, 'GET', `/namespaces/${ns}/collections/${col}`);
    return r.status === 200 && r.body.file_counts.pending + r.body.file_counts.indexing === 0 ? r.body : undefined;
  });
}

/** Every event GET /events shows after `after` (all namespaces: the cluster key). */
async function httpEvents(d: RunningDaemon, after?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '100', ...(after ? { after } : {}), ...(cursor ? { cursor } : {}) });
    const page = await api(d, 'GET', `/events?${q}`);
    out.push(...page.body.items);
    cursor = page.body.next_cursor;
  } while (cursor);
  return out;
}

/** A subscription that records what arrives; `started` resolves once the server has it. */
function collect(op: OperatorConnection, input: { lastEventId?: string | null; types?: string[] } = {}) {
  const got: Envelope[] = [];
  const errors: unknown[] = [];
  let onStarted!: () => void;
  const started = new Promise<void>((resolve) => (onStarted = resolve));
  const sub = op.client.events.subscribe(input as never, {
    onStarted,
    onData: (envelope) => got.push(envelope as unknown as Envelope),
    onError: (err) => errors.push(err),
  });
  return { got, errors, started, stop: () => sub.unsubscribe() };
}

async function start(t: TestContext, options: Parameters<typeof startDaemon>[0] = {}): Promise<{ d: RunningDaemon; op: OperatorConnection }> {
  const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY, ...options });
  const op = connectOperator(d.dataDir);
  t.teardown(async () => {
    op.close();
    await d.stop();
  });
  return { d, op };
}

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    return describeOperatorError(err);
  }
  throw new Error('expected the call to fail');
}

t.test('the socket: 0600 in the data dir, served to several clients, gone on stop', async (t) => {
  const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY });
  t.teardown(() => d.stop());
  const socket = join(d.dataDir, 'operator.sock');
  t.equal(d.operatorSocket, socket);
  const st = statSync(socket);
  t.ok(st.isSocket(), 'a Unix socket');
  t.equal(st.mode & 0o777, 0o600, 'only this user may connect');
  t.notOk(existsSync(socketPointerFile(d.dataDir)), 'no pointer file when the data dir path fits');

  const a = connectOperator(d.dataDir);
  const b = connectOperator(d.dataDir);
  const [sa, sb] = await Promise.all([a.client.status.query(), b.client.status.query()]);
  t.equal(sa.pid, process.pid);
  t.equal(sb.data_dir, d.dataDir, 'a second client from the same process works');
  const subA = collect(a);
  const subB = collect(b);
  await Promise.all([subA.started, subB.started]);
  await api(d, 'POST', '/namespaces', { name: 'two' });
  await api(d, 'POST', '/namespaces/two/collections', { name: 'c' });
  await waitFor('both subscribers', () => subA.got.length > 0 && subB.got.length > 0);
  t.equal(subA.got[0]!.id, subB.got[0]!.id, 'both see the same event');
  subA.stop();
  subB.stop();

  // Plain HTTP on the socket works too (curl --unix-socket …): tRPC's JSON envelope.
  const raw = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request({ socketPath: socket, path: '/status', method: 'GET' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(raw.status, 200);
  t.equal(raw.body.result.data.data_dir, d.dataDir);

  a.close();
  b.close();
  await d.stop();
  t.notOk(existsSync(socket), 'the socket is removed on stop');
  t.throws(() => connectOperator(d.dataDir), OperatorUnavailableError, 'no daemon: the client says so at once');
});

t.test('status tells what the daemon is doing', async (t) => {
  const roots = mkdtempSync(join(tmpdir(), 'trove-rpc-root-'));
  t.teardown(() => rmSync(roots, { recursive: true, force: true }));
  const { d, op } = await start(t, { fileRoots: [roots] });
  await api(d, 'POST', '/namespaces', { name: 'st' });
  await api(d, 'POST', '/namespaces/st/collections', { name: 'docs' });
  await api(d, 'POST', '/namespaces/st/collections/docs/files', { path: '/a.md', source: { type: 'inline', text: 'status words' } });
  await api(d, 'POST', '/namespaces/st/collections/docs/files', { path: '/b.json', source: { type: 'inline', text: '{"broken": ', content_type: 'application/json' } });
  await waitIdle(d, 'st', 'docs');
  await api(d, 'POST', '/namespaces', { name: 'gone' });
  await api(d, 'DELETE', '/namespaces/gone');

  const s = await op.client.status.query();
  t.match(s, {
    running: true,
    version: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
    pid: process.pid,
    data_dir: d.dataDir,
    http_url: d.url,
    operator_socket: d.operatorSocket,
    ready: true,
    indexer: { alive: true },
    namespaces: { live: 1, deleted: 1 },
    collections: { live: 1, deleted: 0, by_status: { degraded: 1 } },
    files: { ready: 1, failed: 1 },
    embedding: { provider: 'builtin', model_id: d.runtime.services.embedding.modelId },
    generation: { provider: 'extractive' },
  });
  t.ok(Date.parse(s.started_at) <= Date.now() && s.uptime_s >= 0);
  t.ok(Object.values(s.jobs).reduce((a, b) => a + b, 0) >= 3, 'jobs are counted (two index jobs, one delete)');
  t.same(s.file_roots, [{ path: roots, source: 'startup', granted_at: null, exists: true }]);
});

t.test('events: every namespace, as GET /events shows them, resumable by lastEventId', async (t) => {
  const { d, op } = await start(t);
  const live = collect(op);
  await live.started;
  await api(d, 'POST', '/namespaces', { name: 'ev' });
  const created = await api(d, 'POST', '/namespaces/ev/collections', { name: 'docs' });
  t.equal(created.status, 201);
  const first = await waitFor('the collection event', () => live.got.find((e) => e.data.type === 'collection.updated'));
  t.equal(first.id, first.data.id, 'tracked by the event ID');
  const asHttp = (await httpEvents(d)).find((e) => e.id === first.id);
  t.same(first.data, asHttp, 'the record is exactly what GET /events shows');
  t.equal((first.data.data as { id: string }).id, created.body.id);

  // Another namespace's events come too: the operator sees the cluster.
  await api(d, 'POST', '/namespaces', { name: 'ev2' });
  await api(d, 'POST', '/namespaces/ev2/collections', { name: 'other' });
  await waitFor('the other namespace', () => live.got.find((e) => (e.data.data as { namespace?: string }).namespace === 'ev2'));
  live.stop();
  const lastSeen = live.got.at(-1)!.id;

  // While nobody listens, a file is indexed; resuming from the last event seen replays it all.
  await api(d, 'POST', '/namespaces/ev/collections/docs/files', { path: '/a.md', source: { type: 'inline', text: 'resumed words' } });
  await waitIdle(d, 'ev', 'docs');
  const missed = await httpEvents(d, lastSeen);
  t.ok(missed.length >= 5, 'events happened meanwhile');
  const resumed = collect(op, { lastEventId: lastSeen });
  await waitFor('the missed events', () => resumed.got.length >= missed.length);
  t.same(
    resumed.got.map((e) => e.id),
    missed.map((e) => e.id),
    'exactly the events after lastEventId, in order',
  );
  resumed.stop();

  // A type filter narrows the stream; resuming still works by event ID.
  const ready = collect(op, { lastEventId: lastSeen, types: ['file.ready'] });
  await waitFor('file.ready', () => ready.got.length >= 1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same(
    ready.got.map((e) => e.data.type),
    ['file.ready'],
    'only the asked types',
  );
  ready.stop();

  for (const [input, why] of [
    [{ lastEventId: 'evt_00000000000000000000' }, 'an unknown event'],
    [{ lastEventId: 'job_123' }, 'not an event ID'],
    [{ types: ['no.such.type'] }, 'an unknown type'],
  ] as const) {
    const bad = collect(op, input as never);
    await waitFor(`the error for ${why}`, () => bad.errors.length > 0);
    const f = describeOperatorError(bad.errors[0]);
    t.equal(f.code, 'invalid_request', why);
    t.equal(f.exitCode, 2);
    bad.stop();
  }
});

t.test('a subscriber follows the daemon through a restart and misses nothing', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-rpc-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let d = await startDaemon({ dataDir, port: 0, clusterKey: KEY });
  t.teardown(() => d.stop());
  const op = connectOperator(dataDir);
  t.teardown(() => op.close());
  const sub = collect(op);
  await sub.started;
  await api(d, 'POST', '/namespaces', { name: 'rs' });
  await api(d, 'POST', '/namespaces/rs/collections', { name: 'before' });
  await waitFor('an event before the restart', () => sub.got.length > 0);
  await d.stop();
  d = await startDaemon({ dataDir, port: 0, clusterKey: KEY });
  await api(d, 'POST', '/namespaces/rs/collections', { name: 'after' });
  const after = await waitFor('the event after the restart', () => sub.got.find((e) => (e.data.data as { name?: string }).name === 'after'));
  t.ok(after, 'the stream resumed on the new daemon');
  t.same(sub.errors, [], 'no error reached the subscriber');
  t.equal(new Set(sub.got.map((e) => e.id)).size, sub.got.length, 'no event twice');
  sub.stop();
});

t.test('config.get / config.set: validated keys and values, secrets masked, restart flagged', async (t) => {
  const { d, op } = await start(t);
  const file = join(d.dataDir, 'config.json');
  const view = await op.client.config.get.query();
  t.equal(view.file, file);
  t.equal(view.exists, false);
  t.ok(view.entries.some((e) => e.key === 'embedding.model' && e.value === null), 'known keys show, unset');
  t.equal(view.running['embedding.provider'], 'builtin', 'with what the daemon uses');

  const set = await op.client.config.set.mutate({ key: 'embedding.model', value: 'nomic-embed-text' });
  t.match(set, { key: 'embedding.model', value: 'nomic-embed-text', previous: null, changed: true, restart_required: true });
  t.same(JSON.parse(readFileSync(file, 'utf8')), { embedding: { model: 'nomic-embed-text' } }, 'written to config.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'kept private');
  t.match(await op.client.config.set.mutate({ key: 'embedding.model', value: 'nomic-embed-text' }), { changed: false, restart_required: false }, 'same value: nothing to restart');
  t.match(await op.client.config.set.mutate({ key: 'embedding.dimensions', value: '768' }), { value: 768 }, 'numbers from text');
  t.match(await op.client.config.set.mutate({ key: 'generation.vision', value: 'yes' }), { value: true }, 'booleans from text');
  t.match(await op.client.config.set.mutate({ key: 'vectors.memory', value: '2GB' }), { value: '2GB', changed: true }, 'a memory size');
  t.match(await op.client.config.set.mutate({ key: 'vectors.memory', value: null }), { previous: '2GB', changed: true });
  t.same((await op.client.config.get.query({ key: 'embedding.dimensions' })).entries, [{ key: 'embedding.dimensions', value: 768, overridden_by: null, description: 'vector dimensions of a remote embedding model' }]);
  t.match(await op.client.config.set.mutate({ key: 'embedding.dimensions', value: null }), { value: null, previous: 768, changed: true }, 'null removes a key');
  t.same(JSON.parse(readFileSync(file, 'utf8')), { embedding: { model: 'nomic-embed-text' }, generation: { vision: true } });

  for (const [key, value, pattern, why] of [
    ['embedding.colour', 'blue', /Unknown config key 'embedding.colour'/, 'an unknown key'],
    ['embedding', 'x', /Unknown config key/, 'a section is not a key'],
    ['embedding.provider', 'magic', /^embedding\.provider must be one of builtin, openai, ollama, transformers \(got "magic"\)\.$/, 'a bad provider'],
    ['embedding.dimensions', 'lots', /must be a whole number/, 'a bad number'],
    ['embedding.dimensions', '-4', /must be a whole number/, 'a negative number'],
    ['embedding.url', 'ftp://host/x', /must be an http\(s\) URL/, 'a bad URL'],
    ['generation.apiKeyEnv', 'sk-live-123', /environment variable/, 'an API key where its variable name goes'],
    ['generation.apiKey', 'sk-live-123', /never stores API keys in config.json/, 'a secret'],
    ['generation.vision', 'maybe', /must be true or false/, 'a bad boolean'],
    ['vectors.memory', '150%', /is 150%, more than all of the machine's memory: give bytes/, 'a share of RAM over 100%'],
  ] as const) {
    const f = await failure(op.client.config.set.mutate({ key, value }));
    t.equal(f.code, 'invalid_request', why);
    t.match(f.message, pattern, why);
    t.equal(f.exitCode, 2, why);
  }
  t.equal((await failure(op.client.config.get.query({ key: 'nope.nope' }))).code, 'invalid_request');
  t.same(JSON.parse(readFileSync(file, 'utf8')), { embedding: { model: 'nomic-embed-text' }, generation: { vision: true } }, 'refused changes wrote nothing');

  // A hand-edited file with a secret in it: shown masked, never in clear.
  writeFileSync(file, JSON.stringify({ generation: { provider: 'openai', apiKey: 'sk-live-SECRET', url: 'https://user:hunter2@llm.example/v1' }, extra: { token: 'tok-SECRET' } }));
  const masked = await op.client.config.get.query();
  const text = JSON.stringify(masked);
  t.notMatch(text, /SECRET|hunter2/, 'no secret leaves the daemon');
  t.equal(masked.entries.find((e) => e.key === 'generation.apiKey')?.value, '********');
  t.equal(masked.entries.find((e) => e.key === 'generation.url')?.value, 'https://user:********@llm.example/v1');
  t.equal(masked.entries.find((e) => e.key === 'extra.token')?.description, null, 'keys trove does not read are shown as such');
  const changed = await op.client.config.set.mutate({ key: 'generation.model', value: 'llama3.1' });
  t.notMatch(JSON.stringify(changed), /SECRET|hunter2/);
  t.match(JSON.parse(readFileSync(file, 'utf8')), { generation: { apiKey: 'sk-live-SECRET', model: 'llama3.1' }, extra: { token: 'tok-SECRET' } }, 'other keys are kept as they were');

  // The daemon's environment wins over the file: the answer says so.
  process.env.TROVE_GENERATION_MODEL = 'from-env';
  t.teardown(() => delete process.env.TROVE_GENERATION_MODEL);
  t.match(await op.client.config.set.mutate({ key: 'generation.model', value: 'other' }), { overridden_by: 'TROVE_GENERATION_MODEL' });
  t.equal((await op.client.config.get.query({ key: 'generation.model' })).entries[0]?.overridden_by, 'TROVE_GENERATION_MODEL');

  writeFileSync(file, '{ not json');
  const broken = await failure(op.client.config.get.query());
  t.equal(broken.code, 'invalid_request');
  t.match(broken.message, /config\.json is not valid JSON/);
  t.equal((await failure(op.client.config.set.mutate({ key: 'generation.model', value: 'x' }))).code, 'invalid_request', 'a broken file is not overwritten');
  t.equal(readFileSync(file, 'utf8'), '{ not json');
});

t.test('roots: granted at run time, used by the API and the indexer, kept across restarts', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-rpc-'));
  const startup = mkdtempSync(join(tmpdir(), 'trove-rpc-startup-'));
  const granted = mkdtempSync(join(tmpdir(), 'trove-rpc-granted-'));
  t.teardown(() => {
    for (const dir of [dataDir, startup, granted]) rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(join(granted, 'tides.md'), '# Tides\n\nSpring tides follow the full moon.\n');
  writeFileSync(join(granted, 'later.md'), 'Neap tides are the gentle ones.\n');
  let d = await startDaemon({ dataDir, port: 0, clusterKey: KEY, fileRoots: [startup] });
  t.teardown(() => d.stop());
  let op = connectOperator(dataDir);
  t.teardown(() => op.close());
  await api(d, 'POST', '/namespaces', { name: 'fr' });
  await api(d, 'POST', '/namespaces/fr/collections', { name: 'docs' });
  const addFile = (name: string) => api(d, 'POST', '/namespaces/fr/collections/docs/files', { path: `/${name}`, source: { type: 'uri', uri: `file://${join(granted, name)}` } });

  const refused = await addFile('tides.md');
  t.equal(refused.status, 400, 'not under an allowed root: refused');

  const added = await op.client.roots.add.mutate({ path: granted + '/' });
  t.match(added, { added: true, root: { path: granted, source: 'operator', exists: true } });
  t.same(d.runtime.services.fileRoots, [startup, granted], 'the API sees the new list at once');
  const accepted = await addFile('tides.md');
  t.equal(accepted.status, 202, 'accepted now');
  const settled = await waitIdle(d, 'fr', 'docs');
  t.equal(settled.file_counts.ready, 1, 'and the indexing worker read it (it got the new roots too)');
  const hit = await api(d, 'POST', '/namespaces/fr/collections/docs:search', { query: 'spring tides', mode: 'keyword' });
  t.equal(hit.body.results[0]?.path, '/tides.md');

  t.match(await op.client.roots.add.mutate({ path: granted }), { added: false }, 'granting twice changes nothing');
  t.match(await op.client.roots.add.mutate({ path: startup }), { added: false, root: { source: 'startup' } });
  for (const [path, pattern] of [
    ['relative/dir', /absolute path/],
    [join(granted, 'missing'), /No directory/],
    [join(granted, 'tides.md'), /not a directory/],
  ] as const) {
    const f = await failure(op.client.roots.add.mutate({ path }));
    t.equal(f.code, 'invalid_request', path);
    t.match(f.message, pattern);
  }
  const startupRemoval = await failure(op.client.roots.remove.mutate({ path: startup }));
  t.equal(startupRemoval.code, 'invalid_request');
  t.match(startupRemoval.message, /allowed at start-up/);
  t.equal((await failure(op.client.roots.remove.mutate({ path: '/not/a/root' }))).code, 'not_found');

  // Kept across a restart.
  op.close();
  await d.stop();
  d = await startDaemon({ dataDir, port: 0, clusterKey: KEY });
  op = connectOperator(dataDir);
  t.match((await op.client.roots.list.query()).roots, [{ path: granted, source: 'operator', exists: true }], 'the granted root is back, the old flag is not');
  t.equal((await addFile('later.md')).status, 202, 'and it is in force');
  t.equal((await waitIdle(d, 'fr', 'docs')).file_counts.ready, 2, 'for the indexer too');

  const removed = await op.client.roots.remove.mutate({ path: granted });
  t.same(removed, { removed: granted, roots: [] });
  t.same(d.runtime.services.fileRoots, []);
  t.equal((await addFile('tides.md')).status, 400, 'refused again');
});

t.test('workspace.restore brings a deleted namespace back whole', async (t) => {
  const { d, op } = await start(t);
  await api(d, 'POST', '/namespaces', { name: 'wr' });
  await api(d, 'POST', '/namespaces/wr/collections', { name: 'docs' });
  await api(d, 'POST', '/namespaces/wr/collections/docs/files', { path: '/a.md', source: { type: 'inline', text: 'restored harbour words' } });
  await waitIdle(d, 'wr', 'docs');
  const id = (await api(d, 'GET', '/namespaces/wr')).body.id;
  t.equal((await api(d, 'DELETE', '/namespaces/wr', { force: true })).status, 202);
  t.equal((await api(d, 'GET', '/namespaces/wr')).status, 404);

  const { namespace } = await op.client.workspace.restore.mutate({ ref: 'wr' });
  t.match(namespace, { id, name: 'wr', usage: { collections: 1, files: 1 } });
  t.equal((await api(d, 'GET', '/namespaces/wr/collections/docs')).body.status, 'ready');
  const hit = await api(d, 'POST', '/namespaces/wr/collections/docs:search', { query: 'harbour', mode: 'keyword' });
  t.equal(hit.body.results[0]?.path, '/a.md', 'searchable without reindexing');

  const again = await failure(op.client.workspace.restore.mutate({ ref: 'wr' }));
  t.match(again, { code: 'not_found', exitCode: 5, status: 404 });
  t.match(again.message, /No deleted workspace 'wr'/);

  await api(d, 'DELETE', '/namespaces/wr', { force: true });
  await api(d, 'POST', '/namespaces', { name: 'wr' });
  const clash = await failure(op.client.workspace.restore.mutate({ ref: id }));
  t.match(clash, { code: 'already_exists', exitCode: 6 }, 'by ID, when the name is taken again');
  t.equal((await failure(op.client.workspace.restore.mutate({ ref: '' }))).code, 'invalid_request', 'an empty ref');
});

t.test('daemon.stop replies, then the daemon stops as on SIGTERM', async (t) => {
  const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY });
  t.teardown(() => d.stop());
  const op = connectOperator(d.dataDir);
  const reply = await op.client.daemon.stop.mutate();
  t.same(reply, { stopping: true, pid: process.pid, data_dir: d.dataDir });
  op.close();
  await waitFor('the data dir to go', () => !existsSync(d.dataDir));
  t.notOk(existsSync(join(d.dataDir, 'operator.sock')));
  const health = await fetch(d.url + '/health').then(
    () => 'answered',
    () => 'refused',
  );
  t.equal(health, 'refused', 'the HTTP API is closed too');
});

t.test('no daemon: a clear error with its own exit code, never a hang', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-rpc-none-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let thrown: unknown;
  try {
    connectOperator(dataDir);
  } catch (err) {
    thrown = err;
  }
  t.ok(thrown instanceof OperatorUnavailableError);
  t.match(describeOperatorError(thrown), { code: 'daemon_not_running', exitCode: NO_DAEMON_EXIT_CODE, message: new RegExp(`No daemon is running for data dir ${dataDir}.*trove daemon start`) });

  // A socket left behind by a daemon that was killed: calls and subscriptions fail fast.
  const socket = join(dataDir, 'operator.sock');
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  t.ok(statSync(socket).isSocket(), 'the stale socket is still there');
  const op = connectOperator(dataDir);
  t.match(await failure(op.client.status.query()), { code: 'daemon_not_running', exitCode: NO_DAEMON_EXIT_CODE });
  const sub = collect(op);
  await waitFor('the subscription error', () => sub.errors.length > 0);
  t.match(describeOperatorError(sub.errors[0]), { code: 'daemon_not_running' }, 'a subscription is told, so a TUI can fall back');
  sub.stop();
  op.close();

  // A daemon starting there replaces the stale socket.
  const d = await startDaemon({ dataDir, port: 0, clusterKey: KEY });
  t.teardown(() => d.stop());
  const live = connectOperator(dataDir);
  t.teardown(() => live.close());
  t.equal((await live.client.status.query()).data_dir, dataDir);
});

t.test('a data dir whose path is too long for a socket gets one in a private temp folder', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'trove-rpc-long-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  let dataDir = base;
  while (Buffer.byteLength(join(dataDir, 'operator.sock')) <= MAX_SOCKET_PATH_BYTES) dataDir = join(dataDir, 'a-rather-long-folder-name');
  const d = await startDaemon({ dataDir, port: 0, clusterKey: KEY });
  t.teardown(() => d.stop());
  const expected = fallbackSocketPath(dataDir);
  t.equal(d.operatorSocket, expected);
  t.match(expected, /trove-operator-\d+\/[0-9a-f]{16}\.sock$/);
  t.equal(readFileSync(socketPointerFile(dataDir), 'utf8').trim(), expected, 'the pointer file names it');
  t.equal(statSync(expected).mode & 0o777, 0o600);
  t.equal(statSync(join(expected, '..')).mode & 0o777, 0o700, 'in a folder only this user can enter');
  const op = connectOperator(dataDir);
  t.equal((await op.client.status.query()).operator_socket, expected, 'the client follows the same rule');
  op.close();
  await d.stop();
  t.notOk(existsSync(expected), 'removed on stop');
  t.notOk(existsSync(socketPointerFile(dataDir)));

  // Another user could have made the folder first: it must be ours and private, or nothing listens.
  const shared = join(base, 'shared');
  mkdirSync(shared, { mode: 0o755 });
  chmodSync(shared, 0o755);
  t.throws(() => ensurePrivateTempFolder(shared), /not a private folder/);
});

t.test('the operator channel can be turned off; the HTTP API does not need it', async (t) => {
  const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY, operator: false });
  t.teardown(() => d.stop());
  t.equal(d.operatorSocket, null);
  t.notOk(existsSync(join(d.dataDir, 'operator.sock')));
  t.equal((await api(d, 'GET', '/info')).status, 200);
});

t.test('FileRoots: a grant that is also a start-up root is listed once and outlives the flag', async (t) => {
  const { openDatabase } = await import('../src/store/sqlite/db.js');
  const { sqliteStore } = await import('../src/store/sqlite/store.js');
  const { WriteGate } = await import('../src/store/sqlite/write-gate.js');
  const { Writer } = await import('../src/store/sqlite/writer.js');
  const { FileRoots } = await import('../src/domain/file-roots.js');
  const dir = mkdtempSync(join(tmpdir(), 'trove-rpc-roots-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  mkdirSync(a);
  mkdirSync(b);
  const db = openDatabase(join(dir, 'trove.db'), { migrate: true });
  const writer = new Writer(db, new WriteGate(), 'main');
  t.teardown(async () => {
    await writer.drained();
    db.close();
  });
  const store = sqliteStore(db, (change) => writer.write(change));
  const sent: string[][] = [];
  const open = async (startup: string[]) => {
    const live = await FileRoots.initialRoots(store, startup);
    return { live, roots: await FileRoots.open(store, startup, live, (list) => sent.push(list)) };
  };

  await (await open([])).roots.add(a);
  const withFlag = await open([a]);
  t.same(withFlag.roots.list().map((r) => [r.path, r.source]), [[a, 'startup']], 'listed once, as the flag');
  t.same(withFlag.live, [a]);
  await withFlag.roots.add(b);
  t.same(sent.at(-1), [a, b], 'the worker is sent the whole new list');
  const withoutFlag = await open([]);
  t.same(withoutFlag.roots.list().map((r) => [r.path, r.source]), [[a, 'operator'], [b, 'operator']], 'the grant outlived the flag');
  await t.rejects(() => withFlag.roots.remove(a), { code: 'invalid_request' }, 'a start-up root cannot be removed while its flag holds');
});
