// Turns the bytes of a supported file into readable text plus the structural blocks the chunker follows.
import { isUtf8 } from 'node:buffer';
import { normalizeContentType, SUPPORTED_CONTENT_TYPES } from './detect.js';
import { lazyImport } from './lazy.js';
import { type ExtractContext, type ExtractedDocument, type Extractor, IngestFailure } from './types.js';
import { extractCode, isSourceCodeType } from './formats/code.js';
import { extractCsv } from './formats/csv.js';
import { extractHtml } from './formats/html.js';
import { extractJson, extractNdjson } from './formats/json.js';
import { extractMarkdown } from './formats/markdown.js';
import { extractPlainText } from './formats/plain-text.js';
import { extractSrt, extractVtt } from './formats/transcript.js';

// Format readers (src/domain/ingest/formats/), imported when the first file of their format arrives.
const pdfModule = lazyImport(() => import('./formats/pdf-reader.js'));
const officeModule = lazyImport(() => import('./formats/office-reader.js'));
const imageModule = lazyImport(() => import('./formats/image-reader.js'));

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
