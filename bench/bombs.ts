// `npm run bench -- --only bombs`: the memory a decompression bomb costs before it is refused. Each bomb is
// read in a child process of its own (bench/bomb-child.ts), the way the indexing worker reads a file
// (extractDocument), after a small file of the same format has loaded the libraries; the child reports its
// peak RSS before the bomb (idle) and after, so the difference is what the bomb cost. Target: every bomb
// refused within 256 MB of idle.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { buildZip, deflatedZeros, largeDocx, officeBomb, OFFICE_MAIN_PART, pdfWithStream, png, tiff, zlibZeros } from '../test/helpers/bombs.js';

const MiB = 1024 * 1024;
const here = dirname(fileURLToPath(import.meta.url));

const TYPES = {
  DOCX: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  PPTX: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  XLSX: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;

interface Bomb {
  name: string;
  contentType: string;
  /** A fixture of the format, read first so the libraries are loaded before idle is measured. */
  warmUp: string;
  build: () => Promise<Buffer>;
}

const BOMBS: Bomb[] = [
  { name: 'docx: 950 MiB declared honestly', contentType: TYPES.DOCX, warmUp: 'handbook.docx', build: () => officeBomb('DOCX', 950 * MiB) },
  { name: 'docx: 950 MiB understated as 3 MiB', contentType: TYPES.DOCX, warmUp: 'handbook.docx', build: () => officeBomb('DOCX', 950 * MiB, 3 * MiB) },
  { name: 'docx: 382 MiB understated as 3 MiB', contentType: TYPES.DOCX, warmUp: 'handbook.docx', build: () => officeBomb('DOCX', 382 * MiB, 3 * MiB) },
  {
    name: 'docx: 40 entries overlapping one 100 MiB part',
    contentType: TYPES.DOCX,
    warmUp: 'handbook.docx',
    build: async () =>
      buildZip(
        [{ name: OFFICE_MAIN_PART.DOCX, data: await deflatedZeros(100 * MiB), size: 100 * MiB }],
        Array.from({ length: 40 }, (_, i) => ({ of: 0, name: `word/part${i}.xml` })),
      ),
  },
  // Valid files under the cap: what the reader itself holds while it reads a large document.
  { name: 'docx: valid, 16 MiB document.xml', contentType: TYPES.DOCX, warmUp: 'handbook.docx', build: async () => (await largeDocx(16 * MiB)).bytes },
  { name: 'docx: valid, 32 MiB document.xml', contentType: TYPES.DOCX, warmUp: 'handbook.docx', build: async () => (await largeDocx(32 * MiB)).bytes },
  { name: 'pptx: 950 MiB understated as 3 MiB', contentType: TYPES.PPTX, warmUp: 'roadmap.pptx', build: () => officeBomb('PPTX', 950 * MiB, 3 * MiB) },
  { name: 'xlsx: 950 MiB understated as 3 MiB', contentType: TYPES.XLSX, warmUp: 'budget.xlsx', build: () => officeBomb('XLSX', 950 * MiB, 3 * MiB) },
  { name: 'pdf: a 950 MiB Flate content stream', contentType: 'application/pdf', warmUp: 'report.pdf', build: async () => pdfWithStream(await deflatedZeros(950 * MiB, 'zlib')) },
  {
    name: 'pdf: 950 MiB behind two FlateDecode filters',
    contentType: 'application/pdf',
    warmUp: 'report.pdf',
    build: async () => pdfWithStream(deflateSync(await deflatedZeros(950 * MiB, 'zlib'))),
  },
  { name: 'png: 64×64 with 950 MiB of image data', contentType: 'image/png', warmUp: 'sign.png', build: async () => png(64, 64, await deflatedZeros(950 * MiB, 'zlib')) },
  { name: 'png: 6000×6000 16-bit RGBA header', contentType: 'image/png', warmUp: 'sign.png', build: async () => png(6000, 6000, zlibZeros(1024), { type: 6, depth: 16 }) },
  { name: 'tiff: 64×64 with a 950 MiB Deflate strip', contentType: 'image/tiff', warmUp: 'sign.tiff', build: async () => tiff(64, 64, await deflatedZeros(950 * MiB, 'zlib')) },
  { name: 'tiff: 6000×6000 16-bit RGBA page', contentType: 'image/tiff', warmUp: 'sign.tiff', build: async () => tiff(6000, 6000, zlibZeros(1024), 4, 16) },
];

interface ChildReport {
  idle_mb: number;
  peak_mb: number;
  outcome: string;
}

function runChild(file: string, contentType: string, warmUp: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'bomb-child.js'), file, contentType, warmUp], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as ChildReport);
      } catch {
        reject(new Error(`bomb child exited ${code} without a report: ${out}`));
      }
    });
  });
}

export async function benchBombs(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trove-bench-bombs-'));
  try {
    for (const bomb of BOMBS) {
      const bytes = await bomb.build();
      const file = join(dir, 'bomb');
      writeFileSync(file, bytes);
      const report = await runChild(file, bomb.contentType, bomb.warmUp);
      console.log(
        JSON.stringify({
          bench: 'bombs',
          bomb: bomb.name,
          file_kb: Math.round(bytes.length / 1024),
          idle_rss_mb: report.idle_mb,
          peak_rss_mb: report.peak_mb,
          over_idle_mb: Math.round((report.peak_mb - report.idle_mb) * 10) / 10,
          outcome: report.outcome,
        }),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
