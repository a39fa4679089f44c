// Zip packages (Office Open XML and any other zip): the central directory, each entry's data as zip readers
// find it through its local header, an entry inflated as a stream, and OPC part names. Shared by the
// decompression guard (./decompression.ts) and the Office readers (./formats/office-reader.ts).
import { createInflateRaw } from 'node:zlib';

/** zlib's output chunk when an entry is streamed. */
const STREAM_CHUNK_BYTES = 64 * 1024;

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeader: number;
}

/** Entries of the zip's central directory (zip64 aware), or undefined when it cannot be found intact. */
export function centralDirectory(bytes: Buffer): ZipEntry[] | undefined {
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  let end = -1;
  for (let i = bytes.length - 22; i >= lowest; i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) return undefined;
  let count = bytes.readUInt16LE(end + 10);
  let offset = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || offset === 0xffffffff) {
    const locator = end - 20;
    if (locator < 0 || bytes.readUInt32LE(locator) !== 0x07064b50) return undefined;
    const record = Number(bytes.readBigUInt64LE(locator + 8));
    if (!Number.isSafeInteger(record) || record + 56 > bytes.length || bytes.readUInt32LE(record) !== 0x06064b50) return undefined;
    count = Number(bytes.readBigUInt64LE(record + 32));
    offset = Number(bytes.readBigUInt64LE(record + 48));
  }
  const entries: ZipEntry[] = [];
  let position = offset;
  for (let i = 0; i < count; i++) {
    if (!Number.isSafeInteger(position) || position + 46 > bytes.length || bytes.readUInt32LE(position) !== 0x02014b50) return undefined;
    const nameLength = bytes.readUInt16LE(position + 28);
    const extraLength = bytes.readUInt16LE(position + 30);
    const commentLength = bytes.readUInt16LE(position + 32);
    if (position + 46 + nameLength + extraLength > bytes.length) return undefined;
    const entry: ZipEntry = {
      name: bytes.toString('utf8', position + 46, position + 46 + nameLength),
      method: bytes.readUInt16LE(position + 10),
      compressedSize: bytes.readUInt32LE(position + 20),
      uncompressedSize: bytes.readUInt32LE(position + 24),
      localHeader: bytes.readUInt32LE(position + 42),
    };
    applyZip64Sizes(entry, bytes.subarray(position + 46 + nameLength, position + 46 + nameLength + extraLength));
    entries.push(entry);
    position += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Sizes and offsets of 0xffffffff are in the zip64 extra field (id 1), in this order, when present. */
function applyZip64Sizes(entry: ZipEntry, extra: Buffer): void {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at);
    const size = extra.readUInt16LE(at + 2);
    if (id === 0x0001) {
      let field = at + 4;
      const next = (): number | undefined => {
        if (field + 8 > at + 4 + size || field + 8 > extra.length) return undefined;
        const value = Number(extra.readBigUInt64LE(field));
        field += 8;
        return value;
      };
      if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = next() ?? entry.uncompressedSize;
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next() ?? entry.compressedSize;
      if (entry.localHeader === 0xffffffff) entry.localHeader = next() ?? entry.localHeader;
      return;
    }
    at += 4 + size;
  }
}

/** The entry's compressed bytes, found through its local header as zip readers find them. */
export function entryData(bytes: Buffer, entry: ZipEntry): Buffer | undefined {
  const header = entry.localHeader;
  if (!Number.isSafeInteger(header) || header + 30 > bytes.length || bytes.readUInt32LE(header) !== 0x04034b50) return undefined;
  const start = header + 30 + bytes.readUInt16LE(header + 26) + bytes.readUInt16LE(header + 28);
  return bytes.subarray(start, Math.min(bytes.length, start + entry.compressedSize));
}

/**
 * The entry's uncompressed bytes in chunks, inflated as they are read, so a reader holds a chunk at a time
 * rather than the whole part. Throws for an entry without data or with a compression other than Deflate.
 */
export async function* entryChunks(bytes: Buffer, entry: ZipEntry): AsyncGenerator<Buffer> {
  const data = entryData(bytes, entry);
  if (data === undefined) throw new Error(`its zip entry ${entry.name} has no readable local header`);
  if (entry.method === 0) {
    yield data;
    return;
  }
  if (entry.method !== 8) throw new Error(`its zip entry ${entry.name} uses compression method ${entry.method}, which is not supported`);
  const inflater = createInflateRaw({ chunkSize: STREAM_CHUNK_BYTES });
  inflater.end(data);
  for await (const chunk of inflater) yield chunk as Buffer;
}

/** A relationship target resolved against the folder of its source part (OPC, ECMA-376 Part 2 §9.3). */
export function resolvePartName(base: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : base + target).split('/');
  const resolved: string[] = [];
  for (const part of parts) {
    if (part === '..') resolved.pop();
    else if (part !== '.' && part !== '') resolved.push(part);
  }
  return resolved.join('/');
}
