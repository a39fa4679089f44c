// Kill -9 the daemon with webhook deliveries pending: after a restart they arrive, none lost, each
// with its webhook-id (issue: events and webhooks, "Done when"). A real daemon process, a real
// receiver, the standardwebhooks verifier.
import './helpers/plain-children.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { PATIENCE_MS } from './helpers/wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'trove');
const KEY = `trove_restart_${randomBytes(20).toString('hex')}`;

async function startDaemon(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TROVE_')) env[k] = v;
  const child = spawn(process.execPath, [BIN, 'daemon', 'start', '--data-dir', dataDir, '--port', '0', '--json', '--allow-insecure-webhooks', '--webhook-retry-scale', '0.001'], {
    cwd: ROOT,
    env: { ...env, TROVE_CLUSTER_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start: ${stderr}`)), PATIENCE_MS);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

t.test('deliveries pending at a kill -9 arrive after the restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'trove-hooks-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let answer = 503;
  const received: { id: string; body: string; verified: boolean }[] = [];
  let secret = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      let verified = false;
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ id: String(req.headers['webhook-id']), body, verified });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const receiver = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;

  let daemon = await startDaemon(dataDir);
  t.teardown(() => {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(daemon.url + path, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  t.equal((await call('POST', '/namespaces', { name: 'hooks' })).status, 201);
  const created = await call('POST', '/v1/workspaces/hooks/webhooks', { name: 'restart', url: receiver, eventTypes: ['collection.updated'] });
  t.equal(created.status, 201);
  secret = created.body.secret;
  const hookId = created.body.webhook.id;
  for (const name of ['one', 'two', 'three']) t.equal((await call('POST', '/namespaces/hooks/collections', { name })).status, 201);

  // The receiver fails; wait until each event has been tried at least once and is still pending.
  for (let i = 0; i < 500; i++) {
    if (new Set(received.map((r) => r.id)).size >= 3) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const pending = await call('GET', `/v1/workspaces/hooks/webhooks/${hookId}/deliveries?status=pending`);
  t.equal(pending.body.items.length, 3, 'three deliveries pending');
  const eventIds = pending.body.items.map((d: any) => d.eventId).sort();

  daemon.child.kill('SIGKILL');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
  answer = 200;
  daemon = await startDaemon(dataDir);
  for (let i = 0; i < 500; i++) {
    const ok = received.filter((r) => r.verified && eventIds.includes(r.id));
    if (new Set(ok.map((r) => r.id)).size === 3 && (await call('GET', `/v1/workspaces/hooks/webhooks/${hookId}/deliveries?status=succeeded`)).body.items.length === 3) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const succeeded = await call('GET', `/v1/workspaces/hooks/webhooks/${hookId}/deliveries?status=succeeded`);
  t.same(succeeded.body.items.map((d: any) => d.eventId).sort(), eventIds, 'every pending delivery succeeded after the restart');
  t.ok(received.every((r) => r.verified), 'every POST verifies with the standardwebhooks verifier');
  for (const id of eventIds) {
    const bodies = new Set(received.filter((r) => r.id === id).map((r) => r.body));
    t.equal(bodies.size, 1, `${id}: every repeat carries the same webhook-id and body`);
  }
  daemon.child.kill('SIGTERM');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
});
