import t from 'tap';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TroveError } from '../src/contract/errors.js';
import {
  CHECKSUM_PATTERN,
  checksumMatches,
  computeChecksum,
  createChecksummer,
  parseChecksum,
} from '../src/domain/ingest/checksum.js';
import { fetchSourceUri, fileUriToAllowedPath, type FetchOptions } from '../src/domain/ingest/fetch.js';
import { IngestFailure, type IngestFailureCode } from '../src/domain/ingest/types.js';
import { FETCH_AHEAD_PER_NAMESPACE } from '../src/domain/ingest/fetch-ahead.js';
import { seedCollection, startFixture } from './helpers/trove.js';
import { waitFor } from './helpers/wait.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const HELLO_SHA256 = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
const HELLO_MD5 = '5d41402abc4b2a76b9719d911017c592';

async function expectIngestFailure(t: TestContext, promise: Promise<unknown>, code: IngestFailureCode, message?: RegExp): Promise<IngestFailure | undefined> {
  try {
    await promise;
  } catch (err) {
    t.ok(err instanceof IngestFailure, 'throws an IngestFailure');
    if (!(err instanceof IngestFailure)) return undefined;
    t.equal(err.code, code, `code is ${code}`);
    if (message) t.match(err.message, message);
    return err;
  }
  t.fail(`expected an IngestFailure(${code})`);
  return undefined;
}

function expectInvalidRequest(t: TestContext, fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof TroveError, 'throws a TroveError');
    if (!(err instanceof TroveError)) return;
    t.equal(err.code, 'invalid_request');
    t.match(err.message, message);
    return;
  }
  t.fail('expected TroveError(invalid_request)');
}

t.test('checksums', async (t) => {
  const hello = Buffer.from('hello');
  t.equal(computeChecksum(hello, 'sha256'), HELLO_SHA256);
  t.equal(computeChecksum(hello, 'md5'), HELLO_MD5);
  t.equal(computeChecksum(Buffer.from('123456789'), 'crc32c'), 'e3069283');
  // A CRC whose top byte is zero still prints as 8 digits.
  t.equal(computeChecksum(Buffer.alloc(0), 'crc32c'), '00000000');

  t.ok(checksumMatches(hello, `sha256:${HELLO_SHA256}`));
  t.ok(checksumMatches(hello, `md5:${HELLO_MD5}`));
  t.ok(checksumMatches(Buffer.from('123456789'), 'crc32c:e3069283'));
  t.notOk(checksumMatches(hello, 'crc32c:e3069283'));
  t.notOk(checksumMatches(hello, `sha256:${HELLO_SHA256.toUpperCase()}`), 'uppercase hex does not parse');

  t.same(parseChecksum(`md5:${HELLO_MD5}`), { algorithm: 'md5', hex: HELLO_MD5 });
  t.equal(parseChecksum('md5:abc'), null);
  t.equal(parseChecksum(`sha1:${'a'.repeat(40)}`), null);
  t.equal(parseChecksum(`crc32c:e3069283 `), null);
  t.ok(CHECKSUM_PATTERN.test(`sha256:${HELLO_SHA256}`));
  t.notOk(CHECKSUM_PATTERN.test(`sha256:${HELLO_SHA256}0`));
  t.notOk(CHECKSUM_PATTERN.test(`x-md5:${HELLO_MD5}`));
});

t.test('streaming checksummer equals one-shot', async (t) => {
  const data = Buffer.from(Array.from({ length: 100_003 }, (_, i) => (i * 31 + 7) % 256));
  const summer = createChecksummer(['sha256', 'md5', 'crc32c']);
  for (let offset = 0; offset < data.length; offset += 4093) summer.update(data.subarray(offset, offset + 4093));
  const digests = summer.digest();
  t.same(digests, {
    sha256: computeChecksum(data, 'sha256'),
    md5: computeChecksum(data, 'md5'),
    crc32c: computeChecksum(data, 'crc32c'),
  });
  t.same(summer.digest(), digests, 'digest can be read again');
  t.throws(() => summer.update(data), 'update after digest throws');

  const crcOnly = createChecksummer(['crc32c']);
  crcOnly.update(Buffer.from('1234'));
  crcOnly.update(Buffer.from('56789'));
  t.same(crcOnly.digest(), { crc32c: 'e3069283' });
});

t.test('file roots', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'trove-fetch-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const root = path.join(tmp, 'data', 'a');
  const sibling = path.join(tmp, 'data', 'ab');
  const outside = path.join(tmp, 'outside');
  await Promise.all([mkdir(root, { recursive: true }), mkdir(sibling, { recursive: true }), mkdir(outside, { recursive: true })]);
  await writeFile(path.join(root, 'inside.txt'), 'hello');
  await mkdir(path.join(root, 'sub'));
  await writeFile(path.join(root, 'big.bin'), Buffer.alloc(101));
  await writeFile(path.join(sibling, 'sibling.txt'), 'sibling');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'escape.txt'));
  await symlink(path.join(root, 'inside.txt'), path.join(root, 'alias.txt'));

  const uri = (p: string) => pathToFileURL(p).href;
  const roots = [root];
  const opts: FetchOptions = { allowPrivate: false, fileRoots: roots, maxBytes: 100, timeoutMs: 2000 };

  t.test('lexical check at add time', async (t) => {
    t.equal(fileUriToAllowedPath(uri(path.join(root, 'inside.txt')), roots), path.join(root, 'inside.txt'));
    t.equal(fileUriToAllowedPath(uri(path.join(root, 'sub')), [`${root}/`]), path.join(root, 'sub'), 'a trailing slash on a root is fine');
    expectInvalidRequest(t, () => fileUriToAllowedPath(uri(path.join(outside, 'secret.txt')), roots), /not under an allowed folder.*--allow-file-root DIR/);
    expectInvalidRequest(t, () => fileUriToAllowedPath(uri(path.join(sibling, 'sibling.txt')), roots), /not under an allowed folder/);
    expectInvalidRequest(t, () => fileUriToAllowedPath(`file://${root}/../ab/sibling.txt`, roots), /not under an allowed folder/);
    expectInvalidRequest(t, () => fileUriToAllowedPath(`file://${root}/%2e%2e/ab/sibling.txt`, roots), /not under an allowed folder/);
    expectInvalidRequest(t, () => fileUriToAllowedPath('https://example.com/a.txt', roots), /not a file:\/\/ URI/);
    expectInvalidRequest(t, () => fileUriToAllowedPath('not a uri', roots), /not a valid URI/);
    expectInvalidRequest(t, () => fileUriToAllowedPath(uri(path.join(root, 'inside.txt')), []), /--allow-file-root DIR/);
  });

  t.test('reading', async (t) => {
    const fetched = await fetchSourceUri(uri(path.join(root, 'inside.txt')), opts);
    t.equal(fetched.bytes.toString(), 'hello');
    t.equal(fetched.contentType, undefined);

    const viaAlias = await fetchSourceUri(uri(path.join(root, 'alias.txt')), opts);
    t.equal(viaAlias.bytes.toString(), 'hello', 'a symlink that stays inside the root is followed');

    t.equal(fileUriToAllowedPath(uri(path.join(root, 'escape.txt')), roots), path.join(root, 'escape.txt'), 'lexically inside');
    const escaped = await expectIngestFailure(t, fetchSourceUri(uri(path.join(root, 'escape.txt')), opts), 'fetch_failed', /escape\.txt leads through a symlink to a path that is not under an allowed folder/);
    t.notMatch(escaped?.message ?? '', outside, 'the message does not say where the symlink points');
    await expectIngestFailure(t, fetchSourceUri(uri(path.join(sibling, 'sibling.txt')), opts), 'fetch_failed', /not under an allowed folder/);
    await expectIngestFailure(t, fetchSourceUri(uri(path.join(root, 'big.bin')), opts), 'too_large');
    await expectIngestFailure(t, fetchSourceUri(uri(path.join(root, 'missing.txt')), opts), 'fetch_failed', /no such file/);
    await expectIngestFailure(t, fetchSourceUri(uri(path.join(root, 'sub')), opts), 'fetch_failed', /not a regular file/);
    const exact = await fetchSourceUri(uri(path.join(root, 'big.bin')), { ...opts, maxBytes: 101 });
    t.equal(exact.bytes.length, 101, 'exactly maxBytes is allowed');
  });

  t.test('a symlink out of the roots: neither the stored error nor the logs say where it points', async (t) => {
    const lines: string[] = [];
    const record = (message: string, fields: Record<string, unknown> = {}) => void lines.push(`${message} ${JSON.stringify(fields)}`);
    const f = await startFixture({ fileRoots: roots, log: { info: record, warn: record, error: record } });
    t.teardown(() => f.close());
    const { base } = await seedCollection(f, 'links', 'docs');
    const added = await f.call('POST', `${base}/files`, { path: '/escape.txt', source: { type: 'uri', uri: uri(path.join(root, 'escape.txt')) } });
    t.equal(added.status, 202, 'lexically inside a root: accepted, fetched later');
    await f.waitForIdle('links', 'docs');
    const file = await f.call('GET', `${base}/files/${added.body.file.id}`);
    t.match(file.body, { status: 'failed', error: { code: 'fetch_failed', message: /leads through a symlink to a path that is not under an allowed folder/ } });
    t.notMatch(file.text, outside, 'the file does not name the target');
    t.notMatch(lines.join('\n'), outside, 'nor do the logs');
    const events = await f.call('GET', '/events?limit=100');
    t.equal(events.status, 200);
    t.notMatch(events.text, outside, 'nor does the event log');
  });

  t.test('other schemes', async (t) => {
    await expectIngestFailure(t, fetchSourceUri('ftp://example.com/a.txt', opts), 'unsupported_content', /ftp/);
    await expectIngestFailure(t, fetchSourceUri('data:text/plain,hi', opts), 'unsupported_content');
  });
});

t.test('http', async (t) => {
  const hits: string[] = [];
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    hits.push(req.url ?? '');
    switch (req.url) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('hello world');
        return;
      case '/no-type':
        res.end('untyped');
        return;
      case '/missing':
        res.writeHead(404);
        res.end('nope');
        return;
      case '/redirect':
        res.writeHead(302, { location: '/hop' });
        res.end();
        return;
      case '/hop':
        res.writeHead(301, { location: `http://127.0.0.1:${port()}/ok` });
        res.end();
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      case '/to-file':
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
        return;
      case '/big-declared':
        res.writeHead(200, { 'content-length': '1000' });
        res.end(Buffer.alloc(1000));
        return;
      case '/big-streamed': {
        // No content-length: the limit has to be enforced while reading.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let sent = 0;
        const timer = setInterval(() => {
          if (res.destroyed || sent > 100_000) {
            clearInterval(timer);
            res.end();
            return;
          }
          res.write(Buffer.alloc(100));
          sent += 100;
        }, 1);
        return;
      }
      case '/hang':
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = () => (server.address() as AddressInfo).port;
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const base = `http://127.0.0.1:${port()}`;
  const allowed: FetchOptions = { allowPrivate: true, fileRoots: [], maxBytes: 500, timeoutMs: 2000 };
  const guarded: FetchOptions = { ...allowed, allowPrivate: false };

  t.test('private addresses are refused by default', async (t) => {
    hits.length = 0;
    await expectIngestFailure(t, fetchSourceUri(`${base}/ok`, guarded), 'fetch_failed', /127\.0\.0\.1 is private.*--allow-private-sources/);
    await expectIngestFailure(t, fetchSourceUri(`http://[::1]:${port()}/ok`, guarded), 'fetch_failed', /::1 is private/);
    // A hostname is not an IP literal, so this refusal can only come from the connect-time lookup.
    await expectIngestFailure(t, fetchSourceUri(`http://localhost:${port()}/ok`, guarded), 'fetch_failed', /localhost: address .* is private.*--allow-private-sources/);
    t.same(hits, [], 'no request reached the server');
  });

  t.test('allowed with allowPrivate', async (t) => {
    const fetched = await fetchSourceUri(`${base}/ok`, allowed);
    t.equal(fetched.bytes.toString(), 'hello world');
    t.equal(fetched.contentType, 'text/plain');

    const untyped = await fetchSourceUri(`${base}/no-type`, allowed);
    t.equal(untyped.bytes.toString(), 'untyped');
    t.equal(untyped.contentType, undefined);

    // Listening on "localhost" binds whichever address it resolves to first; the client tries them all.
    const named = http.createServer((_req, res) => res.end('by name'));
    await new Promise<void>((resolve) => named.listen(0, 'localhost', resolve));
    t.teardown(() => named.close());
    const viaName = await fetchSourceUri(`http://localhost:${(named.address() as AddressInfo).port}/`, allowed);
    t.equal(viaName.bytes.toString(), 'by name', 'a hostname goes through the lookup when private sources are allowed');
  });

  t.test('HTTP errors', async (t) => {
    await expectIngestFailure(t, fetchSourceUri(`${base}/missing`, allowed), 'fetch_failed', new RegExp(`^HTTP 404 from 127\\.0\\.0\\.1:${port()}$`));
  });

  t.test('redirects', async (t) => {
    hits.length = 0;
    const fetched = await fetchSourceUri(`${base}/redirect`, allowed);
    t.equal(fetched.bytes.toString(), 'hello world');
    t.same(hits, ['/redirect', '/hop', '/ok']);

    hits.length = 0;
    await expectIngestFailure(t, fetchSourceUri(`${base}/loop`, allowed), 'fetch_failed', /Too many redirects \(more than 5\)/);
    t.equal(hits.length, 6, 'the original request and 5 redirects');

    hits.length = 0;
    await expectIngestFailure(t, fetchSourceUri(`${base}/loop`, { ...allowed, maxRedirects: 0 }), 'fetch_failed', /more than 0/);
    t.equal(hits.length, 1);

    await expectIngestFailure(t, fetchSourceUri(`${base}/to-file`, allowed), 'fetch_failed', /only http and https/);
  });

  t.test('size limit', async (t) => {
    await expectIngestFailure(t, fetchSourceUri(`${base}/big-declared`, allowed), 'too_large');
    await expectIngestFailure(t, fetchSourceUri(`${base}/big-streamed`, allowed), 'too_large');
    const fits = await fetchSourceUri(`${base}/big-declared`, { ...allowed, maxBytes: 1000 });
    t.equal(fits.bytes.length, 1000);
  });

  t.test('timeout', async (t) => {
    // The host never answers: the failure naming the 150 ms limit is the fetch giving up at it.
    await expectIngestFailure(t, fetchSourceUri(`${base}/hang`, { ...allowed, timeoutMs: 150 }), 'fetch_failed', /timed out after 150 ms/);
  });

  t.test('connection refused', async (t) => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expectIngestFailure(t, fetchSourceUri(`http://127.0.0.1:${closedPort}/`, allowed), 'fetch_failed', /ECONNREFUSED/);
  });
});

t.test('a source host that never answers holds up no other file, and stops being waited on once its job is canceled', async (t) => {
  // Found by a bad-input attack: URI sources were fetched in line with the indexing, each waiting
  // out its 60 s limit, so three silent hosts kept every namespace's files pending for 3 minutes,
  // and canceling the job or deleting the file did not end the wait.
  const open = new Set<import('node:net').Socket>();
  let closed = 0;
  const silent = http.createServer(() => undefined);
  silent.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      closed++;
    });
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of open) socket.destroy();
    silent.close();
  });
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const f = await startFixture({ allowPrivateSources: true });
  t.teardown(() => f.close());
  const hung = (await seedCollection(f, 'slow', 'hung')).base;
  const jobs: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await f.call('POST', `${hung}/files`, { path: `/hang${i}.html`, source: { type: 'uri', uri: `${url}/hang?i=${i}` } });
    t.equal(r.status, 202);
    jobs.push(r.body.job.id);
    files.push(r.body.file.id);
  }
  const other = (await seedCollection(f, 'slow', 'other')).base;
  await f.call('POST', `${other}/files`, { path: '/victim.txt', source: { type: 'inline', text: 'an inline file beside the silent hosts' } });
  await f.waitForIdle('slow', 'other');
  // The hosts never answer, so a fetch ends only by its 60 s limit, a cancel or a delete: none has yet.
  t.equal(closed, 0, 'the inline file is ready while every silent fetch is still open');
  t.equal((await f.call('POST', `${other}:search`, { query: 'inline', mode: 'keyword' })).status, 200, 'and searchable');
  await waitFor('three open fetches', () => open.size >= 3);
  t.equal(open.size, 3, 'the three sources are being fetched at once');

  // Canceling one job and deleting another file end their fetches; the third keeps waiting.
  t.equal((await f.call('POST', `/jobs/${jobs[0]}:cancel`)).status, 200);
  t.equal((await f.call('DELETE', `${hung}/files/${files[1]}`)).status, 202);
  await waitFor('two closed fetches', () => closed >= 2);
  t.equal(closed, 2, 'two connections closed: the canceled job and the deleted file');
  t.equal(open.size, 1, 'the third source is still fetched');
});

t.test('sources waiting on silent hosts stay queued, fill a bounded share of the fetches, and end with their collection', async (t) => {
  // Found by a review of the first fetch lane: it claimed every queued source at once (all
  // `running`, so a worker death was counted against each), one namespace could take every fetch
  // slot, and deleting a collection left its fetches open.
  const open = new Set<import('node:net').Socket>();
  const silent = http.createServer(() => undefined);
  silent.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const answering = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('a page from a host that answers');
  });
  await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of open) socket.destroy();
    silent.close();
    answering.close();
  });
  const f = await startFixture({ allowPrivateSources: true });
  t.teardown(() => f.close());
  const hung = (await seedCollection(f, 'tenant-a', 'hung')).base;
  const jobs: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await f.call('POST', `${hung}/files`, { path: `/h${i}.txt`, source: { type: 'uri', uri: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/h${i}` } });
    jobs.push(r.body.job.id);
  }
  const fine = (await seedCollection(f, 'tenant-b', 'fine')).base;
  await f.call('POST', `${fine}/files`, { path: '/page.txt', source: { type: 'uri', uri: `http://127.0.0.1:${(answering.address() as AddressInfo).port}/page` } });
  await f.waitForIdle('tenant-b', 'fine');
  // The silent hosts hold their fetches until their 60 s limit: some still open below means tenant-b did not wait for them.
  t.equal((await f.call('POST', `${fine}:search`, { query: 'answers', mode: 'keyword' })).body.results[0]?.path, '/page.txt');
  t.ok(open.size > 0 && open.size <= FETCH_AHEAD_PER_NAMESPACE, `one namespace holds at most ${FETCH_AHEAD_PER_NAMESPACE} fetches (${open.size})`);
  const statuses = await Promise.all(jobs.map(async (id) => (await f.call('GET', `/jobs/${id}`)).body.status as string));
  t.same([...new Set(statuses)], ['queued'], 'the waiting jobs stay queued, not running');
  t.equal((await f.call('DELETE', '/namespaces/tenant-a/collections/hung')).status, 202);
  await waitFor('every fetch closed', () => open.size === 0);
  t.equal(open.size, 0, "deleting the collection ends its sources' fetches");
});
