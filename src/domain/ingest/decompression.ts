// Decompression bombs: every compressed part of a file is inflated here first, as a stream whose output is
// counted and thrown away, before any format's library sees the file. The libraries inflate whole parts in
// memory (jszip for DOCX, PPTX and XLSX, pdf.js for PDF streams, utif2 for Deflate TIFF strips), and
// declared sizes lie, so only a true count bounds what they will hold: a DOCX declaring 950 MiB honestly,
// or understating it as 3 MiB, cost about 1.9 GiB of memory before it was refused.
//
// The container is recognised by its bytes, not by the format that will read it, so a format added later
// that reads a zip (ODT, EPUB) or a PDF gets the guard without asking. ../extract.ts runs it for every
// format read from bytes.
import { createInflate, createInflateRaw, inflateRawSync, inflateSync, type Inflate, type InflateRaw } from 'node:zlib';
import { INDEXING_LIMITS } from '../limits.js';
import { lazyImport } from './lazy.js';
import { IngestFailure } from './types.js';
import { centralDirectory, entryData } from './zip.js';

/** zlib's output chunk: how far past the cap an inflate can get before it is stopped. */
export const INFLATE_CHUNK_BYTES = 64 * 1024;

export type Container = 'zip' | 'pdf' | 'png' | 'tiff';

export interface DecompressionCheck {
  /** The container recognised in the bytes, if any. */
  container: Container | undefined;
  /** Bytes inflated (and discarded) to measure it. */
  inflatedBytes: number;
}

export interface DecompressionLimits {
  /** Total bytes the file's compressed parts may expand to. */
  maxInflatedBytes: number;
  /** Epoch ms after which the check gives up (the extraction's deadline). */
  deadline: number;
}

/** The file expands past the limit; `inflatedBytes` says how much was inflated to find out. */
export class DecompressionLimitFailure extends IngestFailure {
  readonly inflatedBytes: number;
  constructor(message: string, inflatedBytes: number) {
    super('too_large', message);
    this.inflatedBytes = inflatedBytes;
  }
}

const mib = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Measures what `bytes` expand to when their compressed parts are inflated, without keeping any of it.
 * Throws DecompressionLimitFailure (`too_large`) past `maxInflatedBytes`, and `extraction_failed` for a zip
 * whose entries are not the size they declare.
 */
export async function checkDecompression(bytes: Buffer, limits: Partial<DecompressionLimits> = {}): Promise<DecompressionCheck> {
  const budget = new InflateBudget(limits.maxInflatedBytes ?? INDEXING_LIMITS.maxInflatedBytes, limits.deadline ?? Number.POSITIVE_INFINITY);
  const container = containerOf(bytes);
  if (container === 'zip') await checkZip(bytes, budget);
  else if (container === 'pdf') await checkPdf(bytes, budget);
  else if (container === 'png') await checkPng(bytes, budget);
  else if (container === 'tiff') await checkTiff(bytes, budget);
  return { container, inflatedBytes: budget.total };
}

function containerOf(bytes: Buffer): Container | undefined {
  if (bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50) return 'zip';
  // pdf.js accepts a header anywhere in the first kilobyte.
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  const head = bytes.toString('latin1', 0, 4);
  if (head === 'II*\0' || head === 'MM\0*') return 'tiff';
  return undefined;
}

/**
 * The bytes inflated so far against a cap: for a whole file, or for one part of it that its library holds
 * on its own (a PDF stream, a TIFF page; pdf.js and the OCR free each before the next), which then counts
 * towards the file's total without the file's cap.
 */
class InflateBudget {
  inflated = 0;
  constructor(
    readonly cap: number,
    private readonly deadline: number,
    private readonly file?: InflateBudget,
  ) {}

  /** A budget of its own for one part of the file. */
  part(): InflateBudget {
    return new InflateBudget(this.cap, this.deadline, this);
  }

  /** Everything inflated in the file so far. */
  get total(): number {
    return this.file?.total ?? this.inflated;
  }

  get remaining(): number {
    return Math.max(0, this.cap - this.inflated);
  }

  private count(bytes: number): void {
    this.inflated += bytes;
    if (this.file !== undefined) this.file.inflated += bytes;
  }

  /** Counts bytes that are not compressed but that the library will copy out all the same. */
  add(bytes: number, what: string): void {
    this.count(bytes);
    if (this.inflated > this.cap) throw this.exceeded(what);
  }

  exceeded(what: string): DecompressionLimitFailure {
    return new DecompressionLimitFailure(`the file expands past ${mib(this.cap)} when decompressed (${what}); the limit is ${mib(this.cap)}`, this.total);
  }

  checkDeadline(): void {
    if (Date.now() >= this.deadline) throw new IngestFailure('extraction_failed', 'extraction did not finish within the time limit');
  }

  /**
   * Inflates `data` (raw Deflate, or zlib-wrapped; several pieces are one stream) counting the output, and
   * fails past the cap. `chained`: output that is zlib data again is inflated too (a PDF filter chain).
   * Returns the bytes it expanded to, or undefined when the data is not valid Deflate (the library then
   * fails on it, or skips it, on its own terms).
   */
  async inflate(data: Uint8Array | readonly Uint8Array[], wrapping: 'raw' | 'zlib', what: string, chained = false): Promise<number | undefined> {
    this.checkDeadline();
    const result = await countInflated(Array.isArray(data) ? data : [data as Uint8Array], wrapping, this.remaining, chained ? MAX_FLATE_CHAIN : 1);
    this.count(result.bytes);
    if (result.exceeded) throw this.exceeded(what);
    return result.valid ? result.bytes : undefined;
  }
}

/** Output below this is inflated in one synchronous call (most zip entries and PDF streams are small). */
const SYNC_INFLATE_BYTES = 1024 * 1024;
/** Filter chains this deep are followed; pdf.js decodes any depth, but a chain deeper than this is no real file. */
const MAX_FLATE_CHAIN = 4;

/**
 * Streams `pieces` through zlib, counting and discarding the output; stops as soon as it passes `limit`
 * (at most one output chunk later), so memory stays at zlib's window and a chunk whatever the ratio. With
 * `layers` > 1, output that starts with a zlib header is streamed through another inflater, and counted too.
 */
async function countInflated(
  pieces: readonly Uint8Array[],
  wrapping: 'raw' | 'zlib',
  limit: number,
  layers: number,
): Promise<{ bytes: number; exceeded: boolean; valid: boolean }> {
  if (pieces.length === 1) {
    try {
      const options = { maxOutputLength: Math.min(limit + 1, SYNC_INFLATE_BYTES) };
      const out = wrapping === 'raw' ? inflateRawSync(pieces[0] as Uint8Array, options) : inflateSync(pieces[0] as Uint8Array, options);
      if (out.length <= limit && !(layers > 1 && isZlibHeader(out, 0))) return { bytes: out.length, exceeded: false, valid: true };
    } catch {
      // Larger than the synchronous share, or damaged: the stream below counts it exactly.
    }
  }
  return new Promise((resolve) => {
    const inflaters: (Inflate | InflateRaw)[] = [];
    let bytes = 0;
    let settled = false;
    const settle = (exceeded: boolean, valid: boolean): void => {
      if (settled) return;
      settled = true;
      for (const inflater of inflaters) {
        inflater.removeAllListeners('data');
        inflater.destroy();
      }
      resolve({ bytes, exceeded, valid });
    };
    const layer = (kind: 'raw' | 'zlib', depth: number): Inflate | InflateRaw => {
      const inflater = kind === 'raw' ? createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES }) : createInflate({ chunkSize: INFLATE_CHUNK_BYTES });
      inflaters.push(inflater);
      let inner: Inflate | InflateRaw | undefined;
      let first = true;
      inflater.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > limit) return settle(true, true);
        if (first && depth < layers && isZlibHeader(chunk, 0)) inner = layer('zlib', depth + 1);
        first = false;
        // The inner inflater takes the outer one's output at its own pace.
        if (inner !== undefined && !inner.write(chunk)) {
          inflater.pause();
          inner.once('drain', () => inflater.resume());
        }
      });
      inflater.on('end', () => {
        if (inner !== undefined) inner.end();
        else settle(false, true);
      });
      inflater.on('error', () => settle(false, false));
      return inflater;
    };
    const outer = layer(wrapping, 1);
    for (const piece of pieces) outer.write(piece);
    outer.end();
  });
}

// ---------------------------------------------------------------------------------------------------------
// Zip (Office Open XML and any other zip package): every entry the central directory lists, as zip
// readers find it, inflated; its true size must be the size it declares (jszip refuses it otherwise, with
// a message of its own).

async function checkZip(bytes: Buffer, budget: InflateBudget): Promise<void> {
  const entries = centralDirectory(bytes);
  // An unreadable directory is the format's to report (a damaged or truncated file).
  if (entries === undefined) return;
  const declared = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  // Declared sizes are believed when they are too big, so an honest bomb costs nothing to refuse.
  if (declared > budget.cap) {
    throw new DecompressionLimitFailure(
      `the file expands past ${mib(budget.cap)} when decompressed (its zip entries declare ${mib(declared)}); the limit is ${mib(budget.cap)}`,
      0,
    );
  }
  for (const entry of entries) {
    const data = entryData(bytes, entry);
    if (data === undefined) continue;
    const what = `zip entry ${entry.name}`;
    let size: number | undefined;
    if (entry.method === 0) {
      budget.add(data.length, what);
      size = data.length;
    } else if (entry.method === 8) {
      size = await budget.inflate(data, 'raw', what);
    } else {
      continue; // a compression the zip readers do not support: they refuse the file themselves
    }
    if (size !== undefined && size !== entry.uncompressedSize) {
      throw new IngestFailure(
        'extraction_failed',
        `the file is damaged: its zip entry ${entry.name} declares ${entry.uncompressedSize} bytes but holds ${size}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// PDF: every stream whose data is zlib-wrapped Deflate (what FlateDecode reads), and what it holds when
// that is Deflate again (a filter chain of two FlateDecodes).

const STREAM = Buffer.from('stream');
/** How far before `stream` its dictionary, with its /Length, is looked for. */
const DICTIONARY_WINDOW = 4096;
/** How far past `stream` an indirect /Length's object is looked for (beyond the stream's data it usually follows). */
const INDIRECT_LENGTH_WINDOW = 64 * 1024;

async function checkPdf(bytes: Buffer, budget: InflateBudget): Promise<void> {
  let search = 0;
  let streams = 0;
  while (search < bytes.length) {
    const keyword = bytes.indexOf(STREAM, search);
    if (keyword < 0) break;
    search = keyword + STREAM.length;
    if (keyword >= 3 && bytes.toString('latin1', keyword - 3, keyword) === 'end') continue;
    let start = keyword + STREAM.length;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] === 0x0a) start++;
    if (start === keyword + STREAM.length || !isZlibHeader(bytes, start)) continue;
    const stop = streamEnd(bytes, keyword, start);
    streams++;
    await budget.part().inflate(bytes.subarray(start, stop), 'zlib', `PDF Flate stream ${streams}`, true);
    if (stop < bytes.length) search = stop;
  }
}

/** A zlib header as FlateDecode requires it: method 8, and the check bits (RFC 1950). */
function isZlibHeader(bytes: Uint8Array, at: number): boolean {
  if (at + 1 >= bytes.length) return false;
  const cmf = bytes[at] as number;
  const flg = bytes[at + 1] as number;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/**
 * Where the stream's data ends: after /Length bytes (direct, or an indirect object's value) when
 * `endstream` follows there, as pdf.js reads it. Otherwise at the end of the file: Deflate data ends
 * itself, so zlib stops where pdf.js's inflater would, whatever stands between it and an `endstream`.
 */
function streamEnd(bytes: Buffer, keyword: number, start: number): number {
  const length = streamLength(bytes, keyword);
  if (length !== undefined && start + length <= bytes.length) {
    const after = bytes.toString('latin1', start + length, Math.min(bytes.length, start + length + 16)).trimStart();
    if (after.startsWith('endstream')) return start + length;
  }
  return bytes.length;
}

function streamLength(bytes: Buffer, keyword: number): number | undefined {
  const before = bytes.toString('latin1', Math.max(0, keyword - DICTIONARY_WINDOW), keyword);
  const objectStart = before.lastIndexOf('obj');
  const match = /\/Length\s+(\d+)(?:\s+(\d+)\s+R)?/.exec(objectStart >= 0 ? before.slice(objectStart) : before);
  if (match === null) return undefined;
  if (match[2] === undefined) return Number(match[1]);
  // An indirect length is written after the stream, as a rule right after it.
  const definition = new RegExp(`(?:^|\\D)${match[1]}\\s+${match[2]}\\s+obj\\s+(\\d+)`);
  const found = definition.exec(bytes.toString('latin1', keyword, Math.min(bytes.length, keyword + INDIRECT_LENGTH_WINDOW)));
  return found?.[1] === undefined ? undefined : Number(found[1]);
}

// ---------------------------------------------------------------------------------------------------------
// PNG: the decoded image the header declares, and the image data's true inflated size.

async function checkPng(bytes: Buffer, budget: InflateBudget): Promise<void> {
  let offset = 8;
  const data: Buffer[] = [];
  let decoded: number | undefined;
  while (offset + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (end > bytes.length) break;
    if (type === 'IHDR' && length >= 13) decoded = pngDecodedBytes(bytes.subarray(offset + 8, offset + 8 + 13));
    if (type === 'IDAT') data.push(bytes.subarray(offset + 8, end - 4));
    if (type === 'IEND') break;
    offset = end;
  }
  if (decoded !== undefined && decoded > budget.cap) {
    throw new DecompressionLimitFailure(
      `the image expands past ${mib(budget.cap)} when decoded (its header declares ${mib(decoded)} of pixels); the limit is ${mib(budget.cap)}`,
      0,
    );
  }
  // The IDAT chunks are one zlib stream, split anywhere.
  if (data.length > 0) await budget.inflate(data, 'zlib', 'PNG image data');
}

/** Bytes of the decoded image: rows of width × channels × bit depth, each with its filter byte. */
function pngDecodedBytes(header: Buffer): number {
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const depth = header.readUInt8(8);
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[header.readUInt8(9)] ?? 4;
  return height * (1 + Math.ceil((width * channels * depth) / 8));
}

// ---------------------------------------------------------------------------------------------------------
// TIFF: each page's decoded size from its tags, and its Deflate strips or tiles inflated (utif2 inflates
// each one whole, whatever the page's size).

const loadUtif = lazyImport(() => import('utif2'));
const DEFLATE_COMPRESSIONS = new Set([8, 32946]);

async function checkTiff(bytes: Buffer, budget: InflateBudget): Promise<void> {
  const UTIF = (await loadUtif()).default;
  let pages: import('utif2').IFD[];
  try {
    pages = UTIF.decode(bytes);
  } catch {
    return; // the format reports damaged directories itself
  }
  const all = pages.flatMap((page) => [page, ...((page as { subIFD?: import('utif2').IFD[] }).subIFD ?? [])]);
  // Pages are decoded and read one at a time, so each has the cap to itself.
  for (const [index, page] of all.entries()) {
    const first = (tag: string, fallback: number): number => Number((page[tag] as number[] | undefined)?.[0] ?? fallback);
    const decoded = Math.ceil((first('t256', 0) * first('t277', 1) * first('t258', 1)) / 8) * first('t257', 0);
    if (decoded > budget.cap) {
      throw new DecompressionLimitFailure(
        `the image expands past ${mib(budget.cap)} when decoded (page ${index + 1} declares ${mib(decoded)} of pixels); the limit is ${mib(budget.cap)}`,
        budget.total,
      );
    }
    if (!DEFLATE_COMPRESSIONS.has(first('t259', 1))) continue;
    const offsets = (page.t324 ?? page.t273) as number[] | undefined;
    const counts = (page.t325 ?? page.t279) as number[] | undefined;
    if (offsets === undefined || counts === undefined) continue;
    const pageBudget = budget.part();
    for (let i = 0; i < offsets.length; i++) {
      const start = Number(offsets[i]);
      const length = Number(counts[i] ?? 0);
      if (start >= bytes.length || length <= 2) continue;
      // utif2 inflates each strip or tile whole, as raw Deflate past its two-byte zlib header.
      await pageBudget.inflate(bytes.subarray(start + 2, Math.min(bytes.length, start + length)), 'raw', `TIFF page ${index + 1}`);
    }
  }
}
