// `/mcp` against DNS rebinding, as the MCP conformance suite's `dns-rebinding-protection` scenario
// checks it (a Host and an Origin of another site get a 4xx; the daemon's own get a 2xx, and so does
// the `notifications/initialized` after it), plus the contract's shape of the refusal (403
// `forbidden`), the allowed lists a team behind a load balancer sets, and the Bearer challenge of a 401.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { resolveConfig } from '../daemon/config.js';
import { ConfigFileSchema } from '../src/domain/config-file.js';
import { apiOf, newClusterKey } from './helpers/cli.js';

let daemon: RunningDaemon;
let key = '';
let port = '';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance-dns-rebinding-test', version: '1.0.0' } } };
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** A POST to /mcp with exactly these headers (Host included: fetch would set its own). */
function post(headers: Record<string, string>, body: unknown = INIT): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${daemon.url}/mcp`,
      {
        method: 'POST',
        setHost: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

t.before(async () => {
  const clusterKey = newClusterKey();
  daemon = await startDaemon({
    ephemeral: true,
    clusterKey,
    port: 0,
    operator: false,
    drainSeconds: 0,
    mcp: { allowedHosts: ['lb.example.com', 'edge.example.com:8443'], allowedOrigins: ['https://app.example.com'] },
  });
  port = new URL(daemon.url).port;
  const api = apiOf({ url: daemon.url, key: clusterKey });
  await api('POST', '/namespaces', { name: 'demo' });
  key = (await api<{ secret: string }>('POST', '/keys', { name: 'reader', scope: { kind: 'namespace', namespace: 'demo', actions: ['read'] } })).body.secret;
});
t.teardown(() => daemon?.stop());

t.test('the conformance scenario: another site is refused, the daemon itself is served', async (t) => {
  const auth = { authorization: `Bearer ${key}` };
  const evil = await post({ ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' });
  t.equal(evil.status, 403, 'Host and Origin of another site: 4xx');
  t.match(JSON.parse(evil.body), { error: { code: 'forbidden', retryable: false, request_id: /^req_/, details: { reason: 'host_not_allowed' } } }, "in the contract's envelope");

  const own = `127.0.0.1:${port}`;
  const valid = await post({ ...auth, host: own, origin: `http://${own}` });
  t.equal(valid.status, 200, `Host and Origin ${own}: served (${valid.body.slice(0, 80)})`);
  t.match(JSON.parse(valid.body), { result: { serverInfo: { name: 'trove' } } });
  const initialized = await post({ ...auth, host: own, origin: `http://${own}` }, INITIALIZED);
  t.equal(initialized.status, 202, 'and the initialized notification after it');

  for (const name of [`localhost:${port}`, `[::1]:${port}`]) {
    t.equal((await post({ ...auth, host: name, origin: `http://${name}` })).status, 200, `the loopback name ${name} and its origin`);
  }
  const noKey = await post({ host: 'evil.example.com', origin: 'http://evil.example.com' });
  t.equal(noKey.status, 403, 'refused before the key is read: no 401 that would tell a page the endpoint exists');
});

t.test('Origin: absent is a client that is not a browser; another site is 403', async (t) => {
  const auth = { authorization: `Bearer ${key}`, host: `127.0.0.1:${port}` };
  t.equal((await post(auth)).status, 200, 'no Origin: served');
  for (const origin of ['http://evil.example.com', 'null', `http://127.0.0.1:${Number(port) + 1}`, `https://127.0.0.1:${port}`, 'not a url']) {
    const res = await post({ ...auth, origin });
    t.equal(res.status, 403, `Origin ${origin}`);
    t.match(JSON.parse(res.body), { error: { code: 'forbidden', details: { reason: 'origin_not_allowed' }, message: /--mcp-allowed-origin/ } });
  }
  t.equal((await post({ ...auth, origin: 'https://app.example.com' })).status, 200, 'an allowed origin');
  t.equal((await post({ ...auth, origin: 'HTTPS://App.Example.com:443' })).status, 200, 'compared in normal form');
});

t.test('Host: a bound address at its port, or an allowed host', async (t) => {
  const auth = { authorization: `Bearer ${key}` };
  for (const host of [`127.0.0.1:${Number(port) + 1}`, '127.0.0.1', 'other.example.com', `10.1.2.3:${port}`, '[bad', 'edge.example.com:9999']) {
    const res = await post({ ...auth, host });
    t.equal(res.status, 403, `Host ${host}`);
    t.match(JSON.parse(res.body), { error: { code: 'forbidden', details: { reason: 'host_not_allowed' }, message: /--mcp-allowed-host/ } });
  }
  for (const host of ['lb.example.com', 'LB.example.com:443', 'edge.example.com:8443']) {
    t.equal((await post({ ...auth, host })).status, 200, `allowed host ${host}`);
  }
});

t.test('a 401 carries the Bearer challenge', async (t) => {
  const host = `127.0.0.1:${port}`;
  const none = await post({ host });
  t.equal(none.status, 401);
  t.equal(none.headers['www-authenticate'], 'Bearer realm="trove"', 'no credential');
  t.match(JSON.parse(none.body), { error: { code: 'unauthenticated' } });
  const bad = await post({ host, authorization: 'Bearer trove_nope_0000000000000000000000' });
  t.equal(bad.status, 401);
  t.equal(bad.headers['www-authenticate'], 'Bearer realm="trove", error="invalid_token"', 'a credential refused');
});

t.test('settings: flag > environment > config.json > default, checked and in normal form', async (t) => {
  const file = ConfigFileSchema.parse({ mcp: { allowedOrigins: ['https://file.example.com'], allowedHosts: 'file.example.com, 10.0.0.5:7410', replyBudgetTokens: 4000 } });
  t.same(resolveConfig({}, {}, file).mcp, { allowedOrigins: ['https://file.example.com'], allowedHosts: ['file.example.com', '10.0.0.5:7410'], replyBudgetTokens: 4000 }, 'config.json (a list or one text with commas)');
  const env = { TROVE_MCP_ALLOWED_ORIGINS: 'https://env.example.com/', TROVE_MCP_ALLOWED_HOSTS: 'ENV.example.com', TROVE_MCP_REPLY_BUDGET_TOKENS: '5000' };
  t.same(resolveConfig({}, env, file).mcp, { allowedOrigins: ['https://env.example.com'], allowedHosts: ['env.example.com'], replyBudgetTokens: 5000 }, 'the environment over the file');
  const flags = { mcpAllowedOrigin: ['http://a.example.com:8080', 'https://b.example.com'], mcpAllowedHost: ['lb.example.com'], mcpReplyBudget: '6000' };
  t.same(resolveConfig(flags, env, file).mcp, { allowedOrigins: ['http://a.example.com:8080', 'https://b.example.com'], allowedHosts: ['lb.example.com'], replyBudgetTokens: 6000 }, 'flags over both');
  t.same(resolveConfig({}, {}, {}).mcp, { allowedOrigins: [], allowedHosts: [], replyBudgetTokens: 25_000 }, 'the default: the daemon\'s own origins and addresses only, 25,000 tokens');
  t.throws(() => resolveConfig({ mcpAllowedOrigin: ['https://a.example.com/path'] }, {}, {}), /--mcp-allowed-origin.*is not an origin/, 'an origin with a path is refused');
  t.throws(() => resolveConfig({}, { TROVE_MCP_ALLOWED_HOSTS: 'a b' }, {}), /mcp\.allowedHosts \(TROVE_MCP_ALLOWED_HOSTS\).*is not a host/);
  t.throws(() => resolveConfig({ mcpReplyBudget: '10' }, {}, {}), /--mcp-reply-budget must be a whole number of tokens, at least 1000/);
  t.notOk(ConfigFileSchema.safeParse({ mcp: { allowedOrigins: ['ftp://x'] } }).success, 'config.json is checked by the same rule');
});
