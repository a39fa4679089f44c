import t from 'tap';
import fc from 'fast-check';
import { chunkDocument, commonJsonPath } from '../src/domain/ingest/chunk.js';
import { extractTextDocument } from '../src/domain/ingest/extract.js';
import type { ChunkOptions, ExtractedDocument, Passage } from '../src/domain/ingest/types.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const DEFAULTS: ChunkOptions = { chunkTokens: 400, chunkOverlap: 40 };
const VOCABULARY = ['retrieval', 'index', 'passage', 'query', 'ranking', 'token', 'section', 'evidence', 'sqlite', 'corpus'];

function extract(source: string, contentType: string): ExtractedDocument {
  return extractTextDocument(Buffer.from(source), contentType);
}

function wordList(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, i) => `${VOCABULARY[(i + offset) % VOCABULARY.length]}${i + offset}`);
}

/** Sentences of `sentenceLength` words, `count` words in all. */
function prose(count: number, sentenceLength = 12): string {
  return wordList(count)
    .map((word, i) => ((i + 1) % sentenceLength === 0 || i === count - 1 ? `${word}.` : word))
    .join(' ');
}

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** Invariants every chunking must keep, whatever the input. */
function checkInvariants(doc: ExtractedDocument, passages: readonly Passage[], opts: ChunkOptions): string | undefined {
  let previous: Passage | undefined;
  for (const [index, passage] of passages.entries()) {
    if (passage.ordinal !== index) return `ordinal ${passage.ordinal} at index ${index}`;
    if (passage.text !== doc.text.slice(passage.charStart, passage.charEnd)) return `passage ${index} is not its slice`;
    if (passage.text.trim() !== passage.text || passage.text === '') return `passage ${index} is empty or untrimmed`;
    if (words(passage.text).length > opts.chunkTokens) return `passage ${index} has more than ${opts.chunkTokens} words`;
    if (passage.evidenceKind === 'text') {
      const { location } = passage;
      if (!('char_start' in location) || location.char_start !== passage.charStart || location.char_end !== passage.charEnd) {
        return `passage ${index} has a wrong location`;
      }
    }
    if (previous !== undefined) {
      if (passage.charStart < previous.charStart || passage.charEnd <= previous.charEnd) return `passage ${index} is out of order`;
      if (passage.charStart < previous.charEnd) {
        const shared = words(doc.text.slice(passage.charStart, previous.charEnd)).length;
        if (shared > opts.chunkOverlap) return `passage ${index} repeats ${shared} words, more than the overlap`;
      }
    }
    previous = passage;
  }
  // Every word of every body block is in some passage.
  for (const block of doc.blocks) {
    if (block.type === 'heading') continue;
    for (const match of doc.text.slice(block.charStart, block.charEnd).matchAll(/\S+/g)) {
      const at = block.charStart + match.index;
      if (!passages.some((passage) => passage.charStart <= at && at < passage.charEnd)) return `word at ${at} is in no passage`;
    }
  }
  return undefined;
}

function expectInvariants(t: TestContext, doc: ExtractedDocument, passages: readonly Passage[], opts: ChunkOptions): void {
  const problem = checkInvariants(doc, passages, opts);
  t.equal(problem, undefined, 'span, order, size and coverage invariants hold');
}

t.test('a title and a ~250-word abstract are exactly one passage', (t) => {
  const abstract = prose(250);
  const sources: [string, string][] = [
    ['text/markdown', `# Learning to Rank Passages\n\n${abstract}\n`],
    ['text/html', `<html><head><title>Learning to Rank Passages</title></head><body><p>${abstract}</p></body></html>`],
    ['text/html', `<h1>Learning to Rank Passages</h1>\n<p>\n  ${abstract}\n</p>`],
  ];
  for (const [contentType, source] of sources) {
    const doc = extract(source, contentType);
    const passages = chunkDocument(doc, DEFAULTS);
    t.equal(passages.length, 1, `${contentType}: one passage`);
    t.equal(passages[0]?.heading, 'Learning to Rank Passages', 'heading is the title');
    t.equal(passages[0]?.text, abstract, 'text is the abstract alone');
    t.equal(passages[0]?.evidenceKind, 'text');
    t.equal(passages[0]?.ordinal, 0);
    expectInvariants(t, doc, passages, DEFAULTS);
  }
  t.end();
});

t.test('the heading trail follows heading levels', (t) => {
  const source = [
    '# Guide',
    'Welcome.',
    '## Install',
    'Run the installer.',
    '### Linux',
    'Use the package.',
    '## Usage',
    'Start it.',
    '# Appendix',
    'Extra notes.',
  ].join('\n\n');
  const doc = extract(source, 'text/markdown');
  const passages = chunkDocument(doc, DEFAULTS);
  t.same(
    passages.map((passage) => [passage.heading, passage.text]),
    [
      ['Guide', 'Welcome.'],
      ['Guide > Install', 'Run the installer.'],
      ['Guide > Install > Linux', 'Use the package.'],
      ['Guide > Usage', 'Start it.'],
      ['Appendix', 'Extra notes.'],
    ],
  );
  expectInvariants(t, doc, passages, DEFAULTS);
  t.end();
});

t.test('text before the first heading has an empty heading', (t) => {
  const passages = chunkDocument(extract('Preamble.\n\n# Title\n\nBody.', 'text/markdown'), DEFAULTS);
  t.same(
    passages.map((passage) => [passage.heading, passage.text]),
    [
      ['', 'Preamble.'],
      ['Title', 'Body.'],
    ],
  );
  t.end();
});

t.test('a heading without a body is kept as text only when no subsection carries it', (t) => {
  const source = '# Book\n\n## Chapter one\n\n### Scene\n\nIt rained.\n\n## Empty chapter\n\n## Last chapter\n\nThe end.\n\n## Trailing';
  const doc = extract(source, 'text/markdown');
  const passages = chunkDocument(doc, DEFAULTS);
  t.same(
    passages.map((passage) => [passage.heading, passage.text]),
    [
      ['Book > Chapter one > Scene', 'It rained.'],
      ['Book > Empty chapter', 'Empty chapter'],
      ['Book > Last chapter', 'The end.'],
      ['Book > Trailing', 'Trailing'],
    ],
  );
  const onlyTitle = chunkDocument(extract('<title>Just a title</title>', 'text/html'), DEFAULTS);
  t.same(
    onlyTitle.map((passage) => [passage.heading, passage.text]),
    [['Just a title', 'Just a title']],
  );
  expectInvariants(t, doc, passages, DEFAULTS);
  t.end();
});

t.test('consecutive blocks of a section are packed up to chunkTokens words', (t) => {
  const paragraphs = Array.from({ length: 10 }, (_, i) => wordList(30, i * 30).join(' ') + '.');
  const doc = extract(`# Notes\n\n${paragraphs.join('\n\n')}`, 'text/markdown');
  const opts = { chunkTokens: 100, chunkOverlap: 10 };
  const passages = chunkDocument(doc, opts);
  t.same(
    passages.map((passage) => words(passage.text).length),
    [90, 90, 90, 30],
    'three paragraphs per passage, never a split paragraph',
  );
  t.ok(passages.every((passage) => passage.heading === 'Notes'));
  t.equal(passages[0]?.text, paragraphs.slice(0, 3).join('\n\n'), 'the passage spans the blank lines between its blocks');
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('a huge paragraph is split at sentence ends with overlap', (t) => {
  const paragraph = prose(1000, 15);
  const doc = extract(`# Long\n\n${paragraph}`, 'text/markdown');
  const opts = { chunkTokens: 100, chunkOverlap: 10 };
  const passages = chunkDocument(doc, opts);
  t.ok(passages.length >= 10, `${passages.length} passages`);
  for (const [index, passage] of passages.entries()) {
    const passageWords = words(passage.text);
    t.ok(passageWords.length <= 100, `passage ${index} has at most 100 words`);
    t.equal(passage.heading, 'Long');
    if (index < passages.length - 1) t.match(passage.text, /\.$/, `passage ${index} ends a sentence`);
    const next = passages[index + 1];
    if (next !== undefined) {
      t.same(words(next.text).slice(0, 10), passageWords.slice(-10), `passage ${index + 1} repeats the last 10 words`);
    }
  }
  const covered = new Set(passages.flatMap((passage) => words(passage.text)));
  t.equal(covered.size, 1000, 'every word is in some passage');
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('text without sentence ends or line breaks is split at word boundaries', (t) => {
  const doc = extract(wordList(250).join(' '), 'text/plain');
  const opts = { chunkTokens: 100, chunkOverlap: 20 };
  const passages = chunkDocument(doc, opts);
  t.same(
    passages.map((passage) => words(passage.text).length),
    [100, 100, 90],
  );
  t.same(words(passages[1]?.text ?? '')[0], wordList(250)[80], 'the second passage starts 20 words back');
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('long code is split at line breaks', (t) => {
  const code = Array.from({ length: 60 }, (_, i) => `let value${i} = compute(${i}, ${i + 1})`).join('\n');
  const doc = extract('```\n' + code + '\n```', 'text/markdown');
  const opts = { chunkTokens: 50, chunkOverlap: 0 };
  const passages = chunkDocument(doc, opts);
  t.ok(passages.length > 1);
  for (const passage of passages) t.match(passage.text, /^let value\d+ = compute\(\d+, \d+\)$/m, 'passage holds whole lines');
  t.ok(passages.every((passage) => /\)$/.test(passage.text) && /^let/.test(passage.text)));
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('json passages carry the path of the values they hold', (t) => {
  const doc = extract(JSON.stringify({ title: 'Trove', version: 2, tags: ['search', 'sqlite'] }), 'application/json');
  const passages = chunkDocument(doc, DEFAULTS);
  t.equal(passages.length, 1, 'a small object is one passage');
  t.equal(passages[0]?.evidenceKind, 'json_path');
  t.same(passages[0]?.location, { json_path: '$' }, 'several top-level members: the root');
  t.equal(passages[0]?.text, 'title: Trove\nversion: 2\ntags: search\ntags: sqlite');
  t.equal(passages[0]?.heading, '');
  t.end();
});

t.test('each element of a top-level array gets its own passage where it fits', (t) => {
  const records = [
    { id: 1, title: 'First', body: 'alpha beta' },
    { id: 2, title: 'Second', body: 'gamma delta' },
    { id: 3, title: 'Third', body: wordList(150).join(' ') },
  ];
  const doc = extract(JSON.stringify(records), 'application/json');
  const opts = { chunkTokens: 100, chunkOverlap: 10 };
  const passages = chunkDocument(doc, opts);
  t.same(
    passages.map((passage) => passage.location),
    [
      { json_path: '$[0]' },
      { json_path: '$[1]' },
      { json_path: '$[2]' },
      { json_path: '$[2].body' },
      { json_path: '$[2].body' },
    ],
  );
  t.equal(passages[0]?.text, 'id: 1\ntitle: First\nbody: alpha beta');
  t.ok(passages.every((passage) => passage.evidenceKind === 'json_path'));
  expectInvariants(t, doc, passages, opts);

  const ndjson = extract('{"a":"x"}\n{"a":"y","b":"z"}\n', 'application/x-ndjson');
  t.same(
    chunkDocument(ndjson, DEFAULTS).map((passage) => [passage.location, passage.text]),
    [
      [{ json_path: '$[0].a' }, 'a: x'],
      [{ json_path: '$[1]' }, 'a: y\nb: z'],
    ],
  );

  const scalars = extract(JSON.stringify(['one', 'two', 'three']), 'application/json');
  t.same(
    chunkDocument(scalars, DEFAULTS).map((passage) => passage.text),
    ['one\ntwo\nthree'],
    'scalar elements are packed together',
  );
  t.end();
});

t.test('a top-level object member that would straddle two passages starts a new one', (t) => {
  const value = { summary: wordList(60).join(' '), details: { a: wordList(30, 60).join(' '), b: wordList(30, 90).join(' ') } };
  const doc = extract(JSON.stringify(value), 'application/json');
  const opts = { chunkTokens: 100, chunkOverlap: 10 };
  const passages = chunkDocument(doc, opts);
  t.same(
    passages.map((passage) => passage.location),
    [{ json_path: '$.summary' }, { json_path: '$.details' }],
  );
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('csv rows are packed into text passages', (t) => {
  const rows = Array.from({ length: 50 }, (_, i) => `${i},name ${i},city ${i}`).join('\n');
  const doc = extract(`id,name,city\n${rows}\n`, 'text/csv');
  const opts = { chunkTokens: 64, chunkOverlap: 8 };
  const passages = chunkDocument(doc, opts);
  t.ok(passages.length > 1);
  t.ok(passages.every((passage) => passage.evidenceKind === 'text' && /^id: \d+; name: name \d+; city: city \d+$/m.test(passage.text)));
  t.match(passages[0]?.text, /^id: 0; name: name 0; city: city 0\n/);
  expectInvariants(t, doc, passages, opts);
  t.end();
});

t.test('empty documents have no passages', (t) => {
  t.same(chunkDocument({ text: '', blocks: [] }, DEFAULTS), []);
  t.same(chunkDocument({ text: '   \n\n ', blocks: [{ type: 'paragraph', charStart: 0, charEnd: 6 }] }, DEFAULTS), []);
  t.same(chunkDocument(extract('{}', 'application/json'), DEFAULTS), []);
  t.end();
});

t.test('property: passages are exact, ordered slices covering every word', (t) => {
  const word = fc.oneof(
    fc.constantFrom('alpha', 'beta.', 'Gamma?', 'delta!', '"quoted."', 'x', '—', 'naïve', '😀', '日本語。', '#', '-', '`code`', '[link](http://x)'),
    fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme' }).filter((s) => s.trim() !== ''),
  );
  const space = fc.constantFrom(' ', ' ', ' ', '  ', '\t', '\u00a0');
  const sentence = fc.array(word, { minLength: 1, maxLength: 40 }).chain((ws) =>
    fc.array(space, { minLength: ws.length, maxLength: ws.length }).map((ss) => ws.map((w, i) => w + (ss[i] ?? ' ')).join('')),
  );
  const line = fc.oneof(
    { weight: 6, arbitrary: sentence },
    { weight: 2, arbitrary: fc.constantFrom('', '', '   ', '\r') },
    { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 1, max: 7 }), sentence).map(([n, s]) => `${'#'.repeat(n)} ${s}`) },
    { weight: 1, arbitrary: fc.constantFrom('```', '~~~ js', '---', '===', '***', '- item', '1. first', '> quote', '    indented') },
  );
  const document = fc.array(line, { maxLength: 60 }).map((lines) => lines.join('\n'));
  const options = fc
    .integer({ min: 1, max: 60 })
    .chain((chunkTokens) => fc.record({ chunkTokens: fc.constant(chunkTokens), chunkOverlap: fc.integer({ min: 0, max: chunkTokens - 1 }) }));

  fc.assert(
    fc.property(document, options, fc.constantFrom('text/markdown', 'text/plain'), (source, opts, contentType) => {
      const doc = extract(source, contentType);
      const passages = chunkDocument(doc, opts);
      const problem = checkInvariants(doc, passages, opts);
      if (problem !== undefined) throw new Error(problem);
    }),
    { numRuns: 400 },
  );
  t.pass('invariants held for random documents');
  t.end();
});

t.test('property: arbitrary text chunks into exact slices', (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 600, unit: 'binary' }), fc.integer({ min: 1, max: 30 }), (source, chunkTokens) => {
      const doc = extract(source.replaceAll('\0', ' '), 'text/plain');
      const opts = { chunkTokens, chunkOverlap: Math.floor(chunkTokens / 3) };
      const problem = checkInvariants(doc, chunkDocument(doc, opts), opts);
      if (problem !== undefined) throw new Error(problem);
    }),
    { numRuns: 300 },
  );
  t.pass('invariants held for arbitrary strings');
  t.end();
});


t.test('a passage of several JSON values is located at their common ancestor', (t) => {
  t.equal(commonJsonPath('$.recipe.name', '$.recipe.minutes'), '$.recipe');
  t.equal(commonJsonPath('$[0].a', "$[0]['b c'].d"), '$[0]');
  t.equal(commonJsonPath("$['b.c'].d", "$['b.c'].e"), "$['b.c']", 'a quoted name is one step, dots and all');
  t.equal(commonJsonPath('$.a[10]', '$.a[1]'), '$.a', 'array indices compare whole');
  t.equal(commonJsonPath('$.x', '$.y'), '$');
  const passages = chunkDocument(extract(JSON.stringify({ recipe: { name: 'saffron risotto', minutes: 35 } }), 'application/json'), DEFAULTS);
  t.equal(passages.length, 1);
  t.same(passages[0]!.location, { json_path: '$.recipe' }, 'the location covers every value in the evidence text');
  t.end();
});

t.test("json passages record each value's span and path, for evidence that points at the value", (t) => {
  const doc = extract(JSON.stringify({ inventory: { warehouses: [{ name: 'A', note: 'plain' }, { name: 'B', note: 'the zebra crossing is flooded' }] } }), 'application/json');
  const [passage, ...rest] = chunkDocument(doc, DEFAULTS);
  t.same(rest, [], 'a small document is one passage');
  t.same(passage!.location, { json_path: '$.inventory.warehouses' }, 'the passage as a whole: the common ancestor');
  t.same(
    passage!.jsonSpans!.map(([start, end, path]) => [passage!.text.slice(start, end), path]),
    [
      ['name: A', '$.inventory.warehouses[0].name'],
      ['note: plain', '$.inventory.warehouses[0].note'],
      ['name: B', '$.inventory.warehouses[1].name'],
      ['note: the zebra crossing is flooded', '$.inventory.warehouses[1].note'],
    ],
  );
  t.end();
});

t.test('a large JSON array: passages of many values, and every value keeps its own path', (t) => {
  const warehouses = Array.from({ length: 500 }, (_, i) => ({ name: `W${i}`, city: `city${i}`, note: `stock level ${i} checked` }));
  const doc = extract(JSON.stringify({ inventory: { warehouses } }), 'application/json');
  const passages = chunkDocument(doc, DEFAULTS);
  const values = passages.reduce((n, p) => n + p.jsonSpans!.length, 0);
  t.equal(values, 1500, 'every value is in a passage span');
  t.ok(passages.length >= 10 && passages.length <= 40, `values are packed into passages of hundreds of words (${passages.length} passages), not one per value`);
  t.ok(passages.slice(0, -1).every((p) => words(p.text).length > DEFAULTS.chunkTokens / 2), 'every passage but the last is well filled');
  for (const p of passages) {
    for (const [start, end, path] of p.jsonSpans!) {
      const m = /^\$\.inventory\.warehouses\[(\d+)\]\.(name|city|note)$/.exec(path);
      if (!m) {
        t.fail(`unexpected path ${path}`);
        continue;
      }
      const expected = `${m[2]}: ${(warehouses[Number(m[1])] as Record<string, string>)[m[2]!]}`;
      if (p.text.slice(start, end) !== expected) t.fail(`${path} spans ${JSON.stringify(p.text.slice(start, end))}, not ${JSON.stringify(expected)}`);
    }
  }
  expectInvariants(t, doc, passages, DEFAULTS);
  t.end();
});

t.test('located blocks: passages never mix pages or kinds, boxes and time spans join', async (t) => {
  const parts = ['First page intro.', 'More on page one.', 'Second page text.', 'Cue one words.', 'Cue two words.', 'Scanned words.'];
  let text = '';
  const spans = parts.map((p) => {
    const start = text.length;
    text += p + '\n\n';
    return { charStart: start, charEnd: start + p.length };
  });
  const doc: ExtractedDocument = {
    text,
    blocks: [
      { type: 'paragraph', ...spans[0]!, evidenceKind: 'page', location: { page: 1, bbox: [10, 10, 100, 20] } },
      { type: 'paragraph', ...spans[1]!, evidenceKind: 'page', location: { page: 1, bbox: [5, 30, 90, 40] } },
      { type: 'paragraph', ...spans[2]!, evidenceKind: 'page', location: { page: 2, bbox: [10, 10, 100, 20] } },
      { type: 'paragraph', ...spans[3]!, evidenceKind: 'transcript', location: { start_ms: 1000, end_ms: 2000 } },
      { type: 'paragraph', ...spans[4]!, evidenceKind: 'transcript', location: { start_ms: 2500, end_ms: 4000 } },
      { type: 'paragraph', ...spans[5]!, evidenceKind: 'ocr', location: { page: 2, bbox: [1, 2, 3, 4] } },
    ],
  };
  const passages = chunkDocument(doc, DEFAULTS);
  t.same(
    passages.map((p) => [p.evidenceKind, p.location, p.text]),
    [
      ['page', { page: 1, bbox: [5, 10, 100, 40] }, 'First page intro.\n\nMore on page one.'],
      ['page', { page: 2, bbox: [10, 10, 100, 20] }, 'Second page text.'],
      ['transcript', { start_ms: 1000, end_ms: 4000 }, 'Cue one words.\n\nCue two words.'],
      ['ocr', { page: 2, bbox: [1, 2, 3, 4] }, 'Scanned words.'],
    ],
  );
  for (const p of passages) t.equal(text.slice(p.charStart, p.charEnd), p.text, 'spans stay exact');
  // A long located block is split, and every piece keeps its place.
  const long = Array.from({ length: 120 }, (_, i) => `word${i}.`).join(' ');
  const split = chunkDocument({ text: long, blocks: [{ type: 'paragraph', charStart: 0, charEnd: long.length, evidenceKind: 'page', location: { page: 7 } }] }, { chunkTokens: 50, chunkOverlap: 5 });
  t.ok(split.length >= 3);
  t.ok(split.every((p) => p.evidenceKind === 'page' && (p.location as { page: number }).page === 7));
});

t.test('transcript passages span at most 30 s', async (t) => {
  const cues = [[0, 10_000], [12_000, 25_000], [40_000, 45_000], [46_000, 80_000]] as const;
  let text = '';
  const blocks = cues.map(([start_ms, end_ms], i) => {
    const start = text.length;
    text += `cue number ${i} words.\n`;
    return { type: 'paragraph' as const, charStart: start, charEnd: text.length - 1, evidenceKind: 'transcript' as const, location: { start_ms, end_ms } };
  });
  const passages = chunkDocument({ text, blocks }, DEFAULTS);
  t.same(
    passages.map((p) => p.location),
    [
      { start_ms: 0, end_ms: 25_000 },
      { start_ms: 40_000, end_ms: 45_000 },
      { start_ms: 46_000, end_ms: 80_000 },
    ],
    'cues join while the span stays within 30 s; a single long cue stays whole',
  );
});
