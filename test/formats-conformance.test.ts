// The conformance suite every file format passes (issue 17, item 2). It runs over the registry
// (src/domain/ingest/formats/registry.ts), so a format added without a sample here fails it. For each
// content type a format reads, a small file of that type (fixtures/formats/, or made here):
//   - read through extractDocument and chunked, holds each known phrase in a passage whose evidence kind is
//     one the format declares and whose location is right for the format (a page and box for PDF and
//     images, a slide for PPTX, a time span for subtitles, a JSON path, else a span of the extracted text);
//   - damaged, fails with its file error code;
//   - keeps the limits: pages count against maxPages only in formats that have pages, a format read from
//     bytes stops at its deadline, and the format's own limits (JSON leaves, image pixels, zip size) hold;
//   - is detected as its type from each extension the format claims (and, for formats read from bytes,
//     from the bytes alone).
// And the registry agrees with itself and with src/contract/content-types.ts, the table clients read.
import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
import t from 'tap';
import { oneEntryZip } from './helpers/zip.js';
import { EXTENSION_TYPES } from '../src/contract/content-types.js';
import { chunkDocument } from '../src/domain/ingest/chunk.js';
import { detectContentType, normalizeContentType } from '../src/domain/ingest/detect.js';
import { extractDocument } from '../src/domain/ingest/extract.js';
import type { FileFormat } from '../src/domain/ingest/formats/format.js';
import { MAX_JSON_LEAVES } from '../src/domain/ingest/formats/json.js';
import { FORMATS, formatFor } from '../src/domain/ingest/formats/registry.js';
import { shutdownOcr } from '../src/domain/ingest/formats/ocr.js';
import {
  type EvidenceKind,
  type EvidenceLocation,
  type ExtractContext,
  type ExtractedDocument,
  IngestFailure,
  type IngestFailureCode,
  type Passage,
} from '../src/domain/ingest/types.js';
import { PATIENCE_MS } from './helpers/wait.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

t.teardown(shutdownOcr);

// ---------------------------------------------------------------------------------------------------------
// Files that cross a limit

/** The package with its first entry's declared uncompressed size raised to almost 4 GiB. */
function declaringHugeEntry(zip: Buffer): Buffer {
  const bytes = Buffer.from(zip);
  const end = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const directory = bytes.readUInt32LE(end + 16);
  bytes.writeUInt32LE(0xfffffff0, directory + 24);
  return bytes;
}

const HUGE = { width: 8000, height: 6000 };

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

function oversizedPng(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(HUGE.width, 0);
  header.writeUInt32BE(HUGE.height, 4);
  header.writeUInt8(8, 8); // bit depth; colour type 0 (grey)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.alloc(16))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

function oversizedJpeg(): Buffer {
  const frame = Buffer.from([0xff, 0xc0, 0x00, 0x0b, 0x08, 0, 0, 0, 0, 0x01, 0x01, 0x11, 0x00]);
  frame.writeUInt16BE(HUGE.height, 5);
  frame.writeUInt16BE(HUGE.width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), frame, Buffer.from([0xff, 0xd9])]);
}

function oversizedWebp(): Buffer {
  const bytes = Buffer.alloc(30);
  bytes.write('RIFF', 0, 'latin1');
  bytes.writeUInt32LE(22, 4);
  bytes.write('WEBPVP8X', 8, 'latin1');
  bytes.writeUInt32LE(10, 16);
  bytes.writeUIntLE(HUGE.width - 1, 24, 3);
  bytes.writeUIntLE(HUGE.height - 1, 27, 3);
  return bytes;
}

/** A little-endian TIFF whose one directory gives only the size. */
function oversizedTiff(): Buffer {
  const bytes = Buffer.alloc(8 + 2 + 2 * 12 + 4);
  bytes.write('II*\0', 0, 'latin1');
  bytes.writeUInt32LE(8, 4);
  bytes.writeUInt16LE(2, 8);
  [
    [256, HUGE.width],
    [257, HUGE.height],
  ].forEach(([tag, value], i) => {
    const at = 10 + i * 12;
    bytes.writeUInt16LE(tag!, at);
    bytes.writeUInt16LE(4, at + 2); // LONG
    bytes.writeUInt32LE(1, at + 4);
    bytes.writeUInt32LE(value!, at + 8);
  });
  return bytes;
}


/** Files of the containers formats declare (BinaryFormat `magic.container`). */
const CONTAINERS: Readonly<Record<string, () => Buffer>> = { 'application/zip': oneEntryZip };

// ---------------------------------------------------------------------------------------------------------
// Samples: one per content type

interface Finding {
  phrase: string;
  kind: EvidenceKind;
  /** Whether the location of the passage holding the phrase is right for the format. */
  located: (location: EvidenceLocation, passage: Passage, doc: ExtractedDocument) => boolean;
}

interface OwnLimit {
  name: string;
  /** A file that crosses the limit. */
  bytes: Buffer;
  /** The failure it brings, or a check of the document it still gives (a limit that truncates). */
  expect: IngestFailureCode | ((doc: ExtractedDocument) => boolean);
}

interface Sample {
  bytes: Buffer;
  finds: Finding[];
  /** How many pages the sample has, for formats whose pages (PDF pages, slides, TIFF pages) count against maxPages. */
  pages?: number;
  damaged: { bytes: Buffer; code: IngestFailureCode };
  /** Limits of this format's own, beyond pages and time. */
  ownLimits?: OwnLimit[];
}

const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/formats/${name}`, import.meta.url));
const normalize = (text: string): string => text.toLowerCase().replace(/\s+/g, ' ');
const isBox = (b: unknown): boolean =>
  Array.isArray(b) && b.length === 4 && b.every((x) => typeof x === 'number' && Number.isFinite(x)) && b[2] > b[0] && b[3] > b[1];

/** A `text` passage points at its own span of the extracted text. */
const textSpan: Finding['located'] = (location, passage, doc) =>
  'char_start' in location &&
  location.char_start === passage.charStart &&
  location.char_end === passage.charEnd &&
  doc.text.slice(location.char_start, location.char_end) === passage.text;
const onPage =
  (page: number, box: 'with a box' | 'without a box'): Finding['located'] =>
  (location) =>
    'page' in location && location.page === page && (box === 'with a box' ? isBox(location.bbox) : location.bbox == null);
/** The passage holding a cue spans it, and at most 30 s (MAX_TRANSCRIPT_PASSAGE_MS). */
const duringCueAt =
  (ms: number): Finding['located'] =>
  (location) =>
    'start_ms' in location && location.start_ms <= ms && location.end_ms > ms && location.end_ms - location.start_ms <= 30_000;
/** A JSON passage is at a path that holds the value, and maps the value's line to the value's own path. */
const atJsonValue =
  (path: string, phrase: string): Finding['located'] =>
  (location, passage) =>
    'json_path' in location &&
    path.startsWith(location.json_path) &&
    (passage.jsonSpans ?? []).some(([start, end, spanPath]) => spanPath === path && normalize(passage.text.slice(start, end)).includes(phrase));

const text = (phrase: string): Finding => ({ phrase, kind: 'text', located: textSpan });

/** Bytes no text format reads: NUL bytes and invalid UTF-8 (extract.ts refuses them before any format does). */
const BINARY_GARBAGE = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 151 + 7) % 256));
const garbled = { bytes: BINARY_GARBAGE, code: 'extraction_failed' } as const;
const damagedFixture = (name: string) => ({ bytes: fixture(name), code: 'extraction_failed' }) as const;
const cut = (name: string, bytes: number) => ({ bytes: fixture(name).subarray(0, bytes), code: 'extraction_failed' }) as const;

const TIDE_CHART = 'harbour tide chart';
/**
 * A source file in each language the source-code format knows, each defining something whose body holds
 * the phrase (a definition's signature is its passage's heading, not its text).
 */
const CODE: Readonly<Record<string, string>> = {
  'text/javascript': `export function tideChart(port) {\n  return '${TIDE_CHART} for ' + port;\n}\n`,
  'text/x-go': `package tides\n\nfunc TideChart(port string) string {\n\treturn "${TIDE_CHART} for " + port\n}\n`,
  'text/x-rust': `pub fn tide_chart(port: &str) -> String {\n    format!("${TIDE_CHART} for {}", port)\n}\n`,
  'text/x-java': `public class Tides {\n  public String tideChart(String port) {\n    return "${TIDE_CHART} for " + port;\n  }\n}\n`,
  'text/x-c': `const char *tide_chart(void) {\n  return "${TIDE_CHART}";\n}\n`,
  'text/x-c++': `std::string tideChart(const std::string &port) {\n  return "${TIDE_CHART} for " + port;\n}\n`,
  'text/x-csharp': `public class Tides\n{\n    public string TideChart(string port)\n    {\n        return "${TIDE_CHART} for " + port;\n    }\n}\n`,
  'text/x-ruby': `def tide_chart(port)\n  "${TIDE_CHART} for #{port}"\nend\n`,
  'text/x-php': `<?php\nfunction tide_chart($port) {\n    return "${TIDE_CHART} for " . $port;\n}\n`,
  'text/x-kotlin': `fun tideChart(port: String): String {\n    return "${TIDE_CHART} for $port"\n}\n`,
  'text/x-swift': `func tideChart(port: String) -> String {\n    return "${TIDE_CHART} for \\(port)"\n}\n`,
  'text/x-scala': `object Tides {\n  def tideChart(port: String): String = {\n    s"${TIDE_CHART} for $port"\n  }\n}\n`,
};
const codeSample = (source: string): Sample => ({ bytes: Buffer.from(source), finds: [text(TIDE_CHART)], damaged: garbled });

const SIGN = 'harbour closed for maintenance';
const imageSample = (name: string, damaged: Sample['damaged'], oversized: Buffer): Sample => ({
  bytes: fixture(name),
  finds: [{ phrase: SIGN, kind: 'image_region', located: onPage(1, 'with a box') }],
  damaged,
  ownLimits: [{ name: 'a header claiming 8000×6000 pixels (over 40 megapixels)', bytes: oversized, expect: 'too_large' }],
});

const officeLimits = (name: string): OwnLimit[] => [
  { name: 'a package declaring more than 1 GiB unpacked', bytes: declaringHugeEntry(fixture(name)), expect: 'too_large' },
];

const SAMPLES: Readonly<Record<string, Sample>> = {
  'text/plain': {
    bytes: Buffer.from('Ferry timetable\nfor the winter.\n\nThe harbour master keeps the tide tables.\n'),
    finds: [text('harbour master keeps')],
    damaged: garbled,
  },
  'text/markdown': { bytes: fixture('notes.md'), finds: [text('the lighthouse lamp is checked')], damaged: garbled },
  'text/html': { bytes: fixture('page.html'), finds: [text('ferries leave from pier two')], damaged: garbled },
  'application/json': {
    bytes: fixture('data.json'),
    finds: [{ phrase: 'mainland', kind: 'json_path', located: atJsonValue('$.ferries[1].route', 'mainland') }],
    damaged: { bytes: Buffer.from('{"harbour": "North Pier", "ferries": ['), code: 'extraction_failed' },
    ownLimits: [
      {
        name: `more than ${MAX_JSON_LEAVES} leaves (the rest is dropped)`,
        bytes: Buffer.from(JSON.stringify({ n: Array.from({ length: MAX_JSON_LEAVES + 10 }, (_, i) => i) })),
        expect: (doc) => doc.blocks.length === MAX_JSON_LEAVES,
      },
    ],
  },
  'application/x-ndjson': {
    bytes: fixture('items.ndjson'),
    finds: [{ phrase: 'tidal generator serviced', kind: 'json_path', located: atJsonValue('$[1].event', 'tidal generator serviced') }],
    damaged: { bytes: Buffer.from('{"id":1}\n{"id":\n'), code: 'extraction_failed' },
    ownLimits: [
      {
        name: `more than ${MAX_JSON_LEAVES} leaves (the rest is dropped)`,
        bytes: Buffer.from(Array.from({ length: MAX_JSON_LEAVES + 10 }, (_, i) => `{"n":${i}}\n`).join('')),
        expect: (doc) => doc.blocks.length === MAX_JSON_LEAVES,
      },
    ],
  },
  'text/csv': {
    bytes: fixture('table.csv'),
    finds: [text('harbour dredging, phase 2')],
    damaged: { bytes: Buffer.from('a,b\n"unterminated,2\n3,4\n'), code: 'extraction_failed' },
  },
  'text/vtt': {
    bytes: fixture('talk.vtt'),
    finds: [{ phrase: 'tidal generator output', kind: 'transcript', located: duringCueAt(65_000) }],
    damaged: damagedFixture('corrupt.vtt'),
  },
  'application/x-subrip': {
    bytes: fixture('talk.srt'),
    finds: [{ phrase: 'tidal generator output', kind: 'transcript', located: duringCueAt(65_000) }],
    damaged: { bytes: Buffer.from('1\nthis is not a timing line\nhello\n'), code: 'extraction_failed' },
  },
  // Page 1 has a text layer, page 2 is a scanned image: both evidence kinds of a PDF.
  'application/pdf': {
    bytes: fixture('mixed.pdf'),
    finds: [
      { phrase: 'the annual harbour inspection', kind: 'page', located: onPage(1, 'with a box') },
      { phrase: 'invoice number 4471 for lighthouse repairs', kind: 'ocr', located: onPage(2, 'with a box') },
    ],
    pages: 2,
    damaged: damagedFixture('corrupt.pdf'),
  },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': {
    bytes: fixture('handbook.docx'),
    finds: [text('vacation accrual policy')],
    damaged: damagedFixture('corrupt.docx'),
    ownLimits: officeLimits('handbook.docx'),
  },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': {
    bytes: fixture('roadmap.pptx'),
    finds: [{ phrase: 'migrate the billing service', kind: 'page', located: onPage(2, 'without a box') }],
    pages: 3,
    damaged: damagedFixture('corrupt.pptx'),
    ownLimits: officeLimits('roadmap.pptx'),
  },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {
    bytes: fixture('budget.xlsx'),
    finds: [text('lighthouse maintenance')],
    damaged: damagedFixture('corrupt.xlsx'),
    ownLimits: officeLimits('budget.xlsx'),
  },
  'image/png': imageSample('sign.png', damagedFixture('corrupt.png'), oversizedPng()),
  'image/jpeg': imageSample('sign.jpg', cut('sign.jpg', 400), oversizedJpeg()),
  'image/webp': imageSample('sign.webp', cut('sign.webp', 300), oversizedWebp()),
  'image/tiff': {
    ...imageSample('sign-2pages.tiff', cut('sign.tiff', 300), oversizedTiff()),
    finds: [
      { phrase: SIGN, kind: 'image_region', located: onPage(1, 'with a box') },
      { phrase: 'ferry timetable suspended until friday', kind: 'image_region', located: onPage(2, 'with a box') },
    ],
    pages: 2,
  },
  'text/x-python': { bytes: fixture('parser.py'), finds: [text('the tide table version decides the record layout')], damaged: garbled },
  'text/x-typescript': { bytes: fixture('server.ts'), finds: [text('answers one request with the ferry timetable')], damaged: garbled },
  ...Object.fromEntries(Object.entries(CODE).map(([type, source]) => [type, codeSample(source)])),
  'application/xml': {
    bytes: Buffer.from('<?xml version="1.0"?>\n<harbour>\n  <notice>the ferry leaves from pier two at noon</notice>\n</harbour>\n'),
    finds: [text('the ferry leaves from pier two')],
    damaged: garbled,
  },
  'image/svg+xml': {
    bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40">\n  <text x="4" y="24">harbour map legend</text>\n</svg>\n'),
    finds: [text('harbour map legend')],
    damaged: garbled,
  },
};

// ---------------------------------------------------------------------------------------------------------
// The suite

const CHUNKING = { chunkTokens: 400, chunkOverlap: 40 };

function context(overrides: Partial<ExtractContext> = {}): ExtractContext {
  return { ocr: true, maxPages: 2_000, deadline: Date.now() + PATIENCE_MS, ...overrides };
}

async function failureOf(work: () => Promise<unknown>): Promise<IngestFailure | string> {
  try {
    await work();
    return 'it did not fail';
  } catch (error) {
    return error instanceof IngestFailure ? error : `it threw ${String(error)}, not an IngestFailure`;
  }
}

async function expectFailure(t: TestContext, work: () => Promise<unknown>, code: IngestFailureCode, what: string): Promise<void> {
  const failure = await failureOf(work);
  if (typeof failure === 'string') t.fail(`${what}: ${failure}`);
  else t.equal(failure.code, code, `${what}: ${code} (${failure.message})`);
}

t.test('every content type the registry names has a sample, and every sample a registered type', async (t) => {
  const registered = FORMATS.flatMap((format) => format.contentTypes);
  t.same(
    registered.filter((type) => SAMPLES[type] === undefined),
    [],
    'a format reading one of these needs a sample in test/formats-conformance.test.ts',
  );
  t.same(
    Object.keys(SAMPLES).filter((type) => !registered.includes(type)),
    [],
    'samples for types no registered format reads',
  );
});

for (const format of FORMATS) {
  t.test(`${format.name} (${format.reads === 'text' ? 'read as text' : 'read from bytes'})`, async (t) => {
    const kindsFound = new Set<EvidenceKind>();
    for (const type of format.contentTypes) {
      const sample = SAMPLES[type];
      if (sample === undefined) continue; // reported by the test above

      await t.test(`${type}: each phrase is found, with the evidence kind and location of the format`, async (t) => {
        // A format without pages ignores maxPages; one with them may hold exactly maxPages.
        const doc = await extractDocument(sample.bytes, type, context({ maxPages: sample.pages ?? 0 }));
        const passages = chunkDocument(doc, CHUNKING);
        t.same(
          passages.filter((p) => !format.evidence.includes(p.evidenceKind)).map((p) => `${p.evidenceKind}: ${p.text.slice(0, 40)}`),
          [],
          `every passage has one of the evidence kinds ${format.name} declares (${format.evidence.join(', ')})`,
        );
        for (const find of sample.finds) {
          const passage = passages.find((p) => normalize(p.text).includes(normalize(find.phrase)));
          if (passage === undefined) {
            t.fail(`'${find.phrase}' is in no passage of ${JSON.stringify(doc.text.slice(0, 300))}`);
            continue;
          }
          kindsFound.add(passage.evidenceKind);
          t.equal(passage.evidenceKind, find.kind, `'${find.phrase}': evidence kind ${find.kind}`);
          t.ok(find.located(passage.location, passage, doc), `'${find.phrase}': location ${JSON.stringify(passage.location)}`);
        }
      });

      await t.test(`${type}: a damaged file fails with ${sample.damaged.code}`, async (t) => {
        const extension = format.extensions.find((ext) => EXTENSION_TYPES[ext] === type);
        if (extension !== undefined) {
          const detected = await detectContentType({ bytes: sample.damaged.bytes, path: `/upload/damaged${extension}` });
          t.equal(detected.contentType, type, `named *${extension}, it is still ${type}, so it fails as damaged rather than unsupported`);
        }
        await expectFailure(t, () => extractDocument(sample.damaged.bytes, type, context()), sample.damaged.code, 'the damaged file');
      });

      await t.test(`${type}: limits hold`, async (t) => {
        if (sample.pages !== undefined) {
          await expectFailure(t, () => extractDocument(sample.bytes, type, context({ maxPages: sample.pages! - 1 })), 'too_large', `${sample.pages} pages, maxPages ${sample.pages - 1}`);
        } else {
          t.pass('no pages to count: maxPages 0 read the sample above');
        }
        if (format.reads === 'bytes') {
          await expectFailure(t, () => extractDocument(sample.bytes, type, context({ deadline: Date.now() - 1 })), 'extraction_failed', 'past the deadline');
        }
        for (const limit of sample.ownLimits ?? []) {
          if (typeof limit.expect === 'string') {
            await expectFailure(t, () => extractDocument(limit.bytes, type, context()), limit.expect, limit.name);
          } else {
            t.ok(limit.expect(await extractDocument(limit.bytes, type, context())), limit.name);
          }
        }
      });

      await t.test(`${type}: detected by its extensions${format.reads === 'bytes' ? ' and by its bytes' : ''}`, async (t) => {
        for (const extension of format.extensions.filter((ext) => EXTENSION_TYPES[ext] === type)) {
          t.same(await detectContentType({ bytes: sample.bytes, path: `/upload/file${extension}` }), { contentType: type }, `a file named *${extension}`);
        }
        if (format.reads !== 'bytes') return;
        t.same(await detectContentType({ bytes: sample.bytes, path: '/upload/unnamed' }), { contentType: type }, 'a file with no name to go by');
        const container = format.magic?.container;
        if (container !== undefined) {
          const makeContainer = CONTAINERS[container];
          if (makeContainer === undefined) {
            t.fail(`no ${container} file to test with: add one to CONTAINERS`);
            return;
          }
          const extension = format.extensions.find((ext) => EXTENSION_TYPES[ext] === type) ?? '';
          t.same(await detectContentType({ bytes: makeContainer(), path: `/upload/damaged${extension}` }), { contentType: type }, `a bare ${container} named *${extension}`);
          t.same(await detectContentType({ bytes: makeContainer(), declared: type, path: '/upload/unnamed' }), { contentType: type }, `a bare ${container} declared ${type}`);
        }
        if (format.magic?.asciiSignature) {
          const signature = sample.bytes.subarray(0, sample.bytes.indexOf(0x0a));
          const asText = Buffer.concat([signature, Buffer.from('\nthe rest of it is plain words\n')]);
          t.same(await detectContentType({ bytes: asText, path: '/upload/unnamed' }), { contentType: type }, `its ASCII signature ${JSON.stringify(signature.toString('latin1'))} before clean text`);
        }
      });
    }
    t.same(
      format.evidence.filter((kind) => !kindsFound.has(kind)),
      [],
      `the samples show every evidence kind ${format.name} declares`,
    );
  });
}

// ---------------------------------------------------------------------------------------------------------
// The registry's own consistency, and its agreement with the contract's extension table

/** Extensions the contract maps to a type no format reads, so such files are refused rather than read as plain text. */
const UNREAD_EXTENSIONS: Readonly<Record<string, string>> = {};

t.test('each content type, alias and extension belongs to one format', async (t) => {
  const owners = (pick: (format: FileFormat) => readonly string[]) => {
    const seen = new Map<string, string[]>();
    for (const format of FORMATS) for (const key of pick(format)) seen.set(key, [...(seen.get(key) ?? []), format.name]);
    return [...seen].filter(([, names]) => names.length > 1).map(([key, names]) => `${key}: ${names.join(', ')}`);
  };
  t.same(owners((f) => f.contentTypes), [], 'content types');
  t.same(owners((f) => Object.keys(f.aliases ?? {})), [], 'aliases');
  t.same(owners((f) => f.extensions), [], 'extensions');
  for (const format of FORMATS) {
    for (const [alias, canonical] of Object.entries(format.aliases ?? {})) {
      t.ok(format.contentTypes.includes(canonical), `${format.name}: alias ${alias} names one of its types (${canonical})`);
      t.notOk(FORMATS.some((other) => other.contentTypes.includes(alias)), `${alias} is not itself a registered type`);
      t.equal(normalizeContentType(`${alias.toUpperCase()}; charset=utf-8`), canonical, `${alias} normalises to ${canonical}`);
    }
    for (const type of format.contentTypes) t.equal(type, type.toLowerCase(), `${type} is lowercase`);
  }
});

t.test("the formats' extensions are the contract's extension table (src/contract/content-types.ts)", async (t) => {
  for (const format of FORMATS) {
    for (const extension of format.extensions) {
      const type = EXTENSION_TYPES[extension];
      if (type === undefined) {
        t.fail(`${format.name} claims ${extension}, which src/contract/content-types.ts does not map: add it there`);
        continue;
      }
      t.equal(formatFor(type)?.name, format.name, `${extension} → ${type}, read by ${format.name}`);
    }
  }
  const claimed = new Set(FORMATS.flatMap((format) => format.extensions));
  const unclaimed = Object.entries(EXTENSION_TYPES)
    .filter(([extension]) => !claimed.has(extension))
    .map(([extension, type]) => `${extension} → ${type}`);
  t.same(
    unclaimed,
    Object.entries(UNREAD_EXTENSIONS).map(([extension, type]) => `${extension} → ${type}`),
    'every other extension the contract maps is claimed by the format that reads its type',
  );
  for (const type of Object.values(UNREAD_EXTENSIONS)) t.equal(formatFor(type), undefined, `${type} is read by no format`);
});
