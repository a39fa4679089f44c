// Stopping the daemon (docs/decisions.md, "Stopping"): on stop (SIGINT/SIGTERM, `trove daemon
// stop`) event streams and operator subscriptions end at once, idle keep-alive connections close,
// requests in flight get a bounded drain and are then answered 503 `temporarily_unavailable`
// (retryable) with the contract's envelope; a research run in progress is resumed by the next start.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { parseDrainSeconds } from '../daemon/config.js';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { ERROR_TABLE } from '../src/contract/errors.js';
import { apiOf, startDaemonProcess } from './helpers/cli.js';
import { waitFor, PATIENCE_MS } from './helpers/wait.js';

const KEY = 'shutdown-test-cluster-key-0123456789abcdef';
const AUTH = { authorization: `Bearer ${KEY}` };
// Several daemons start and stop on a busy machine. A stop that hangs fails its test by the bound
// each test sets (generous: it is no timing assertion).
const TEST_BOUND_MS = 2 * PATIENCE_MS;

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

/** Daemons start and stop on a busy machine: a generous wait (no timing assertion). */
const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) => waitFor(what, probe);
const apiAt = (url: string) => apiOf({ url, key: KEY }) as (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;


/** A collection with one indexed file, so answers and research runs have something to read. */
async function seed(url: string): Promise<string> {
  await apiAt(url)('POST', '/namespaces', { name: 'demo' });
  await apiAt(url)('POST', '/namespaces/demo/collections', { name: 'docs' });
  const base = '/namespaces/demo/collections/docs';
  await apiAt(url)('POST', `${base}/files`, { path: '/cats.md', source: { type: 'inline', text: '# Cats\n\nCats purr when they are content. Cats sleep for up to sixteen hours a day.', content_type: 'text/markdown' } });
  await until('the file to be indexed', async () => (await apiAt(url)('GET', base)).body.file_counts.ready === 1);
  return base;
}

interface OpenStream {
  /** What the client has received so far. */
  text: () => string;
  /** Resolves when the response ends (or its connection closes). */
  ended: Promise<'end' | 'close'>;
  /** Closes it from the client's side (teardown). */
  close(): void;
}

/** GET /events as a server-sent-event stream; resolves once the daemon's first comment has arrived. */
async function openEventStream(url: string): Promise<OpenStream> {
  let text = '';
  let onEnded!: (how: 'end' | 'close') => void;
  const ended = new Promise<'end' | 'close'>((resolve) => (onEnded = resolve));
  let req!: http.ClientRequest;
  await new Promise<void>((resolve, reject) => {
    req = http.get(`${url}/events`, { headers: { ...AUTH, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes(': trove events')) resolve();
      });
      res.on('end', () => onEnded('end'));
      res.on('close', () => onEnded('close'));
    });
    req.on('error', reject);
  });
  return { text: () => text, ended, close: () => req.destroy() };
}

/**
 * An OpenAI-compatible chat server that never answers: a generation waits on it until its caller
 * gives up. It records each request and whether its connection was closed by the caller.
 */
async function silentModelServer(t: TestContext) {
  const requests: { closed: boolean }[] = [];
  const server = http.createServer((req, res) => {
    const seen = { closed: false };
    requests.push(seen);
    req.resume();
    res.on('close', () => (seen.closed = true));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { requests, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1` };
}

t.test('stop() ends a connected event stream and an operator subscription, and closes idle keep-alive connections', async (t) => {
  t.setTimeout(TEST_BOUND_MS);
  const d = await startDaemon({ ephemeral: true, port: 0, clusterKey: KEY });
  // On failure, the clients let go before the daemon is stopped (a stop that hangs on them must not hang the teardown).
  const clients: (() => void)[] = [];
  t.teardown(async () => {
    for (const close of clients) close();
    await d.stop();
  });

  const stream = await openEventStream(d.url);
  clients.push(() => stream.close());

  // The operator channel's event subscription, as its tRPC client opens it (src/rpc/client.ts).
  const ws = new WebSocket('ws://trove-operator/', { createConnection: () => connect(d.operatorSocket!) });
  const messages: any[] = [];
  const wsClosed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  clients.push(() => ws.terminate());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: 'events', input: {} } }));
  await until('the subscription to start', () => messages.some((m) => m.id === 1 && m.result?.type === 'started'));

  // A keep-alive connection left idle after its request.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  clients.push(() => agent.destroy());
  let idleClosed = false;
  await new Promise<void>((resolve, reject) => {
    const req = http.get(`${d.url}/health`, { agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('socket', (socket) => socket.once('close', () => (idleClosed = true)));
    req.on('error', reject);
  });

  await d.stop();
  t.pass('stop() resolved with an event stream and a subscription connected');
  t.equal(await stream.ended, 'end', 'the event stream response ended (the client read its end)');
  const code = await wsClosed;
  t.ok(code === 1001 || messages.some((m) => m.id === 1 && m.result?.type === 'stopped'), `the subscription ended (close code ${code})`);
  await until('the idle keep-alive connection to close', () => idleClosed);
  t.ok(idleClosed, 'the idle keep-alive connection was closed');
});

t.test('after the drain, an :answer waiting on a slow model is answered 503 temporarily_unavailable and the model call is aborted; a research run resumes at the next start', async (t) => {
  t.setTimeout(TEST_BOUND_MS);
  const model = await silentModelServer(t);
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-shutdown-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const options = {
    dataDir,
    port: 0,
    clusterKey: KEY,
    operator: false,
    drainSeconds: 0.2,
    generation: { provider: 'openai' as const, model: 'slow', url: model.url, apiKeyEnv: 'TROVE_TEST_NO_SUCH_KEY' },
  };
  const d: RunningDaemon = await startDaemon(options);
  let answerRequest: http.ClientRequest | undefined;
  t.teardown(async () => {
    answerRequest?.destroy();
    await d.stop();
  });
  const base = await seed(d.url);

  const run = await apiAt(d.url)('POST', `${base}/research`, { query: 'Why do cats purr?' }, { 'idempotency-key': 'shutdown-run' });
  t.equal(run.status, 202, 'a research run is queued');
  await until('the research run to call the model', () => model.requests.length === 1);

  const answered = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const req = (answerRequest = http.request(`${d.url}${base}:answer`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null }));
    }));
    req.on('error', reject);
    req.end(JSON.stringify({ query: 'Why do cats purr?' }));
  });
  await until('the answer to call the model', () => model.requests.length === 2);

  await d.stop();
  const res = await answered;
  t.equal(res.status, ERROR_TABLE.temporarily_unavailable.status, 'the answer in flight is answered 503');
  t.same(Object.keys(res.body ?? {}), ['error'], 'with the error envelope');
  t.match(res.body.error, { code: 'temporarily_unavailable', retryable: true, details: { reason: 'shutdown' } });
  t.equal(res.body.error.request_id, res.headers['x-request-id'], 'error.request_id equals the x-request-id header');
  await until('the model calls to be aborted', () => model.requests.every((r) => r.closed));
  t.ok(model.requests.every((r) => r.closed), 'both calls to the model server were aborted');

  // The next start re-queues the run the stop interrupted, and (with the offline generator) finishes it.
  const { generation: _slow, ...offline } = options;
  const again = await startDaemon(offline);
  t.teardown(() => again.stop());
  const finished = await until('the research run to finish after the restart', async () => {
    const r = await apiAt(again.url)('GET', `${base}/research/${run.body.id}`);
    return r.body.status === 'queued' || r.body.status === 'running' ? undefined : r.body;
  });
  t.equal(finished.status, 'succeeded', `the interrupted research run was resumed, not failed (${JSON.stringify(finished.error)})`);
});

t.test('a daemon process with an event stream connected exits 0 on SIGTERM', async (t) => {
  t.setTimeout(TEST_BOUND_MS);
  const daemon = await startDaemonProcess({ key: KEY });
  let stream: OpenStream | undefined;
  t.teardown(() => {
    stream?.close();
    daemon.kill();
  });
  stream = await openEventStream(daemon.url);
  daemon.child.kill('SIGTERM');
  const exit = await daemon.exited;
  t.same(exit, { code: 0, signal: null }, `exit code 0 (${daemon.stderr().trim().split('\n').slice(-3).join(' | ')})`);
  t.ok(await stream.ended, 'the event stream ended');
});

t.test('--drain-seconds / TROVE_SHUTDOWN_DRAIN_SECONDS: seconds from 0', async (t) => {
  t.equal(parseDrainSeconds(undefined), undefined, 'unset: the default applies');
  t.equal(parseDrainSeconds('0.2'), 0.2);
  t.equal(parseDrainSeconds('0'), 0, '0: abandon at once');
  t.throws(() => parseDrainSeconds('-1'), /from 0 to 3600/);
  t.throws(() => parseDrainSeconds('soon'), /from 0 to 3600/);
});
