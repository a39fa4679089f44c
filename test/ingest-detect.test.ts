import t from 'tap';
import { oneEntryZip } from './helpers/zip.js';
import { detectContentType, isSupportedContentType, normalizeContentType } from '../src/domain/ingest/detect.js';
import { SUPPORTED_CONTENT_TYPES } from '../src/domain/ingest/formats/registry.js';

const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
  0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
]);
const PDF = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n', 'latin1');


t.test('the declared type wins, normalised', async (t) => {
  const text = Buffer.from('# Title\n\nBody');
  t.same(await detectContentType({ bytes: text, declared: 'Text/Markdown; charset=UTF-8', path: 'notes.txt' }), {
    contentType: 'text/markdown',
  });
  t.same(await detectContentType({ bytes: text, declared: 'text/x-markdown', path: 'x' }), { contentType: 'text/markdown' });
  t.same(await detectContentType({ bytes: Buffer.from('{}\n'), declared: 'application/jsonl', path: 'x' }), {
    contentType: 'application/x-ndjson',
  });
  // A declared binary format is believed only when the bytes carry its signature (see below).
  t.equal((await detectContentType({ bytes: text, declared: 'application/pdf', path: 'a.md' })).contentType, 'text/markdown');
  t.same(await detectContentType({ bytes: Buffer.from('a,b\n1,2'), declared: 'text/csv', path: 'data.txt' }), {
    contentType: 'text/csv',
  });
});

t.test('markdown labelled text/plain is recognised by its extension', async (t) => {
  const result = await detectContentType({ bytes: Buffer.from('# Hi'), declared: 'text/plain', path: 'docs/README.md' });
  t.same(result, { contentType: 'text/markdown' });
});

t.test('a textual declared type contradicted by binary magic numbers', async (t) => {
  for (const [bytes, declared, expected] of [
    [PDF, 'text/plain', 'application/pdf'],
    [PNG, 'text/html; charset=utf-8', 'image/png'],
    [oneEntryZip(), 'application/json', 'application/zip'],
    [Buffer.from('%PDF-1.4\n1 0 obj\nendobj\n'), 'text/markdown', 'application/pdf'],
  ] as const) {
    const result = await detectContentType({ bytes, declared, path: 'upload.txt' });
    t.equal(result.contentType, expected, `${declared} → ${expected}`);
    t.match(result.note, /contradicted/, 'says the declared type was contradicted');
    t.match(result.note, declared.split(';')[0] ?? '', 'names the declared type');
  }
});

t.test('magic numbers come before the extension', async (t) => {
  t.same(await detectContentType({ bytes: PNG, path: 'picture.txt' }), { contentType: 'image/png' });
  t.same(await detectContentType({ bytes: PDF, declared: undefined, path: 'paper.md' }), { contentType: 'application/pdf' });
});

t.test('signatures that plain text can start with are not taken for binary formats', async (t) => {
  t.same(await detectContentType({ bytes: Buffer.from('BMW sells cars.'), path: 'cars' }), { contentType: 'text/plain' });
  t.same(await detectContentType({ bytes: Buffer.from('MZ is a prefix'), declared: 'text/plain', path: 'x' }), {
    contentType: 'text/plain',
  });
  t.same(await detectContentType({ bytes: Buffer.from('ID3 tags explained'), path: 'id3.md' }), { contentType: 'text/markdown' });
});

t.test('the extension decides when nothing else does', async (t) => {
  const cases: [string, string][] = [
    ['a.txt', 'text/plain'],
    ['a.md', 'text/markdown'],
    ['a.MARKDOWN', 'text/markdown'],
    ['a.html', 'text/html'],
    ['a.htm', 'text/html'],
    ['a.json', 'application/json'],
    ['a.ndjson', 'application/x-ndjson'],
    ['a.jsonl', 'application/x-ndjson'],
    ['a.csv', 'text/csv'],
    ['src/main.py', 'text/x-python'],
    ['src/index.ts', 'text/x-typescript'],
    ['lib/app.js', 'text/javascript'],
    ['cmd/main.go', 'text/x-go'],
    ['C:\\work\\notes.md', 'text/markdown'],
    ['https://example.com/data.csv?download=1.txt#top', 'text/csv'],
  ];
  for (const [path, expected] of cases) {
    t.same(await detectContentType({ bytes: Buffer.from('hello'), path }), { contentType: expected }, path);
  }
});

t.test('an uninformative declared type falls through to sniffing', async (t) => {
  t.same(await detectContentType({ bytes: Buffer.from('a,b'), declared: 'application/octet-stream', path: 'x.csv' }), {
    contentType: 'text/csv',
  });
  t.same(await detectContentType({ bytes: PNG, declared: 'application/octet-stream', path: 'x' }), { contentType: 'image/png' });
});

t.test('unknown files: UTF-8 text is text/plain, anything else is octet-stream', async (t) => {
  t.same(await detectContentType({ bytes: Buffer.from('Grüße, 世界 😀\nline two'), path: 'LICENSE' }), {
    contentType: 'text/plain',
  });
  t.same(await detectContentType({ bytes: Buffer.alloc(0), path: 'empty' }), { contentType: 'text/plain' });
  t.same(await detectContentType({ bytes: Buffer.from('text with a \0 NUL'), path: 'blob' }), {
    contentType: 'application/octet-stream',
  });
  t.same(await detectContentType({ bytes: Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xff, 0xfe, 0x41]), path: 'blob.bin' }), {
    contentType: 'application/octet-stream',
  });
  t.same(await detectContentType({ bytes: Buffer.from('\ufeffhi', 'utf16le'), path: 'windows-notes' }), {
    contentType: 'text/plain',
  });
});

t.test('a multi-byte character cut by the sniff window does not make text look binary', async (t) => {
  const bytes = Buffer.from('a' + 'é'.repeat(40_000));
  t.same(await detectContentType({ bytes, path: 'long' }), { contentType: 'text/plain' });
});

t.test('supported content types', async (t) => {
  t.same([...SUPPORTED_CONTENT_TYPES].sort(), [
    'application/json',
    'application/pdf',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/x-ndjson',
    'application/x-subrip',
    'application/xml',
    'image/jpeg',
    'image/png',
    'image/svg+xml',
    'image/tiff',
    'image/webp',
    'text/csv',
    'text/html',
    'text/javascript',
    'text/markdown',
    'text/plain',
    'text/vtt',
    'text/x-c',
    'text/x-c++',
    'text/x-csharp',
    'text/x-go',
    'text/x-java',
    'text/x-kotlin',
    'text/x-php',
    'text/x-python',
    'text/x-ruby',
    'text/x-rust',
    'text/x-scala',
    'text/x-swift',
    'text/x-typescript',
  ]);
  for (const supported of ['text/plain', 'text/markdown', 'text/html', 'application/json', 'application/x-ndjson', 'text/csv', 'application/pdf', 'image/png', 'image/jpg', 'text/srt']) {
    t.ok(isSupportedContentType(supported), supported);
  }
  for (const plainText of ['text/x-python', 'text/javascript', 'text/xml', 'application/xml', 'image/svg+xml', 'TEXT/PLAIN; charset=latin1']) {
    t.ok(isSupportedContentType(plainText), `${plainText} is read as plain text`);
  }
  for (const unsupported of ['image/gif', 'application/msword', 'application/zip', 'application/octet-stream', 'application/gzip', '']) {
    t.notOk(isSupportedContentType(unsupported), `${unsupported || '(empty)'} is not supported`);
  }
  t.equal(normalizeContentType(' Application/JSON ; charset=utf-8'), 'application/json');
});

t.test('a declared binary format the bytes contradict follows the bytes, with a note', async (t) => {
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  const asPdf = await detectContentType({ bytes: png, declared: 'application/pdf', path: '/x.pdf' });
  t.equal(asPdf.contentType, 'image/png');
  t.match(asPdf.note, /declared content type application\/pdf is contradicted/);
  const text = await detectContentType({ bytes: Buffer.from('# Title\n\nplain words'), declared: 'application/pdf', path: '/notes.md' });
  t.same(text.contentType, 'text/markdown');
  t.match(text.note, /which are text; read as text\/markdown/);
  t.same(await detectContentType({ bytes: png, declared: 'image/png', path: '/x.png' }), { contentType: 'image/png' }, 'an honest declaration has no note');
});
