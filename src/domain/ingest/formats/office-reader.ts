// DOCX (read as a stream to HTML by ./docx-reader.ts → the HTML extractor), PPTX (read directly with jszip, one page per slide) and XLSX (exceljs,
// one row block per spreadsheet row, labelled with the header row like the CSV extractor).
import { Parser as HtmlParser } from 'htmlparser2';
import { extractHtml } from './html.js';
import { lazyImport } from '../lazy.js';
import { centralDirectory, resolvePartName, type ZipEntry } from '../zip.js';
import { docxToHtml } from './docx-reader.js';
import { type Block, type ExtractContext, type ExtractedDocument, IngestFailure, type SourceLocation } from '../types.js';

type OfficeFormat = 'DOCX' | 'PPTX' | 'XLSX';

// The libraries are loaded on first use: together they take about half a second to import, which every
// process importing the extractors (the CLI, the daemon before its first Office file) would otherwise pay.
const jsZipModule = lazyImport(() => import('jszip'));
const excelModule = lazyImport(() => import('exceljs'));
const loadJsZip = async () => (await jsZipModule()).default;
const loadExcel = async () => (await excelModule()).default;

/** The part every file of a format has; its absence means the zip is some other kind of file. */
const MAIN_PART: Readonly<Record<OfficeFormat, string>> = {
  DOCX: 'word/document.xml',
  PPTX: 'ppt/presentation.xml',
  XLSX: 'xl/workbook.xml',
};

const SLIDE_PART = /^ppt\/slides\/slide\d+\.xml$/i;

/** Zip archives with more entries than this are not believable Office files. */
const MAX_ZIP_ENTRIES = 10_000;
// jszip and exceljs inflate the whole package in memory: ../extract.ts has measured what it expands to
// (../decompression.ts) before these readers get it.

// ---------------------------------------------------------------------------------------------------------
// Assembling text from rendered pieces

interface Piece {
  type: Block['type'];
  text: string;
  level?: number;
  location?: SourceLocation;
  evidenceKind?: Block['evidenceKind'];
}

/** Collects pieces and whole sub-documents into one text, joining them with `separator` and recording spans. */
class DocumentBuilder {
  private readonly parts: string[] = [];
  private readonly blocks: Block[] = [];
  private offset = 0;

  add(piece: Piece, separator: string): void {
    const text = piece.text.trim();
    if (text === '') return;
    const start = this.start(separator);
    this.parts.push(text);
    const block: Block = { type: piece.type, charStart: start, charEnd: start + text.length };
    if (piece.level !== undefined) block.level = piece.level;
    if (piece.location !== undefined) block.location = piece.location;
    if (piece.evidenceKind !== undefined) block.evidenceKind = piece.evidenceKind;
    this.blocks.push(block);
    this.offset += text.length;
  }

  /** Appends an already extracted document, shifting its block spans. */
  addDocument(doc: ExtractedDocument, separator: string): void {
    if (doc.blocks.length === 0 || doc.text.trim() === '') return;
    const start = this.start(separator);
    this.parts.push(doc.text);
    for (const block of doc.blocks) this.blocks.push({ ...block, charStart: block.charStart + start, charEnd: block.charEnd + start });
    this.offset += doc.text.length;
  }

  get isEmpty(): boolean {
    return this.blocks.length === 0;
  }

  build(notes: string[]): ExtractedDocument {
    const doc: ExtractedDocument = { text: this.parts.join(''), blocks: this.blocks };
    if (notes.length > 0) doc.notes = notes;
    return doc;
  }

  private start(separator: string): number {
    if (this.parts.length > 0) {
      this.parts.push(separator);
      this.offset += separator.length;
    }
    return this.offset;
  }
}

/**
 * Table rows rendered like the CSV extractor: the first row names the columns and every later row becomes
 * `Header: value; Header2: value`. A table of a single row has no header to name; its values are joined.
 */
function renderTableRows(rows: readonly (readonly string[])[]): string[] {
  const cleaned = rows.map((row) => row.map(collapseWhitespace)).filter((row) => row.some((cell) => cell !== ''));
  const [header, ...body] = cleaned;
  if (header === undefined) return [];
  if (body.length === 0) return [header.filter((cell) => cell !== '').join('; ')];
  const names = header.map((name, i) => name || columnName(i));
  return body
    .map((row) => {
      const fields: string[] = [];
      row.forEach((value, i) => {
        if (value !== '') fields.push(`${names[i] ?? columnName(i)}: ${value}`);
      });
      return fields.join('; ');
    })
    .filter((line) => line !== '');
}

function columnName(index: number): string {
  return `column ${index + 1}`;
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------------------
// Container checks: what kind of file it is, before a library gets to fail obscurely

const OLE_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
/** Stream names of an encrypted OOXML package (MS-OFFCRYPTO), stored as UTF-16LE in the OLE directory. */
const ENCRYPTION_STREAMS = [Buffer.from('EncryptionInfo', 'utf16le'), Buffer.from('EncryptedPackage', 'utf16le')];

/**
 * The entries of the zip's central directory. Throws `extraction_failed` for password-protected files (an
 * OLE container holding an encrypted package), legacy binary Office files, and truncated or damaged zips.
 */
function zipEntries(bytes: Buffer, format: OfficeFormat): ZipEntry[] {
  if (bytes.length >= OLE_SIGNATURE.length && bytes.subarray(0, OLE_SIGNATURE.length).equals(OLE_SIGNATURE)) {
    if (ENCRYPTION_STREAMS.some((name) => bytes.includes(name))) {
      throw new IngestFailure('extraction_failed', `The ${format} file is encrypted (password-protected); it cannot be read without the password.`);
    }
    throw new IngestFailure(
      'extraction_failed',
      `The file is a legacy binary Office document (an OLE compound file, like .doc, .ppt or .xls), not a ${format} file; save it as ${format.toLowerCase()} to index it.`,
    );
  }
  if (bytes.length < 22 || bytes.readUInt32LE(0) !== 0x04034b50) {
    throw new IngestFailure('extraction_failed', `The ${format} file is corrupt: it is not a zip archive (${format} files are zip packages).`);
  }
  const entries = centralDirectory(bytes);
  if (entries === undefined) {
    throw new IngestFailure(
      'extraction_failed',
      `The ${format} file is corrupt or truncated: its zip archive has no readable central directory (the end of the file is missing or damaged).`,
    );
  }
  if (entries.length > MAX_ZIP_ENTRIES) {
    throw new IngestFailure('extraction_failed', `The ${format} file's zip archive has ${entries.length} entries; more than ${MAX_ZIP_ENTRIES} is not a believable ${format} file.`);
  }
  // Word writes word/document.xml; a few producers use another name, declared in [Content_Types].xml.
  const main = MAIN_PART[format];
  if (!entries.some(({ name }) => name.toLowerCase() === main || (format === 'DOCX' && /^word\/[^/]+\.xml$/i.test(name)))) {
    throw new IngestFailure('extraction_failed', `The file is a zip archive but not ${format === 'XLSX' ? 'an' : 'a'} ${format} file: it has no ${main} part.`);
  }
  return entries;
}

/** A library's failure on bytes that passed the container checks: still a damaged file, said plainly. */
function libraryFailure(format: OfficeFormat, error: unknown): IngestFailure {
  if (error instanceof IngestFailure) return error;
  if (error instanceof Error && error.name === 'AbortError') return deadlineFailure(format);
  const detail = error instanceof Error ? error.message : String(error);
  return new IngestFailure('extraction_failed', `The ${format} file is corrupt or not a valid ${format} file: ${detail}`, { cause: error });
}

function deadlineFailure(format: OfficeFormat): IngestFailure {
  return new IngestFailure('extraction_failed', `Reading the ${format} file took longer than its time limit.`);
}

function checkDeadline(ctx: ExtractContext, format: OfficeFormat): void {
  if (Date.now() > ctx.deadline) throw deadlineFailure(format);
}

/** Gives up at the deadline; the library call keeps running in the background but is no longer awaited. */
async function beforeDeadline<T>(work: Promise<T>, ctx: ExtractContext, format: OfficeFormat): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineFailure(format)), Math.max(0, ctx.deadline - Date.now()));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------------------
// DOCX

export async function extractDocx(bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> {
  const entries = zipEntries(bytes, 'DOCX');
  checkDeadline(ctx, 'DOCX');
  let html: string;
  try {
    html = await docxToHtml(bytes, entries, () => checkDeadline(ctx, 'DOCX'));
  } catch (error) {
    throw libraryFailure('DOCX', error);
  }
  checkDeadline(ctx, 'DOCX');
  return htmlWithTables(html);
}

/**
 * The HTML extractor reads everything but tables, which it would cut into one paragraph per cell; each
 * top-level table is instead rendered as rows (header-labelled, like CSV) between the HTML around it.
 */
function htmlWithTables(html: string): ExtractedDocument {
  const builder = new DocumentBuilder();
  let segmentStart = 0;
  let tableStart = -1;
  let tableDepth = 0;
  let rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string | undefined;
  let tables = 0;

  const flushHtml = (end: number): void => {
    const segment = html.slice(segmentStart, end);
    if (segment.trim() !== '') builder.addDocument(extractHtml(segment), '\n\n');
  };

  const parser = new HtmlParser(
    {
      onopentag(name) {
        if (name === 'table') {
          tableDepth++;
          if (tableDepth === 1) {
            tableStart = parser.startIndex;
            rows = [];
            return;
          }
        }
        if (tableDepth === 0) return;
        if (tableDepth === 1 && name === 'tr') row = [];
        else if (tableDepth === 1 && (name === 'td' || name === 'th')) cell = '';
        else if (cell !== undefined && (name === 'p' || name === 'br' || name === 'li')) cell += ' ';
      },
      onclosetag(name) {
        if (tableDepth === 0) return;
        if (name === 'table') {
          tableDepth--;
          if (tableDepth === 0) {
            flushHtml(tableStart);
            tables++;
            const lines = renderTableRows(rows);
            lines.forEach((line, i) => builder.add({ type: 'row', text: line }, i === 0 ? '\n\n' : '\n'));
            segmentStart = parser.endIndex + 1;
            return;
          }
          if (cell !== undefined) cell += ' ';
          return;
        }
        if (tableDepth !== 1) {
          if (cell !== undefined && (name === 'p' || name === 'tr' || name === 'td' || name === 'th')) cell += ' ';
          return;
        }
        if ((name === 'td' || name === 'th') && cell !== undefined) {
          row?.push(cell);
          cell = undefined;
        } else if (name === 'tr' && row !== undefined) {
          rows.push(row);
          row = undefined;
        }
      },
      ontext(data) {
        if (cell !== undefined) cell += data;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  if (tableDepth === 0) flushHtml(html.length);
  else flushHtml(tableStart);
  return builder.build(tables > 0 ? [`${tables} table${tables === 1 ? '' : 's'}`] : []);
}

// ---------------------------------------------------------------------------------------------------------
// PPTX

export async function extractPptx(bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> {
  const names = zipEntries(bytes, 'PPTX').map(({ name }) => name);
  const slideParts = names.filter((name) => SLIDE_PART.test(name)).length;
  if (slideParts > ctx.maxPages) {
    throw new IngestFailure('too_large', `The presentation has ${slideParts} slides; the limit is ${ctx.maxPages}.`);
  }
  checkDeadline(ctx, 'PPTX');
  let slides: SlideText[];
  try {
    slides = await beforeDeadline(readPptxSlides(bytes, ctx), ctx, 'PPTX');
  } catch (error) {
    throw libraryFailure('PPTX', error);
  }

  if (slides.length > ctx.maxPages) {
    throw new IngestFailure('too_large', `The presentation has ${slides.length} slides; the limit is ${ctx.maxPages}.`);
  }
  const builder = new DocumentBuilder();
  let withNotes = 0;
  slides.forEach((slide, index) => {
    const page = index + 1;
    const pieces = [...slide.pieces];
    // Generated notes pages usually hold nothing but the slide's number; that alone is not a note.
    const speakerNotes = slide.notes.filter((piece) => collapseWhitespace(piece.text) !== String(page));
    if (speakerNotes.length > 0) withNotes++;

    const titleIndex = pieces.findIndex((piece) => piece.type === 'heading');
    const location: SourceLocation = { page };
    // Without a title the slide still starts a section, so the previous slide's title does not carry over.
    const title: Piece = titleIndex >= 0 ? (pieces.splice(titleIndex, 1)[0] as Piece) : { type: 'heading', text: `Slide ${page}` };
    const ordered: Piece[] = [{ ...title, type: 'heading', level: 1 }, ...pieces, ...speakerNotes];
    ordered.forEach((piece, i) => {
      const block: Piece = { ...piece, location, evidenceKind: 'page' };
      if (piece.type === 'heading') block.level = i === 0 ? 1 : 2;
      builder.add(block, i === 0 || piece.type !== 'row' || ordered[i - 1]?.type !== 'row' ? '\n\n' : '\n');
    });
  });
  const notes = [`${slides.length} slide${slides.length === 1 ? '' : 's'}`];
  if (withNotes > 0) notes.push(`speaker notes on ${withNotes} slide${withNotes === 1 ? '' : 's'}`);
  return builder.build(notes);
}

// PresentationML is read directly (ECMA-376 Part 1, §19): slides in the order of presentation.xml's
// sldIdLst, each slide's shapes in document order, its speaker notes through the slide's notesSlide
// relationship. (officeparser did this before; its releases since 6.1 need Node 22.)

interface SlideText {
  pieces: Piece[];
  notes: Piece[];
}

/** Placeholders that hold no content of the slide: dates, footers, slide numbers, the notes page's slide image. */
const CHROME_PLACEHOLDERS = new Set(['dt', 'ftr', 'hdr', 'sldNum', 'sldImg']);
const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);
const NOTES_RELATIONSHIP = /\/notesSlide$/;

async function readPptxSlides(bytes: Buffer, ctx: ExtractContext): Promise<SlideText[]> {
  const JSZip = await loadJsZip();
  const zip = await JSZip.loadAsync(bytes);
  const read = async (name: string): Promise<string | undefined> => zip.file(name)?.async('string');
  const slideNames = await slideOrder(zip, read);
  const slides: SlideText[] = [];
  for (const name of slideNames) {
    checkDeadline(ctx, 'PPTX');
    const xml = await read(name);
    if (xml === undefined) continue;
    const pieces = slidePieces(xml, false);
    const notesName = await relatedPart(name, NOTES_RELATIONSHIP, read);
    const notesXml = notesName === undefined ? undefined : await read(notesName);
    slides.push({ pieces, notes: notesXml === undefined ? [] : slidePieces(notesXml, true).map((piece) => ({ ...piece, type: 'paragraph' })) });
  }
  return slides;
}

/** Slide part names in presentation order; by part number when presentation.xml or its relationships are unreadable. */
async function slideOrder(zip: import('jszip'), read: (name: string) => Promise<string | undefined>): Promise<string[]> {
  const byNumber = Object.keys(zip.files)
    .filter((name) => SLIDE_PART.test(name))
    .sort((a, b) => partNumber(a) - partNumber(b));
  const presentation = await read('ppt/presentation.xml');
  const rels = relationships(await read('ppt/_rels/presentation.xml.rels'), 'ppt/presentation.xml');
  if (presentation === undefined || rels.size === 0) return byNumber;
  const ordered: string[] = [];
  const parser = new HtmlParser(
    {
      onopentag(name, attributes) {
        if (name !== 'p:sldId') return;
        const target = rels.get(attributes['r:id'] ?? '')?.target;
        if (target !== undefined && zip.file(target) !== null && !ordered.includes(target)) ordered.push(target);
      },
    },
    { xmlMode: true },
  );
  parser.end(presentation);
  return ordered.length > 0 ? ordered : byNumber;
}

function partNumber(name: string): number {
  return Number(/(\d+)\.xml$/i.exec(name)?.[1] ?? 0);
}

/** The first part that `part` relates to with a relationship type matching `type`. */
async function relatedPart(part: string, type: RegExp, read: (name: string) => Promise<string | undefined>): Promise<string | undefined> {
  const slash = part.lastIndexOf('/');
  const relsName = `${part.slice(0, slash)}/_rels/${part.slice(slash + 1)}.rels`;
  for (const rel of relationships(await read(relsName), part).values()) if (type.test(rel.type)) return rel.target;
  return undefined;
}

/** Id → {type, target} of a .rels part, targets resolved against the source part's folder (OPC, ECMA-376 Part 2 §9.3). */
function relationships(xml: string | undefined, sourcePart: string): Map<string, { type: string; target: string }> {
  const rels = new Map<string, { type: string; target: string }>();
  if (xml === undefined) return rels;
  const base = sourcePart.slice(0, sourcePart.lastIndexOf('/') + 1);
  const parser = new HtmlParser(
    {
      onopentag(name, attributes) {
        if (name !== 'Relationship' || attributes.TargetMode === 'External') return;
        const { Id: id, Type: type, Target: target } = attributes;
        if (id && type && target) rels.set(id, { type, target: resolvePartName(base, target) });
      },
    },
    { xmlMode: true },
  );
  parser.end(xml);
  return rels;
}

/**
 * The text of one slide (or notes page) in document order: a title placeholder becomes a heading, every
 * other paragraph a paragraph, a table its rows. On a notes page only the notes body and free shapes count.
 */
function slidePieces(xml: string, notesPage: boolean): Piece[] {
  const pieces: Piece[] = [];
  interface Shape {
    placeholder: string | undefined;
    paragraphs: string[];
  }
  const shapes: Shape[] = [];
  let paragraph: string | undefined;
  let inText = false;
  let fallbackDepth = 0;
  let table: string[][] | undefined;
  let row: string[] | undefined;
  let cell: string[] | undefined;

  const parser = new HtmlParser(
    {
      onopentag(name, attributes) {
        // Markup-compatibility alternatives repeat their content; the Choice is read, the Fallback skipped.
        if (name === 'mc:Fallback' || fallbackDepth > 0) {
          fallbackDepth++;
          return;
        }
        switch (name) {
          case 'p:sp':
            shapes.push({ placeholder: undefined, paragraphs: [] });
            break;
          case 'p:ph': {
            const shape = shapes.at(-1);
            // A placeholder without a type is a body placeholder (ECMA-376 §19.3.1.36, ST_PlaceholderType default).
            if (shape) shape.placeholder = attributes.type ?? 'body';
            break;
          }
          case 'a:tbl':
            table = [];
            break;
          case 'a:tr':
            if (table) row = [];
            break;
          case 'a:tc':
            if (row) cell = [];
            break;
          case 'a:p':
            paragraph = '';
            break;
          case 'a:t':
            inText = true;
            break;
          case 'a:br':
            if (paragraph !== undefined) paragraph += '\n';
            break;
          case 'a:tab':
            if (paragraph !== undefined) paragraph += ' ';
            break;
        }
      },
      ontext(text) {
        if (inText && fallbackDepth === 0 && paragraph !== undefined) paragraph += text;
      },
      onclosetag(name) {
        if (fallbackDepth > 0) {
          fallbackDepth--;
          return;
        }
        switch (name) {
          case 'a:t':
            inText = false;
            break;
          case 'a:p': {
            const text = paragraph ?? '';
            paragraph = undefined;
            if (cell) cell.push(text);
            else shapes.at(-1)?.paragraphs.push(text);
            break;
          }
          case 'a:tc':
            if (row && cell) row.push(cell.join(' '));
            cell = undefined;
            break;
          case 'a:tr':
            if (table && row) table.push(row);
            row = undefined;
            break;
          case 'a:tbl':
            if (table) for (const line of renderTableRows(table)) pieces.push({ type: 'row', text: line });
            table = undefined;
            break;
          case 'p:sp': {
            const shape = shapes.pop();
            if (shape === undefined) break;
            const kind = shape.placeholder;
            if (kind !== undefined && CHROME_PLACEHOLDERS.has(kind)) break;
            if (notesPage && kind !== undefined && kind !== 'body') break;
            if (kind !== undefined && TITLE_PLACEHOLDERS.has(kind) && !notesPage) {
              const text = tidySlideText(shape.paragraphs.join('\n'));
              if (text !== '') pieces.push({ type: 'heading', text });
              break;
            }
            for (const line of shape.paragraphs) {
              const text = tidySlideText(line);
              if (text !== '') pieces.push({ type: 'paragraph', text });
            }
            break;
          }
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return pieces;
}

/** Soft line breaks (vertical tab) become newlines; spaces inside each line are collapsed. */
function tidySlideText(text: string): string {
  return text
    .split(/[\v\r\n]+/)
    .map((line) => line.replace(/[ \t\f\u00a0]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// XLSX

/** How many rows are rendered between two deadline checks. */
const ROWS_PER_DEADLINE_CHECK = 2_000;

export async function extractXlsx(bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> {
  zipEntries(bytes, 'XLSX');
  checkDeadline(ctx, 'XLSX');
  let workbook: import('exceljs').Workbook;
  try {
    const ExcelJS = await loadExcel();
    workbook = new ExcelJS.Workbook();
    await beforeDeadline(workbook.xlsx.load(bytes as unknown as ArrayBuffer), ctx, 'XLSX');
  } catch (error) {
    throw libraryFailure('XLSX', error);
  }
  checkDeadline(ctx, 'XLSX');

  const builder = new DocumentBuilder();
  let totalRows = 0;
  let hidden = 0;
  for (const sheet of workbook.worksheets) {
    if (sheet.state !== 'visible') hidden++;
    builder.add({ type: 'heading', level: 1, text: sheet.name }, '\n\n');
    const rows: { number: number; cells: Map<number, string> }[] = [];
    sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
      const cells = new Map<number, string>();
      row.eachCell({ includeEmpty: false }, (cell, column) => {
        if (cell.isMerged && cell.master !== cell) return; // merged ranges are read once, from their top-left cell
        const value = collapseWhitespace(renderCellValue(cell.value));
        if (value !== '') cells.set(column, value);
      });
      if (cells.size > 0) rows.push({ number: rowNumber, cells });
    });
    const rendered = renderSheetRows(rows);
    rendered.forEach((piece, i) => {
      builder.add(piece, i === 0 ? '\n\n' : '\n');
      if ((totalRows + i + 1) % ROWS_PER_DEADLINE_CHECK === 0) checkDeadline(ctx, 'XLSX');
    });
    totalRows += rendered.filter((piece) => piece.type === 'row').length;
  }
  if (workbook.worksheets.length === 0) {
    throw new IngestFailure('extraction_failed', 'The XLSX file has no worksheets that can be read.');
  }
  const sheets = workbook.worksheets.length;
  const notes = [`${sheets} sheet${sheets === 1 ? '' : 's'}, ${totalRows} row${totalRows === 1 ? '' : 's'}`];
  if (hidden > 0) notes.push(`${hidden} hidden sheet${hidden === 1 ? '' : 's'} included`);
  return builder.build(notes);
}

/**
 * Rows of one sheet. The header is the first row with as many filled cells as a table row has (so a title
 * line above the table is not taken for it); rows above it are paragraphs, rows below it are rendered
 * `Header: value; ...` with `column N` (N the sheet's column number) for unnamed columns.
 */
function renderSheetRows(rows: readonly { number: number; cells: Map<number, string> }[]): Piece[] {
  if (rows.length === 0) return [];
  const widest = Math.max(...rows.slice(0, 50).map((row) => row.cells.size));
  const headerIndex = Math.max(0, rows.findIndex((row) => row.cells.size >= Math.min(2, widest)));
  const pieces: Piece[] = [];
  for (const row of rows.slice(0, headerIndex)) pieces.push({ type: 'paragraph', text: [...row.cells.values()].join('; ') });
  const header = rows[headerIndex];
  if (header === undefined) return pieces;
  const body = rows.slice(headerIndex + 1);
  if (body.length === 0) {
    pieces.push({ type: 'row', text: [...header.cells.values()].join('; ') });
    return pieces;
  }
  for (const row of body) {
    const fields = [...row.cells.entries()]
      .sort(([a], [b]) => a - b)
      .map(([column, value]) => `${header.cells.get(column) ?? columnName(column - 1)}: ${value}`);
    pieces.push({ type: 'row', text: fields.join('; ') });
  }
  return pieces;
}

/** A cell value as text: formulas by their cached result, dates as ISO dates, rich text and links by their text. */
function renderCellValue(value: unknown, depth = 0): string {
  if (value === null || value === undefined || depth > 4) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return formatDate(value);
  if (typeof value !== 'object') return String(value);
  const record = value as Record<string, unknown>;
  if (Array.isArray(record.richText)) {
    return (record.richText as { text?: unknown }[]).map((run) => (typeof run.text === 'string' ? run.text : '')).join('');
  }
  if ('formula' in record || 'sharedFormula' in record) return renderCellValue(record.result, depth + 1);
  if ('result' in record) return renderCellValue(record.result, depth + 1);
  if ('hyperlink' in record || 'text' in record) return renderCellValue(record.text ?? record.hyperlink, depth + 1);
  if (typeof record.error === 'string') return record.error;
  return '';
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  // Binary floating point noise (0.1 + 0.2) is not what the spreadsheet shows.
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
}

/** Spreadsheet dates have no time zone; exceljs reads them as UTC. Midnight is a plain date. */
function formatDate(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  const day = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  // Excel stores a time of day without a date as a fraction of day zero (1899-12-30).
  if (day === '1899-12-30' || day === '1899-12-31') return time;
  return time === '00:00:00' ? day : `${day}T${time}`;
}
