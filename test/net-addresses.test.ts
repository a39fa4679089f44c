// The one public-address rule (src/domain/net/addresses.ts) shared by http(s) URL sources
// (decisions.md §3, --allow-private-sources) and webhook receivers (workspace-api.md URL rules,
// --allow-insecure-webhooks): a table of addresses, then both callers end to end with an
// IPv4-compatible loopback address (`[::127.0.0.1]`, which the URL parser writes as `[::7f00:1]`).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { checkReceiverUrl } from '../src/domain/webhooks/transport.js';
import { isLoopbackAddress, isPublicAddress, judgeAddress } from '../src/domain/net/addresses.js';
import { seedCollection, startFixture } from './helpers/trove.js';

// [address, public, loopback (this machine's own, for --allow-insecure-webhooks), why]
const TABLE: Array<[string, boolean, boolean, string]> = [
  ['127.0.0.1', false, true, 'IPv4 loopback'],
  ['127.255.0.9', false, true, 'all of 127.0.0.0/8'],
  ['10.1.2.3', false, false, 'private'],
  ['172.16.0.1', false, false, 'private'],
  ['172.31.255.255', false, false, 'private'],
  ['192.168.1.1', false, false, 'private'],
  ['169.254.169.254', false, false, 'link-local (cloud metadata)'],
  ['100.64.0.1', false, false, 'carrier-grade NAT'],
  ['0.0.0.0', false, false, 'unspecified'],
  ['0.1.2.3', false, false, '0.0.0.0/8'],
  ['255.255.255.255', false, false, 'broadcast'],
  ['224.0.0.1', false, false, 'multicast'],
  ['192.0.2.1', false, false, 'documentation'],
  ['198.18.0.1', false, false, 'benchmarking'],
  ['240.0.0.1', false, false, 'reserved'],
  ['::1', false, true, 'IPv6 loopback'],
  ['::', false, false, 'unspecified'],
  ['fe80::1', false, false, 'link-local'],
  ['fc00::1', false, false, 'unique local'],
  ['fd12:3456::1', false, false, 'unique local'],
  ['fec0::1', false, false, 'site-local (deprecated)'],
  ['ff02::1', false, false, 'multicast'],
  ['100::1', false, false, 'discard'],
  ['2001:db8::1', false, false, 'documentation'],
  ['3fff::1', false, false, 'documentation'],
  ['2001:2::1', false, false, 'benchmarking'],
  ['2001:20::1', false, false, 'ORCHIDv2'],
  ['5f00::1', false, false, 'segment routing, outside 2000::/3'],
  ['::1:2:3', false, false, 'outside 2000::/3'],
  // IPv4 embedded in IPv6: judged by the IPv4 address.
  ['::127.0.0.1', false, false, 'IPv4-compatible loopback: private, but not this machine'],
  ['::7f00:1', false, false, 'the same, as the URL parser writes it'],
  ['::10.0.0.1', false, false, 'IPv4-compatible private'],
  ['::ffff:127.0.0.1', false, true, 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', false, true, 'IPv4-mapped loopback in hex'],
  ['::ffff:10.0.0.1', false, false, 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', false, false, 'IPv4-mapped link-local'],
  ['::ffff:0:7f00:1', false, false, 'IPv4-translated loopback'],
  ['2002:7f00:1::', false, false, '6to4 of 127.0.0.1'],
  ['2002:a00:1::1', false, false, '6to4 of 10.0.0.1'],
  ['64:ff9b::7f00:1', false, false, 'NAT64 of 127.0.0.1'],
  ['64:ff9b::a9fe:a9fe', false, false, 'NAT64 of 169.254.169.254'],
  ['64:ff9b:1::808:808', false, false, 'local-use NAT64 is always private'],
  ['2001:0:4136:e378:8000:63bf:3f57:fefe', false, false, 'Teredo with client 192.168.1.1'],
  ['2001:0:a00:1:8000:63bf:f7f7:f7f7', false, false, 'Teredo with server 10.0.1.0'],
  ['fe80::1%eth0', false, false, 'zone ID'],
  ['[::1]', false, true, 'brackets are allowed'],
  ['127.1', false, false, 'shorthand a resolver never returns'],
  ['0x7f000001', false, false, 'shorthand a resolver never returns'],
  ['localhost', false, false, 'not an IP literal'],
  ['', false, false, 'empty'],
  // Public.
  ['8.8.8.8', true, false, 'public IPv4'],
  ['1.1.1.1', true, false, 'public IPv4'],
  ['93.184.216.34', true, false, 'public IPv4'],
  ['2606:4700:4700::1111', true, false, 'public IPv6'],
  ['2001:4860:4860::8888', true, false, 'public IPv6'],
  ['[2001:4860:4860::8888]', true, false, 'public IPv6 in brackets'],
  ['::ffff:8.8.8.8', true, false, 'IPv4-mapped public: a dual-stack socket connects to 8.8.8.8'],
  ['::8.8.8.8', true, false, 'IPv4-compatible public'],
  ['64:ff9b::808:808', true, false, 'NAT64 of 8.8.8.8 (what DNS64 answers on an IPv6-only network)'],
  ['2002:808:808::1', true, false, '6to4 of 8.8.8.8'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true, false, 'Teredo with public server and client 8.8.8.8'],
];

t.test('judgeAddress: only verified global unicast is public', async (t) => {
  for (const [ip, pub, loopback, why] of TABLE) {
    const verdict = judgeAddress(ip);
    t.equal(verdict.public, pub, `${ip || '(empty)'} is ${pub ? '' : 'not '}public (${why}; ${verdict.description})`);
    t.equal(verdict.loopback, loopback, `${ip || '(empty)'} is ${loopback ? '' : 'not '}loopback`);
    t.equal(isPublicAddress(ip), pub);
    t.equal(isLoopbackAddress(ip), loopback);
  }
  t.match(judgeAddress('::127.0.0.1').description, /IPv4-compatible 127\.0\.0\.1: loopback/, 'the message names the embedded address');
});

t.test('webhook URL rules use the same judge', async (t) => {
  await t.rejects(checkReceiverUrl('https://[::127.0.0.1]/hook', { allowInsecure: false }), /not public/);
  await t.rejects(checkReceiverUrl('https://[::127.0.0.1]/hook', { allowInsecure: true }), /not public/, '--allow-insecure-webhooks admits only this machine’s own loopback');
  await t.rejects(checkReceiverUrl('http://[::127.0.0.1]/hook', { allowInsecure: true }), /loopback/);
  await t.rejects(checkReceiverUrl('https://[64:ff9b::7f00:1]/hook', { allowInsecure: false }), /not public/);
  t.ok(await checkReceiverUrl('http://[::ffff:127.0.0.1]:9/hook', { allowInsecure: true }), 'mapped loopback is loopback for --allow-insecure-webhooks');
  t.ok(await checkReceiverUrl('https://[::ffff:8.8.8.8]/hook', { allowInsecure: false }), 'mapped public is public');
});

t.test('end to end: an IPv4-compatible loopback address is neither fetched nor accepted as a receiver', async (t) => {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('secret from loopback');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const f = await startFixture({ webhookDispatcher: false });
  t.teardown(async () => {
    await f.close();
    server.closeAllConnections();
    server.close();
  });

  const { ns, col, base } = await seedCollection(f, 'ws', 'docs');
  const uris = [`http://[::127.0.0.1]:${port}/`, `http://[::ffff:7f00:1]:${port}/`, `http://[64:ff9b::7f00:1]:${port}/`];
  for (const [i, uri] of uris.entries()) {
    const added = await f.call('POST', `${base}/files`, { path: `/source-${i}.txt`, source: { type: 'uri', uri } });
    t.equal(added.status, 202, `${uri} is accepted for indexing (the address is checked when fetching)`);
    await f.waitForIdle(ns, col);
    const file = (await f.call('GET', `${base}/files/${added.body.file.id}`)).body;
    t.match(file, { status: 'failed', error: { code: 'fetch_failed', message: /is private .*--allow-private-sources/ } }, `${uri} is refused as private`);
  }
  t.same(hits, [], 'no request reached the loopback server');

  for (const allowInsecure of [false, true]) {
    f.rt.services.webhooks.allowInsecure = allowInsecure;
    const r = await f.call('POST', `/v1/workspaces/${ns}/webhooks`, { name: 'hook', url: `https://[::127.0.0.1]:${port}/hook` });
    t.equal(r.status, 400, `refused with --allow-insecure-webhooks ${allowInsecure ? 'on' : 'off'}`);
    t.match(r.body, { error: { code: 'invalid_request', message: /not public/ } });
  }
});
