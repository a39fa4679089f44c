// Decides which content type a file is: declared type, then magic numbers, then extension, then a text sniff.
import { isUtf8 } from 'node:buffer';
import { contentTypeFromPath } from '../../contract/content-types.js';
import { lazyImport } from './lazy.js';

export const SUPPORTED_CONTENT_TYPES = [
  'text/plain',
  'text/markdown',
  'text/html',
  'application/json',
  'application/x-ndjson',
  'text/csv',
  'text/vtt',
  'application/x-subrip',
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/tiff',
] as const;

export type SupportedContentType = (typeof SUPPORTED_CONTENT_TYPES)[number];

/** Spellings seen in the wild for the types we read, mapped to the one we use. */
const CONTENT_TYPE_ALIASES: Readonly<Record<string, string>> = {
  'text/x-markdown': 'text/markdown',
  'text/md': 'text/markdown',
  'application/xhtml+xml': 'text/html',
  'text/json': 'application/json',
  'application/ndjson': 'application/x-ndjson',
  'application/jsonl': 'application/x-ndjson',
  'application/jsonlines': 'application/x-ndjson',
  'application/x-jsonlines': 'application/x-ndjson',
  'application/json-seq': 'application/x-ndjson',
  'text/x-ndjson': 'application/x-ndjson',
  'text/jsonl': 'application/x-ndjson',
  'application/csv': 'text/csv',
  'text/comma-separated-values': 'text/csv',
  'text/srt': 'application/x-subrip',
  'application/srt': 'application/x-subrip',
  'text/x-subrip': 'application/x-subrip',
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/tif': 'image/tiff',
  'application/x-pdf': 'application/pdf',
};

/** Lowercases, drops parameters (`; charset=utf-8`) and maps aliases to the canonical type. */
export function normalizeContentType(contentType: string): string {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return CONTENT_TYPE_ALIASES[bare] ?? bare;
}

export function isSupportedContentType(contentType: string): boolean {
  const normalized = normalizeContentType(contentType);
  // Every other text/* type (source code, logs, text/xml, ...) is read as plain text.
  return normalized.startsWith('text/') || (SUPPORTED_CONTENT_TYPES as readonly string[]).includes(normalized);
}


/**
 * file-type matches some signatures that ordinary text can start with ("BM" is a BMP, "MZ" an .exe, "ID3" an
 * MP3). When the bytes are clean text such a match is ignored, except for these formats, which are written
 * in ASCII but are still not text we can read.
 */
const TEXT_WRITTEN_BINARY_FORMATS = new Set(['application/pdf', 'application/postscript', 'application/eps', 'application/rtf']);

/** Office Open XML formats: zip containers, which magic numbers alone may only call application/zip. */
const OFFICE_TYPES = new Set([
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
]);

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
    if (!isTextualType(declared) && isSupportedContentType(declared)) {
      if (magic !== undefined && magic !== declared && !(magic === 'application/zip' && OFFICE_TYPES.has(declared))) {
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

  // Office files are zips; one too damaged for its parts to be recognised is still the format its name says.
  if (magic === 'application/zip' && fromExtension !== undefined && OFFICE_TYPES.has(fromExtension)) return { contentType: fromExtension };
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
  if (looksLikeText && !isTextualType(mime) && !TEXT_WRITTEN_BINARY_FORMATS.has(mime)) return undefined;
  return mime;
}


/** Types whose bytes are text we could read, even if we don't support the type itself. */
function isTextualType(contentType: string): boolean {
  return (
    contentType.startsWith('text/') ||
    contentType === 'application/json' ||
    contentType === 'application/x-ndjson' ||
    contentType === 'application/x-subrip' ||
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
