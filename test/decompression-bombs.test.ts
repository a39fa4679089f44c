// Decompression bombs are refused before any library inflates them (src/domain/ingest/decompression.ts):
// in every format that decompresses, a file that expands past the cap fails `too_large` with a message that
// says so, and no more than the cap (and one zlib chunk) was inflated to find out. Memory is measured by
// `npm run bench -- --only bombs`, not here: these count inflated bytes.
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import t from 'tap';
import { checkDecompression, DecompressionLimitFailure, INFLATE_CHUNK_BYTES } from '../src/domain/ingest/decompression.js';
import { extractDocument } from '../src/domain/ingest/extract.js';
import { shutdownOcr } from '../src/domain/ingest/formats/ocr.js';
import { INDEXING_LIMITS } from '../src/domain/limits.js';
import { IngestFailure, type ExtractContext } from '../src/domain/ingest/types.js';
import { buildZip, deflatedZeros, officeBomb, OFFICE_MAIN_PART, pdfWithStream, png, tiff, zlibZeros } from './helpers/bombs.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

t.teardown(shutdownOcr);

const MiB = 1024 * 1024;
/** A small cap keeps the bombs (and the test) small; one case runs at the default cap. */
const CAP = 4 * MiB;

const TYPES = {
  DOCX: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  PPTX: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  XLSX: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  PDF: 'application/pdf',
  PNG: 'image/png',
  TIFF: 'image/tiff',
} as const;

/** What the indexing worker passes (no cap of its own: the default applies), or that with a cap. */
const context = (cap: number | 'default' = CAP): ExtractContext => {
  const ctx: ExtractContext = { ocr: true, maxPages: 2_000, deadline: Date.now() + 120_000 };
  if (cap !== 'default') ctx.maxInflatedBytes = cap;
  return ctx;
};

const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/formats/${name}`, import.meta.url));

async function failureOf(work: Promise<unknown>): Promise<IngestFailure | string> {
  try {
    await work;
    return 'it was not refused';
  } catch (error) {
    return error instanceof IngestFailure ? error : `it threw ${String(error)}, not an IngestFailure`;
  }
}

/**
 * The bomb, read as `type` the way the indexing worker reads it, is refused `too_large` with a message that
 * says it expands past the cap (never a library's own words), after inflating no more than the cap.
 */
async function refused(t: TestContext, bomb: Buffer, type: string, cap = CAP): Promise<void> {
  const failure = await failureOf(extractDocument(bomb, type, context(cap === INDEXING_LIMITS.maxInflatedBytes ? 'default' : cap)));
  if (typeof failure === 'string') {
    t.fail(failure);
    return;
  }
  t.equal(failure.code, 'too_large', `too_large: ${failure.message}`);
  t.match(failure.message, new RegExp(`expands past ${cap / MiB} MiB when (decompressed|decoded)`), 'the message says what the limit is');
  t.ok(failure instanceof DecompressionLimitFailure, 'refused by the decompression guard, before the library');
  if (failure instanceof DecompressionLimitFailure) {
    t.ok(failure.inflatedBytes <= cap + INFLATE_CHUNK_BYTES, `inflated ${failure.inflatedBytes} bytes, no more than the cap (${cap}) and a chunk`);
  }
}

for (const format of ['DOCX', 'PPTX', 'XLSX'] as const) {
  t.test(`${format}: zip bombs are refused before the package is opened`, async (t) => {
    await t.test('honest sizes past the cap: refused from the directory, nothing inflated', async (t) => {
      const bomb = await officeBomb(format, 6 * CAP);
      await refused(t, bomb, TYPES[format]);
      const failure = await failureOf(checkDecompression(bomb, { maxInflatedBytes: CAP }));
      t.equal(failure instanceof DecompressionLimitFailure ? failure.inflatedBytes : -1, 0, 'declared sizes are believed when they are too big');
    });
    await t.test('sizes understated as 1 MiB: refused once the true size passes the cap', async (t) => {
      await refused(t, await officeBomb(format, 6 * CAP, MiB), TYPES[format]);
    });
    await t.test('entries overlapping the same data (each under the cap, together over it)', async (t) => {
      const part = { name: OFFICE_MAIN_PART[format], data: await deflatedZeros(MiB), size: MiB };
      const copies = Array.from({ length: 8 }, (_, i) => ({ of: 0, name: `customXml/item${i}.xml` }));
      await refused(t, buildZip([part], copies), TYPES[format]);
    });
  });
}

t.test('a zip entry whose size is understated but within the cap fails as damaged, in our words', async (t) => {
  const bomb = await officeBomb('DOCX', 2 * MiB, 3_000);
  const failure = await failureOf(extractDocument(bomb, TYPES.DOCX, context()));
  if (typeof failure === 'string') {
    t.fail(failure);
    return;
  }
  t.equal(failure.code, 'extraction_failed');
  t.match(failure.message, /zip entry word\/document\.xml declares 3000 bytes but holds 2097152/);
  t.notMatch(failure.message, /uncompressed data size mismatch/, "not the zip library's message");
});

t.test('PDF: a Flate bomb stream is refused before pdf.js opens the file', async (t) => {
  const stream = await deflatedZeros(6 * CAP, 'zlib');
  await t.test('with a direct /Length', async (t) => refused(t, pdfWithStream(stream), TYPES.PDF));
  await t.test('with an indirect /Length', async (t) => refused(t, pdfWithStream(stream, 'indirect'), TYPES.PDF));
  await t.test('with a /Length that stops short of the data', async (t) => {
    const pdf = pdfWithStream(stream);
    const at = pdf.indexOf(`/Length ${stream.length}`);
    const short = Buffer.concat([pdf.subarray(0, at), Buffer.from('/Length 10'.padEnd(`/Length ${stream.length}`.length)), pdf.subarray(at + `/Length ${stream.length}`.length)]);
    await refused(t, short, TYPES.PDF);
  });
  await t.test('compressed twice (a chain of two FlateDecode filters)', async (t) => {
    const inner = await deflatedZeros(6 * CAP, 'zlib');
    t.ok(inner.length < CAP, 'the outer layer alone is far under the cap');
    await refused(t, pdfWithStream(deflateSync(inner)), TYPES.PDF);
  });
});

t.test('PNG: image data that inflates past the cap, and a header declaring more than it', async (t) => {
  await t.test('a 64×64 image whose IDAT inflates past the cap', async (t) => refused(t, png(64, 64, await deflatedZeros(6 * CAP, 'zlib')), TYPES.PNG));
  await t.test('a 6000×6000 16-bit RGBA header (under 40 megapixels, 288 MB decoded) at the default cap', async (t) => {
    await refused(t, png(6000, 6000, zlibZeros(1024), { type: 6, depth: 16 }), TYPES.PNG, INDEXING_LIMITS.maxInflatedBytes);
  });
});

t.test('TIFF: a Deflate strip that inflates past the cap, and dimensions declaring more than it', async (t) => {
  await t.test('a 64×64 page whose strip inflates past the cap', async (t) => refused(t, tiff(64, 64, await deflatedZeros(6 * CAP, 'zlib')), TYPES.TIFF));
  await t.test('a 6000×6000 page of 16-bit RGBA (under 40 megapixels, 288 MB decoded) at the default cap', async (t) => {
    await refused(t, tiff(6000, 6000, zlibZeros(1024), 4, 16), TYPES.TIFF, INDEXING_LIMITS.maxInflatedBytes);
  });
});

t.test('at the default cap, a DOCX understating a 300 MiB part as 3 MiB is refused after at most the cap', async (t) => {
  await refused(t, await officeBomb('DOCX', 300 * MiB, 3 * MiB), TYPES.DOCX, INDEXING_LIMITS.maxInflatedBytes);
});

t.test('ordinary files pass at the default cap, their compressed parts measured', async (t) => {
  const cases: [string, string][] = [
    ['handbook.docx', 'zip'],
    ['roadmap.pptx', 'zip'],
    ['budget.xlsx', 'zip'],
    ['mixed.pdf', 'pdf'],
    ['report.pdf', 'pdf'],
    ['sign.png', 'png'],
    ['sign-2pages.tiff', 'tiff'],
  ];
  for (const [name, container] of cases) {
    const check = await checkDecompression(fixture(name));
    t.equal(check.container, container, `${name} is a ${container}`);
    t.ok(check.inflatedBytes > 0, `${name}: ${check.inflatedBytes} bytes inflated`);
  }
  const doc = await extractDocument(fixture('handbook.docx'), TYPES.DOCX, context('default'));
  t.match(doc.text, /vacation accrual policy/i, 'and are read as before');
});
