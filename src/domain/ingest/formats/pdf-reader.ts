// PDF: the text layer of each page (pdf.js, bundled by unpdf), grouped into lines and paragraphs by position;
// pages without a text layer are rendered (@napi-rs/canvas) and read by OCR (./ocr.ts) when OCR is on.
import { createIsomorphicCanvasFactory, getDocumentProxy, getResolvedPDFJS } from 'unpdf';
import { IngestFailure, type ExtractContext, type ExtractedDocument, type Extractor } from '../types.js';
import { type Box, describe, msUntil, PageTextBuilder, recognize, timeLimitFailure, unionBoxes, withTimeout } from './ocr.js';

type DocumentOptions = NonNullable<Parameters<typeof getDocumentProxy>[1]>;
type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;
type PdfTextContent = Awaited<ReturnType<PdfPage['getTextContent']>>;
type PdfTextItem = Extract<PdfTextContent['items'][number], { str: string }>;

/** Resolution pages are rendered at for OCR; 200 dpi reads body text well and keeps OCR time reasonable. */
const OCR_DPI = 200;
/** Rendered pages are kept under this many pixels (a large-format page is rendered at a lower resolution). */
const MAX_RENDER_PIXELS = 12_000_000;
/** A page with fewer visible characters than this, and an image, is also read by OCR (a scan with a stamp). */
const FEW_CHARACTERS = 20;
/** Images pdf.js decodes for rendering are limited to this many pixels. */
const MAX_IMAGE_PIXELS = 64_000_000;

const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffe\uffff]/g;

export const extractPdf: Extractor = async (bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> => {
  checkDeadline(ctx);
  const pdf = await openDocument(bytes, ctx);
  try {
    return await readDocument(pdf, ctx);
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
};

async function openDocument(bytes: Buffer, ctx: ExtractContext): Promise<PdfDocument> {
  const options: DocumentOptions = {
    // Errors only: pdf.js warns on every recoverable oddity of a file.
    verbosity: 0,
    maxImageSize: MAX_IMAGE_PIXELS,
    isOffscreenCanvasSupported: false,
  };
  if (ctx.ocr) {
    // Rendering needs canvases from @napi-rs/canvas (also for pdf.js's internal scratch canvases).
    options.CanvasFactory = await createIsomorphicCanvasFactory(() => import('@napi-rs/canvas'));
  }
  // pdf.js may detach the buffer it is given, so it gets a copy, never the caller's Buffer.
  const loading = getDocumentProxy(new Uint8Array(bytes), options);
  try {
    return await withTimeout(loading, msUntil(ctx.deadline), () => {
      loading.then((late) => late.destroy()).catch(() => undefined);
      return timeLimitFailure();
    });
  } catch (error) {
    throw openFailure(error);
  }
}

function openFailure(error: unknown): unknown {
  if (error instanceof IngestFailure) return error;
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') {
    return new IngestFailure(
      'extraction_failed',
      'the PDF is encrypted (password-protected): it cannot be opened without its password, so its text cannot be read',
      { cause: error },
    );
  }
  if (name === 'InvalidPDFException') {
    return new IngestFailure('extraction_failed', `the file is not a readable PDF; it is damaged or truncated (${describe(error)})`, {
      cause: error,
    });
  }
  return new IngestFailure('extraction_failed', `could not open the PDF: ${describe(error)}`, { cause: error });
}

async function readDocument(pdf: PdfDocument, ctx: ExtractContext): Promise<ExtractedDocument> {
  const pageCount = pdf.numPages;
  if (pageCount > ctx.maxPages) {
    throw new IngestFailure('too_large', `the PDF has ${pageCount} pages; the limit is ${ctx.maxPages}`);
  }
  const builder = new PageTextBuilder();
  const ocrPages: number[] = [];
  const ocrEmptyPages: number[] = [];
  const noTextLayer: number[] = [];
  const unreadable: string[] = [];
  const ocrFailures: string[] = [];

  for (let number = 1; number <= pageCount; number++) {
    checkDeadline(ctx, number, pageCount);
    let page: PdfPage;
    try {
      page = await bounded(pdf.getPage(number), ctx);
    } catch (error) {
      if (error instanceof IngestFailure) throw error;
      unreadable.push(`page ${number} (${describe(error)})`);
      continue;
    }
    try {
      let paragraphs: Paragraph[];
      try {
        paragraphs = readTextLayer(page, await bounded(page.getTextContent(), ctx));
      } catch (error) {
        if (error instanceof IngestFailure) throw error;
        unreadable.push(`page ${number} (${describe(error)})`);
        continue;
      }
      for (const paragraph of paragraphs) builder.add(paragraph.text, 'page', number, paragraph.bbox);

      const visible = paragraphs.reduce((sum, p) => sum + p.text.replace(/\s/g, '').length, 0);
      const needsOcr = visible === 0 || (visible < FEW_CHARACTERS && ctx.ocr && (await hasImages(page, ctx)));
      if (!needsOcr) continue;
      if (!ctx.ocr) {
        noTextLayer.push(number);
        continue;
      }
      try {
        const found = await ocrPage(page, number, builder, ctx);
        ocrPages.push(number);
        if (found === 0) ocrEmptyPages.push(number);
      } catch (error) {
        if (error instanceof IngestFailure && /time limit/.test(error.message)) throw error;
        ocrFailures.push(`page ${number} (${describe(error)})`);
      }
    } finally {
      // Frees the page's parsed resources (fonts, images) before the next page.
      page.cleanup();
    }
  }

  if (unreadable.length === pageCount && pageCount > 0) {
    throw new IngestFailure('extraction_failed', `no page of the PDF could be read: ${unreadable.join('; ')}`);
  }
  if (builder.blocks.length === 0) {
    if (noTextLayer.length > 0) throw new IngestFailure('extraction_failed', 'the PDF has no text layer and processing.ocr is off');
    if (ocrFailures.length > 0) throw new IngestFailure('extraction_failed', `the PDF has no text layer and OCR failed: ${ocrFailures.join('; ')}`);
    if (pageCount === 0) throw new IngestFailure('extraction_failed', 'the PDF has no pages');
    throw new IngestFailure(
      'extraction_failed',
      `no text found: the PDF has no text layer and OCR found no text on its ${plural(pageCount, 'page')}`,
    );
  }

  const notes = [plural(pageCount, 'page')];
  if (ocrPages.length > 0) notes.push(`OCR on ${pageList(ocrPages)}`);
  if (ocrEmptyPages.length > 0) notes.push(`OCR found no text on ${pageList(ocrEmptyPages)}`);
  if (noTextLayer.length > 0) notes.push(`no text layer on ${pageList(noTextLayer)} (processing.ocr is off)`);
  if (ocrFailures.length > 0) notes.push(`OCR failed on ${ocrFailures.join('; ')}`);
  if (unreadable.length > 0) notes.push(`could not read ${unreadable.join('; ')}`);
  return { text: builder.text, blocks: builder.blocks, notes };
}

/** Renders a page and adds what OCR reads on it; returns the number of blocks added. */
async function ocrPage(page: PdfPage, number: number, builder: PageTextBuilder, ctx: ExtractContext): Promise<number> {
  const unscaled = page.getViewport({ scale: 1 });
  const scale = Math.min(OCR_DPI / 72, Math.sqrt(MAX_RENDER_PIXELS / Math.max(1, unscaled.width * unscaled.height)));
  const image = await renderGrey(page, scale, ctx);
  const result = await recognize(image, { deadline: ctx.deadline, dpi: 72 * scale });
  return builder.addOcr(result, 'ocr', number, scale);
}

/** Renders a page on a white background into an 8-bit grey PNM image (no PNG encoding: tesseract reads PNM). */
async function renderGrey(page: PdfPage, scale: number, ctx: ExtractContext): Promise<Buffer> {
  const { createCanvas } = await import('@napi-rs/canvas');
  const viewport = page.getViewport({ scale });
  const width = Math.max(1, Math.ceil(viewport.width));
  const height = Math.max(1, Math.ceil(viewport.height));
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  const task = page.render({ canvas, canvasContext: context, viewport } as unknown as Parameters<PdfPage['render']>[0]);
  try {
    await bounded(task.promise, ctx);
  } catch (error) {
    task.cancel();
    throw error;
  }
  const rgba = context.getImageData(0, 0, width, height).data;
  const pixels = new Uint32Array(rgba.buffer, rgba.byteOffset, width * height);
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1');
  const out = Buffer.allocUnsafe(header.length + width * height);
  header.copy(out);
  const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  for (let i = 0, o = header.length; i < pixels.length; i++, o++) {
    const p = pixels[i] as number;
    const [r, g, b] = littleEndian ? [p & 0xff, (p >>> 8) & 0xff, (p >>> 16) & 0xff] : [p >>> 24, (p >>> 16) & 0xff, (p >>> 8) & 0xff];
    out[o] = (r * 77 + g * 150 + b * 29) >> 8;
  }
  canvas.width = 0;
  canvas.height = 0;
  return out;
}

async function hasImages(page: PdfPage, ctx: ExtractContext): Promise<boolean> {
  try {
    const { OPS } = await getResolvedPDFJS();
    const imageOps = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageXObjectRepeat, OPS.paintImageMaskXObject]);
    const list = await bounded(page.getOperatorList(), ctx);
    return list.fnArray.some((op) => imageOps.has(op));
  } catch (error) {
    if (error instanceof IngestFailure) throw error;
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Text layer → lines → paragraphs

interface Paragraph {
  text: string;
  bbox: Box;
}

/** One text item placed on the page (top-left origin, PDF points). */
interface Placed {
  text: string;
  /** Baseline origin. */
  x: number;
  y: number;
  /** Unit vectors along the baseline and towards the top of the glyphs. */
  ux: number;
  uy: number;
  vx: number;
  vy: number;
  /** Font size and advance, in points. */
  size: number;
  width: number;
  box: Box;
  endsLine: boolean;
}

interface Line {
  parts: string[];
  first: Placed;
  last: Placed;
  size: number;
  box: Box;
}

/** Groups a page's text items into lines (same baseline, left to right) and lines into paragraphs. */
export function readTextLayer(page: PdfPage, content: PdfTextContent): Paragraph[] {
  const viewport = page.getViewport({ scale: 1 });
  const lines: Line[] = [];
  let line: Line | undefined;
  let previous: Placed | undefined;
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const item = place(raw, viewport.transform);
    if (item === undefined) {
      // Empty items carry line ends only.
      if (raw.hasEOL && previous !== undefined) previous.endsLine = true;
      continue;
    }
    if (line !== undefined && previous !== undefined && !previous.endsLine && continuesLine(previous, item)) {
      const gap = (item.x - previous.x) * previous.ux + (item.y - previous.y) * previous.uy - previous.width;
      const joined = line.parts[line.parts.length - 1] ?? '';
      if (gap > 0.15 * Math.min(previous.size, item.size) && !/\s$/.test(joined) && !/^\s/.test(item.text)) line.parts.push(' ');
      line.parts.push(item.text);
      line.last = item;
      line.size = Math.max(line.size, item.size);
      line.box = unionBoxes([line.box, item.box]);
    } else {
      line = { parts: [item.text], first: item, last: item, size: item.size, box: item.box };
      lines.push(line);
    }
    previous = item;
  }
  return toParagraphs(lines);
}

function place(item: PdfTextItem, viewportTransform: number[]): Placed | undefined {
  const text = item.str.replace(CONTROL_CHARACTERS, '');
  if (text.trim() === '') return undefined;
  const m = multiply(viewportTransform, item.transform as number[]);
  const [a, b, c, d, x, y] = m as [number, number, number, number, number, number];
  const alongLength = Math.hypot(a, b);
  const upLength = Math.hypot(c, d);
  if (alongLength === 0 || upLength === 0) return undefined;
  const size = upLength;
  const ux = a / alongLength;
  const uy = b / alongLength;
  // The glyphs' "up" on the page (towards -y for upright text): where the tops of the glyphs are.
  const vx = c / upLength;
  const vy = d / upLength;
  const width = Math.max(0, item.width);
  // Glyphs reach about 0.8 of the font size above the baseline and 0.2 below it.
  const corners: [number, number][] = [];
  for (const along of [0, width]) {
    for (const up of [-0.2 * size, 0.8 * size]) corners.push([x + ux * along + vx * up, y + uy * along + vy * up]);
  }
  const xs = corners.map((p) => p[0]);
  const ys = corners.map((p) => p[1]);
  const box: Box = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  return { text, x, y, ux, uy, vx, vy, size, width, box, endsLine: item.hasEOL };
}

/** Whether `next` sits on the same baseline as `previous`, after it (allowing a small overlap). */
function continuesLine(previous: Placed, next: Placed): boolean {
  if (Math.abs(previous.ux * next.ux + previous.uy * next.uy) < 0.99) return false;
  const dx = next.x - previous.x;
  const dy = next.y - previous.y;
  const across = dx * previous.vx + dy * previous.vy;
  const along = dx * previous.ux + dy * previous.uy - previous.width;
  const size = Math.max(previous.size, next.size);
  return Math.abs(across) < 0.5 * size && along > -0.5 * size && along < 6 * size;
}

/**
 * Starts a new paragraph when the gap to the previous line is clearly larger than the page's usual line
 * pitch, the font size changes, the text moves up or sideways (a new column or region), or the previous
 * line ends a sentence well short of the paragraph's width.
 */
function toParagraphs(lines: Line[]): Paragraph[] {
  const pitches: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const pitch = linePitch(lines[i - 1] as Line, lines[i] as Line);
    if (pitch > 0) pitches.push(Math.round(pitch * 2) / 2);
  }
  const usualPitch = mode(pitches);

  const paragraphs: Paragraph[] = [];
  let current: Line[] = [];
  const flush = (): void => {
    if (current.length === 0) return;
    const text = current
      .map((l) => l.parts.join('').replace(/\s+/g, ' ').trim())
      .filter((t) => t !== '')
      .join('\n');
    if (text !== '') paragraphs.push({ text, bbox: unionBoxes(current.map((l) => l.box)) });
    current = [];
  };
  for (const line of lines) {
    const before = current[current.length - 1];
    if (before !== undefined && startsParagraph(before, line, current, usualPitch)) flush();
    current.push(line);
  }
  flush();
  return paragraphs;
}

/** Distance from one line's baseline down to the next's, in the first line's frame (negative: upwards). */
function linePitch(above: Line, below: Line): number {
  const { first } = above;
  const dx = below.first.x - first.x;
  const dy = below.first.y - first.y;
  return -(dx * first.vx + dy * first.vy);
}

function startsParagraph(before: Line, line: Line, paragraph: Line[], usualPitch: number | undefined): boolean {
  const size = Math.max(before.size, line.size);
  if (Math.abs(before.size - line.size) > 0.2 * size) return true;
  const pitch = linePitch(before, line);
  if (pitch < 0.5 * Math.min(before.size, line.size)) return true;
  const expected = usualPitch !== undefined && usualPitch >= 0.9 * line.size ? usualPitch : 1.25 * line.size;
  if (pitch > 1.35 * expected + 0.05 * size) return true;
  // Sideways: the line starts far from where the paragraph's lines start (a new column or a table cell).
  const start = (l: Line): number => l.first.x * l.first.ux + l.first.y * l.first.uy;
  if (Math.abs(start(line) - start(before)) > 12 * size) return true;
  // A sentence that ends well short of the paragraph's width ends the paragraph.
  const lineWidth = (l: Line): number => Math.hypot(l.box[2] - l.box[0], l.box[3] - l.box[1]);
  const widest = Math.max(...paragraph.map(lineWidth));
  const lastText = before.parts.join('').trimEnd();
  return paragraph.length > 1 && /[.!?:]["'”’)\]]*$/.test(lastText) && lineWidth(before) < 0.7 * widest;
}

function mode(values: readonly number[]): number | undefined {
  const counts = new Map<number, number>();
  let best: number | undefined;
  let bestCount = 0;
  for (const value of values) {
    const count = (counts.get(value) ?? 0) + 1;
    counts.set(value, count);
    if (count > bestCount || (count === bestCount && best !== undefined && value < best)) {
      best = value;
      bestCount = count;
    }
  }
  return best;
}

function multiply(m1: readonly number[], m2: readonly number[]): number[] {
  const [a1 = 1, b1 = 0, c1 = 0, d1 = 1, e1 = 0, f1 = 0] = m1;
  const [a2 = 1, b2 = 0, c2 = 0, d2 = 1, e2 = 0, f2 = 0] = m2;
  return [
    a1 * a2 + c1 * b2,
    b1 * a2 + d1 * b2,
    a1 * c2 + c1 * d2,
    b1 * c2 + d1 * d2,
    a1 * e2 + c1 * f2 + e1,
    b1 * e2 + d1 * f2 + f1,
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

function checkDeadline(ctx: ExtractContext, page?: number, pages?: number): void {
  if (Date.now() < ctx.deadline) return;
  if (page === undefined) throw timeLimitFailure();
  throw new IngestFailure('extraction_failed', `extraction did not finish within the time limit (stopped at page ${page} of ${pages})`);
}

/** A pdf.js call that gives up at the deadline (the document is destroyed afterwards, stopping the work). */
function bounded<T>(promise: Promise<T>, ctx: ExtractContext): Promise<T> {
  return withTimeout(promise, msUntil(ctx.deadline), timeLimitFailure);
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** "page 3", "pages 2, 4-6". */
function pageList(pages: readonly number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < pages.length; i++) {
    const start = pages[i] as number;
    let end = start;
    while (i + 1 < pages.length && pages[i + 1] === end + 1) end = pages[++i] as number;
    ranges.push(end > start + 1 ? `${start}-${end}` : end === start + 1 ? `${start}, ${end}` : `${start}`);
  }
  return `${pages.length === 1 ? 'page' : 'pages'} ${ranges.join(', ')}`;
}
