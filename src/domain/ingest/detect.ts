// Decides which content type a file is: declared type, then magic numbers, then extension, then a text sniff.
import { isUtf8 } from 'node:buffer';
import { contentTypeFromPath } from '../../contract/content-types.js';
import { canonicalContentType, formatFor } from './formats/registry.js';
import { lazyImport } from './lazy.js';

/** Lowercases, drops parameters (`; charset=utf-8`) and maps aliases to the canonical type. */
export function normalizeContentType(contentType: string): string {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return canonicalContentType(bare);
}

export function isSupportedContentType(contentType: string): boolean {
  return formatFor(normalizeContentType(contentType)) !== undefined;
}

/**
 * file-type matches some signatures that ordinary text can start with ("BM" is a BMP, "MZ" an .exe, "ID3" an
 * MP3). When the bytes are clean text such a match is ignored, except for formats whose signature is ASCII
 * (a registered format's `magic.asciiSignature`, and these, which no format reads but which are not text).
 */
const UNREAD_ASCII_SIGNATURE_TYPES = new Set(['application/postscript', 'application/eps', 'application/rtf']);

/** Declared types that say nothing about the content. */
const UNINFORMATIVE_DECLARED_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const SNIFF_BYTES = 64 * 1024;

export async function detectContentType(input: {
  bytes: Buffer;
  declared?: string | undefined;
  path: string;
}): Promise<{ contentType: string; note?: string }> {
  const { bytes } = input;
  const declared = input.declared === undefined ? '' : normalizeContentType(input.declared);
  const fromExtension = contentTypeFromPath(input.path);
  const looksLikeText = isCleanText(bytes);
  const magic = await magicContentType(bytes, looksLikeText);

  if (!UNINFORMATIVE_DECLARED_TYPES.has(declared)) {
    if (isTextualType(declared) && magic !== undefined && !isTextualType(magic)) {
      return {
        contentType: magic,
        note: `declared content type ${declared} is contradicted by the file's bytes, which are ${magic}`,
      };
    }
    // A declared binary format the bytes do not carry the signature of: follow the bytes.
    if (formatFor(declared)?.reads === 'bytes') {
      if (magic !== undefined && magic !== declared && !isContainerOf(magic, declared)) {
        return { contentType: magic, note: `declared content type ${declared} is contradicted by the file's bytes, which are ${magic}` };
      }
      if (magic === undefined && looksLikeText) {
        const asText = fromExtension !== undefined && isTextualType(fromExtension) ? fromExtension : 'text/plain';
        return { contentType: asText, note: `declared content type ${declared} is contradicted by the file's bytes, which are text; read as ${asText}` };
      }
    }
    // Servers commonly label markdown, subtitles and code as text/plain; the extension is the better witness then.
    if (declared === 'text/plain' && fromExtension !== undefined && fromExtension !== declared && isTextualType(fromExtension)) return { contentType: fromExtension };
    return { contentType: declared };
  }

  // A container format (Office files are zips) too damaged for its parts to be recognised is still the format its name says.
  if (magic !== undefined && fromExtension !== undefined && isContainerOf(magic, fromExtension)) return { contentType: fromExtension };
  if (magic !== undefined && !isTextualType(magic)) return { contentType: magic };
  if (fromExtension !== undefined) return { contentType: fromExtension };
  if (magic !== undefined) return { contentType: magic };
  if (looksLikeText) return { contentType: 'text/plain' };
  return { contentType: 'application/octet-stream' };
}

/** file-type (and its parsers) loads with the first file whose bytes are sniffed, not at start-up. */
const loadFileType = lazyImport(() => import('file-type'));

async function magicContentType(bytes: Buffer, looksLikeText: boolean): Promise<string | undefined> {
  const { fileTypeFromBuffer } = await loadFileType();
  const detected = await fileTypeFromBuffer(bytes);
  if (detected === undefined) return undefined;
  const mime = normalizeContentType(detected.mime);
  if (looksLikeText && !isTextualType(mime) && !hasAsciiSignature(mime)) return undefined;
  return mime;
}

function hasAsciiSignature(contentType: string): boolean {
  const format = formatFor(contentType);
  return format?.reads === 'bytes' ? format.magic?.asciiSignature === true : UNREAD_ASCII_SIGNATURE_TYPES.has(contentType);
}

/** Whether `contentType`'s format is a container of type `sniffed` (an Office file is a zip). */
function isContainerOf(sniffed: string, contentType: string): boolean {
  const format = formatFor(contentType);
  return format?.reads === 'bytes' && format.magic?.container === sniffed;
}

/** Types whose bytes are text we could read, even if we don't support the type itself. */
function isTextualType(contentType: string): boolean {
  return (
    contentType.startsWith('text/') ||
    formatFor(contentType)?.reads === 'text' ||
    contentType === 'application/xml' ||
    contentType.endsWith('+xml') ||
    contentType.endsWith('+json')
  );
}

/**
 * Valid UTF-8, or UTF-16 with a byte order mark, without NUL or other control characters that text files
 * don't contain. Judged on a prefix.
 */
function isCleanText(bytes: Buffer): boolean {
  const utf16 = utf16Encoding(bytes);
  if (utf16 !== undefined) {
    const sample = bytes.subarray(0, Math.min(bytes.length, SNIFF_BYTES) & ~1);
    try {
      const text = new TextDecoder(utf16, { fatal: true }).decode(sample);
      for (let i = 0; i < text.length; i++) if (isBinaryControl(text.charCodeAt(i))) return false;
      return true;
    } catch {
      return false;
    }
  }
  let end = Math.min(bytes.length, SNIFF_BYTES);
  if (end < bytes.length) {
    // Cut before a multi-byte sequence rather than through it.
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  }
  const sample = bytes.subarray(0, end);
  for (const byte of sample) if (isBinaryControl(byte)) return false;
  return isUtf8(sample);
}

/** Control characters other than tab, line breaks, form feed and escape (ANSI colours in logs). */
function isBinaryControl(code: number): boolean {
  return code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0b && code !== 0x0c && code !== 0x0d && code !== 0x1b;
}

function utf16Encoding(bytes: Buffer): 'utf-16le' | 'utf-16be' | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}
