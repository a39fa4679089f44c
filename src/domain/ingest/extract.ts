// Turns the bytes of a supported file into readable text plus the structural blocks the chunker follows: the
// format registry (formats/registry.ts) names the format that reads a type; text formats are decoded here first.
import { isUtf8 } from 'node:buffer';
import { checkDecompression } from './decompression.js';
import { normalizeContentType } from './detect.js';
import { formatFor, SUPPORTED_CONTENT_TYPES } from './formats/registry.js';
import { type ExtractContext, type ExtractedDocument, IngestFailure } from './types.js';

/** Share of undecodable or control characters above which a file that is not valid UTF-8 is rejected. */
const MAX_GARBAGE_RATIO = 0.05;
/** Share of non-ASCII characters above which bytes are not believed to be legacy 8-bit text. */
const MAX_LEGACY_NON_ASCII_RATIO = 0.3;

export async function extractDocument(bytes: Buffer, contentType: string, ctx: ExtractContext): Promise<ExtractedDocument> {
  const format = formatFor(normalizeContentType(contentType));
  if (format?.reads !== 'bytes') return extractTextDocument(bytes, contentType);
  // Before any library inflates a part of the file, what it expands to is measured (zip bombs and the like).
  await checkDecompression(bytes, { maxInflatedBytes: ctx.maxInflatedBytes, deadline: ctx.deadline });
  return format.extract(bytes, ctx);
}

/** The formats that are text: decoded, then read by their structure (synchronous, no limits needed). */
export function extractTextDocument(bytes: Buffer, contentType: string): ExtractedDocument {
  const type = normalizeContentType(contentType);
  const format = formatFor(type);
  if (format?.reads !== 'text') {
    throw new IngestFailure(
      'unsupported_content',
      `cannot extract text from content type ${type === '' ? '(none)' : type}; supported: ${SUPPORTED_CONTENT_TYPES.join(', ')} and other text/* types`,
    );
  }
  return format.extract(decodeText(bytes), type);
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
