// The data dir is its owner's only (decisions.md §1: the operator socket is 0600 "inside the 0700
// data dir"): a data dir left open (0755, files 0644) is closed at start, and everything the daemon
// writes in it afterwards (database and its WAL, blobs, logs, config, socket) is 0700 / 0600 even
// with a permissive umask. Uploads a crash left half-written in blobs/tmp are removed at start.
import t from 'tap';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startDaemon } from '../daemon/main.js';
import { DaemonLogFile } from '../src/cli/commands/daemon-logs.js';
import { setConfig } from '../src/rpc/config.js';
import { CLUSTER_KEY } from './helpers/trove.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];
type Lines = string[];
const capture = (lines: Lines) => ({
  info: (message: string, fields: Record<string, unknown> = {}) => void lines.push(`info: ${message} ${JSON.stringify(fields)}`),
  warn: (message: string, fields: Record<string, unknown> = {}) => void lines.push(`warning: ${message} ${JSON.stringify(fields)}`),
  error: (message: string, fields: Record<string, unknown> = {}) => void lines.push(`error: ${message} ${JSON.stringify(fields)}`),
});

/** Every path under dir (dir included) that is not 0700 (folders) or 0600 (anything else), with its mode. */
function loosePaths(dir: string): string[] {
  const loose: string[] = [];
  const visit = (path: string) => {
    const st = lstatSync(path);
    const mode = st.mode & 0o7777;
    const want = st.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) loose.push(`${relative(dir, path) || '.'} ${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return loose;
}

function allPaths(dir: string): string[] {
  const out: string[] = [];
  const visit = (path: string) => {
    out.push(relative(dir, path) || '.');
    if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return out;
}

function newDataDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'trove-dd-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a data dir open to other users is made private at start, and what the daemon writes stays private', async (t) => {
  // A permissive umask: what the daemon creates must not depend on the user's.
  const umask = process.umask(0o022);
  t.teardown(() => void process.umask(umask));

  // A data dir as an older version (or a person) left it: everything readable by others.
  const dataDir = newDataDir(t);
  chmodSync(dataDir, 0o755);
  mkdirSync(join(dataDir, 'blobs', 'aa'), { recursive: true, mode: 0o755 });
  writeFileSync(join(dataDir, 'blobs', 'aa', 'a'.repeat(64)), 'an old upload', { mode: 0o644 });
  mkdirSync(join(dataDir, 'logs'), { mode: 0o755 });
  writeFileSync(join(dataDir, 'logs', 'daemon.log'), 'an old log line\n', { mode: 0o644 });
  writeFileSync(join(dataDir, 'config.json'), '{}\n', { mode: 0o644 });
  t.not(loosePaths(dataDir).length, 0, 'the fixture is open to others');

  const lines: Lines = [];
  const d = await startDaemon({ dataDir, port: 0, clusterKey: CLUSTER_KEY, log: capture(lines) });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : d.stop()));
  t.equal(d.operatorSocket, join(dataDir, 'operator.sock'), 'the operator socket is in the data dir');
  t.same(loosePaths(dataDir), [], 'after start: folders 0700, files 0600');
  const said = lines.filter((l) => l.startsWith('warning:') && /readable by other users/.test(l));
  t.equal(said.length, 1, 'the start says, once, that it closed the data dir');
  t.match(said[0], dataDir, 'naming the data dir');

  // Writes of every kind: a document (database, WAL), an upload (blobs/tmp, blobs/<aa>), the
  // CLI's log file, config.set.
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await d.runtime.app.handle({
      method,
      url,
      headers: { authorization: `Bearer ${CLUSTER_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    });
    return { status: res.status, body: res.body && res.body.length ? JSON.parse(res.body.toString()) : null };
  };
  t.equal((await call('POST', '/namespaces', { name: 'n' })).status, 201);
  t.equal((await call('POST', '/namespaces/n/collections', { name: 'c', processing: { semantic: false } })).status, 201);
  const base = '/namespaces/n/collections/c';
  t.equal((await call('POST', `${base}/files`, { path: '/a.txt', source: { type: 'inline', text: 'private words', content_type: 'text/plain' } })).status, 202);
  const bytes = 'uploaded private words';
  const sha = createHash('sha256').update(bytes).digest('hex');
  const added = await call('POST', `${base}/files`, { path: '/u.txt', source: { type: 'upload', content_type: 'text/plain', bytes: bytes.length, checksum: `sha256:${sha}` } });
  t.equal(added.status, 202);
  const put = await d.runtime.app.handle({ method: 'PUT', url: new URL(added.body.upload.url).pathname, headers: {}, body: Buffer.from(bytes) });
  t.equal(put.status, 200, 'the upload is accepted');
  for (;;) {
    const files = (await call('GET', `${base}/files`)).body.items as { status: string }[];
    if (files.length === 2 && files.every((f) => f.status === 'ready')) break;
    if (files.some((f) => f.status === 'failed')) throw new Error(`a file failed: ${JSON.stringify(files)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const logFile = new DaemonLogFile();
  logFile.open(dataDir);
  logFile.write('[trove] a new log line');
  setConfig(dataDir, 'generation.provider', 'extractive', {});

  const paths = allPaths(dataDir);
  for (const expected of ['trove.db', 'trove.db-wal', 'trove.db-shm', 'cluster-key', 'daemon.lock', 'operator.sock', 'config.json', join('logs', 'daemon.log'), join('blobs', sha.slice(0, 2), sha)]) {
    t.ok(paths.includes(expected), `${expected} exists`);
  }
  t.same(loosePaths(dataDir), [], 'after writes: folders 0700, files 0600');

  await d.stop();
  stopped = true;
  const again: Lines = [];
  const d2 = await startDaemon({ dataDir, port: 0, clusterKey: CLUSTER_KEY, log: capture(again), operator: false });
  await d2.stop();
  t.same(again.filter((l) => /readable by other users/.test(l)), [], 'a private data dir starts without the warning');
});

t.test('a new data dir and its database are private under a permissive umask', async (t) => {
  const umask = process.umask(0o022);
  t.teardown(() => void process.umask(umask));
  const parent = newDataDir(t);
  const dataDir = join(parent, 'new');
  const lines: Lines = [];
  const d = await startDaemon({ dataDir, port: 0, clusterKey: CLUSTER_KEY, log: capture(lines), operator: false });
  await d.runtime.app.handle({ method: 'POST', url: '/namespaces', headers: { authorization: `Bearer ${CLUSTER_KEY}`, 'content-type': 'application/json' }, body: Buffer.from('{"name":"n"}') });
  t.ok(existsSync(join(dataDir, 'trove.db-wal')), 'the WAL exists');
  t.same(loosePaths(dataDir), [], 'folders 0700, files 0600');
  t.same(lines.filter((l) => /readable by other users/.test(l)), [], 'nothing to tighten, nothing said');
  await d.stop();
});

t.test('uploads left half-written by a crash are removed at start', async (t) => {
  const dataDir = newDataDir(t);
  const tmp = join(dataDir, 'blobs', 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  for (let i = 0; i < 3; i++) writeFileSync(join(tmp, `stale${i}`), 'half an upload', { mode: 0o600 });
  const lines: Lines = [];
  const d = await startDaemon({ dataDir, port: 0, clusterKey: CLUSTER_KEY, log: capture(lines), operator: false });
  t.teardown(() => d.stop());
  t.same(existsSync(tmp) ? readdirSync(tmp) : [], [], 'blobs/tmp is empty');
  t.ok(lines.some((l) => /half-written/.test(l) && /"files":3/.test(l)), 'the start says how many it removed');
});
