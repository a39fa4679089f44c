// PDF text layers, OCR of scanned pages and images, and their failures (src/domain/ingest/formats/{pdf-reader,image-reader,ocr}.ts).
// Fixtures are generated into a temporary directory by fixtures/build/{pdf,image}.mjs.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { decodeTiffPage, extractImage, readTiffPages } from '../src/domain/ingest/formats/image-reader.js';
import { recognize, shutdownOcr } from '../src/domain/ingest/formats/ocr.js';
import { extractPdf } from '../src/domain/ingest/formats/pdf-reader.js';
import { type Block, type ExtractContext, type ExtractedDocument, IngestFailure, type IngestFailureCode } from '../src/domain/ingest/types.js';
import { PATIENCE_MS } from './helpers/wait.js';
import { withCpuTime } from './helpers/cpu-time.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

// The compiled test sits in <root>/<outDir>/test/; the fixture generators are plain ESM in <root>/fixtures/build/.
const root = new URL('../../', import.meta.url);
const ocrModule = new URL('../src/domain/ingest/formats/ocr.js', import.meta.url);
const imageModule = new URL('../src/domain/ingest/formats/image-reader.js', import.meta.url);

interface PdfFixtures {
  build(outDir: string): Promise<Record<string, string>>;
  PAGE_PHRASES: string[];
  SCANNED_TEXT: string;
}
interface ImageFixtures {
  build(outDir: string): Promise<Record<string, string>>;
  SIGN_TEXT: string;
  SECOND_PAGE_TEXT: string;
}

const pdfFixtures = (await import(new URL('fixtures/build/pdf.mjs', root).href)) as PdfFixtures;
const imageFixtures = (await import(new URL('fixtures/build/image.mjs', root).href)) as ImageFixtures;
const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-pdf-ocr-'));
await pdfFixtures.build(dir);
await imageFixtures.build(dir);

t.teardown(async () => {
  await shutdownOcr();
  await rm(dir, { recursive: true, force: true });
});

const timings: string[] = [];
t.teardown(() => {
  t.comment(`timings: ${timings.join(', ')}`);
});

function ctx(overrides: Partial<ExtractContext> = {}): ExtractContext {
  return { ocr: true, maxPages: 100, deadline: Date.now() + PATIENCE_MS, ...overrides };
}

async function fixture(name: string): Promise<Buffer> {
  return readFile(path.join(dir, name));
}

async function timed<T>(label: string, run: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    return await run();
  } finally {
    timings.push(`${label} ${Date.now() - start} ms`);
  }
}

const normalize = (text: string): string => text.toLowerCase().replace(/\s+/g, ' ');

/** Checks the block invariants (ordered, non-overlapping, non-empty, trimmed) and returns each block's text. */
function blockTexts(t: TestContext, doc: ExtractedDocument): string[] {
  let previousEnd = 0;
  let ok = true;
  const texts = doc.blocks.map((block) => {
    const text = doc.text.slice(block.charStart, block.charEnd);
    if (!(block.charStart >= previousEnd && block.charEnd > block.charStart && text.trim() === text && block.charEnd <= doc.text.length)) {
      ok = false;
      t.fail(`block ${JSON.stringify(text)} at ${block.charStart}-${block.charEnd} is not ordered, non-empty and trimmed`);
    }
    previousEnd = block.charEnd;
    return text;
  });
  t.ok(ok, `${doc.blocks.length} blocks are ordered, non-empty and trimmed`);
  return texts;
}

/** The block holding `phrase` (case and spacing ignored). */
function findBlock(t: TestContext, doc: ExtractedDocument, phrase: string): Block | undefined {
  const texts = blockTexts(t, doc);
  const index = texts.findIndex((text) => normalize(text).includes(normalize(phrase)));
  t.ok(index >= 0, `a block contains "${phrase}"`, { found: texts });
  return index >= 0 ? doc.blocks[index] : undefined;
}

function locationOf(block: Block | undefined): { page: number; bbox: number[] } {
  const location = block?.location;
  if (location === undefined || !('page' in location)) return { page: -1, bbox: [] };
  return { page: location.page, bbox: location.bbox ?? [] };
}

/** Each coordinate of `bbox` lies within `tolerance` of `expected`. */
function nearBox(t: TestContext, bbox: number[], expected: [number, number, number, number], tolerance: number, what: string): void {
  const close = bbox.length === 4 && expected.every((value, i) => Math.abs((bbox[i] ?? NaN) - value) <= tolerance);
  t.ok(close, `${what}: bbox ${JSON.stringify(bbox)} is within ${tolerance} of ${JSON.stringify(expected)}`);
}

async function expectFailure(t: TestContext, run: () => Promise<unknown>, code: IngestFailureCode, message: RegExp): Promise<void> {
  try {
    await run();
    t.fail(`expected an IngestFailure ${code}`);
  } catch (error) {
    t.ok(error instanceof IngestFailure, 'fails with an IngestFailure', { error: String(error) });
    if (!(error instanceof IngestFailure)) return;
    t.equal(error.code, code, `code is ${code}`);
    t.match(error.message, message);
  }
}

// ---------------------------------------------------------------------------------------------------------
// PDF

t.test('a PDF with a text layer gives paragraphs per page, located by page and box', async (t) => {
  const bytes = await fixture('report.pdf');
  for (const ocr of [true, false]) {
    const doc = await timed(`report.pdf (3 text pages, ocr ${ocr})`, () => extractPdf(bytes, ctx({ ocr })));
    t.same(doc.notes, ['3 pages'], 'notes give the page count, no OCR');
    pdfFixtures.PAGE_PHRASES.forEach((phrase, index) => {
      const block = findBlock(t, doc, phrase);
      t.equal(block?.evidenceKind, 'page', 'evidence kind is page');
      t.equal(block?.type, 'paragraph');
      const { page, bbox } = locationOf(block);
      t.equal(page, index + 1, `"${phrase}" is on page ${index + 1}`);
      // The paragraph starts at the 72pt margin, 1-2 lines below the heading, and is about 460pt wide.
      nearBox(t, bbox, [72, 107, 530, 133], 10, 'body paragraph');
    });
    const headings = doc.blocks.filter((block) => /^Section \d$/.test(doc.text.slice(block.charStart, block.charEnd)));
    t.equal(headings.length, 3, 'each page heading (a larger font) is a paragraph of its own');
    nearBox(t, locationOf(headings[0]).bbox, [72, 70, 161, 90], 4, 'heading');
    t.ok(doc.blocks.every((block) => locationOf(block).page >= 1), 'every block has a page');
  }
});

t.test('a PDF with more pages than maxPages is too_large', async (t) => {
  await expectFailure(t, async () => extractPdf(await fixture('report.pdf'), ctx({ maxPages: 2 })), 'too_large', /3 pages; the limit is 2/);
});

t.test('a scanned PDF page is rendered and read by OCR', async (t) => {
  const bytes = await fixture('scanned.pdf');
  const doc = await timed('scanned.pdf (1 OCR page)', () => extractPdf(bytes, ctx()));
  const block = findBlock(t, doc, pdfFixtures.SCANNED_TEXT);
  t.equal(block?.evidenceKind, 'ocr', 'evidence kind is ocr');
  const { page, bbox } = locationOf(block);
  t.equal(page, 1);
  // The text is drawn at x = 72pt, baseline 120pt (20pt) and 150pt (16pt): the box is in PDF points.
  nearBox(t, bbox, [73, 105, 452, 154], 12, 'OCR paragraph (points)');
  t.ok(doc.notes?.includes('OCR on page 1'), 'notes say which pages were read by OCR', { notes: doc.notes });
});

t.test('a scanned PDF with OCR off fails plainly', async (t) => {
  await expectFailure(
    t,
    async () => extractPdf(await fixture('scanned.pdf'), ctx({ ocr: false })),
    'extraction_failed',
    /^the PDF has no text layer and processing\.ocr is off$/,
  );
});

t.test('a PDF mixing text and scanned pages', async (t) => {
  const bytes = await fixture('mixed.pdf');
  const doc = await timed('mixed.pdf (1 text + 1 OCR page)', () => extractPdf(bytes, ctx()));
  t.equal(findBlock(t, doc, pdfFixtures.PAGE_PHRASES[0] ?? '')?.evidenceKind, 'page');
  const scanned = findBlock(t, doc, pdfFixtures.SCANNED_TEXT);
  t.equal(scanned?.evidenceKind, 'ocr');
  t.equal(locationOf(scanned).page, 2, 'the OCR text is on page 2');
  t.same(doc.notes, ['2 pages', 'OCR on page 2']);

  const textOnly = await extractPdf(bytes, ctx({ ocr: false }));
  t.ok(normalize(textOnly.text).includes(pdfFixtures.PAGE_PHRASES[0] ?? ''), 'with OCR off the text layer is still read');
  t.notOk(normalize(textOnly.text).includes('invoice'), 'and the scanned page is not');
  t.same(textOnly.notes, ['2 pages', 'no text layer on page 2 (processing.ocr is off)']);
});

t.test('an encrypted PDF fails and says it is password-protected', async (t) => {
  await expectFailure(t, async () => extractPdf(await fixture('encrypted.pdf'), ctx()), 'extraction_failed', /encrypted \(password-protected\)/);
});

t.test('a corrupt or non-PDF file fails as extraction_failed', async (t) => {
  await expectFailure(t, async () => extractPdf(await fixture('corrupt.pdf'), ctx()), 'extraction_failed', /not a readable PDF; it is damaged or truncated/);
  await expectFailure(t, async () => extractPdf(Buffer.from('just some text, not a PDF'), ctx()), 'extraction_failed', /PDF/);
  await expectFailure(t, async () => extractPdf(Buffer.alloc(0), ctx()), 'extraction_failed', /PDF/);
  const report = await fixture('report.pdf');
  // A truncated file either still yields some text (pdf.js rebuilds what it can) or fails cleanly.
  try {
    const doc = await extractPdf(report.subarray(0, Math.floor(report.length / 2)), ctx());
    blockTexts(t, doc);
  } catch (error) {
    t.ok(error instanceof IngestFailure && error.code === 'extraction_failed', 'a truncated PDF fails as extraction_failed', { error: String(error) });
  }
});

t.test('a deadline already passed stops extraction', async (t) => {
  const past = ctx({ deadline: Date.now() - 1 });
  await expectFailure(t, async () => extractPdf(await fixture('report.pdf'), past), 'extraction_failed', /time limit/);
  await expectFailure(t, async () => extractImage(await fixture('sign.png'), past), 'extraction_failed', /time limit/);
});

// ---------------------------------------------------------------------------------------------------------
// Images

t.test('images are read by OCR in PNG, JPEG, WebP and TIFF', async (t) => {
  for (const name of ['sign.png', 'sign.jpg', 'sign.webp', 'sign.tiff', 'sign-lzw.tiff']) {
    const bytes = await fixture(name);
    t.ok(bytes.length < 200_000, `${name} is small (${bytes.length} bytes)`);
    const doc = await timed(name, () => extractImage(bytes, ctx()));
    const block = findBlock(t, doc, imageFixtures.SIGN_TEXT);
    t.equal(block?.evidenceKind, 'image_region', `${name}: evidence kind is image_region`);
    const { page, bbox } = locationOf(block);
    t.equal(page, 1, `${name}: page 1`);
    // Two lines drawn from x = 40 px, baselines 110 (52 px) and 190 (40 px): the box is in pixels.
    nearBox(t, bbox, [43, 72, 769, 198], 15, `${name} paragraph (pixels)`);
  }
});

t.test('every page of a multi-page TIFF is read, with its page number', async (t) => {
  const doc = await timed('sign-2pages.tiff (2 pages)', async () => extractImage(await fixture('sign-2pages.tiff'), ctx()));
  t.equal(locationOf(findBlock(t, doc, imageFixtures.SIGN_TEXT)).page, 1);
  const second = findBlock(t, doc, imageFixtures.SECOND_PAGE_TEXT);
  t.equal(locationOf(second).page, 2);
  t.equal(second?.evidenceKind, 'image_region');
  await expectFailure(t, async () => extractImage(await fixture('sign-2pages.tiff'), ctx({ maxPages: 1 })), 'too_large', /2 pages; the limit is 1/);
});

t.test('the TIFF decoder matches sharp on the common compressions', async (t) => {
  const { default: sharp } = await import('sharp');
  const png = await fixture('sign.png');
  const reference = await sharp(png).removeAlpha().toColourspace('b-w').raw().toBuffer();
  const variants: Record<string, (image: ReturnType<typeof sharp>) => ReturnType<typeof sharp>> = {
    none: (s) => s.tiff({ compression: 'none' }),
    lzw: (s) => s.tiff({ compression: 'lzw' }),
    'lzw+predictor': (s) => s.tiff({ compression: 'lzw', predictor: 'horizontal' }),
    deflate: (s) => s.tiff({ compression: 'deflate' }),
    'deflate+predictor, grey': (s) => s.removeAlpha().toColourspace('b-w').tiff({ compression: 'deflate', predictor: 'horizontal' }),
    packbits: (s) => s.tiff({ compression: 'packbits' }),
    'tiled deflate': (s) => s.tiff({ compression: 'deflate', tile: true, tileWidth: 64, tileHeight: 64 }),
    // UTIF reads 16-bit grey without an alpha channel (scanners write it so); grey+alpha at 16 bits it misreads.
    '16-bit grey': (s) => s.removeAlpha().toColourspace('grey16').tiff({ compression: 'lzw', predictor: 'horizontal' }),
    jpeg: (s) => s.removeAlpha().tiff({ compression: 'jpeg', quality: 95 }),
  };
  for (const [name, make] of Object.entries(variants)) {
    const tiff = await make(sharp(png)).toBuffer();
    const [page] = readTiffPages(tiff);
    if (page === undefined) {
      t.fail(`${name}: no page`);
      continue;
    }
    const pnm = decodeTiffPage(tiff, page.ifd);
    const grey = pnm.subarray(pnm.length - reference.length);
    let total = 0;
    for (let i = 0; i < reference.length; i++) total += Math.abs((grey[i] ?? 0) - (reference[i] ?? 0));
    const meanDifference = total / reference.length;
    t.ok(meanDifference < (name === 'jpeg' ? 2 : 0.5), `${name}: mean difference ${meanDifference.toFixed(2)} grey levels`);
  }
});

t.test('damaged and unknown images fail as extraction_failed', async (t) => {
  await expectFailure(t, async () => extractImage(await fixture('corrupt.png'), ctx()), 'extraction_failed', /PNG is damaged/);
  const png = await fixture('sign.png');
  await expectFailure(t, async () => extractImage(png.subarray(0, 2000), ctx()), 'extraction_failed', /PNG is damaged.*truncated/);
  const tiff = await fixture('sign.tiff');
  await expectFailure(t, async () => extractImage(tiff.subarray(0, 3000), ctx()), 'extraction_failed', /TIFF is damaged/);
  await expectFailure(t, async () => extractImage(Buffer.from('GIF89a not supported here'), ctx()), 'extraction_failed', /not a PNG, JPEG, WebP or TIFF/);
});

t.test('images with OCR off are unsupported_content', async (t) => {
  await expectFailure(
    t,
    async () => extractImage(await fixture('sign.png'), ctx({ ocr: false })),
    'unsupported_content',
    /^images are read by OCR, and processing\.ocr is off$/,
  );
});

t.test('OCR past its deadline is stopped, and the next job starts a new engine', async (t) => {
  // A page full of text: OCR takes well over a second on it.
  const { createCanvas } = await import('@napi-rs/canvas');
  const canvas = createCanvas(1700, 2200);
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, 1700, 2200);
  g.fillStyle = '#000';
  g.font = '28px sans-serif';
  for (let y = 60; y < 2150; y += 40) g.fillText('the keeper logged the weather and the passing ships every hour', 60, y);
  const page = await canvas.encode('png');
  await extractImage(await fixture('sign.png'), ctx()); // the engine is warm
  // OCR runs on this process's threads: a recognizer that finished the page before giving up would
  // have spent seconds of CPU on it, one that gave up at the deadline spends a fraction of that.
  const { cpuMs } = await withCpuTime(() => expectFailure(t, () => recognize(page, { deadline: Date.now() + 300 }), 'extraction_failed', /time limit/));
  t.ok(cpuMs < 1_500, `gave up promptly (${cpuMs.toFixed(0)} ms of CPU)`);
  const doc = await extractImage(await fixture('sign.webp'), ctx());
  t.ok(normalize(doc.text).includes(imageFixtures.SIGN_TEXT), 'OCR works again afterwards');
  await expectFailure(t, async () => extractPdf(await fixture('scanned.pdf'), ctx({ deadline: Date.now() + 100 })), 'extraction_failed', /time limit/);
});

t.test('shutdownOcr stops the engine and a later job starts it again', async (t) => {
  await shutdownOcr();
  await shutdownOcr(); // twice is harmless
  const doc = await extractImage(await fixture('sign.jpg'), ctx());
  t.ok(normalize(doc.text).includes(imageFixtures.SIGN_TEXT));
});

t.test('shutdownOcr lets the process exit', async (t) => {
  const script = (shutdown: boolean): string => `
    import { readFile } from 'node:fs/promises';
    const { extractImage } = await import(${JSON.stringify(imageModule.href)});
    const { shutdownOcr } = await import(${JSON.stringify(ocrModule.href)});
    const doc = await extractImage(await readFile(${JSON.stringify(path.join(dir, 'sign.png'))}), { ocr: true, maxPages: 10, deadline: Date.now() + 30000 });
    console.log(doc.text.split('\\n')[0]);
    ${shutdown ? 'await shutdownOcr();' : ''}
  `;
  const run = async (shutdown: boolean) => {
    const file = path.join(dir, `ocr-exit-${shutdown ? 'with' : 'without'}-shutdown.mjs`);
    await writeFile(file, script(shutdown));
    // A plain node process, as the daemon runs: without the test runner's loader options.
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, output: () => output, errors: () => errors };
  };
  const withShutdown = await run(true);
  const withoutShutdown = await run(false);
  const timer = setTimeout(() => withShutdown.child.kill(), PATIENCE_MS);
  const code = await withShutdown.exited;
  clearTimeout(timer);
  t.equal(code, 0, 'the process exits by itself after shutdownOcr()', { stderr: withShutdown.errors() });
  t.match(withShutdown.output(), /harbour closed for maintenance/);
  // Without it the OCR thread keeps the process alive: still running well after its script has finished.
  // Unref'd: a pending sleep must not keep the test process alive once the race is decided.
  const sleep = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
  const finished = async (): Promise<void> => {
    while (!/harbour closed/.test(withoutShutdown.output())) {
      if ((await Promise.race([withoutShutdown.exited.then(() => 'exited' as const), sleep(100)])) === 'exited') return;
    }
  };
  await Promise.race([finished(), sleep(PATIENCE_MS)]);
  t.match(withoutShutdown.output(), /harbour closed for maintenance/, 'the script without shutdownOcr() finished its work');
  const outcome = await Promise.race([withoutShutdown.exited.then(() => 'exited' as const), sleep(1_500)]);
  t.equal(outcome, 'timeout', 'without shutdownOcr() the process does not exit (this is why the indexing thread calls it)');
  withoutShutdown.child.kill();
  await withoutShutdown.exited;
});
