// The TUI's real backend against a real daemon process: HTTP calls through the CLI's client, live
// events over the operator socket, and the fall-back to the public SSE stream when the socket is
// not this daemon's (or not wanted), including what a refused key does to it.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CliError } from '../src/cli/client.js';
import { createBackend, type TuiBackend } from '../src/tui/backend.js';
import { sameDaemon } from '../src/tui/operator-events.js';
import type { ChannelState, TroveEvent } from '../src/tui/types.js';
import { freePort, newClusterKey, startDaemonProcess } from './helpers/cli.js';
import { PATIENCE_MS } from './helpers/wait.js';

const KEY = newClusterKey();

async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = PATIENCE_MS): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Subscribes and records everything the stream reports. */
function record(backend: TuiBackend) {
  const events: TroveEvent[] = [];
  const errors: unknown[] = [];
  const channels: ChannelState[] = [];
  const stop = backend.subscribe(
    (e) => events.push(e),
    (err) => errors.push(err),
    (c) => channels.push(c),
  );
  return { events, errors, channels, stop };
}

t.test('the backend against a running daemon', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-tui-'));
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'trove-tui-nosock-'));
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await rm(elsewhere, { recursive: true, force: true });
  });
  const daemon = await startDaemonProcess({ key: KEY, args: ['--data-dir', dataDir] });
  t.teardown(() => daemon.kill());
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(daemon.url + route, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  // Settled: no file waiting, and no job left (a job ends just after its file is ready).
  const waitIdle = async () => {
    for (let i = 0; i < 800; i++) {
      const c = (await api('GET', '/namespaces/demo/collections/notes')).body.file_counts;
      const running = (await api('GET', '/namespaces/demo/jobs?status=running')).body.items.length;
      const queued = (await api('GET', '/namespaces/demo/jobs?status=queued')).body.items.length;
      if (c.pending + c.indexing + running + queued === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('notes never settled');
  };
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'notes' });
  const added = await api('POST', '/namespaces/demo/collections/notes/files', {
    path: '/cats.md',
    source: { type: 'inline', content_type: 'text/markdown', text: '# Cats\n\nCats purr when they are content.' },
    metadata: { team: 'ops' },
  });
  t.equal(added.status, 202);
  await waitIdle();

  const backend = createBackend({ url: daemon.url, key: KEY }, dataDir, { retryDelaysMs: [100] });
  const notes = { namespace: 'demo', collection: 'notes' };

  await t.test('HTTP calls', async (t) => {
    t.same(
      (await backend.listNamespaces()).map((n) => n.name),
      ['demo'],
    );
    const collections = await backend.listCollections('demo');
    t.match(collections, [{ name: 'notes', namespace: 'demo', status: 'ready', file_counts: { ready: 1, pending: 0, indexing: 0, failed: 0 } }]);
    t.match(await backend.getCollection(notes), { name: 'notes', file_counts: { ready: 1 } });
    t.equal(await backend.getCollection({ namespace: 'demo', collection: 'missing' }), null, 'a missing collection is null, not an error');
    t.same(await backend.listActiveJobs('demo'), [], 'nothing queued or running once indexed');

    const found = await backend.search(notes, { query: 'purr', mode: 'keyword', unit: 'passage', limit: 5 });
    t.match(found.results, [{ path: '/cats.md', rank: 1, evidence: [{ text: /purr/ }] }]);
    const file = await backend.getFile(notes, found.results[0]!.file_id);
    t.match(file, { path: '/cats.md', status: 'ready', source: { content_type: 'text/markdown' }, metadata: { team: 'ops' } });

    await t.rejects(backend.getFile(notes, 'fil_doesnotexist'), { name: 'CliApiError', status: 404 });
    await t.rejects(backend.search(notes, { query: 'purr', mode: 'keyword', unit: 'file', limit: 500 }), { name: 'CliApiError', code: 'invalid_request' });
  });

  await t.test('live events over the operator socket: files, jobs, collections and research', async (t) => {
    const live = record(backend);
    t.teardown(live.stop);
    await waitFor(() => live.channels.find((c) => c.connected), 'the channel to connect');
    t.match(live.channels[0], { channel: 'operator', connected: true });

    await api('POST', '/namespaces/demo/collections/notes/files', { path: '/dogs.md', source: { type: 'inline', text: 'Dogs bark at the mail carrier.' } });
    const ready = await waitFor(() => live.events.find((e) => e.type === 'file.ready' && e.data.path === '/dogs.md'), 'file.ready for /dogs.md');
    t.ok(ready.id.startsWith('evt_'));
    t.ok(live.events.some((e) => e.type === 'job.updated' && e.data.namespace === 'demo' && e.data.collection === 'notes'), 'job events name the collection');
    t.ok(live.events.some((e) => e.type === 'collection.updated' && e.data.name === 'notes'), 'collection events too');

    const run = await backend.startResearch(notes, 'why do cats purr?', 'standard');
    t.match(run, { id: /^rsr_/, namespace: 'demo', collection: 'notes', mode: 'standard' });
    const done = await waitFor(() => live.events.find((e) => e.type === 'research.updated' && e.data.id === run.id && e.data.status === 'succeeded'), 'the run to succeed');
    const stages = live.events.filter((e) => e.type === 'research.progress' && e.data.id === run.id).map((e) => (e.data.progress as { stage: string }).stage);
    t.same(stages, ['retrieve', 'read', 'synthesize'], 'every stage arrives as research.progress');
    t.match(done.data, { answer: /\[\[SRC:\d{4}\]\]/ }, 'the finished run carries its answer with markers');
    t.match(await backend.getResearch(notes, run.id), { id: run.id, status: 'succeeded' });
    await t.rejects(backend.getResearch(notes, 'rsr_doesnotexist'), { name: 'CliApiError', status: 404 });
    t.same(live.errors, [], 'no stream errors');
  });

  await t.test('without a usable operator socket, the public SSE stream carries the events', async (t) => {
    for (const [label, fallback, note] of [
      ['a data dir without a socket', createBackend({ url: daemon.url, key: KEY }, elsewhere), /no operator socket in/],
      ['--no-operator', createBackend({ url: daemon.url, key: KEY }, dataDir, { operator: false }), /--no-operator/],
    ] as const) {
      const live = record(fallback);
      t.teardown(live.stop);
      await waitFor(() => live.channels.find((c) => c.connected), `${label}: the channel to connect`);
      t.match(live.channels[0], { channel: 'sse', connected: true, note }, `${label}: SSE, saying why`);
      await api('POST', '/namespaces/demo/collections/notes/files', { path: `/sse-${live.channels.length}-${label.length}.md`, source: { type: 'inline', text: 'Parrots talk.' } });
      await waitFor(() => live.events.find((e) => e.type === 'file.ready'), `${label}: file.ready over SSE`);
      live.stop();
    }
    await waitIdle();
  });

  await t.test('a refused key is reported once and not retried; a missing daemon is reported', async (t) => {
    const refused = createBackend({ url: daemon.url, key: 'trove_wrong_key' }, elsewhere, { retryDelaysMs: [50] });
    const live = record(refused);
    t.teardown(live.stop);
    await waitFor(() => live.errors.length > 0, 'the 401');
    await new Promise((resolve) => setTimeout(resolve, 400));
    t.equal(live.errors.length, 1, 'a permanent failure is not retried');
    t.match(live.errors[0], { status: 401, code: 'unauthenticated' });
    t.notOk(live.channels.some((c) => c.connected), 'never connected');
    await t.rejects(refused.listNamespaces(), { name: 'CliApiError', status: 401 });

    const port = await freePort();
    const nowhere = createBackend({ url: `http://127.0.0.1:${port}`, key: KEY }, elsewhere, { retryDelaysMs: [50] });
    await t.rejects(nowhere.listNamespaces(), { name: 'CliError', code: 'daemon_unreachable' });
    const down = record(nowhere);
    t.teardown(down.stop);
    await waitFor(() => down.errors.length >= 2, 'a few failed attempts');
    t.ok(down.errors.every((err) => err instanceof CliError && err.code === 'daemon_unreachable'), 'each attempt fails as unreachable, and it keeps trying');
  });
});

t.test('sameDaemon decides whether the operator socket serves the daemon at --url', async (t) => {
  t.ok(sameDaemon('http://127.0.0.1:7410', 'http://127.0.0.1:7410'));
  t.ok(sameDaemon('http://127.0.0.1:7410', 'http://localhost:7410'), 'loopback under another name');
  t.ok(sameDaemon('http://0.0.0.0:7410', 'http://192.168.1.5:7410'), 'a daemon on every address');
  t.notOk(sameDaemon('http://127.0.0.1:7410', 'http://127.0.0.1:7411'), 'another port is another daemon');
  t.notOk(sameDaemon('http://127.0.0.1:7410', 'http://example.com:7410'), 'a remote host');
  t.notOk(sameDaemon(null, 'http://127.0.0.1:7410'));
  t.notOk(sameDaemon('not a url', 'http://127.0.0.1:7410'));
});
