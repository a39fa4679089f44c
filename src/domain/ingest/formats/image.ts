// Images (PNG, JPEG, WebP, TIFF) read by OCR (tesseract.js, offline; see ./ocr.ts).
//
// Tesseract's image reader (leptonica) decodes PNG, JPEG, WebP and TIFF with no, LZW, PackBits or CCITT
// compression. TIFFs it cannot read (Deflate, JPEG), and every page of a multi-page TIFF, are decoded here
// into 8-bit grey PNM images first. @napi-rs/canvas is used only to decode JPEG data inside TIFFs: it must
// never be given TIFF bytes (it crashes the process on them).
import { crc32, inflateSync } from 'node:zlib';
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
  const pages = readTiffDirectories(bytes);
  if (pages.length > ctx.maxPages) {
    throw new IngestFailure('too_large', `the TIFF has ${pages.length} pages; the limit is ${ctx.maxPages}`);
  }
  const builder = new PageTextBuilder();
  const notes: string[] = [pages.length === 1 ? 'OCR of a 1-page TIFF' : `OCR of a ${pages.length}-page TIFF`];
  const skipped: string[] = [];
  for (let index = 0; index < pages.length; index++) {
    if (Date.now() >= ctx.deadline) throw timeLimitFailure();
    const page = pages[index] as TiffPage;
    checkPixels(page.width, page.height);
    let image: Uint8Array;
    // A single-page TIFF in a compression leptonica reads goes to it as is (no copy, its mature decoder).
    if (pages.length === 1 && LEPTONICA_TIFF_COMPRESSIONS.has(page.compression)) {
      try {
        builder.addOcr(await recognize(bytes, { deadline: ctx.deadline }), 'image_region', 1);
        continue;
      } catch (error) {
        if (!isUnreadable(error) || !canDecode(page)) throw damagedImage(error, 'TIFF');
        // Leptonica refused it; the decoder below may still read it.
      }
    }
    if (!canDecode(page)) {
      if (index === 0 && LEPTONICA_TIFF_COMPRESSIONS.has(page.compression)) {
        builder.addOcr(await recognizeImage(bytes, ctx, 'TIFF'), 'image_region', 1);
      } else {
        skipped.push(`page ${index + 1} (${describeUnsupported(page)})`);
      }
      continue;
    }
    try {
      image = await decodeTiffPage(bytes, page);
    } catch (error) {
      if (error instanceof IngestFailure) throw error;
      throw new IngestFailure('extraction_failed', `the TIFF is damaged: page ${index + 1} could not be decoded (${describe(error)})`, { cause: error });
    }
    builder.addOcr(await recognizeImage(image, ctx, 'TIFF'), 'image_region', index + 1);
  }
  if (skipped.length === pages.length) {
    throw new IngestFailure('unsupported_content', `the TIFF cannot be decoded: ${skipped.join('; ')}`);
  }
  if (skipped.length > 0) notes.push(`not read: ${skipped.join('; ')}`);
  return finish(builder, notes);
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

// ---------------------------------------------------------------------------------------------------------
// TIFF

/** Compressions tesseract's leptonica reads: none, CCITT RLE/G3/G4, LZW, PackBits. */
const LEPTONICA_TIFF_COMPRESSIONS = new Set([1, 2, 3, 4, 5, 32773]);
/** Compressions decoded here: none, LZW, JPEG, Deflate (both codes), PackBits. */
const DECODED_TIFF_COMPRESSIONS = new Set([1, 5, 7, 8, 32946, 32773]);
const COMPRESSION_NAMES: Readonly<Record<number, string>> = {
  1: 'none', 2: 'CCITT RLE', 3: 'CCITT G3', 4: 'CCITT G4', 5: 'LZW', 6: 'old-style JPEG', 7: 'JPEG', 8: 'Deflate',
  32946: 'Deflate', 32773: 'PackBits', 34712: 'JPEG 2000', 50000: 'Zstandard', 50001: 'WebP', 34925: 'LZMA',
};
/** Pages read from one TIFF at most (a guard against directory loops; ctx.maxPages usually applies first). */
const MAX_TIFF_DIRECTORIES = 10_000;

export interface TiffPage {
  width: number;
  height: number;
  bitsPerSample: number[];
  samplesPerPixel: number;
  compression: number;
  photometric: number;
  planar: number;
  predictor: number;
  sampleFormat: number;
  extraSamples: number[];
  colorMap: number[] | undefined;
  /** Strips (tileWidth = width, tileHeight = rowsPerStrip) or tiles. */
  tileWidth: number;
  tileHeight: number;
  offsets: number[];
  byteCounts: number[];
  jpegTables: Buffer | undefined;
  littleEndian: boolean;
}

class TiffReader {
  readonly little: boolean;
  readonly big: boolean;
  constructor(readonly bytes: Buffer) {
    this.little = bytes[0] === 0x49;
    this.big = (this.little ? bytes.readUInt16LE(2) : bytes.readUInt16BE(2)) === 43;
  }
  u16(offset: number): number {
    this.check(offset, 2);
    return this.little ? this.bytes.readUInt16LE(offset) : this.bytes.readUInt16BE(offset);
  }
  u32(offset: number): number {
    this.check(offset, 4);
    return this.little ? this.bytes.readUInt32LE(offset) : this.bytes.readUInt32BE(offset);
  }
  u64(offset: number): number {
    this.check(offset, 8);
    const value = this.little ? this.bytes.readBigUInt64LE(offset) : this.bytes.readBigUInt64BE(offset);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw tiffDamaged(`an offset at byte ${offset} is out of range`);
    return Number(value);
  }
  check(offset: number, length: number): void {
    if (offset < 0 || offset + length > this.bytes.length) throw tiffDamaged(`a value at byte ${offset} lies past the end of the file (it is truncated)`);
  }
}

function tiffDamaged(why: string): IngestFailure {
  return new IngestFailure('extraction_failed', `the TIFF is damaged: ${why}`);
}

const TYPE_SIZES: Readonly<Record<number, number>> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8, 18: 8 };

/** Reads every image directory (page) of a TIFF or BigTIFF. */
export function readTiffDirectories(bytes: Buffer): TiffPage[] {
  const reader = new TiffReader(bytes);
  const pages: TiffPage[] = [];
  const seen = new Set<number>();
  let next = reader.big ? reader.u64(8) : reader.u32(4);
  while (next !== 0 && pages.length < MAX_TIFF_DIRECTORIES) {
    if (seen.has(next)) break;
    seen.add(next);
    const { tags, nextOffset } = readDirectory(reader, next);
    pages.push(toPage(tags, pages.length + 1, reader.little));
    next = nextOffset;
  }
  if (pages.length === 0) throw tiffDamaged('it has no image directory');
  return pages;
}

function readDirectory(reader: TiffReader, offset: number): { tags: Map<number, { values: number[]; raw: Buffer }>; nextOffset: number } {
  const count = reader.big ? reader.u64(offset) : reader.u16(offset);
  const entrySize = reader.big ? 20 : 12;
  const start = offset + (reader.big ? 8 : 2);
  reader.check(start, count * entrySize);
  const tags = new Map<number, { values: number[]; raw: Buffer }>();
  for (let i = 0; i < count; i++) {
    const entry = start + i * entrySize;
    const tag = reader.u16(entry);
    const type = reader.u16(entry + 2);
    const n = reader.big ? reader.u64(entry + 4) : reader.u32(entry + 4);
    const size = TYPE_SIZES[type];
    if (size === undefined) continue;
    const total = size * n;
    const inline = reader.big ? total <= 8 : total <= 4;
    const valueOffset = inline ? entry + (reader.big ? 12 : 8) : reader.big ? reader.u64(entry + 12) : reader.u32(entry + 8);
    reader.check(valueOffset, total);
    const raw = reader.bytes.subarray(valueOffset, valueOffset + total);
    const values: number[] = [];
    // Only numeric arrays of the tags used are needed; huge arrays (strip offsets) are read in full.
    if (type === 3 || type === 8) for (let k = 0; k < n; k++) values.push(reader.u16(valueOffset + 2 * k));
    else if (type === 4 || type === 9 || type === 13) for (let k = 0; k < n; k++) values.push(reader.u32(valueOffset + 4 * k));
    else if (type === 16 || type === 17 || type === 18) for (let k = 0; k < n; k++) values.push(reader.u64(valueOffset + 8 * k));
    else if (type === 1 || type === 6 || type === 7) for (let k = 0; k < Math.min(n, 64); k++) values.push(raw[k] as number);
    tags.set(tag, { values, raw });
  }
  const after = start + count * entrySize;
  const nextOffset = reader.big ? reader.u64(after) : reader.u32(after);
  return { tags, nextOffset };
}

function toPage(tags: Map<number, { values: number[]; raw: Buffer }>, index: number, littleEndian: boolean): TiffPage {
  const first = (tag: number, fallback?: number): number => {
    const value = tags.get(tag)?.values[0] ?? fallback;
    if (value === undefined) throw tiffDamaged(`page ${index} lacks required tag ${tag}`);
    return value;
  };
  const width = first(256);
  const height = first(257);
  const samplesPerPixel = first(277, 1);
  const bitsPerSample = tags.get(258)?.values ?? [1];
  const tiled = tags.has(322);
  const tileWidth = tiled ? first(322) : width;
  const tileHeight = tiled ? first(323) : Math.min(first(278, height), height) || height;
  const offsets = tags.get(tiled ? 324 : 273)?.values ?? [];
  const byteCounts = tags.get(tiled ? 325 : 279)?.values ?? [];
  return {
    width,
    height,
    bitsPerSample,
    samplesPerPixel,
    compression: first(259, 1),
    photometric: first(262, samplesPerPixel >= 3 ? 2 : 1),
    planar: first(284, 1),
    predictor: first(317, 1),
    sampleFormat: first(339, 1),
    extraSamples: tags.get(338)?.values ?? [],
    colorMap: tags.get(320)?.values,
    tileWidth,
    tileHeight,
    offsets,
    byteCounts,
    jpegTables: tags.get(347)?.raw,
    littleEndian,
  };
}

function canDecode(page: TiffPage): boolean {
  return describeUnsupported(page) === '';
}

/** Why the decoder here cannot read a page, or '' when it can. */
function describeUnsupported(page: TiffPage): string {
  const bits = page.bitsPerSample[0] ?? 1;
  if (!DECODED_TIFF_COMPRESSIONS.has(page.compression)) return `${COMPRESSION_NAMES[page.compression] ?? `compression ${page.compression}`} compression`;
  if (page.planar !== 1 && page.samplesPerPixel > 1) return 'separate colour planes';
  if (page.sampleFormat !== 1 && page.sampleFormat !== 2) return 'floating-point samples';
  if (page.compression === 7) {
    if (bits !== 8) return `${bits}-bit JPEG`;
    return [1, 2, 6].includes(page.photometric) ? '' : `photometric interpretation ${page.photometric}`;
  }
  if (![1, 2, 4, 8, 16].includes(bits) || page.bitsPerSample.some((b) => b !== bits)) return `${page.bitsPerSample.join('/')}-bit samples`;
  if (![0, 1, 2, 3, 5].includes(page.photometric)) return `photometric interpretation ${page.photometric}`;
  if (page.photometric === 2 && page.samplesPerPixel < 3) return 'RGB with fewer than 3 samples';
  if (page.photometric === 5 && page.samplesPerPixel < 4) return 'CMYK with fewer than 4 samples';
  if (page.photometric === 3 && (page.colorMap === undefined || page.colorMap.length < 3 << bits)) return 'a palette image without a colour map';
  if (page.predictor !== 1 && page.predictor !== 2) return `predictor ${page.predictor}`;
  if (page.offsets.length === 0 || page.offsets.length !== page.byteCounts.length) return 'missing strip offsets';
  return '';
}

/** Decodes one page into an 8-bit grey PNM (P5) image, which tesseract reads. */
export async function decodeTiffPage(bytes: Buffer, page: TiffPage): Promise<Buffer> {
  const { width, height, tileWidth, tileHeight } = page;
  const across = Math.ceil(width / tileWidth);
  const down = Math.ceil(height / tileHeight);
  if (page.offsets.length < across * down) throw tiffDamaged(`it lists ${page.offsets.length} strips or tiles, ${across * down} are needed`);
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1');
  const out = Buffer.alloc(header.length + width * height, 255);
  header.copy(out);
  const grey = out.subarray(header.length);

  for (let ty = 0; ty < down; ty++) {
    for (let tx = 0; tx < across; tx++) {
      const index = ty * across + tx;
      const offset = page.offsets[index] as number;
      const count = page.byteCounts[index] as number;
      if (offset + count > bytes.length) throw tiffDamaged(`strip or tile ${index + 1} lies past the end of the file (it is truncated)`);
      const data = bytes.subarray(offset, offset + count);
      const tileGrey =
        page.compression === 7
          ? await decodeJpegTile(page, data)
          : samplesToGrey(page, decompress(page, data, tileRowBytes(page) * tileHeight), tileWidth, tileHeight);
      // Copy the part of the tile inside the image.
      const x0 = tx * tileWidth;
      const y0 = ty * tileHeight;
      const w = Math.min(tileWidth, width - x0);
      const h = Math.min(tileHeight, height - y0);
      for (let row = 0; row < h; row++) {
        const source = row * tileWidth;
        grey.set(tileGrey.subarray(source, source + w), (y0 + row) * width + x0);
      }
    }
  }
  return out;
}

function tileRowBytes(page: TiffPage): number {
  return Math.ceil((page.tileWidth * page.samplesPerPixel * (page.bitsPerSample[0] ?? 1)) / 8);
}

function decompress(page: TiffPage, data: Buffer, expected: number): Buffer {
  let raw: Buffer;
  switch (page.compression) {
    case 1:
      raw = data;
      break;
    case 8:
    case 32946:
      raw = inflateSync(data, { maxOutputLength: Math.max(expected, 1), finishFlush: 2 /* Z_SYNC_FLUSH: tolerate a cut-off stream */ });
      break;
    case 5:
      raw = decodeLzw(data, expected);
      break;
    case 32773:
      raw = decodePackBits(data, expected);
      break;
    default:
      throw new IngestFailure('unsupported_content', `TIFF compression ${page.compression} is not supported`);
  }
  // Short strips (the last one, or a damaged file) are padded with white.
  if (raw.length < expected) {
    const padded = Buffer.alloc(expected, page.photometric === 0 ? 0 : 255);
    raw.copy(padded);
    raw = padded;
  }
  if (page.predictor === 2) undoHorizontalPredictor(page, raw);
  return raw;
}

function undoHorizontalPredictor(page: TiffPage, raw: Buffer): void {
  const bits = page.bitsPerSample[0] ?? 8;
  const spp = page.samplesPerPixel;
  const rowBytes = tileRowBytes(page);
  for (let row = 0; row + rowBytes <= raw.length; row += rowBytes) {
    if (bits === 8) {
      for (let i = row + spp; i < row + rowBytes; i++) raw[i] = ((raw[i] as number) + (raw[i - spp] as number)) & 0xff;
    } else if (bits === 16) {
      for (let i = row + 2 * spp; i + 1 < row + rowBytes; i += 2) {
        const sum = (readU16(raw, i - 2 * spp, page.littleEndian) + readU16(raw, i, page.littleEndian)) & 0xffff;
        if (page.littleEndian) raw.writeUInt16LE(sum, i);
        else raw.writeUInt16BE(sum, i);
      }
    }
  }
}

function readU16(buffer: Buffer, offset: number, little: boolean): number {
  return little ? buffer.readUInt16LE(offset) : buffer.readUInt16BE(offset);
}

/** Converts a tile's samples (any supported bit depth and photometric interpretation) to 8-bit grey. */
function samplesToGrey(page: TiffPage, raw: Buffer, tileWidth: number, tileHeight: number): Uint8Array {
  const bits = page.bitsPerSample[0] ?? 1;
  const spp = page.samplesPerPixel;
  const rowBytes = tileRowBytes(page);
  const max = bits === 16 ? 65535 : (1 << bits) - 1;
  const signed = page.sampleFormat === 2;
  const colourSamples = page.photometric === 2 ? 3 : page.photometric === 5 ? 4 : 1;
  // The first extra sample is alpha when marked so (1 associated, 2 unassociated).
  const alphaIndex = spp > colourSamples && (page.extraSamples[0] === 1 || page.extraSamples[0] === 2) ? colourSamples : -1;
  const out = new Uint8Array(tileWidth * tileHeight);
  const sample = (rowStart: number, index: number): number => {
    if (bits === 8) return signed ? ((raw[rowStart + index] as number) ^ 0x80) : (raw[rowStart + index] as number);
    if (bits === 16) {
      const value = readU16(raw, rowStart + index * 2, page.littleEndian);
      return (signed ? value ^ 0x8000 : value) >> 8;
    }
    const bitOffset = index * bits;
    const byte = raw[rowStart + (bitOffset >> 3)] as number;
    const value = (byte >> (8 - bits - (bitOffset & 7))) & max;
    return page.photometric === 3 ? value : Math.round((value * 255) / max);
  };
  const palette = page.colorMap;
  const paletteSize = 1 << bits;
  for (let y = 0; y < tileHeight; y++) {
    const rowStart = y * rowBytes;
    for (let x = 0; x < tileWidth; x++) {
      const base = x * spp;
      let grey: number;
      switch (page.photometric) {
        case 0:
          grey = 255 - sample(rowStart, base);
          break;
        case 2:
          grey = luma(sample(rowStart, base), sample(rowStart, base + 1), sample(rowStart, base + 2));
          break;
        case 3: {
          const i = bits === 16 ? readU16(raw, rowStart + base * 2, page.littleEndian) : sample(rowStart, base);
          const map = palette ?? [];
          grey = luma((map[i] ?? 0) >> 8, (map[i + paletteSize] ?? 0) >> 8, (map[i + 2 * paletteSize] ?? 0) >> 8);
          break;
        }
        case 5: {
          const k = sample(rowStart, base + 3);
          const ink = (c: number): number => ((255 - c) * (255 - k)) / 255;
          grey = luma(ink(sample(rowStart, base)), ink(sample(rowStart, base + 1)), ink(sample(rowStart, base + 2)));
          break;
        }
        default:
          grey = sample(rowStart, base);
      }
      if (alphaIndex >= 0) {
        const alpha = sample(rowStart, base + alphaIndex);
        // Composite over white; associated alpha has the colour already multiplied.
        grey = page.extraSamples[0] === 1 ? grey + (255 - alpha) : (grey * alpha) / 255 + (255 - alpha);
      }
      out[y * tileWidth + x] = Math.max(0, Math.min(255, Math.round(grey)));
    }
  }
  return out;
}

function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** TIFF LZW (MSB-first codes, early change), output capped at `limit` bytes. */
function decodeLzw(data: Buffer, limit: number): Buffer {
  const out = Buffer.alloc(limit);
  let written = 0;
  // The dictionary as (prefix code, last byte, length) triples; strings are rebuilt backwards.
  const prefix = new Int32Array(4096);
  const suffix = new Uint8Array(4096);
  const lengths = new Int32Array(4096);
  for (let i = 0; i < 256; i++) {
    prefix[i] = -1;
    suffix[i] = i;
    lengths[i] = 1;
  }
  let next = 258;
  let width = 9;
  let previous = -1;
  let bitBuffer = 0;
  let bitCount = 0;
  let position = 0;
  const firstByte = (code: number): number => {
    let c = code;
    while ((prefix[c] as number) >= 0) c = prefix[c] as number;
    return suffix[c] as number;
  };
  const emit = (code: number): void => {
    const length = lengths[code] as number;
    let c = code;
    for (let i = length - 1; i >= 0; i--) {
      if (written + i < limit) out[written + i] = suffix[c] as number;
      c = prefix[c] as number;
    }
    written += length;
  };
  while (written < limit) {
    while (bitCount < width) {
      if (position >= data.length) return out.subarray(0, Math.min(written, limit));
      bitBuffer = ((bitBuffer << 8) | (data[position++] as number)) >>> 0;
      bitCount += 8;
    }
    const code = (bitBuffer >>> (bitCount - width)) & ((1 << width) - 1);
    bitCount -= width;
    bitBuffer &= (1 << bitCount) - 1;
    if (code === 257) break;
    if (code === 256) {
      next = 258;
      width = 9;
      previous = -1;
      continue;
    }
    if (previous === -1) {
      if (code > 255) throw new Error(`invalid LZW code ${code} after a reset`);
      emit(code);
      previous = code;
      continue;
    }
    if (next < 4096) {
      prefix[next] = previous;
      lengths[next] = (lengths[previous] as number) + 1;
      // For a code not yet in the table (the KwKwK case) its first byte is the previous string's first byte.
      suffix[next] = code < next ? firstByte(code) : firstByte(previous);
      next++;
    }
    if (code >= next) throw new Error(`invalid LZW code ${code}`);
    emit(code);
    previous = code;
    if (next + 1 >= 1 << width && width < 12) width++;
  }
  return out.subarray(0, Math.min(written, limit));
}

function decodePackBits(data: Buffer, limit: number): Buffer {
  const out = Buffer.alloc(limit);
  let written = 0;
  let i = 0;
  while (i < data.length && written < limit) {
    const header = (data[i++] as number) << 24 >> 24;
    if (header >= 0) {
      const count = Math.min(header + 1, limit - written, data.length - i);
      data.copy(out, written, i, i + count);
      written += count;
      i += header + 1;
    } else if (header !== -128) {
      const count = Math.min(1 - header, limit - written);
      out.fill(data[i++] ?? 0, written, written + count);
      written += count;
    }
  }
  return out.subarray(0, written);
}

/** A JPEG-compressed strip or tile, decoded by @napi-rs/canvas (JPEG bytes only, never TIFF). */
async function decodeJpegTile(page: TiffPage, data: Buffer): Promise<Uint8Array> {
  let jpeg = data;
  // Abbreviated streams share their tables through JPEGTables (SOI tables EOI): merge them in.
  if (page.jpegTables !== undefined && page.jpegTables.length > 4 && data.length > 2) {
    jpeg = Buffer.concat([page.jpegTables.subarray(0, page.jpegTables.length - 2), data.subarray(2)]);
  }
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('a JPEG strip does not start with a JPEG header');
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const image = await loadImage(jpeg);
  const canvas = createCanvas(page.tileWidth, page.tileHeight);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, page.tileWidth, page.tileHeight);
  context.drawImage(image, 0, 0);
  const rgba = context.getImageData(0, 0, page.tileWidth, page.tileHeight).data;
  const out = new Uint8Array(page.tileWidth * page.tileHeight);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(luma(rgba[4 * i] as number, rgba[4 * i + 1] as number, rgba[4 * i + 2] as number));
  return out;
}
