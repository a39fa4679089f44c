// Turns the bytes of a supported file into readable text plus the structural blocks the chunker follows.
import { isUtf8 } from 'node:buffer';
import { normalizeContentType, SUPPORTED_CONTENT_TYPES } from './detect.js';
import { jsonPathMember } from './json-path.js';
import { lazyImport, lazyRequire } from './lazy.js';
import { type Block, type ExtractContext, type ExtractedDocument, type Extractor, IngestFailure } from './types.js';
import { extractCode, isSourceCodeType } from './formats/code.js';
import { extractSrt, extractVtt } from './formats/transcript.js';

// CSV and HTML parsers load on the first file that needs them, not at start-up (issue 15: both
// threads loaded them for every daemon, ~60 ms each). Synchronous `require`, because extraction of
// text formats is synchronous; both packages ship CommonJS builds.
const csvModule = lazyRequire<typeof import('csv-parse/sync')>('csv-parse/sync');
const parseCsv: typeof import('csv-parse/sync').parse = ((...args: Parameters<typeof import('csv-parse/sync').parse>) =>
  csvModule().parse(...args)) as typeof import('csv-parse/sync').parse;
const htmlModule = lazyRequire<typeof import('htmlparser2')>('htmlparser2');
const htmlParser = (): typeof import('htmlparser2').Parser => htmlModule().Parser;

// Format modules (src/domain/ingest/formats/), imported when the first file of their format arrives.
const pdfModule = lazyImport(() => import('./formats/pdf.js'));
const officeModule = lazyImport(() => import('./formats/office.js'));
const imageModule = lazyImport(() => import('./formats/image.js'));

/** Formats read from their bytes by a library (src/domain/ingest/formats/), each loaded on first use. */
const BINARY_EXTRACTORS: Readonly<Record<string, Extractor>> = {
  'application/pdf': async (bytes, ctx) => (await pdfModule()).extractPdf(bytes, ctx),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': async (bytes, ctx) => (await officeModule()).extractDocx(bytes, ctx),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': async (bytes, ctx) => (await officeModule()).extractPptx(bytes, ctx),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': async (bytes, ctx) => (await officeModule()).extractXlsx(bytes, ctx),
  'image/png': async (bytes, ctx) => (await imageModule()).extractImage(bytes, ctx),
  'image/jpeg': async (bytes, ctx) => (await imageModule()).extractImage(bytes, ctx),
  'image/webp': async (bytes, ctx) => (await imageModule()).extractImage(bytes, ctx),
  'image/tiff': async (bytes, ctx) => (await imageModule()).extractImage(bytes, ctx),
};

/** JSON documents stop contributing text after this many leaves, so one huge file cannot exhaust memory. */
export const MAX_JSON_LEAVES = 200_000;

/** Share of undecodable or control characters above which a file that is not valid UTF-8 is rejected. */
const MAX_GARBAGE_RATIO = 0.05;
/** Share of non-ASCII characters above which bytes are not believed to be legacy 8-bit text. */
const MAX_LEGACY_NON_ASCII_RATIO = 0.3;

export async function extractDocument(bytes: Buffer, contentType: string, ctx: ExtractContext): Promise<ExtractedDocument> {
  const binary = BINARY_EXTRACTORS[normalizeContentType(contentType)];
  return binary !== undefined ? binary(bytes, ctx) : extractTextDocument(bytes, contentType);
}

/** The formats that are text: decoded, then read by their structure (synchronous, no limits needed). */
export function extractTextDocument(bytes: Buffer, contentType: string): ExtractedDocument {
  const type = normalizeContentType(contentType);
  if (isSourceCodeType(type)) return extractCode(decodeText(bytes), type);
  const extract = extractorFor(type);
  if (extract === undefined) {
    throw new IngestFailure(
      'unsupported_content',
      `cannot extract text from content type ${type === '' ? '(none)' : type}; supported: ${SUPPORTED_CONTENT_TYPES.join(', ')} and other text/* types`,
    );
  }
  return extract(decodeText(bytes));
}

function extractorFor(type: string): ((text: string) => ExtractedDocument) | undefined {
  switch (type) {
    case 'text/markdown':
      return extractMarkdown;
    case 'text/html':
      return extractHtml;
    case 'application/json':
      return extractJson;
    case 'application/x-ndjson':
      return extractNdjson;
    case 'text/csv':
      return extractCsv;
    case 'text/vtt':
      return extractVtt;
    case 'application/x-subrip':
      return extractSrt;
    default:
      return type.startsWith('text/') ? extractPlainText : undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Decoding

function decodeText(bytes: Buffer): string {
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    text = new TextDecoder('utf-16le').decode(bytes);
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    text = new TextDecoder('utf-16be').decode(bytes);
  } else if (isUtf8(bytes)) {
    text = new TextDecoder('utf-8').decode(bytes);
  } else {
    text = decodeInvalidUtf8(bytes);
  }
  if (text.includes('\0')) {
    throw new IngestFailure('extraction_failed', 'the file contains NUL bytes: it looks like binary data, not text');
  }
  // TextDecoder already drops a UTF-8/UTF-16 BOM; this catches one left by an unusual encoder.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/**
 * Bytes that are not valid UTF-8 are either UTF-8 with a few damaged sequences, a legacy 8-bit file (read
 * as Windows-1252, the usual case), or binary data, which is refused.
 */
function decodeInvalidUtf8(bytes: Buffer): string {
  const asUtf8 = new TextDecoder('utf-8').decode(bytes);
  let replaced = 0;
  let decodedNonAscii = 0;
  for (let i = 0; i < asUtf8.length; i++) {
    const code = asUtf8.charCodeAt(i);
    if (code === 0xfffd) replaced++;
    else if (code >= 0x80) decodedNonAscii++;
  }
  const mostlyUtf8 = decodedNonAscii >= replaced;
  const text = mostlyUtf8 ? asUtf8 : decodeWindows1252(bytes);

  let garbage = 0;
  let nonAscii = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0xfffd || isControlCharacter(code)) garbage++;
    if (code >= 0x80) nonAscii++;
  }
  // Legacy Western text is overwhelmingly ASCII; a file that is mostly high bytes is not such text.
  if (garbage > text.length * MAX_GARBAGE_RATIO || (!mostlyUtf8 && nonAscii > text.length * MAX_LEGACY_NON_ASCII_RATIO)) {
    throw new IngestFailure(
      'extraction_failed',
      'the file is not valid UTF-8 text and does not read as legacy 8-bit text either; it looks like binary data',
    );
  }
  return text;
}

/** Windows-1252 differs from ISO-8859-1 only in 0x80-0x9f, where it has punctuation and a few letters. */
const WINDOWS_1252_HIGH_CONTROLS: Readonly<Record<number, string>> = {
  0x80: '€', 0x82: '‚', 0x83: 'ƒ', 0x84: '„', 0x85: '…', 0x86: '†', 0x87: '‡', 0x88: 'ˆ', 0x89: '‰', 0x8a: 'Š',
  0x8b: '‹', 0x8c: 'Œ', 0x8e: 'Ž', 0x91: '‘', 0x92: '’', 0x93: '“', 0x94: '”', 0x95: '•', 0x96: '–', 0x97: '—',
  0x98: '˜', 0x99: '™', 0x9a: 'š', 0x9b: '›', 0x9c: 'œ', 0x9e: 'ž', 0x9f: 'Ÿ',
};

// Node's TextDecoder treats the windows-1252 label as ISO-8859-1, so the difference is applied by hand.
function decodeWindows1252(bytes: Buffer): string {
  return bytes
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (char) => WINDOWS_1252_HIGH_CONTROLS[char.charCodeAt(0)] ?? char);
}

/** C0 controls other than whitespace, DEL, and C1 controls: characters that text files don't contain. */
function isControlCharacter(code: number): boolean {
  if (code < 0x20) return code !== 0x09 && code !== 0x0a && code !== 0x0b && code !== 0x0c && code !== 0x0d && code !== 0x1b;
  return code >= 0x7f && code <= 0x9f;
}

// ---------------------------------------------------------------------------------------------------------
// Assembling rendered blocks into one text

interface RenderedBlock {
  type: Block['type'];
  text: string;
  level?: number;
  jsonPath?: string;
}

/** Joins rendered blocks with `separator`, recording each block's span in the joined text. */
function assemble(rendered: readonly RenderedBlock[], separator: string): ExtractedDocument {
  const parts: string[] = [];
  const blocks: Block[] = [];
  let offset = 0;
  for (const block of rendered) {
    if (block.text.trim() === '') continue;
    if (parts.length > 0) {
      parts.push(separator);
      offset += separator.length;
    }
    parts.push(block.text);
    const entry: Block = { type: block.type, charStart: offset, charEnd: offset + block.text.length };
    if (block.level !== undefined) entry.level = block.level;
    if (block.jsonPath !== undefined) entry.jsonPath = block.jsonPath;
    blocks.push(entry);
    offset += block.text.length;
  }
  return { text: parts.join(''), blocks };
}

const WHITESPACE = /\s/;

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------------------
// Plain text

/** Paragraphs are runs of non-blank lines; each block is trimmed to its first and last non-space character. */
function extractPlainText(text: string): ExtractedDocument {
  const blocks: Block[] = [];
  let paragraphStart = -1;
  let paragraphEnd = -1;
  const closeParagraph = (): void => {
    if (paragraphStart >= 0) blocks.push({ type: 'paragraph', charStart: paragraphStart, charEnd: paragraphEnd });
    paragraphStart = -1;
  };
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    let first = lineStart;
    while (first < lineEnd && WHITESPACE.test(text.charAt(first))) first++;
    if (first === lineEnd) {
      closeParagraph();
    } else {
      let last = lineEnd;
      while (last > first && WHITESPACE.test(text.charAt(last - 1))) last--;
      if (paragraphStart < 0) paragraphStart = first;
      paragraphEnd = last;
    }
    lineStart = lineEnd + 1;
  }
  closeParagraph();
  return { text, blocks };
}

// ---------------------------------------------------------------------------------------------------------
// Markdown

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_OR_QUOTE_START = /^ {0,3}(?:[-+*]|\d{1,9}[.)]|>)(?:[ \t]|$)/;
/** `[text](url "title")` and `![alt](src)`: the URL is noise for reading and ranking, the text is kept. */
const INLINE_LINK = /!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?\)/g;
const AUTOLINK = /<((?:https?|mailto|ftp):[^\s<>]*)>/g;

function simplifyInline(line: string): string {
  return line.replace(INLINE_LINK, '$1').replace(AUTOLINK, '$1');
}

function extractMarkdown(source: string): ExtractedDocument {
  const lines = source.split('\n');
  const rendered: RenderedBlock[] = [];
  let paragraph: string[] = [];

  const flushParagraph = (): void => {
    if (paragraph.length > 0) rendered.push({ type: 'paragraph', text: paragraph.join('\n').trim() });
    paragraph = [];
  };

  let index = readFrontMatter(lines, rendered);
  while (index < lines.length) {
    const line = lines[index] ?? '';
    index++;

    if (line.trim() === '') {
      flushParagraph();
      continue;
    }

    const fence = FENCE_OPEN.exec(line);
    if (fence !== null && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) {
      flushParagraph();
      const indent = fence[1]?.length ?? 0;
      const marker = fence[2] ?? '```';
      const code: string[] = [];
      while (index < lines.length) {
        const codeLine = lines[index] ?? '';
        index++;
        if (isClosingFence(codeLine, marker)) break;
        code.push(stripIndent(codeLine, indent).trimEnd());
      }
      // Leading blank lines carry nothing; the first line's own indentation is kept.
      rendered.push({ type: 'code', text: code.join('\n').replace(/^(?:[ \t]*\n)+/, '').trimEnd() });
      continue;
    }

    const heading = ATX_HEADING.exec(line);
    if (heading !== null) {
      flushParagraph();
      const text = simplifyInline(heading[2] ?? '').trim();
      rendered.push({ type: 'heading', level: heading[1]?.length ?? 1, text });
      continue;
    }

    const underline = SETEXT_UNDERLINE.exec(line);
    if (underline !== null && paragraph.length > 0 && !LIST_OR_QUOTE_START.test(paragraph[0] ?? '')) {
      const level = underline[1]?.startsWith('=') ? 1 : 2;
      rendered.push({ type: 'heading', level, text: collapseWhitespace(paragraph.join(' ')) });
      paragraph = [];
      continue;
    }

    if (THEMATIC_BREAK.test(line)) {
      flushParagraph();
      continue;
    }

    paragraph.push(simplifyInline(line).trimEnd());
  }
  flushParagraph();
  return assemble(rendered, '\n\n');
}

/** YAML front matter becomes a paragraph (it often holds the title and tags); returns the first body line. */
function readFrontMatter(lines: readonly string[], rendered: RenderedBlock[]): number {
  if (lines[0]?.trim() !== '---') return 0;
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]?.trim();
    if (line === '---' || line === '...') {
      rendered.push({ type: 'paragraph', text: lines.slice(1, index).join('\n').trim() });
      return index + 1;
    }
  }
  return 0;
}

function isClosingFence(line: string, openingMarker: string): boolean {
  const trimmed = line.trim();
  const fenceChar = openingMarker.charAt(0);
  if (/^ {4}/.test(line) || trimmed.length < openingMarker.length) return false;
  for (const char of trimmed) if (char !== fenceChar) return false;
  return true;
}

function stripIndent(line: string, indent: number): string {
  let strip = 0;
  while (strip < indent && line.charAt(strip) === ' ') strip++;
  return line.slice(strip);
}

// ---------------------------------------------------------------------------------------------------------
// HTML

/** Elements whose content is never readable text. */
const SKIPPED_ELEMENTS = new Set(['head', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'select']);
/** Site chrome; skipped unless a page has nothing else. */
const BOILERPLATE_ELEMENTS = new Set(['nav', 'footer', 'aside']);
const HEADING_LEVELS: Readonly<Record<string, number>> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
/** Elements whose boundaries end a run of text. */
const BLOCK_ELEMENTS = new Set([
  'address', 'article', 'blockquote', 'body', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'form', 'header', 'hgroup', 'hr', 'html', 'legend', 'li', 'main', 'ol', 'p', 'section',
  'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'nav', 'footer', 'aside', 'option',
]);

export function extractHtml(source: string): ExtractedDocument {
  const content = renderHtml(source, true);
  if (content.some((block) => block.type !== 'heading')) return assemble(content, '\n\n');
  const everything = renderHtml(source, false);
  return assemble(everything.length > content.length ? everything : content, '\n\n');
}

function renderHtml(source: string, skipBoilerplate: boolean): RenderedBlock[] {
  const rendered: RenderedBlock[] = [];
  let buffer = '';
  let skipDepth = 0;
  let skipRoot = '';
  let preDepth = 0;
  let headingLevel: number | undefined;
  let inTitle = false;
  let title = '';
  let sawH1 = false;

  const flush = (): void => {
    const text = preDepth > 0 ? tidyPreformatted(buffer) : buffer.replace(/ *\n */g, '\n').trim();
    buffer = '';
    if (text !== '') rendered.push({ type: 'paragraph', text });
  };

  const HtmlParser = htmlParser();
  const parser = new HtmlParser(
    {
      onopentag(name) {
        if (name === 'title' && (skipDepth === 0 || skipRoot === 'head')) inTitle = true;
        if (skipDepth > 0) {
          skipDepth++;
          return;
        }
        if (SKIPPED_ELEMENTS.has(name) || (skipBoilerplate && BOILERPLATE_ELEMENTS.has(name))) {
          skipDepth = 1;
          skipRoot = name;
          return;
        }
        const level = HEADING_LEVELS[name];
        if (level !== undefined) {
          flush();
          headingLevel = level;
          if (level === 1) sawH1 = true;
        } else if (name === 'br') {
          buffer = buffer.trimEnd() + '\n';
        } else if (name === 'pre') {
          flush();
          preDepth++;
        } else if (headingLevel === undefined && BLOCK_ELEMENTS.has(name)) {
          flush();
        }
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        const level = HEADING_LEVELS[name];
        if (level !== undefined && headingLevel !== undefined) {
          const text = collapseWhitespace(buffer);
          buffer = '';
          if (text !== '') rendered.push({ type: 'heading', level: headingLevel, text });
          headingLevel = undefined;
        } else if (name === 'pre') {
          flush();
          preDepth = Math.max(0, preDepth - 1);
        } else if (headingLevel === undefined && BLOCK_ELEMENTS.has(name)) {
          flush();
        }
      },
      ontext(data) {
        if (inTitle) {
          title += data;
          return;
        }
        if (skipDepth > 0) return;
        if (preDepth > 0) {
          buffer += data;
          return;
        }
        const collapsed = data.replace(/\s+/g, ' ');
        buffer += buffer === '' || /\s$/.test(buffer) ? collapsed.trimStart() : collapsed;
      },
    },
    { decodeEntities: true },
  );
  parser.write(source);
  parser.end();
  flush();

  const titleText = collapseWhitespace(title);
  if (!sawH1 && titleText !== '') rendered.unshift({ type: 'heading', level: 1, text: titleText });
  return rendered;
}

function tidyPreformatted(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .trimEnd();
}

// ---------------------------------------------------------------------------------------------------------
// JSON and NDJSON

/** Renders the leaves of JSON values as `key: value` lines, each its own block. */
class JsonLeafRenderer {
  readonly rendered: RenderedBlock[] = [];

  get full(): boolean {
    return this.rendered.length >= MAX_JSON_LEAVES;
  }

  /** Depth-first in document order, without recursion so deep nesting cannot overflow the stack. */
  add(root: unknown, rootPath: string): void {
    const pending: { value: unknown; path: string; key: string }[] = [{ value: root, path: rootPath, key: '' }];
    while (pending.length > 0 && !this.full) {
      const { value, path, key } = pending.pop() as { value: unknown; path: string; key: string };
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], path: `${path}[${i}]`, key });
      } else if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [childKey, child] = entries[i] as [string, unknown];
          pending.push({ value: child, path: path + jsonPathMember(childKey), key: childKey });
        }
      } else {
        this.addLeaf(value, path, key);
      }
    }
  }

  private addLeaf(value: unknown, path: string, key: string): void {
    let text: string;
    if (typeof value === 'string') {
      if (value.trim() === '') return;
      text = value;
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      text = String(value);
    } else {
      return;
    }
    // Array elements are labelled with the key of the array that holds them.
    this.rendered.push({ type: 'json', text: key === '' ? text : `${key}: ${text}`, jsonPath: path });
  }
}

function extractJson(source: string): ExtractedDocument {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new IngestFailure('extraction_failed', `invalid JSON: ${errorMessage(error)}`, { cause: error });
  }
  const renderer = new JsonLeafRenderer();
  renderer.add(value, '$');
  return assemble(renderer.rendered, '\n');
}

/** Each non-blank line is one record; record i gets the path `$[i]`, as if the file were one array. */
function extractNdjson(source: string): ExtractedDocument {
  const renderer = new JsonLeafRenderer();
  const lines = source.split('\n');
  let record = 0;
  for (let lineIndex = 0; lineIndex < lines.length && !renderer.full; lineIndex++) {
    const line = lines[lineIndex] ?? '';
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new IngestFailure('extraction_failed', `invalid JSON on line ${lineIndex + 1}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    renderer.add(value, `$[${record}]`);
    record++;
  }
  return assemble(renderer.rendered, '\n');
}

// ---------------------------------------------------------------------------------------------------------
// CSV

const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;

function extractCsv(source: string): ExtractedDocument {
  let records: string[][];
  try {
    records = parseCsv(source, {
      delimiter: guessDelimiter(source),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }) as string[][];
  } catch (error) {
    throw new IngestFailure('extraction_failed', `invalid CSV: ${errorMessage(error)}`, { cause: error });
  }

  const header = (records[0] ?? []).map((name, i) => collapseWhitespace(name) || columnName(i));
  const rendered: RenderedBlock[] = [];
  for (let r = 1; r < records.length; r++) {
    const fields: string[] = [];
    (records[r] ?? []).forEach((cell, i) => {
      const value = collapseWhitespace(cell);
      if (value !== '') fields.push(`${header[i] ?? columnName(i)}: ${value}`);
    });
    if (fields.length > 0) rendered.push({ type: 'row', text: fields.join('; ') });
  }
  return assemble(rendered, '\n');
}

function columnName(index: number): string {
  return `column ${index + 1}`;
}

/** The candidate that occurs most often, outside quotes, on the header line. */
function guessDelimiter(source: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const char of source.slice(0, 4096)) {
    if (char === '"') quoted = !quoted;
    else if (char === '\n' && !quoted) break;
    else if (!quoted && (DELIMITER_CANDIDATES as readonly string[]).includes(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const candidate of DELIMITER_CANDIDATES) {
    const count = counts.get(candidate) ?? 0;
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return best;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
