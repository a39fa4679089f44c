// In-process test fixture: a runtime on an ephemeral data dir, driven through the app's handle()
// without opening a port (Hono-style), plus helpers to wait for indexing.
import './plain-children.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../../daemon/runtime.js';
import { PATIENCE_MS } from './wait.js';

export const CLUSTER_KEY = 'test-cluster-key-0123456789abcdef';

export interface Call {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

export interface Fixture {
  rt: Runtime;
  call(method: string, url: string, body?: unknown, headers?: Record<string, string | undefined>): Promise<Call>;
  /** Sends a raw body (string or Buffer) with the given headers. */
  raw(method: string, url: string, body: string | Buffer | null, headers?: Record<string, string | undefined>): Promise<Call>;
  waitForIdle(ns: string, col: string, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

export async function startFixture(options: RuntimeOptions = {}): Promise<Fixture> {
  const rt = await openRuntime({ ephemeral: true, clusterKey: CLUSTER_KEY, ...options });
  const raw: Fixture['raw'] = async (method, url, body, headers = {}) => {
    const h: Record<string, string | undefined> = { authorization: `Bearer ${CLUSTER_KEY}`, ...headers };
    for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
    const res = await rt.app.handle({ method, url, headers: h, body: body === null ? null : Buffer.from(body) });
    const text = res.body === null ? '' : res.body.toString();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  const call: Fixture['call'] = (method, url, body, headers = {}) =>
    raw(method, url, body === undefined ? null : JSON.stringify(body), { 'content-type': body === undefined ? undefined : 'application/json', ...headers });
  return {
    rt,
    call,
    raw,
    async waitForIdle(ns, col, timeoutMs = PATIENCE_MS) {
      const started = Date.now();
      for (;;) {
        const r = await call('GET', `/namespaces/${ns}/collections/${col}`);
        const c = r.body.file_counts;
        if (r.status === 200 && c.pending + c.indexing === 0) return r.body;
        if (Date.now() - started > timeoutMs) throw new Error(`collection ${ns}/${col} still indexing: ${JSON.stringify(c)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => rt.close(),
  };
}

/** Creates a namespace and a collection, returning their names. */
export async function seedCollection(f: Fixture, ns = 'demo', col = 'notes', collectionBody: Record<string, unknown> = {}): Promise<{ ns: string; col: string; base: string }> {
  await f.call('POST', '/namespaces', { name: ns, exist_ok: true });
  await f.call('POST', `/namespaces/${ns}/collections`, { name: col, exist_ok: true, ...collectionBody });
  return { ns, col, base: `/namespaces/${ns}/collections/${col}` };
}

export async function addInline(f: Fixture, base: string, path: string, text: string, contentType = 'text/plain', metadata: Record<string, unknown> = {}): Promise<Call> {
  return f.call('POST', `${base}/files`, { path, source: { type: 'inline', text, content_type: contentType }, metadata });
}
