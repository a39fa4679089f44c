// Decompression bombs, built small: the compressed bytes of long runs of zeros, streamed through zlib so
// that building one never holds what it expands to. Shared by test/decompression-bombs.test.ts and the
// bench that measures their memory (bench/bombs.ts).
import { crc32, createDeflate, createDeflateRaw, deflateRawSync, deflateSync } from 'node:zlib';

const ZEROS = Buffer.alloc(1024 * 1024);

/** Raw Deflate (or zlib-wrapped) data that inflates to `size` zero bytes. */
export async function deflatedZeros(size: number, wrapping: 'raw' | 'zlib' = 'raw'): Promise<Buffer> {
  const deflater = wrapping === 'raw' ? createDeflateRaw({ level: 9 }) : createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflater.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    deflater.on('end', resolve);
    deflater.on('error', reject);
  });
  for (let left = size; left > 0; left -= ZEROS.length) {
    const piece = left >= ZEROS.length ? ZEROS : ZEROS.subarray(0, left);
    if (!deflater.write(piece)) await new Promise((resolve) => deflater.once('drain', resolve));
  }
  deflater.end();
  await done;
  return Buffer.concat(chunks);
}

export interface ZipEntrySpec {
  name: string;
  /** Raw Deflate data, or the text to store deflated. */
  data: Buffer | string;
  /** The uncompressed size the entry declares; its true size when omitted. */
  declaredSize?: number;
  /** The true uncompressed size, for `data` given compressed. */
  size?: number;
  /** The CRC-32 of the uncompressed data, for `data` given compressed (0 when omitted). */
  crc?: number;
}

/**
 * A zip archive of deflated entries (no zip64). `repeat` lists extra central-directory entries that point
 * at the local data of an earlier entry (by index): the overlapping-entries bomb.
 */
export function buildZip(entries: readonly ZipEntrySpec[], repeat: readonly { of: number; name: string }[] = []): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  const records: { name: Buffer; compressed: number; declared: number; crc: number; offset: number }[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const text = typeof entry.data === 'string' ? Buffer.from(entry.data) : undefined;
    const compressed = text !== undefined ? deflateRawSync(text) : (entry.data as Buffer);
    const size = text?.length ?? entry.size ?? 0;
    const declared = entry.declaredSize ?? size;
    const crc = text !== undefined ? crc32(text) : (entry.crc ?? 0);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(8, 8);
    header.writeUInt32LE(crc, 14);
    header.writeUInt32LE(compressed.length, 18);
    header.writeUInt32LE(declared, 22);
    header.writeUInt16LE(name.length, 26);
    locals.push(header, name, compressed);
    records.push({ name, compressed: compressed.length, declared, crc, offset });
    offset += header.length + name.length + compressed.length;
  }
  const all = [...records, ...repeat.map(({ of, name }) => ({ ...(records[of] as (typeof records)[number]), name: Buffer.from(name) }))];
  for (const record of all) {
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(8, 10);
    header.writeUInt32LE(record.crc, 16);
    header.writeUInt32LE(record.compressed, 20);
    header.writeUInt32LE(record.declared, 24);
    header.writeUInt16LE(record.name.length, 28);
    header.writeUInt32LE(record.offset, 42);
    central.push(header, record.name);
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(all.length, 8);
  end.writeUInt16LE(all.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The main part each Office format needs, with the bomb as that part. */
export const OFFICE_MAIN_PART = { DOCX: 'word/document.xml', PPTX: 'ppt/presentation.xml', XLSX: 'xl/workbook.xml' } as const;

/** An Office package whose main part inflates to `size` bytes, declaring `declaredSize` (honest when omitted). */
export async function officeBomb(format: keyof typeof OFFICE_MAIN_PART, size: number, declaredSize?: number): Promise<Buffer> {
  const entry: ZipEntrySpec = { name: OFFICE_MAIN_PART[format], data: await deflatedZeros(size), size };
  if (declaredSize !== undefined) entry.declaredSize = declaredSize;
  return buildZip([{ name: '[Content_Types].xml', data: '<?xml version="1.0"?><Types/>' }, entry]);
}

/** The text of paragraph `index` (0-based) of largeDocx: distinct, so a lost or repeated paragraph shows. */
export const largeDocxParagraph = (index: number): string => `Paragraph ${index + 1} of the large document, about the harbour & the pier.`;

/**
 * A valid DOCX whose word/document.xml is `size` bytes (at least) of paragraphs, deflated as a stream: small
 * when compressed, but a reader that builds a model of the whole XML holds many times its size.
 * Returns the file and how many paragraphs it holds.
 */
export async function largeDocx(size: number): Promise<{ bytes: Buffer; paragraphs: number }> {
  const deflater = createDeflateRaw({ level: 9 });
  const chunks: Buffer[] = [];
  deflater.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    deflater.on('end', resolve);
    deflater.on('error', reject);
  });
  let crc = 0;
  let written = 0;
  const write = async (text: string): Promise<void> => {
    const bytes = Buffer.from(text);
    crc = crc32(bytes, crc);
    written += bytes.length;
    if (!deflater.write(bytes)) await new Promise((resolve) => deflater.once('drain', resolve));
  };
  await write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>');
  let paragraphs = 0;
  while (written < size) {
    let batch = '';
    for (let i = 0; i < 1000; i++, paragraphs++) {
      const text = largeDocxParagraph(paragraphs).replace('&', '&amp;');
      batch += `<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
    }
    await write(batch);
  }
  await write('</w:body></w:document>');
  deflater.end();
  await done;
  const document: ZipEntrySpec = { name: OFFICE_MAIN_PART.DOCX, data: Buffer.concat(chunks), size: written, crc };
  const bytes = buildZip([
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    },
    {
      name: '_rels/.rels',
      data: '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    document,
  ]);
  return { bytes, paragraphs };
}

/** A one-page PDF whose content stream is `stream` (zlib data), with its /Length direct or indirect. */
export function pdfWithStream(stream: Buffer, length: 'direct' | 'indirect' = 'direct'): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  const add = (body: Buffer | string): void => {
    offsets.push(parts.reduce((sum, part) => sum + part.length, 0));
    parts.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
  };
  add('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  add('2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n');
  add('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n');
  const lengthRef = length === 'direct' ? String(stream.length) : '5 0 R';
  add(Buffer.concat([Buffer.from(`4 0 obj\n<< /Length ${lengthRef} /Filter /FlateDecode >>\nstream\n`, 'latin1'), stream, Buffer.from('\nendstream\nendobj\n', 'latin1')]));
  add(`5 0 obj\n${stream.length}\nendobj\n`);
  const xrefAt = parts.reduce((sum, part) => sum + part.length, 0);
  const xref = ['xref', `0 ${offsets.length + 1}`, '0000000000 65535 f ', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `)].join('\n');
  parts.push(Buffer.from(`${xref}\ntrailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  typed.copy(out, 4);
  out.writeUInt32BE(crc32(typed), 8 + data.length);
  return out;
}

/** A PNG of `width`×`height` (colour type and depth as given) whose image data is `idat` (zlib data). */
export function png(width: number, height: number, idat: Buffer, colour: { type: number; depth: number } = { type: 0, depth: 8 }): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(colour.depth, 8);
  header.writeUInt8(colour.type, 9);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', header), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A one-strip little-endian TIFF: `width`×`height`, `samples` samples of `bits` bits, Deflate (8) strip `strip` (zlib data). */
export function tiff(width: number, height: number, strip: Buffer, samples = 1, bits = 8): Buffer {
  const tags: [number, number, number][] = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, bits],
    [259, 3, 8],
    [262, 3, samples >= 3 ? 2 : 1],
    [273, 4, 0], // strip offset, set below
    [277, 3, samples],
    [278, 4, height],
    [279, 4, strip.length],
  ];
  const ifdSize = 2 + tags.length * 12 + 4;
  const stripOffset = 8 + ifdSize;
  const out = Buffer.alloc(stripOffset + strip.length);
  out.write('II*\0', 0, 'latin1');
  out.writeUInt32LE(8, 4);
  out.writeUInt16LE(tags.length, 8);
  tags.forEach(([tag, type, value], i) => {
    const at = 10 + i * 12;
    out.writeUInt16LE(tag, at);
    out.writeUInt16LE(type, at + 2);
    out.writeUInt32LE(1, at + 4);
    if (type === 3) out.writeUInt16LE(value, at + 8);
    else out.writeUInt32LE(tag === 273 ? stripOffset : value, at + 8);
  });
  strip.copy(out, stripOffset);
  return out;
}

/** zlib data of `size` zero bytes, built in one go (for the small payloads of well-formed images). */
export function zlibZeros(size: number): Buffer {
  return deflateSync(Buffer.alloc(size));
}
