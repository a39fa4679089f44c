// Over TLS the daemon serves through the same server as over plain HTTP (issue 17, item 9: it once
// served through a second server that ignored the configured timeouts): one Node server, https or
// http, with the same connection timeouts, and `trove daemon start --tls-cert --tls-key` answers
// over https. The certificate is fixtures/tls/'s self-signed one for 127.0.0.1.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import type { App } from '../src/http/app.js';
import { CONNECTION_TIMEOUTS, createHttpServer } from '../src/http/server.js';
import { ROOT, runCli, startDaemonProcess } from './helpers/cli.js';

const certFile = path.join(ROOT, 'fixtures', 'tls', 'localhost.crt');
const keyFile = path.join(ROOT, 'fixtures', 'tls', 'localhost.key');
const cert = readFileSync(certFile);
const key = readFileSync(keyFile);
const app: App = { routes: [], handle: async () => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' }) };
const log = { error() {} };

t.test('one server, HTTP or HTTPS, with the same connection timeouts', async (t) => {
  for (const withTls of [false, true]) {
    const { server } = createHttpServer(app, { log, tls: withTls ? { cert, key } : null });
    t.equal(server instanceof https.Server, withTls, withTls ? 'HTTPS' : 'HTTP');
    t.same({ keepAliveMs: server.keepAliveTimeout, headersMs: server.headersTimeout, requestMs: server.requestTimeout }, CONNECTION_TIMEOUTS, 'the configured timeouts');
  }
});

t.test('over TLS, an idle keep-alive connection closes after the configured timeout', async (t) => {
  const http = createHttpServer(app, { log, tls: { cert, key }, timeouts: { keepAliveMs: 200 } });
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => http.shutdown({ drainMs: 0 }));
  const socket = tls.connect({ port: (http.server.address() as AddressInfo).port, host: '127.0.0.1', ca: cert });
  await once(socket, 'secureConnect');
  let response = '';
  socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
  socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const sent = Date.now();
  await once(socket, 'close');
  t.match(response, /^HTTP\/1\.1 200 /, 'answered over TLS');
  t.match(response, /keep-alive/i, 'and kept alive');
  // Node's own default is 5 s: a server that ignored the setting would hold the connection that long.
  t.ok(Date.now() - sent < 5_000, `closed by the server after ${Date.now() - sent} ms idle`);
});

t.test('trove daemon start --tls-cert --tls-key serves HTTPS', async (t) => {
  const daemon = await startDaemonProcess({ args: ['--tls-cert', certFile, '--tls-key', keyFile] });
  t.teardown(() => daemon.kill());
  t.match(daemon.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const status = await new Promise<number | undefined>((resolve, reject) => {
    https.get(`${daemon.url}/health`, { ca: cert }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on('error', reject);
  });
  t.equal(status, 200, '/health answers over https');

  const missing = await runCli(['daemon', 'start', '--ephemeral', '--port', '0', '--tls-cert', path.join(ROOT, 'fixtures', 'tls', 'nope.crt'), '--tls-key', keyFile]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^trove: Cannot read --tls-cert .*nope\.crt: ENOENT/, 'an unreadable certificate is the user\'s to fix');
  t.notMatch(missing.stderr, /\n\s+at /, 'no stack trace');
});
