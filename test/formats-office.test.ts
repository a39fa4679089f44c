// Office documents, subtitles and source code: extraction from generated fixtures, through to passages.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import t from 'tap';
import { chunkDocument } from '../src/domain/ingest/chunk.js';
import { extractDocument, extractTextDocument } from '../src/domain/ingest/extract.js';
import { extractCode, isSourceCodeType } from '../src/domain/ingest/formats/code.js';
import { extractDocx, extractPptx, extractXlsx } from '../src/domain/ingest/formats/office-reader.js';
import { extractSrt, extractVtt } from '../src/domain/ingest/formats/transcript.js';
import {
  type Block,
  type ExtractContext,
  type ExtractedDocument,
  IngestFailure,
  type IngestFailureCode,
  type Passage,
} from '../src/domain/ingest/types.js';
import { buildZip, largeDocx, largeDocxParagraph } from './helpers/bombs.js';
import { withCpuTime } from './helpers/cpu-time.js';
import { PATIENCE_MS } from './helpers/wait.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const CHUNKING = { chunkTokens: 400, chunkOverlap: 40 };

// ---------------------------------------------------------------------------------------------------------
// Fixtures, generated into a temporary directory by fixtures/build/*.mjs

interface OfficeGenerator {
  build(outDir: string): Promise<Record<string, string>>;
  buildPptx(slides: { title?: string; body: string[]; notes?: string; table?: string[][] }[]): Promise<Buffer>;
}
interface TextGenerator {
  build(outDir: string): Promise<Record<string, string>>;
}

/** The project root: the nearest directory above this file (source or compiled) holding the generators. */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'fixtures', 'build', 'office.mjs'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('fixtures/build/office.mjs not found above the test file');
    dir = parent;
  }
}

const generators = path.join(projectRoot(), 'fixtures', 'build');
const office = (await import(pathToFileURL(path.join(generators, 'office.mjs')).href)) as OfficeGenerator;
const textFixtures = (await import(pathToFileURL(path.join(generators, 'text.mjs')).href)) as TextGenerator;
const fixtureDir = await mkdtemp(path.join(os.tmpdir(), 'trove-formats-'));
t.teardown(() => rm(fixtureDir, { recursive: true, force: true }));
await office.build(fixtureDir);
await textFixtures.build(fixtureDir);

function fixture(name: string): Promise<Buffer> {
  return readFile(path.join(fixtureDir, name));
}

function context(overrides: Partial<ExtractContext> = {}): ExtractContext {
  return { ocr: false, maxPages: 2_000, deadline: Date.now() + PATIENCE_MS, ...overrides };
}

/** Milliseconds per file and format, reported at the end. */
const timings: Record<string, number[]> = {};

async function timed<T>(format: string, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  const result = await work();
  (timings[format] ??= []).push(performance.now() - started);
  return result;
}

t.teardown(() => {
  for (const [format, runs] of Object.entries(timings)) {
    const sorted = [...runs].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    console.error(`# extraction time ${format}: first ${runs[0]?.toFixed(1)} ms, median ${median.toFixed(1)} ms over ${runs.length} runs`);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Checks shared by every format

interface BlockView {
  type: Block['type'];
  text: string;
  level?: number;
  location?: Block['location'];
  evidenceKind?: Block['evidenceKind'];
}

/** Every span is non-empty, trimmed, in order and not overlapping; returns the blocks with their text. */
function checkBlocks(t: TestContext, doc: ExtractedDocument): BlockView[] {
  let previousEnd = 0;
  let problems = 0;
  const views = doc.blocks.map((block) => {
    const text = doc.text.slice(block.charStart, block.charEnd);
    if (!(block.charStart >= previousEnd && block.charEnd > block.charStart && block.charEnd <= doc.text.length) || text.trim() !== text) {
      problems++;
      t.fail(`bad span [${block.charStart}, ${block.charEnd}) ${JSON.stringify(text)}`);
    }
    previousEnd = block.charEnd;
    const view: BlockView = { type: block.type, text };
    if (block.level !== undefined) view.level = block.level;
    if (block.location !== undefined) view.location = block.location;
    if (block.evidenceKind !== undefined) view.evidenceKind = block.evidenceKind;
    return view;
  });
  t.equal(problems, 0, 'every block span is non-empty, trimmed, ordered and inside the text');
  return views;
}

function blockWith(t: TestContext, views: readonly BlockView[], phrase: string): BlockView | undefined {
  const found = views.filter((view) => view.text.includes(phrase));
  t.equal(found.length, 1, `one block holds "${phrase}"`);
  return found[0];
}

function passageWith(t: TestContext, passages: readonly Passage[], phrase: string): Passage | undefined {
  const found = passages.find((passage) => passage.text.includes(phrase));
  t.ok(found, `a passage holds "${phrase}"`);
  return found;
}

/** Passages are exact slices of the text and cover only text that is in blocks. */
function checkPassages(t: TestContext, doc: ExtractedDocument, passages: readonly Passage[]): void {
  let bad = 0;
  for (const passage of passages) {
    if (doc.text.slice(passage.charStart, passage.charEnd) !== passage.text || passage.text.trim() === '') bad++;
  }
  t.equal(bad, 0, 'every passage is the exact, non-blank slice of the text it points at');
}

async function expectFailure(t: TestContext, work: () => unknown, code: IngestFailureCode, message: RegExp): Promise<void> {
  try {
    await work();
  } catch (error) {
    t.ok(error instanceof IngestFailure, 'throws an IngestFailure');
    if (!(error instanceof IngestFailure)) {
      t.comment(String(error));
      return;
    }
    t.equal(error.code, code, `code is ${code}`);
    t.match(error.message, message);
    return;
  }
  t.fail(`expected IngestFailure(${code})`);
}

// ---------------------------------------------------------------------------------------------------------
// DOCX

t.test('DOCX: headings, paragraphs and table rows as text evidence', async (t) => {
  const bytes = await fixture('handbook.docx');
  const doc = await timed('docx', () => extractDocx(bytes, context()));
  const views = checkBlocks(t, doc);
  t.same(
    views.filter((view) => view.type === 'heading'),
    [
      { type: 'heading', level: 1, text: 'Employee Handbook' },
      { type: 'heading', level: 2, text: 'Time Off' },
      { type: 'heading', level: 3, text: 'Sick Leave' },
      { type: 'heading', level: 2, text: 'Office Locations' },
    ],
  );
  const policy = blockWith(t, views, 'the vacation accrual policy');
  t.same(policy, {
    type: 'paragraph',
    text: 'Full-time staff earn paid leave every month under the vacation accrual policy. Unused days carry over to the next year, up to ten days.',
  });
  t.same(
    views.filter((view) => view.type === 'row').map((view) => view.text),
    ['City: Lisbon; Address: Rua Augusta 12; Desks: 40', 'City: Tallinn; Address: Harju 3; Desks: 25'],
    'table rows are labelled with the header row',
  );
  t.ok(views.some((view) => view.text === 'Visitors sign in at the front desk.'), 'text after the table is kept');
  t.notOk(doc.blocks.some((block) => block.location !== undefined || block.evidenceKind !== undefined), 'plain text evidence');

  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  const passage = passageWith(t, passages, 'the vacation accrual policy');
  t.equal(passage?.heading, 'Employee Handbook > Time Off');
  t.equal(passage?.evidenceKind, 'text');
  t.same(passage?.location, { char_start: passage?.charStart, char_end: passage?.charEnd });

  for (let i = 0; i < 3; i++) await timed('docx', () => extractDocx(bytes, context()));
});

t.test('DOCX through extractDocument, by content type', async (t) => {
  const doc = await extractDocument(await fixture('handbook.docx'), DOCX, context());
  t.ok(doc.text.includes('the vacation accrual policy'));
});

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A DOCX written by hand, part by part, with what Word writes for each feature. */
function handWrittenDocx(): Buffer {
  const run = (text: string): string => `<w:r><w:t xml:space="preserve">${text}</w:t></w:r>`;
  const para = (body: string, props = ''): string => `<w:p>${props === '' ? '' : `<w:pPr>${props}</w:pPr>`}${body}</w:p>`;
  const cell = (body: string, props = ''): string => `<w:tc>${props === '' ? '' : `<w:tcPr>${props}</w:tcPr>`}${body}</w:tc>`;
  const numbered = (numId: number, level: number): string => `<w:numPr><w:ilvl w:val="${level}"/><w:numId w:val="${numId}"/></w:numPr>`;
  const body = [
    para(run('Field Guide'), '<w:pStyle w:val="Heading1"/>'),
    para(run('Tides'), '<w:pStyle w:val="Sub"/>'),
    para(`${run('Line one')}<w:r><w:br/><w:t>Line two</w:t><w:tab/><w:t>after a tab</w:t></w:r>`, '<w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs>'),
    para(`${run('Kept ')}<w:del w:id="1" w:author="a"><w:r><w:delText>removed </w:delText></w:r></w:del><w:ins w:id="2" w:author="a">${run('inserted ')}</w:ins><w:moveFrom w:id="3" w:author="a">${run('moved away ')}</w:moveFrom>${run('end.')}`),
    para(`${run('Page one')}<w:r><w:br w:type="page"/></w:r>${run(' page two')}`),
    para(run('Bullet one'), numbered(1, 0)),
    para(run('Step one'), numbered(2, 0)),
    para(run('Step two'), numbered(2, 1)),
    para(`${run('A claim')}<w:r><w:footnoteReference w:id="2"/></w:r>${run(' with a source.')}`),
    para(run('Joined to '), '<w:rPr><w:del w:id="4" w:author="a"/></w:rPr>'),
    para(run('the next paragraph.')),
    para(`<mc:AlternateContent><mc:Choice Requires="wps"><w:r><w:t>choice text</w:t></w:r></mc:Choice><mc:Fallback><w:r><w:t>fallback text</w:t></w:r></mc:Fallback></mc:AlternateContent>`),
    para(`<w:hyperlink r:id="rId9">${run('a linked phrase')}</w:hyperlink>`),
    '<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>',
    `<w:tr>${cell(para(run('Site')))}${cell(para(run('Notes')))}${cell(para(run('Visits')))}</w:tr>`,
    `<w:tr>${cell(para(run('North')), '<w:vMerge w:val="restart"/>')}${cell(para(run('rocky')) + para(run('windy')))}${cell(para(run('3')))}</w:tr>`,
    `<w:tr>${cell(para(''), '<w:vMerge/>')}${cell(para(run('gulls')))}${cell(para(run('4')))}</w:tr>`,
    `<w:tr>${cell(para(run('East, all of it')), '<w:gridSpan w:val="2"/>')}${cell(para(run('5')))}</w:tr>`,
    `<w:tr><w:trPr><w:del w:id="5" w:author="a"/></w:trPr>${cell(para(run('Deleted row')))}${cell(para(run('gone')))}</w:tr>`,
    `<w:tr>${cell(para(run('South')))}${cell(`<w:tbl><w:tr>${cell(para(run('inner a')))}${cell(para(run('inner b')))}</w:tr></w:tbl>`)}</w:tr>`,
    '</w:tbl>',
    para(run('After the table.')),
    '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr>',
  ].join('');
  const numbering = `<w:numbering ${W}>
    <w:abstractNum w:abstractNumId="10"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
    <w:abstractNum w:abstractNumId="20"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="lowerLetter"/></w:lvl></w:abstractNum>
    <w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="20"/></w:num></w:numbering>`;
  const styles = `<w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="Sub"><w:name w:val="heading 2"/></w:style></w:styles>`;
  const footnotes = `<w:footnotes ${W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="2"><w:p><w:r><w:footnoteRef/></w:r>${run(' Survey of 2019.')}</w:p></w:footnote><w:footnote w:id="3"><w:p>${run('Never cited.')}</w:p></w:footnote></w:footnotes>`;
  return buildZip([
    { name: '[Content_Types].xml', data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>' },
    { name: '_rels/.rels', data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="word/main.xml"/></Relationships>` },
    { name: 'word/main.xml', data: `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>` },
    {
      name: 'word/_rels/main.xml.rels',
      data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="${RELS}/styles" Target="styles.xml"/><Relationship Id="rId3" Type="${RELS}/numbering" Target="numbering.xml"/><Relationship Id="rId4" Type="${RELS}/footnotes" Target="footnotes.xml"/><Relationship Id="rId9" Type="${RELS}/hyperlink" Target="https://example.com" TargetMode="External"/></Relationships>`,
    },
    { name: 'word/styles.xml', data: styles },
    { name: 'word/numbering.xml', data: numbering },
    { name: 'word/footnotes.xml', data: footnotes },
  ]);
}

t.test('DOCX: headings by style, lists, line breaks, revisions, footnotes, merged and nested table cells', async (t) => {
  const doc = await extractDocx(handWrittenDocx(), context());
  const views = checkBlocks(t, doc);
  t.same(
    views.map((view) => [view.type, view.level, view.text]),
    [
      ['heading', 1, 'Field Guide'],
      ['heading', 2, 'Tides'],
      ['paragraph', undefined, 'Line one\nLine two after a tab'],
      ['paragraph', undefined, 'Kept inserted end.'],
      ['paragraph', undefined, 'Page one page two'],
      ['paragraph', undefined, 'Bullet one'],
      ['paragraph', undefined, 'Step one'],
      ['paragraph', undefined, 'Step two'],
      ['paragraph', undefined, 'A claim[1] with a source.'],
      ['paragraph', undefined, 'Joined to the next paragraph.'],
      ['paragraph', undefined, 'fallback text'],
      ['paragraph', undefined, 'a linked phrase'],
      ['row', undefined, 'Site: North; Notes: rocky windy; Visits: 3'],
      ['row', undefined, 'Notes: gulls; Visits: 4'],
      ['row', undefined, 'Site: East, all of it; Visits: 5'],
      ['row', undefined, 'Site: South; Notes: inner a inner b'],
      ['paragraph', undefined, 'After the table.'],
      ['paragraph', undefined, 'Survey of 2019.'],
    ],
  );
  t.same(doc.notes, ['1 table']);
});

// A reader that models the whole document in memory holds about 130 times the XML: 16 MiB of paragraphs
// (a valid file of a few hundred KB) took about a gigabyte. The DOCX reader streams the XML, so the file is
// read whole in a child process whose heap is limited to 256 MB; with the whole-document model it runs out.
const LARGE_DOCX_HEAP_MB = 256;
const READ_IN_CHILD = `
const [moduleUrl, file] = process.argv.slice(1);
const { readFileSync } = await import('node:fs');
const { extractDocx } = await import(moduleUrl);
const doc = await extractDocx(readFileSync(file), { ocr: false, maxPages: 2000, deadline: Date.now() + 3_600_000 });
process.stdout.write(JSON.stringify({ characters: doc.text.length, blocks: doc.blocks.length }));
`;

function readDocxInSmallHeap(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const reader = new URL('../src/domain/ingest/formats/office-reader.js', import.meta.url).href;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${LARGE_DOCX_HEAP_MB}`, '--input-type=module', '-e', READ_IN_CHILD, reader, file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('DOCX: a 16 MiB document.xml is read whole, paragraph by paragraph, in a 256 MB heap', async (t) => {
  const { bytes, paragraphs } = await largeDocx(16 * 1024 * 1024);
  const doc = await extractDocx(bytes, context());
  t.equal(doc.blocks.length, paragraphs, 'one block per paragraph');
  let wrong = 0;
  doc.blocks.forEach((block, i) => {
    if (block.type !== 'paragraph' || doc.text.slice(block.charStart, block.charEnd) !== largeDocxParagraph(i)) wrong++;
  });
  t.equal(wrong, 0, 'every paragraph in order, with its text (& decoded)');
  t.ok(doc.text.startsWith(largeDocxParagraph(0)), 'the first paragraph opens the text');
  t.ok(doc.text.endsWith(largeDocxParagraph(paragraphs - 1)), 'the last paragraph ends it');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-large-docx-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'large.docx');
  await writeFile(file, bytes);
  const child = await readDocxInSmallHeap(file);
  t.equal(child.code, 0, `read within a ${LARGE_DOCX_HEAP_MB} MB heap${child.code === 0 ? '' : `: ${child.stderr.slice(-400)}`}`);
  if (child.code === 0) t.same(JSON.parse(child.stdout), { characters: doc.text.length, blocks: paragraphs });
});

// ---------------------------------------------------------------------------------------------------------
// PPTX

t.test('PPTX: one page per slide, the title as heading', async (t) => {
  const bytes = await fixture('roadmap.pptx');
  const doc = await timed('pptx', () => extractPptx(bytes, context()));
  const views = checkBlocks(t, doc);
  t.same(
    views.filter((view) => view.type === 'heading'),
    [
      { type: 'heading', level: 1, text: 'Product Roadmap 2025', location: { page: 1 }, evidenceKind: 'page' },
      { type: 'heading', level: 1, text: 'Quarter One', location: { page: 2 }, evidenceKind: 'page' },
      { type: 'heading', level: 1, text: 'Quarter Two', location: { page: 3 }, evidenceKind: 'page' },
    ],
  );
  t.same(blockWith(t, views, 'migrate the billing service'), {
    type: 'paragraph',
    text: 'We migrate the billing service to the new cluster before March.',
    location: { page: 2 },
    evidenceKind: 'page',
  });
  t.same(blockWith(t, views, 'freeze window'), {
    type: 'paragraph',
    text: 'Mention the freeze window for finance.',
    location: { page: 2 },
    evidenceKind: 'page',
  }, 'speaker notes are read, on their slide');
  t.same(
    views.filter((view) => view.type === 'row'),
    [
      { type: 'row', text: 'Team: Support; Hires: 2', location: { page: 3 }, evidenceKind: 'page' },
      { type: 'row', text: 'Team: Sales; Hires: 1', location: { page: 3 }, evidenceKind: 'page' },
    ],
    'a table on a slide becomes rows',
  );
  t.notOk(views.some((view) => /^\d+$/.test(view.text)), 'slide-number placeholders of notes pages are not text');
  t.ok(doc.blocks.every((block) => block.evidenceKind === 'page' && block.location !== undefined), 'every block is located on its slide');
  t.same(doc.notes, ['3 slides', 'speaker notes on 1 slide']);

  for (let i = 0; i < 3; i++) await timed('pptx', () => extractPptx(bytes, context()));
});

t.test('PPTX passages keep their slide (needs the chunker to carry evidenceKind and location)', async (t) => {
  const doc = await extractPptx(await fixture('roadmap.pptx'), context());
  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  const passage = passageWith(t, passages, 'migrate the billing service');
  t.equal(passage?.heading, 'Quarter One');
  t.equal(passage?.evidenceKind, 'page');
  t.match(passage?.location, { page: 2 }, 'located on slide 2 (a bbox, if any, may be null)');
  t.notOk(passage?.text.includes('Open the Nordic market'), 'a passage never mixes slides');
});

t.test('PPTX: a slide without a title still starts its own section', async (t) => {
  const bytes = await office.buildPptx([
    { title: 'Harbour plans', body: ['Dredge the channel.'] },
    { body: ['Untitled slide about the ferry timetable.'] },
  ]);
  const views = checkBlocks(t, await extractPptx(bytes, context()));
  t.same(
    views.map((view) => [view.type, view.text, view.location]),
    [
      ['heading', 'Harbour plans', { page: 1 }],
      ['paragraph', 'Dredge the channel.', { page: 1 }],
      ['heading', 'Slide 2', { page: 2 }],
      ['paragraph', 'Untitled slide about the ferry timetable.', { page: 2 }],
    ],
  );
});

t.test('PPTX: more slides than maxPages fail too_large', async (t) => {
  const bytes = await fixture('roadmap.pptx');
  await expectFailure(t, () => extractPptx(bytes, context({ maxPages: 2 })), 'too_large', /3 slides; the limit is 2/);
  const doc = await extractPptx(bytes, context({ maxPages: 3 }));
  t.ok(doc.blocks.length > 0, 'exactly maxPages slides is fine');
});

// ---------------------------------------------------------------------------------------------------------
// XLSX

t.test('XLSX: a heading per sheet, a row per spreadsheet row', async (t) => {
  const bytes = await fixture('budget.xlsx');
  const doc = await timed('xlsx', () => extractXlsx(bytes, context()));
  const views = checkBlocks(t, doc);
  t.same(views, [
    { type: 'heading', level: 1, text: 'Expenses' },
    { type: 'row', text: 'Item: Lighthouse maintenance; Amount: 12500; Due: 2025-06-30; Owner: Coast Team' },
    { type: 'row', text: 'Item: Harbour dredging; Amount: 48000; Due: 2025-09-15; Owner: Port Authority' },
    { type: 'row', text: 'Item: Buoy replacement; Amount: 3200; Owner: Coast Team' },
    { type: 'row', text: 'Item: Total; Amount: 63700' },
    { type: 'heading', level: 1, text: 'Income' },
    { type: 'row', text: 'Source: Harbour fees; Amount: 52000' },
    { type: 'row', text: 'Source: Ferry licences; Amount: 9000' },
    { type: 'row', text: 'Source: Grant; Amount: Coastal resilience grant' },
  ], 'empty rows are skipped, formulas give their result, dates are ISO dates, rich text is plain');

  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  const passage = passageWith(t, passages, 'Lighthouse maintenance');
  t.equal(passage?.heading, 'Expenses');
  t.equal(passage?.evidenceKind, 'text');
  t.notOk(passage?.text.includes('Harbour fees'), 'sheets are separate sections');

  for (let i = 0; i < 3; i++) await timed('xlsx', () => extractXlsx(bytes, context()));
});

t.test('XLSX: title rows, merged cells and every kind of cell value', async (t) => {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Ledger');
  sheet.getCell('A1').value = 'Harbour ledger 2025';
  sheet.addRow([]);
  sheet.addRow(['Entry', 'Value', '', 'Link']);
  sheet.addRow(['Float', 0.1 + 0.2, 'no header here', { text: 'harbour site', hyperlink: 'https://example.org/harbour' }]);
  sheet.addRow(['Flag', true]);
  sheet.addRow(['Error', { error: '#DIV/0!' }]);
  sheet.addRow(['Noon', new Date(Date.UTC(1899, 11, 30, 12, 0, 0))]);
  sheet.addRow(['Stamp', new Date(Date.UTC(2025, 2, 1, 8, 30, 0))]);
  sheet.addRow(['Merged across', 'wide value']);
  sheet.mergeCells('B9:C9');
  sheet.addRow(['Formula without result', { formula: 'B4*2' }]);
  const headerOnly = workbook.addWorksheet('Headers only');
  headerOnly.addRow(['Pier', 'Depth']);
  const hidden = workbook.addWorksheet('Lookup', { state: 'hidden' });
  hidden.addRow(['Code', 'Meaning']);
  hidden.addRow(['LH', 'Lighthouse']);
  const bytes = Buffer.from(await workbook.xlsx.writeBuffer());

  const doc = await extractXlsx(bytes, context());
  t.same(
    checkBlocks(t, doc).map((view) => [view.type, view.text]),
    [
      ['heading', 'Ledger'],
      ['paragraph', 'Harbour ledger 2025'],
      ['row', 'Entry: Float; Value: 0.3; column 3: no header here; Link: harbour site'],
      ['row', 'Entry: Flag; Value: TRUE'],
      ['row', 'Entry: Error; Value: #DIV/0!'],
      ['row', 'Entry: Noon; Value: 12:00:00'],
      ['row', 'Entry: Stamp; Value: 2025-03-01T08:30:00'],
      ['row', 'Entry: Merged across; Value: wide value'],
      ['row', 'Entry: Formula without result'],
      ['heading', 'Headers only'],
      ['row', 'Pier; Depth'],
      ['heading', 'Lookup'],
      ['row', 'Code: LH; Meaning: Lighthouse'],
    ],
  );
  t.same(doc.notes, ['3 sheets, 9 rows', '1 hidden sheet included']);
});

t.test('Office extraction past its deadline fails extraction_failed', async (t) => {
  const expired = context({ deadline: Date.now() - 1 });
  await expectFailure(t, async () => extractDocx(await fixture('handbook.docx'), expired), 'extraction_failed', /took longer than its time limit/);
  await expectFailure(t, async () => extractPptx(await fixture('roadmap.pptx'), expired), 'extraction_failed', /took longer than its time limit/);
  await expectFailure(t, async () => extractXlsx(await fixture('budget.xlsx'), expired), 'extraction_failed', /took longer than its time limit/);
});

// ---------------------------------------------------------------------------------------------------------
// Broken Office files

t.test('corrupt Office files fail extraction_failed and say so', async (t) => {
  await expectFailure(t, async () => extractDocx(await fixture('corrupt.docx'), context()), 'extraction_failed', /DOCX file is corrupt or truncated/);
  await expectFailure(t, async () => extractPptx(await fixture('corrupt.pptx'), context()), 'extraction_failed', /PPTX file is corrupt or truncated/);
  await expectFailure(t, async () => extractXlsx(await fixture('corrupt.xlsx'), context()), 'extraction_failed', /XLSX file is corrupt or truncated/);
  await expectFailure(t, async () => extractDocument(await fixture('corrupt.docx'), DOCX, context()), 'extraction_failed', /corrupt/);
});

t.test('encrypted, legacy and mislabelled Office files fail with a reason', async (t) => {
  const ole = Buffer.alloc(4096);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
  const encrypted = Buffer.from(ole);
  Buffer.from('EncryptionInfo', 'utf16le').copy(encrypted, 1024);
  await expectFailure(t, () => extractDocx(encrypted, context()), 'extraction_failed', /encrypted \(password-protected\)/);
  await expectFailure(t, () => extractXlsx(encrypted, context()), 'extraction_failed', /XLSX file is encrypted/);
  await expectFailure(t, () => extractPptx(ole, context()), 'extraction_failed', /legacy binary Office document/);
  await expectFailure(t, () => extractDocx(Buffer.from('just some text'), context()), 'extraction_failed', /not a zip archive/);
  await expectFailure(t, () => extractPptx(Buffer.alloc(0), context()), 'extraction_failed', /not a zip archive/);
  await expectFailure(t, async () => extractDocx(await fixture('budget.xlsx'), context()), 'extraction_failed', /not a DOCX file/);
  await expectFailure(t, async () => extractXlsx(await fixture('roadmap.pptx'), context()), 'extraction_failed', /not an XLSX file/);
  await expectFailure(t, async () => extractPptx(await fixture('handbook.docx'), context()), 'extraction_failed', /not a PPTX file/);
});

t.test('a package that declares more than it may expand to is refused before it is opened', async (t) => {
  const bytes = Buffer.from(await fixture('handbook.docx'));
  const end = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const directory = bytes.readUInt32LE(end + 16);
  bytes.writeUInt32LE(0xfffffff0, directory + 24); // the first entry's declared uncompressed size
  await expectFailure(t, () => extractDocument(bytes, DOCX, context()), 'too_large', /expands past 256 MiB when decompressed \(its zip entries declare \d+(\.\d)? MiB\)/);
});

t.test('damaged Office files never crash or hang: a document or an IngestFailure', async (t) => {
  const cases: [string, (bytes: Buffer, ctx: ExtractContext) => Promise<ExtractedDocument>][] = [
    ['handbook.docx', extractDocx],
    ['roadmap.pptx', extractPptx],
    ['budget.xlsx', extractXlsx],
  ];
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (const [name, extract] of cases) {
    const original = await fixture(name);
    let failures = 0;
    for (let round = 0; round < 12; round++) {
      const damaged = Buffer.from(original);
      const at = Math.floor(random() * damaged.length);
      for (let i = at; i < Math.min(damaged.length, at + 64); i++) damaged[i] = Math.floor(random() * 256);
      try {
        await extract(damaged, context());
      } catch (error) {
        if (!(error instanceof IngestFailure) || error.code !== 'extraction_failed') t.fail(`${name} round ${round}: ${String(error)}`);
        failures++;
      }
    }
    t.pass(`${name}: 12 damaged copies handled (${failures} refused)`);
  }
});

// ---------------------------------------------------------------------------------------------------------
// WebVTT and SRT

t.test('WebVTT: a paragraph per cue with its time span', async (t) => {
  const source = (await fixture('talk.vtt')).toString('utf8');
  const doc = await timed('vtt', () => extractVtt(source));
  const views = checkBlocks(t, doc);
  t.same(blockWith(t, views, 'the tidal generator output'), {
    type: 'paragraph',
    text: 'Grace Hopper: Since March, the tidal generator output has doubled.',
    location: { start_ms: 65_000, end_ms: 69_250 },
    evidenceKind: 'transcript',
  });
  t.same(
    views.map((view) => view.text),
    [
      'Ada Lovelace: Welcome to the harbour energy briefing.',
      'Ada Lovelace: First, a look back at last winter, when the storms closed the pier twice.',
      'Questions come at the end & are welcome.',
      'Grace Hopper: Since March, the tidal generator output has doubled.',
      'Grace Hopper: It now covers the lighthouse and the ferry terminal.',
      'Ada Lovelace: Thank you all for coming.',
    ],
    'header, NOTE and STYLE blocks, identifiers, settings and tags are not text; the backwards cue is skipped',
  );
  t.ok(doc.blocks.every((block) => block.evidenceKind === 'transcript'));
  t.match(doc.notes, ['6 cues', /1 parser warning; unreadable cues were skipped/]);
  for (let i = 0; i < 3; i++) await timed('vtt', () => extractVtt(source));
});

t.test('SRT: cues with comma timestamps, CRLF and missing blank lines', async (t) => {
  const bytes = await fixture('talk.srt');
  t.ok(bytes.includes('\r\n'), 'the fixture has Windows line ends');
  const doc = await timed('srt', () => extractSrt(bytes.toString('utf8')));
  const views = checkBlocks(t, doc);
  t.same(blockWith(t, views, 'the tidal generator output'), {
    type: 'paragraph',
    text: 'Since March, the tidal generator output has doubled.',
    location: { start_ms: 65_000, end_ms: 69_250 },
    evidenceKind: 'transcript',
  });
  t.same(
    views.map((view) => [view.text, view.location]),
    [
      ['Welcome to the harbour energy briefing.', { start_ms: 1000, end_ms: 4500 }],
      ['First, a look back at last winter, when the storms closed the pier twice.', { start_ms: 5000, end_ms: 9000 }],
      ['Since March, the tidal generator output has doubled.', { start_ms: 65_000, end_ms: 69_250 }],
      ['It now covers the lighthouse and the ferry terminal.', { start_ms: 70_000, end_ms: 74_000 }],
      ['Thank you all for coming.', { start_ms: 120_000, end_ms: 123_000 }],
    ],
  );
  const viaDocument = extractTextDocument(bytes, 'application/x-subrip');
  t.same(viaDocument.blocks, doc.blocks, 'extractTextDocument routes SRT here');
  for (let i = 0; i < 3; i++) await timed('srt', () => extractSrt(bytes.toString('utf8')));
});

t.test('transcript passages keep their time span (needs the chunker to carry evidenceKind and location)', async (t) => {
  const doc = extractVtt((await fixture('talk.vtt')).toString('utf8'));
  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  const passage = passageWith(t, passages, 'the tidal generator output');
  t.equal(passage?.evidenceKind, 'transcript');
  const location = passage?.location as { start_ms?: number; end_ms?: number } | undefined;
  t.ok(location?.start_ms !== undefined && location.start_ms <= 65_000, `starts at or before the cue (${JSON.stringify(location)})`);
  t.ok(location?.end_ms !== undefined && location.end_ms >= 69_250, 'ends at or after the cue');
});

t.test('subtitles without a readable cue fail extraction_failed', async (t) => {
  const corrupt = (await fixture('corrupt.vtt')).toString('utf8');
  await expectFailure(t, () => extractVtt(corrupt), 'extraction_failed', /no cue with a valid timing line.*the parser says: \w/);
  await expectFailure(t, () => extractVtt('WEBVTT\n'), 'extraction_failed', /WebVTT file has no cue/);
  await expectFailure(t, () => extractSrt(''), 'extraction_failed', /SRT file has no cue/);
  await expectFailure(t, () => extractSrt('1\n00:00:01,000 => 00:00:02,000\nHello\n'), 'extraction_failed', /no cue with a valid timing line.*the parser says/);
  await expectFailure(t, () => extractTextDocument(Buffer.from('just text'), 'text/vtt'), 'extraction_failed', /WebVTT/);
});

t.test('WebVTT grammar details', (t) => {
  const doc = extractVtt(
    [
      'WEBVTT',
      '',
      '05:01.5 --> 05:03.000',
      'Short timestamps, a <b>bold</b> word and a < b > c kept as text.',
      '00:06:00.000 --> 00:06:02.000',
      'A cue right after another, no blank line.',
      '',
      'NOTE',
      'a comment --> with an arrow is still a comment',
      '',
      '00:07:00.000 --> 00:07:01.000',
      '',
      '00:08:00.000 --> 00:08:01.000 region:fred align:left',
      '<v.loud Fred>Hi &lt;there&gt;</v> &#169; 2025',
    ].join('\n'),
  );
  t.same(
    doc.blocks.map((block) => [doc.text.slice(block.charStart, block.charEnd), block.location]),
    [
      ['Short timestamps, a bold word and a < b > c kept as text.', { start_ms: 301_500, end_ms: 303_000 }],
      ['A cue right after another, no blank line.', { start_ms: 360_000, end_ms: 362_000 }],
      ['Fred: Hi <there> © 2025', { start_ms: 480_000, end_ms: 481_000 }],
    ],
  );
  t.match(doc.notes, ['4 cues', /parser warnings/, '1 cue without text']);
  t.end();
});

// ---------------------------------------------------------------------------------------------------------
// Source code

const CODE_TYPES = [
  'text/x-python', 'text/javascript', 'text/x-typescript', 'text/x-go', 'text/x-rust', 'text/x-java', 'text/x-c',
  'text/x-c++', 'text/x-csharp', 'text/x-ruby', 'text/x-php', 'text/x-kotlin', 'text/x-swift', 'text/x-scala',
];

/** Every non-space character of the source lies in exactly one block, and the text is the source itself. */
function checkCoverage(t: TestContext, source: string, doc: ExtractedDocument, label: string): void {
  t.equal(doc.text, source, `${label}: the text is the source, verbatim`);
  const covered = new Uint8Array(source.length);
  for (const block of doc.blocks) covered.fill(1, block.charStart, block.charEnd);
  let lost = -1;
  for (let i = 0; i < source.length && lost < 0; i++) if (covered[i] === 0 && /\S/.test(source.charAt(i))) lost = i;
  t.equal(lost, -1, `${label}: no text is lost${lost >= 0 ? ` (at ${JSON.stringify(source.slice(lost, lost + 30))})` : ''}`);
}

t.test('isSourceCodeType knows the code types of the extension map', (t) => {
  for (const type of CODE_TYPES) t.ok(isSourceCodeType(type), type);
  t.ok(isSourceCodeType('text/x-python; charset=utf-8'), 'parameters are ignored');
  for (const type of ['text/plain', 'text/markdown', 'text/x-shellscript', 'text/css', 'application/json']) t.notOk(isSourceCodeType(type), type);
  t.end();
});

t.test('Python: a heading per definition, methods under their class', async (t) => {
  const bytes = await fixture('parser.py');
  const source = bytes.toString('utf8');
  const doc = await timed('code', () => extractCode(source, 'text/x-python'));
  const views = checkBlocks(t, doc);
  checkCoverage(t, source, doc, 'parser.py');
  t.same(
    views.filter((view) => view.type === 'heading').map((view) => [view.level, view.text]),
    [
      [2, '@dataclass\nclass Header:'],
      [3, 'def describe(self):'],
      [2, 'def parse_header(line):'],
      [2, 'def parse_records(\n    lines,\n    strict=False,\n):'],
    ],
  );
  t.ok(views.every((view) => view.type === 'heading' || view.type === 'code'), 'only headings and code blocks');
  t.same(blockWith(t, views, 'HEADER.match(line)')?.type, 'code');
  t.ok(views[0]?.text.startsWith('"""Parsing of the harbour log format'), 'the module docstring and imports form their own block');

  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  t.equal(passageWith(t, passages, 'HEADER.match(line)')?.heading, 'def parse_header(line):');
  t.equal(passageWith(t, passages, 'return f"v{self.version}')?.heading, '@dataclass class Header: > def describe(self):');
  t.equal(passageWith(t, passages, 'records.append(fields)')?.heading, 'def parse_records( lines, strict=False, ):');

  const viaDocument = extractTextDocument(bytes, 'text/x-python');
  t.same(viaDocument.blocks, doc.blocks, 'extractTextDocument routes Python here');
  for (let i = 0; i < 3; i++) await timed('code', () => extractCode(source, 'text/x-python'));
});

t.test('TypeScript: classes, methods, functions and arrow functions', async (t) => {
  const source = (await fixture('server.ts')).toString('utf8');
  const doc = await timed('code', () => extractCode(source, 'text/x-typescript'));
  const views = checkBlocks(t, doc);
  checkCoverage(t, source, doc, 'server.ts');
  t.same(
    views.filter((view) => view.type === 'heading').map((view) => [view.level, view.text]),
    [
      [2, 'export interface Route {'],
      [2, 'export class DashboardServer {'],
      [3, 'constructor(port: number) {'],
      [3, 'async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {'],
      [3, 'listen(): void {'],
      [2, 'export function renderTimetable(path: string): string {'],
      [2, "export const formatDeparture = (hour: number): string => `${String(hour).padStart(2, '0')}:00`;"],
    ],
  );
  const body = blockWith(t, views, 'departures every hour');
  t.ok(body?.text.includes('return banner.trim();\n}'), 'a template literal at column 0 does not end the function');
  t.same(blockWith(t, views, 'Answers one request'), { type: 'code', text: '/** Answers one request with the ferry timetable. */' }, 'a doc comment is a block of its own');

  const passages = chunkDocument(doc, CHUNKING);
  checkPassages(t, doc, passages);
  t.equal(
    passageWith(t, passages, 'res.statusCode')?.heading,
    'export class DashboardServer { > async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {',
  );
});

const LANGUAGE_SAMPLES: { type: string; source: string; headings: [number, string][] }[] = [
  {
    type: 'text/x-go',
    source: 'package tide\n\n// Tide is one reading.\ntype Tide struct {\n\tHeight float64\n}\n\nfunc (t *Tide) String() string {\n\treturn fmt.Sprintf(`h\n%v`, t.Height)\n}\n\nfunc Parse(line string) (*Tide, error) {\n\treturn nil, nil\n}\n',
    headings: [[2, 'type Tide struct {'], [2, 'func (t *Tide) String() string {'], [2, 'func Parse(line string) (*Tide, error) {']],
  },
  {
    type: 'text/x-rust',
    source: "#[derive(Debug)]\npub struct Reading<'a> {\n    name: &'a str,\n}\n\nimpl<'a> Reading<'a> {\n    pub fn new(name: &'a str) -> Self {\n        let c = '{';\n        Reading { name }\n    }\n}\n\npub fn parse<T>(x: T) -> T\nwhere\n    T: Clone,\n{\n    x\n}\n",
    headings: [[2, "#[derive(Debug)]\npub struct Reading<'a> {"], [2, "impl<'a> Reading<'a> {"], [3, "pub fn new(name: &'a str) -> Self {"], [2, 'pub fn parse<T>(x: T) -> T']],
  },
  {
    type: 'text/x-java',
    source: 'package p;\n\npublic class Schedule {\n    private final int n;\n\n    public Schedule(int n) {\n        this.n = n;\n    }\n\n    @Override\n    public String toString() {\n        return "s";\n    }\n}\n',
    headings: [[2, 'public class Schedule {'], [3, 'public Schedule(int n) {'], [3, '@Override\n    public String toString() {']],
  },
  {
    type: 'text/x-c',
    source: '#include <stdio.h>\n\nstatic int\ncount(int n)\n{\n    if (n) {\n        return 1;\n    }\n    return 0;\n}\n\nint main(void) {\n    printf("%d",\n        count(1));\n    return 0;\n}\n',
    headings: [[2, 'static int\ncount(int n)\n{'], [2, 'int main(void) {']],
  },
  {
    type: 'text/x-csharp',
    source: 'namespace Harbour\n{\n    public class Ferry\n    {\n        public Ferry(string name)\n        {\n            Name = name;\n        }\n\n        public async Task<int> DepartAsync(int pier)\n        {\n            return pier;\n        }\n    }\n}\n',
    headings: [[2, 'namespace Harbour\n{'], [3, 'public class Ferry\n    {'], [4, 'public Ferry(string name)\n        {'], [4, 'public async Task<int> DepartAsync(int pier)\n        {']],
  },
  {
    type: 'text/x-ruby',
    source: "require 'json'\n\nclass Ferry\n  def initialize(name)\n    @name = name\n  end\n\n  def self.load(path)\n    new(path)\n  end\nend\n",
    headings: [[2, 'class Ferry'], [3, 'def initialize(name)'], [3, 'def self.load(path)']],
  },
  {
    type: 'text/x-php',
    source: '<?php\n\n#[Entity]\nfinal class Ferry\n{\n    public static function load(string $path): self\n    {\n        return new self($path);\n    }\n}\n\nfunction helper($x) {\n    return $x;\n}\n',
    headings: [[2, '#[Entity]\nfinal class Ferry\n{'], [3, 'public static function load(string $path): self\n    {'], [2, 'function helper($x) {']],
  },
  {
    type: 'text/x-kotlin',
    source: 'class Port(private val n: Int) {\n    @Throws(Exception::class)\n    suspend fun depart(pier: Int): Int {\n        return pier\n    }\n}\n\nfun main() {\n    println("""\nhi\n""")\n}\n',
    headings: [[2, 'class Port(private val n: Int) {'], [3, '@Throws(Exception::class)\n    suspend fun depart(pier: Int): Int {'], [2, 'fun main() {']],
  },
  {
    type: 'text/x-swift',
    source: 'struct Ferry {\n    let name: String\n\n    mutating func rename(_ to: String) {\n        name = to\n    }\n}\n\nfunc helper() -> Int {\n    return 1\n}\n',
    headings: [[2, 'struct Ferry {'], [3, 'mutating func rename(_ to: String) {'], [2, 'func helper() -> Int {']],
  },
  {
    type: 'text/x-scala',
    source: 'object Port {\n  def empty: Port = new Port(Nil)\n\n  private[harbour] def load(path: String): Port = {\n    new Port(Nil)\n  }\n}\n',
    headings: [[2, 'object Port {'], [3, 'def empty: Port = new Port(Nil)'], [3, 'private[harbour] def load(path: String): Port = {']],
  },
  {
    type: 'text/x-c++',
    source: 'template <typename T>\nclass Queue {\npublic:\n    void push(const T& item) {\n        items_.push_back(item);\n    }\nprivate:\n    std::vector<T> items_;\n};\n\nint Queue<int>::size() const {\n    return 0;\n}\n',
    headings: [[2, 'template <typename T>\nclass Queue {'], [3, 'void push(const T& item) {'], [2, 'int Queue<int>::size() const {']],
  },
  {
    type: 'text/javascript',
    source: "'use strict';\n\nfunction a() {\n  return 1;\n}\n\nmodule.exports = { a };\n",
    headings: [[2, 'function a() {']],
  },
];

t.test('definitions in each language', (t) => {
  for (const sample of LANGUAGE_SAMPLES) {
    const doc = extractCode(sample.source, sample.type);
    const views = checkBlocks(t, doc);
    checkCoverage(t, sample.source, doc, sample.type);
    t.same(
      views.filter((view) => view.type === 'heading').map((view) => [view.level, view.text]),
      sample.headings,
      `${sample.type} headings`,
    );
  }
  t.end();
});

t.test('code without definitions is cut at blank lines; empty code has no blocks', (t) => {
  const source = "x = 1\ny = 2\n\n\nprint(x + y)\n";
  t.same(checkBlocks(t, extractCode(source, 'text/x-python')), [
    { type: 'code', text: 'x = 1\ny = 2' },
    { type: 'code', text: 'print(x + y)' },
  ]);
  t.same(extractCode('', 'text/x-go'), { text: '', blocks: [] });
  t.same(extractCode(' \n\t\n', 'text/x-rust').blocks, []);
  t.end();
});

t.test('code extraction keeps every character in one block, whatever the input', (t) => {
  const alphabet = [
    'def f(x):\n', 'class A:\n', '    def m(self):\n', '  ', '    ', '\t', '\n', '\n\n', 'return 1\n', '"""', "'''", '"', "'", '`', '#',
    '//', '/*', '*/', '{', '}', '(', ')', '[', ']', '};\n', 'fn main() {\n', 'func (s *S) Run() {\n', 'public class X {\n',
    '    public void run() {\n', 'end\n', '@decorator\n', '#[attr]\n', 'impl X {\n', 'export const f = () => {\n', 'r#"', '"#',
    "'a'", 'x = 1;', 'where\n', '  }\n', 'namespace N\n', 'template <class T>\n', 'static int\n', 'public:\n', 'é', '\u00a0',
  ];
  const source = fc.array(fc.constantFrom(...alphabet), { maxLength: 80 }).map((parts) => parts.join(''));
  fc.assert(
    fc.property(source, fc.constantFrom(...CODE_TYPES), (text, type) => {
      const doc = extractCode(text, type);
      let previousEnd = 0;
      const covered = new Uint8Array(text.length);
      for (const block of doc.blocks) {
        const span = text.slice(block.charStart, block.charEnd);
        if (block.charStart < previousEnd || span === '' || span.trim() !== span) return false;
        if (block.type === 'heading' && (block.level === undefined || block.level < 2 || block.level > 6)) return false;
        previousEnd = block.charEnd;
        covered.fill(1, block.charStart, block.charEnd);
      }
      for (let i = 0; i < text.length; i++) if (covered[i] === 0 && /\S/.test(text.charAt(i))) return false;
      return doc.text === text;
    }),
    { numRuns: 400 },
  );
  t.pass('blocks are ordered, trimmed and cover every non-space character');
  t.end();
});

t.test('a huge minified line and a long file are quick', async (t) => {
  const minified = 'function a(){return 1};'.repeat(40_000);
  const { value: one, cpuMs: oneMs } = await withCpuTime(() => extractCode(minified, 'text/javascript'));
  t.ok(oneMs < 2_000, `one 900 kB line in ${oneMs.toFixed(0)} ms of CPU`);
  t.equal(one.blocks.length, 1);
  const long = Array.from({ length: 5_000 }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`).join('\n');
  const { value: many, cpuMs } = await withCpuTime(() => extractCode(long, 'text/x-python'));
  t.ok(cpuMs < 2_000, `5,000 functions in ${cpuMs.toFixed(0)} ms of CPU`);
  t.equal(many.blocks.filter((block) => block.type === 'heading').length, 5_000);
  t.end();
});

// ---------------------------------------------------------------------------------------------------------
// The other text fixtures go through the existing extractors

t.test('the other text fixtures extract and chunk', async (t) => {
  const cases: [string, string, string][] = [
    ['page.html', 'text/html', 'Ferries leave from pier two.'],
    ['notes.md', 'text/markdown', 'The lighthouse lamp is checked every **Monday**.'],
    ['data.json', 'application/json', 'route: Mainland'],
    ['items.ndjson', 'application/x-ndjson', 'event: tidal generator serviced'],
    ['table.csv', 'text/csv', 'item: Harbour dredging, phase 2; amount: 48000; owner: Port Authority'],
  ];
  for (const [name, type, phrase] of cases) {
    const doc = extractTextDocument(await fixture(name), type);
    const views = checkBlocks(t, doc);
    t.ok(views.some((view) => view.text.includes(phrase)), `${name}: "${phrase}"`);
    const passages = chunkDocument(doc, CHUNKING);
    checkPassages(t, doc, passages);
    t.ok(passages.some((passage) => passage.text.includes(phrase)), `${name}: a passage holds the phrase`);
  }
});
