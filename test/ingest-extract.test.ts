import t from 'tap';
import { extractTextDocument } from '../src/domain/ingest/extract.js';
import { MAX_JSON_LEAVES } from '../src/domain/ingest/formats/json.js';
import { type ExtractedDocument, IngestFailure, type IngestFailureCode } from '../src/domain/ingest/types.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

interface BlockView {
  type: string;
  text: string;
  level?: number;
  jsonPath?: string;
}

function extract(source: string | Buffer, contentType: string): ExtractedDocument {
  return extractTextDocument(typeof source === 'string' ? Buffer.from(source) : source, contentType);
}

/** Blocks with their text, after checking every span is non-empty, trimmed and in order. */
function blockViews(t: TestContext, doc: ExtractedDocument): BlockView[] {
  let previousEnd = 0;
  return doc.blocks.map((block) => {
    const text = doc.text.slice(block.charStart, block.charEnd);
    t.ok(block.charStart >= previousEnd && block.charEnd > block.charStart, `span of ${JSON.stringify(text)} is ordered and non-empty`);
    t.equal(text.trimEnd(), text, 'block ends at non-space');
    previousEnd = block.charEnd;
    const view: BlockView = { type: block.type, text };
    if (block.level !== undefined) view.level = block.level;
    if (block.jsonPath !== undefined) view.jsonPath = block.jsonPath;
    return view;
  });
}

function expectFailure(t: TestContext, fn: () => unknown, code: IngestFailureCode, message?: RegExp): void {
  try {
    fn();
  } catch (error) {
    t.ok(error instanceof IngestFailure, 'throws an IngestFailure');
    if (!(error instanceof IngestFailure)) return;
    t.equal(error.code, code, `code is ${code}`);
    if (message !== undefined) t.match(error.message, message);
    return;
  }
  t.fail(`expected IngestFailure(${code})`);
}

t.test('plain text: paragraphs split on blank lines, spans into the original text', (t) => {
  const source = '\ufeffFirst paragraph\r\ncontinues here.  \r\n \t \r\n\r\n  Second one.\n\n\nThird\n';
  const doc = extract(source, 'text/plain; charset=utf-8');
  t.equal(doc.text, 'First paragraph\ncontinues here.  \n \t \n\n  Second one.\n\n\nThird\n', 'BOM dropped, CRLF normalised');
  t.same(blockViews(t, doc), [
    { type: 'paragraph', text: 'First paragraph\ncontinues here.' },
    { type: 'paragraph', text: 'Second one.' },
    { type: 'paragraph', text: 'Third' },
  ]);
  t.end();
});

t.test('other text/* types are read as plain text', (t) => {
  // Source code has its own extractor (src/domain/ingest/formats/code.ts); a shell script does not.
  const doc = extract('echo start\n    run\n\n# comment', 'text/x-shellscript');
  t.same(blockViews(t, doc), [
    { type: 'paragraph', text: 'echo start\n    run' },
    { type: 'paragraph', text: '# comment' },
  ]);
  t.end();
});

t.test('empty and whitespace-only text give an empty document', (t) => {
  t.same(extract('', 'text/plain').blocks, []);
  t.same(extract(' \n\n\t\n', 'text/markdown'), { text: '', blocks: [] });
  t.end();
});

t.test('UTF-16 text with a byte order mark is decoded', (t) => {
  const doc = extract(Buffer.from('\ufeffBonjour à tous', 'utf16le'), 'text/plain');
  t.equal(doc.text, 'Bonjour à tous');
  t.end();
});

t.test('legacy 8-bit text is read as Windows-1252', (t) => {
  const windows1252 = Buffer.concat([Buffer.from('Le caf\xe9 est tr\xe8s bon, m\xeame en \xe9t\xe9. ', 'latin1'), Buffer.from([0x93, 0x4f, 0x4b, 0x94])]);
  t.equal(extract(windows1252, 'text/plain').text, 'Le café est très bon, même en été. “OK”');
  t.end();
});

t.test('UTF-8 with a few damaged bytes keeps its valid characters', (t) => {
  const damaged = Buffer.concat([Buffer.from('Grüße aus Köln, schöne Straße. '), Buffer.from([0xff]), Buffer.from(' Tschüß')]);
  t.equal(extract(damaged, 'text/plain').text, 'Grüße aus Köln, schöne Straße. \ufffd Tschüß');
  t.end();
});

t.test('markdown: headings, paragraphs, lists and fenced code', (t) => {
  const source = [
    '# Guide',
    '',
    'Read the [manual](https://example.com/manual "Manual") first.',
    'It is short.',
    '',
    '## Install ##',
    '',
    '- one',
    '- two',
    '  continued',
    '',
    '```sh',
    'npm install trove',
    '',
    '  # not a heading',
    '```',
    '',
    'Usage',
    '-----',
    '',
    'Run it.',
    '',
    '***',
    '',
    '###### Deep heading',
    '#hashtag is not a heading',
    '',
    '~~~',
    'unclosed fence runs to the end',
  ].join('\n');
  const doc = extract(source, 'text/markdown');
  t.same(blockViews(t, doc), [
    { type: 'heading', level: 1, text: 'Guide' },
    { type: 'paragraph', text: 'Read the manual first.\nIt is short.' },
    { type: 'heading', level: 2, text: 'Install' },
    { type: 'paragraph', text: '- one\n- two\n  continued' },
    { type: 'code', text: 'npm install trove\n\n  # not a heading' },
    { type: 'heading', level: 2, text: 'Usage' },
    { type: 'paragraph', text: 'Run it.' },
    { type: 'heading', level: 6, text: 'Deep heading' },
    { type: 'paragraph', text: '#hashtag is not a heading' },
    { type: 'code', text: 'unclosed fence runs to the end' },
  ]);
  t.notMatch(doc.text, /^#+ /m, 'heading marks are dropped from the text');
  t.notMatch(doc.text, /```|https:/, 'fences and link targets are dropped from the text');
  t.end();
});

t.test('markdown: front matter is kept as a paragraph, not read as a heading', (t) => {
  const doc = extract('---\ntitle: Notes\ntags: [a, b]\n---\n\n# Notes\n\nBody.\n', 'text/markdown');
  t.same(blockViews(t, doc), [
    { type: 'paragraph', text: 'title: Notes\ntags: [a, b]' },
    { type: 'heading', level: 1, text: 'Notes' },
    { type: 'paragraph', text: 'Body.' },
  ]);
  t.end();
});

t.test('markdown: a heading interrupts a paragraph and a list is not a setext heading', (t) => {
  const doc = extract('intro line\n## Section\n- item\n---\nafter', 'text/markdown');
  t.same(blockViews(t, doc), [
    { type: 'paragraph', text: 'intro line' },
    { type: 'heading', level: 2, text: 'Section' },
    { type: 'paragraph', text: '- item' },
    { type: 'paragraph', text: 'after' },
  ]);
  t.end();
});

t.test('html: readable text, headings, entities and whitespace', (t) => {
  const html = `<!doctype html>
<html><head><title>Ignored &amp; title</title><style>p { color: red }</style><script>var x = "<p>no</p>";</script></head>
<body>
  <nav><a href="/">Home</a> <a href="/about">About</a></nav>
  <h1>Main   title</h1>
  <p>Fish &amp; chips,
     served <b>hot</b>&nbsp;and <i>fresh</i>.</p>
  <noscript>Enable JavaScript</noscript>
  <template><p>template text</p></template>
  <svg><title>icon</title><text>svg text</text></svg>
  <h2>Menu</h2>
  <ul><li>Cod</li><li>Haddock <em>(seasonal)</em></li></ul>
  <blockquote>Best in town.<br>— A critic</blockquote>
  <table><tr><td>Price</td><td>&pound;9</td></tr></table>
  <div>Loose <span>div</span> text</div>
  <pre>line 1
    indented line 2</pre>
  <aside>Related links</aside>
  <footer>© 2024</footer>
</body></html>`;
  const doc = extract(html, 'text/html; charset=utf-8');
  t.same(blockViews(t, doc), [
    { type: 'heading', level: 1, text: 'Main title' },
    { type: 'paragraph', text: 'Fish & chips, served hot and fresh.' },
    { type: 'heading', level: 2, text: 'Menu' },
    { type: 'paragraph', text: 'Cod' },
    { type: 'paragraph', text: 'Haddock (seasonal)' },
    { type: 'paragraph', text: 'Best in town.\n— A critic' },
    { type: 'paragraph', text: 'Price' },
    { type: 'paragraph', text: '£9' },
    { type: 'paragraph', text: 'Loose div text' },
    { type: 'paragraph', text: 'line 1\n    indented line 2' },
  ]);
  for (const hidden of ['color: red', 'var x', 'Home', 'Enable JavaScript', 'template text', 'svg text', 'icon', 'Related', '2024', 'Ignored']) {
    t.notOk(doc.text.includes(hidden), `skips ${hidden}`);
  }
  t.end();
});

t.test('html: the title becomes the first heading when there is no h1', (t) => {
  const doc = extract('<html><head><title> Paper  title </title></head><body><h2>Abstract</h2><p>We study things.</p></body></html>', 'text/html');
  t.same(blockViews(t, doc), [
    { type: 'heading', level: 1, text: 'Paper title' },
    { type: 'heading', level: 2, text: 'Abstract' },
    { type: 'paragraph', text: 'We study things.' },
  ]);
  t.end();
});

t.test('html: a page whose only text is in site chrome keeps that text', (t) => {
  const doc = extract('<body><nav>Only navigation here</nav></body>', 'text/html');
  t.same(blockViews(t, doc), [{ type: 'paragraph', text: 'Only navigation here' }]);
  t.end();
});

t.test('json: one block per non-empty leaf with its path', (t) => {
  const source = JSON.stringify({
    title: 'Trove',
    'a key': { nested: [1, 'two', null, '', true] },
    items: [{ name: 'first' }, { name: 'second', 'x-y': 2.5 }],
    empty: {},
    $id: 'x',
    "it's \\ \"q\"\t": 'odd',
  });
  const doc = extract(source, 'application/json');
  // JSONPath (RFC 9535): dot shorthand for identifier keys, else a single-quoted name with the
  // escapes of its normalized paths.
  t.same(blockViews(t, doc), [
    { type: 'json', text: 'title: Trove', jsonPath: '$.title' },
    { type: 'json', text: 'nested: 1', jsonPath: "$['a key'].nested[0]" },
    { type: 'json', text: 'nested: two', jsonPath: "$['a key'].nested[1]" },
    { type: 'json', text: 'nested: true', jsonPath: "$['a key'].nested[4]" },
    { type: 'json', text: 'name: first', jsonPath: '$.items[0].name' },
    { type: 'json', text: 'name: second', jsonPath: '$.items[1].name' },
    { type: 'json', text: 'x-y: 2.5', jsonPath: "$.items[1]['x-y']" },
    { type: 'json', text: '$id: x', jsonPath: "$['$id']" },
    { type: 'json', text: 'it\'s \\ "q"\t: odd', jsonPath: "$['it\\'s \\\\ \"q\"\\t']" },
  ]);
  t.same(doc.text.split('\n').length, doc.blocks.length, 'one line per leaf');
  t.end();
});

t.test('json: a scalar document and an array of scalars', (t) => {
  t.same(blockViews(t, extract('"just a string"', 'application/json')), [{ type: 'json', text: 'just a string', jsonPath: '$' }]);
  t.same(blockViews(t, extract('[1, "a b"]', 'application/json')), [
    { type: 'json', text: '1', jsonPath: '$[0]' },
    { type: 'json', text: 'a b', jsonPath: '$[1]' },
  ]);
  t.same(extract('null', 'application/json'), { text: '', blocks: [] });
  t.end();
});

t.test('json: deep nesting does not overflow the stack', (t) => {
  const depth = 50_000;
  const doc = extract('['.repeat(depth) + '"deep"' + ']'.repeat(depth), 'application/json');
  t.equal(doc.blocks.length, 1);
  t.equal(doc.blocks[0]?.jsonPath, '$' + '[0]'.repeat(depth));
  t.end();
});

t.test('json: extraction stops at the leaf cap', (t) => {
  const values = Array.from({ length: MAX_JSON_LEAVES + 500 }, (_, i) => i);
  const doc = extract(JSON.stringify({ values }), 'application/json');
  t.equal(doc.blocks.length, MAX_JSON_LEAVES);
  t.equal(doc.blocks.at(-1)?.jsonPath, `$.values[${MAX_JSON_LEAVES - 1}]`);
  t.end();
});

t.test('ndjson: each record is an element of the document', (t) => {
  const source = '{"id": 1, "title": "one"}\n\n{"id": 2, "tags": ["a", "b"]}\n"bare"\n';
  for (const contentType of ['application/x-ndjson', 'application/jsonl']) {
    const doc = extract(source, contentType);
    t.same(blockViews(t, doc), [
      { type: 'json', text: 'id: 1', jsonPath: '$[0].id' },
      { type: 'json', text: 'title: one', jsonPath: '$[0].title' },
      { type: 'json', text: 'id: 2', jsonPath: '$[1].id' },
      { type: 'json', text: 'tags: a', jsonPath: '$[1].tags[0]' },
      { type: 'json', text: 'tags: b', jsonPath: '$[1].tags[1]' },
      { type: 'json', text: 'bare', jsonPath: '$[2]' },
    ]);
  }
  t.end();
});

t.test('csv: the header names the fields of each row', (t) => {
  const source = '\ufeffname,city,notes\r\nAda,"London, UK","said ""hi"""\r\nBob,Paris\r\n,,\r\nCy,Rome,x,extra\r\n';
  const doc = extract(source, 'text/csv');
  t.same(blockViews(t, doc), [
    { type: 'row', text: 'name: Ada; city: London, UK; notes: said "hi"' },
    { type: 'row', text: 'name: Bob; city: Paris' },
    { type: 'row', text: 'name: Cy; city: Rome; notes: x; column 4: extra' },
  ]);
  t.end();
});

t.test('csv: semicolon and tab separated files', (t) => {
  t.same(blockViews(t, extract('a;b\n1,5;2\n', 'text/csv')), [{ type: 'row', text: 'a: 1,5; b: 2' }]);
  t.same(blockViews(t, extract('a\tb\nx y\tz\n', 'text/csv')), [{ type: 'row', text: 'a: x y; b: z' }]);
  t.same(blockViews(t, extract('only header\n', 'text/csv')), []);
  t.end();
});

t.test('corrupt input fails with extraction_failed', (t) => {
  expectFailure(t, () => extract('{"a": 1,', 'application/json'), 'extraction_failed', /invalid JSON/);
  expectFailure(t, () => extract('', 'application/json'), 'extraction_failed', /invalid JSON/);
  expectFailure(t, () => extract('{"a":1}\n{"b":\n', 'application/x-ndjson'), 'extraction_failed', /line 2/);
  expectFailure(t, () => extract('a,b\n"unterminated,2\n3,4\n', 'text/csv'), 'extraction_failed', /invalid CSV/);
  const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 151 + 7) % 256));
  for (const contentType of ['text/plain', 'text/markdown', 'text/html', 'application/json', 'application/x-ndjson', 'text/csv']) {
    expectFailure(t, () => extract(garbage, contentType), 'extraction_failed');
  }
  const invalidUtf8 = Buffer.from(Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? 0x41 : 0xc3 + (i % 3))));
  expectFailure(t, () => extract(invalidUtf8, 'text/plain'), 'extraction_failed', /not valid UTF-8/);
  const highBytes = Buffer.from(Array.from({ length: 400 }, (_, i) => 0xa0 + (i % 96)));
  expectFailure(t, () => extract(highBytes, 'text/markdown'), 'extraction_failed', /not valid UTF-8/);
  expectFailure(t, () => extract(Buffer.from('text\0with NUL'), 'text/plain'), 'extraction_failed', /NUL/);
  t.end();
});

t.test('types it cannot read fail with unsupported_content', (t) => {
  for (const contentType of ['application/pdf', 'image/png', 'application/octet-stream', 'application/gzip', '']) {
    expectFailure(t, () => extract('hello', contentType), 'unsupported_content', /cannot extract/);
  }
  t.end();
});
