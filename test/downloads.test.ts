// Signed downloads (GET {content.url}, decisions.md §2) must not run in a browser on the daemon's
// origin: nosniff on every response, and active types (HTML, SVG, XML, JavaScript, anything not known
// to be passive) as attachments with a sandboxing CSP; passive types inline (src/http/downloads.ts).
import t from 'tap';
import { attachmentDisposition, downloadHeaders, isPassiveType } from '../src/http/downloads.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

t.test('which types are shown inline', async (t) => {
  const active = [
    'text/html',
    'Text/HTML; charset=utf-8',
    ' TEXT/HTML ',
    'application/xhtml+xml',
    'image/svg+xml',
    'text/xml',
    'application/xml',
    'application/rss+xml',
    'text/xsl',
    'text/javascript',
    'application/javascript',
    'application/ecmascript',
    'text/ecmascript',
    'application/octet-stream',
    'application/x-unknown',
    'text/x-python',
    'multipart/x-mixed-replace',
    '',
  ];
  for (const type of active) {
    t.equal(isPassiveType(type), false, `${JSON.stringify(type)} is not passive`);
    t.match(downloadHeaders(type, '/a/b.bin'), { 'content-disposition': /^attachment; /, 'content-security-policy': /sandbox/ }, `${JSON.stringify(type)} is an attachment`);
  }
  for (const type of ['text/plain', 'Text/Plain; charset=utf-8', 'text/markdown', 'text/csv', 'application/json', 'application/pdf', 'image/png', 'image/jpeg', 'image/webp']) {
    t.equal(isPassiveType(type), true, `${type} is passive`);
    t.same(downloadHeaders(type, '/a/b'), {}, `${type} is inline`);
  }
});

t.test('attachment file names (RFC 6266 / RFC 5987)', async (t) => {
  t.equal(attachmentDisposition('/site/x.html'), `attachment; filename="x.html"; filename*=UTF-8''x.html`);
  t.equal(attachmentDisposition('/reports/Über "q1" (draft)*.svg'), `attachment; filename="_ber _q1_ (draft)*.svg"; filename*=UTF-8''%C3%9Cber%20%22q1%22%20%28draft%29%2A.svg`);
  t.equal(attachmentDisposition('/a\\b\r\n.html'), `attachment; filename="a_b__.html"; filename*=UTF-8''a%5Cb%0D%0A.html`, 'no quote escape, no line break in the header');
  t.equal(attachmentDisposition('/'), `attachment; filename="download"; filename*=UTF-8''download`);
});

async function download(f: Fixture, base: string, id: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const content = await f.call('GET', `${base}/files/${id}/content`);
  if (content.status !== 200) throw new Error(`content: ${content.status} ${content.text}`);
  return f.raw('GET', new URL(content.body.url).pathname, null, { authorization: undefined });
}

async function upload(f: Fixture, base: string, path: string, contentType: string, bytes: string): Promise<string> {
  const added = await f.call('POST', `${base}/files`, { path, source: { type: 'upload', content_type: contentType, bytes: Buffer.byteLength(bytes) } });
  if (added.status !== 202) throw new Error(`add ${path}: ${added.status} ${added.text}`);
  const put = await f.raw('PUT', new URL(added.body.upload.url).pathname, bytes, { authorization: undefined });
  if (put.status !== 200) throw new Error(`upload ${path}: ${put.status} ${put.text}`);
  return added.body.file.id as string;
}

t.test('end to end: GET {content.url}', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'dl', 'docs');
  const script = '<script>fetch("/keys").then(r => r.text()).then(alert)</script>';

  const html = await addInline(f, base, '/site/x.html', `<html><body>${script}</body></html>`, 'text/html');
  const got = await download(f, base, html.body.file.id);
  t.equal(got.status, 200);
  t.equal(got.headers['x-content-type-options'], 'nosniff');
  t.equal(got.headers['content-disposition'], `attachment; filename="x.html"; filename*=UTF-8''x.html`, 'inline HTML is an attachment');
  t.match(got.headers['content-security-policy'], /default-src 'none'.*sandbox/);

  const odd = await download(f, base, await upload(f, base, '/site/odd.html', 'Text/HTML; charset=utf-8', script));
  t.match(odd.headers, { 'x-content-type-options': 'nosniff', 'content-disposition': /^attachment; filename="odd.html"/ }, 'a type with parameters and odd casing is still an attachment');

  const svg = await download(f, base, await upload(f, base, '/img/logo.svg', 'image/svg+xml', `<svg xmlns="http://www.w3.org/2000/svg">${script}</svg>`));
  t.match(svg.headers, { 'x-content-type-options': 'nosniff', 'content-disposition': /^attachment; filename="logo.svg"/ }, 'an uploaded SVG is an attachment');

  const plain = await addInline(f, base, '/notes/a.txt', 'Just text.', 'text/plain');
  const text = await download(f, base, plain.body.file.id);
  t.equal(text.text, 'Just text.');
  t.equal(text.headers['x-content-type-options'], 'nosniff');
  t.equal(text.headers['content-disposition'], undefined, 'text/plain is shown inline');
  t.equal(text.headers['content-security-policy'], undefined);

  // nosniff is on every response, JSON and errors included.
  t.equal((await f.call('GET', `${base}/files`)).headers['x-content-type-options'], 'nosniff');
  t.equal((await f.raw('GET', '/downloads/nope', null, { authorization: undefined })).headers['x-content-type-options'], 'nosniff', 'on an error too');
});
