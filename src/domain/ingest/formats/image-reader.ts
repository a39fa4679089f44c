// Images (PNG, JPEG, WebP, TIFF) read by OCR (tesseract.js, offline; see ./ocr.ts).
//
// Tesseract's image reader (leptonica) decodes PNG, JPEG, WebP and single-page TIFF with no, LZW,
// PackBits or CCITT compression. TIFFs it cannot read (Deflate, JPEG, tiles, 16-bit) and every page
// of a multi-page TIFF are decoded by `utif2` (UTIF.js) into RGBA, then handed over as an 8-bit grey
// PNM image (a 15-byte header before the pixels). @napi-rs/canvas must never be given TIFF bytes (it
// crashes the process on them).
import { crc32 } from 'node:zlib';
import UTIF from 'utif2';
import { IngestFailure, type ExtractContext, type ExtractedDocument, type Extractor } from '../types.js';
import { describe, OCR_UNREADABLE_PREFIX, PageTextBuilder, recognize, timeLimitFailure, type OcrResult } from './ocr.js';

/** Images above this many pixels are refused: OCR time and memory grow with the pixel count. */
export const MAX_IMAGE_PIXELS = 40_000_000;

type ImageFormat = 'png' | 'jpeg' | 'webp' | 'tiff';
const FORMAT_NAMES: Readonly<Record<ImageFormat, string>> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP', tiff: 'TIFF' };

export const extractImage: Extractor = async (bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> => {
  if (!ctx.ocr) throw new IngestFailure('unsupported_content', 'images are read by OCR, and processing.ocr is off');
  const format = sniffFormat(bytes);
  if (format === undefined) {
    throw new IngestFailure('extraction_failed', 'the file is not a PNG, JPEG, WebP or TIFF image (its first bytes match none of them)');
  }
  if (Date.now() >= ctx.deadline) throw timeLimitFailure();
  return format === 'tiff' ? extractTiff(bytes, ctx) : extractSingleImage(bytes, format, ctx);
};

async function extractSingleImage(bytes: Buffer, format: Exclude<ImageFormat, 'tiff'>, ctx: ExtractContext): Promise<ExtractedDocument> {
  const size = format === 'png' ? checkPng(bytes) : format === 'jpeg' ? jpegSize(bytes) : webpSize(bytes);
  if (size !== undefined) checkPixels(size.width, size.height);
  const result = await recognizeImage(bytes, ctx, FORMAT_NAMES[format]);
  const builder = new PageTextBuilder();
  builder.addOcr(result, 'image_region', 1);
  return finish(builder, [`OCR${size !== undefined ? ` of a ${size.width}×${size.height} image` : ''}`]);
}

async function extractTiff(bytes: Buffer, ctx: ExtractContext): Promise<ExtractedDocument> {
  const pages = readTiffPages(bytes);
  if (pages.length > ctx.maxPages) {
    throw new IngestFailure('too_large', `the TIFF has ${pages.length} pages; the limit is ${ctx.maxPages}`);
  }
  const builder = new PageTextBuilder();
  const notes: string[] = [pages.length === 1 ? 'OCR of a 1-page TIFF' : `OCR of a ${pages.length}-page TIFF`];
  for (let index = 0; index < pages.length; index++) {
    if (Date.now() >= ctx.deadline) throw timeLimitFailure();
    const page = pages[index]!;
    checkPixels(page.width, page.height);
    // A single-page TIFF in a compression leptonica reads goes to it as is (no copy, its mature decoder).
    if (pages.length === 1 && LEPTONICA_TIFF_COMPRESSIONS.has(page.compression)) {
      try {
        builder.addOcr(await recognize(bytes, { deadline: ctx.deadline }), 'image_region', 1);
        continue;
      } catch (error) {
        if (!isUnreadable(error)) throw error;
        // Leptonica refused it; UTIF may still read it.
      }
    }
    builder.addOcr(await recognizeImage(decodeTiffPage(bytes, page.ifd, index), ctx, 'TIFF'), 'image_region', index + 1);
  }
  return finish(builder, notes);
}

/** Compressions tesseract's leptonica reads: none, CCITT RLE/G3/G4, LZW, PackBits. */
const LEPTONICA_TIFF_COMPRESSIONS = new Set([1, 2, 3, 4, 5, 32773]);

export interface TiffPage {
  width: number;
  height: number;
  compression: number;
  ifd: UTIF.IFD;
}

const tiffDamaged = (why: string, cause?: unknown) => new IngestFailure('extraction_failed', `the TIFF is damaged: ${why}`, cause === undefined ? undefined : { cause });

/** The pages of a TIFF (its top-level image directories), sizes read without decoding pixels. */
export function readTiffPages(bytes: Buffer): TiffPage[] {
  let ifds: UTIF.IFD[];
  try {
    ifds = UTIF.decode(bytes);
  } catch (error) {
    throw tiffDamaged(`its directories cannot be read (${describe(error)})`, error);
  }
  const pages = ifds
    .map((ifd) => ({ ifd, width: Number((ifd.t256 as number[] | undefined)?.[0] ?? 0), height: Number((ifd.t257 as number[] | undefined)?.[0] ?? 0), compression: Number((ifd.t259 as number[] | undefined)?.[0] ?? 1) }))
    .filter((p) => p.width > 0 && p.height > 0);
  if (pages.length === 0) throw tiffDamaged('it holds no image');
  return pages;
}

/** One page as an 8-bit grey PNM (P5) image, composited over white: what OCR reads best. */
export function decodeTiffPage(bytes: Buffer, ifd: UTIF.IFD, index = 0): Uint8Array {
  let rgba: Uint8Array;
  try {
    quietly(() => UTIF.decodeImage(bytes, ifd));
    // 16-bit samples scale to 8 bits by their high byte.
    rgba = (UTIF.toRGBA8 as (ifd: UTIF.IFD, scale?: number) => Uint8Array)(ifd, 1 / 256);
  } catch (error) {
    throw tiffDamaged(`page ${index + 1} could not be decoded (${describe(error)})`, error);
  }
  const { width, height } = ifd;
  if (!width || !height || rgba.length < width * height * 4) throw tiffDamaged(`page ${index + 1} could not be decoded (its pixel data is incomplete)`);
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'ascii');
  const out = Buffer.alloc(header.length + width * height);
  header.copy(out);
  for (let p = 0, o = header.length; p < width * height; p++, o++) {
    const r = rgba[p * 4]!;
    const g = rgba[p * 4 + 1]!;
    const b = rgba[p * 4 + 2]!;
    const alpha = rgba[p * 4 + 3]!;
    out[o] = Math.round((luma(r, g, b) * alpha) / 255 + (255 - alpha));
  }
  return out;
}

/** UTIF prints a debug line to stdout for tiled TIFFs; stdout may be a fixture's JSON-lines channel. */
function quietly<T>(work: () => T): T {
  const log = console.log;
  console.log = () => undefined;
  try {
    return work();
  } finally {
    console.log = log;
  }
}

function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

async function recognizeImage(image: Uint8Array, ctx: ExtractContext, label: string): Promise<OcrResult> {
  try {
    return await recognize(image, { deadline: ctx.deadline });
  } catch (error) {
    throw damagedImage(error, label);
  }
}

/** The OCR engine's decoder refused the image. */
function isUnreadable(error: unknown): boolean {
  return error instanceof IngestFailure && error.message.startsWith(OCR_UNREADABLE_PREFIX);
}

function damagedImage(error: unknown, label: string): unknown {
  if (!isUnreadable(error)) return error;
  const detail = describe(error).slice(OCR_UNREADABLE_PREFIX.length).trim();
  return new IngestFailure('extraction_failed', `the ${label} image is damaged or in a variant OCR cannot decode (${detail})`, { cause: error });
}

function finish(builder: PageTextBuilder, notes: string[]): ExtractedDocument {
  const text = builder.text;
  if (builder.blocks.length === 0) notes.push('OCR found no text');
  else notes.push(`OCR found ${builder.blocks.length} text region${builder.blocks.length === 1 ? '' : 's'}`);
  return { text, blocks: builder.blocks, notes };
}

function checkPixels(width: number, height: number): void {
  if (width <= 0 || height <= 0) throw new IngestFailure('extraction_failed', `the image header gives an empty size (${width}×${height})`);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new IngestFailure(
      'too_large',
      `the image is ${width}×${height} pixels; OCR reads images up to ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Formats and sizes

function sniffFormat(bytes: Buffer): ImageFormat | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (bytes.length >= 8 && (bytes.toString('latin1', 0, 4) === 'II*\0' || bytes.toString('latin1', 0, 4) === 'MM\0*')) return 'tiff';
  if (bytes.length >= 8 && (bytes.toString('latin1', 0, 4) === 'II+\0' || bytes.toString('latin1', 0, 4) === 'MM\0+')) return 'tiff';
  return undefined;
}

interface Size {
  width: number;
  height: number;
}

/**
 * Walks the PNG's chunks, checking each one's CRC, so a damaged file fails with a clear message before
 * OCR (whose decoder would only print errors). Returns the size from IHDR.
 */
function checkPng(bytes: Buffer): Size {
  const damaged = (why: string): IngestFailure => new IngestFailure('extraction_failed', `the PNG is damaged: ${why}`);
  let offset = 8;
  let size: Size | undefined;
  let sawData = false;
  while (offset + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) throw damaged(`invalid chunk type at byte ${offset + 4}`);
    const end = offset + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) throw damaged(`the ${type} chunk at byte ${offset} is cut off (the file is truncated)`);
    const stored = bytes.readUInt32BE(end - 4);
    if (crc32(bytes.subarray(offset + 4, end - 4)) !== stored) throw damaged(`the ${type} chunk at byte ${offset} fails its checksum`);
    if (type === 'IHDR' && length >= 8) size = { width: bytes.readUInt32BE(offset + 8), height: bytes.readUInt32BE(offset + 12) };
    if (type === 'IDAT') sawData = true;
    if (type === 'IEND') break;
    offset = end;
  }
  if (size === undefined) throw damaged('it has no IHDR header chunk');
  if (!sawData) throw damaged('it has no image data (the file is truncated)');
  return size;
}

/** The size from the first SOFn marker, or undefined if none is found (the decoder then decides). */
function jpegSize(bytes: Buffer): Size | undefined {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1] as number;
    if (marker === 0xff) {
      offset++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    const length = bytes.readUInt16BE(offset + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) return { width: bytes.readUInt16BE(offset + 7), height: bytes.readUInt16BE(offset + 5) };
    if (marker === 0xda) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

function webpSize(bytes: Buffer): Size | undefined {
  if (bytes.length < 30) return undefined;
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  return undefined;
}
