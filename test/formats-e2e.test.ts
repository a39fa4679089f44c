// Every format end to end through the API (issue: real document formats): the fixtures are built by
// fixtures/build.mjs into a temp dir, added as file:// sources with no declared type (detected from
// magic numbers and extensions), indexed by the worker, and searched; each phrase comes back with
// the evidence kind and location the contract defines. Corrupt files fail with their code while
// the others index.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { seedCollection, startFixture } from './helpers/trove.js';

interface Expectation {
  file: string;
  query: string;
  kind: string;
  location?: (loc: any) => boolean;
  contentType?: string;
}

const isBox = (b: unknown) => Array.isArray(b) && b.length === 4 && b.every((x) => typeof x === 'number' && Number.isFinite(x)) && b[2] > b[0] && b[3] > b[1];
/** The passage holding the cue at 1:05 spans at most 30 s (MAX_TRANSCRIPT_PASSAGE_MS). */
const cueAt65s = (l: any) => l.start_ms <= 65_000 && l.end_ms > 65_000 && l.end_ms - l.start_ms <= 30_000;
const charSpan = (l: any) => Number.isInteger(l?.char_start) && l.char_end > l.char_start;

const EXPECTED: Expectation[] = [
  { file: 'report.pdf', query: 'quarterly aurora budget', kind: 'page', location: (l) => l.page === 2 && isBox(l.bbox), contentType: 'application/pdf' },
  { file: 'scanned.pdf', query: 'lighthouse repairs invoice', kind: 'ocr', location: (l) => l.page === 1 && isBox(l.bbox) },
  { file: 'sign.png', query: 'harbour closed maintenance', kind: 'image_region', location: (l) => l.page === 1 && isBox(l.bbox), contentType: 'image/png' },
  { file: 'sign.jpg', query: 'harbour closed maintenance', kind: 'image_region', location: (l) => isBox(l.bbox), contentType: 'image/jpeg' },
  { file: 'sign.webp', query: 'harbour closed maintenance', kind: 'image_region', location: (l) => isBox(l.bbox), contentType: 'image/webp' },
  { file: 'sign.tiff', query: 'harbour closed maintenance', kind: 'image_region', location: (l) => isBox(l.bbox), contentType: 'image/tiff' },
  { file: 'handbook.docx', query: 'vacation accrual policy', kind: 'text', location: charSpan },
  { file: 'roadmap.pptx', query: 'migrate billing service', kind: 'page', location: (l) => l.page === 2 },
  { file: 'budget.xlsx', query: 'lighthouse maintenance', kind: 'text', location: charSpan },
  { file: 'talk.vtt', query: 'tidal generator output', kind: 'transcript', location: cueAt65s },
  { file: 'talk.srt', query: 'tidal generator output', kind: 'transcript', location: cueAt65s },
  { file: 'page.html', query: 'ferries leave from pier two', kind: 'text', location: charSpan, contentType: 'text/html' },
  { file: 'notes.md', query: 'lighthouse lamp checked monday', kind: 'text', location: charSpan, contentType: 'text/markdown' },
  // JSON evidence points at the value holding the words, not at the passage's common ancestor.
  { file: 'data.json', query: 'mainland', kind: 'json_path', location: (l) => l.json_path === '$.ferries[1].route', contentType: 'application/json' },
  { file: 'items.ndjson', query: 'tidal generator serviced', kind: 'json_path', location: (l) => l.json_path === '$[1].event' },
  { file: 'table.csv', query: 'harbour dredging phase', kind: 'text', location: charSpan, contentType: 'text/csv' },
  { file: 'parser.py', query: 'parse_header', kind: 'text', location: charSpan, contentType: 'text/x-python' },
  { file: 'server.ts', query: 'DashboardServer', kind: 'text', location: charSpan, contentType: 'text/x-typescript' },
];

/** The committed corrupt fixtures, and damaged copies of the other formats made in the test. */
const CORRUPT = ['corrupt.pdf', 'corrupt.png', 'corrupt.docx', 'corrupt.pptx', 'corrupt.xlsx', 'corrupt.vtt', 'corrupt.jpg', 'corrupt.webp', 'corrupt.tiff', 'corrupt.srt', 'corrupt.json'];

function damageCopies(dir: string): void {
  const cut = (from: string, to: string, bytes: number) => writeFileSync(join(dir, to), readFileSync(join(dir, from)).subarray(0, bytes));
  cut('sign.jpg', 'corrupt.jpg', 400);
  cut('sign.webp', 'corrupt.webp', 300);
  cut('sign.tiff', 'corrupt.tiff', 300);
  writeFileSync(join(dir, 'corrupt.srt'), '1\nthis is not a timing line\nhello\n');
  writeFileSync(join(dir, 'corrupt.json'), '{"harbour": "North Pier", "ferries": [');
}

t.test('each format is found with its evidence kind and location', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trove-formats-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { buildFixtures } = (await import(new URL('../../fixtures/build.mjs', import.meta.url).href)) as { buildFixtures: (dir: string) => Promise<string[]> };
  await buildFixtures(dir);
  damageCopies(dir);
  const files = readdirSync(dir).sort();
  const f = await startFixture({ fileRoots: [dir] });
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'formats', 'all');
  for (const name of files) {
    const r = await f.call('POST', `${base}/files`, { path: `/${name}`, source: { type: 'uri', uri: `file://${join(dir, name)}` } });
    t.equal(r.status, 202, `added ${name}`);
  }
  await f.waitForIdle(ns, col);
  const listed = new Map<string, any>();
  for (let cursor: string | null = null; ; ) {
    const page: any = await f.call('GET', `${base}/files?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const item of page.body.items) listed.set(item.path.slice(1), item);
    cursor = page.body.next_cursor;
    if (!cursor) break;
  }

  for (const name of CORRUPT) {
    const file = listed.get(name);
    t.equal(file?.status, 'failed', `${name} failed`);
    t.equal(file?.error?.code, 'extraction_failed', `${name}: ${file?.error?.message}`);
    t.ok((file?.error?.message ?? '').length > 10, 'with a message that says why');
  }
  const failedOthers = [...listed.values()].filter((x) => x.status !== 'ready' && !CORRUPT.includes(x.path.slice(1)) && x.path !== '/encrypted.pdf');
  t.same(failedOthers.map((x) => `${x.path} ${x.status} ${x.error?.code} ${x.error?.message}`), [], 'every other file indexed');
  if (listed.has('encrypted.pdf')) {
    t.match(listed.get('encrypted.pdf'), { status: 'failed', error: { code: 'extraction_failed', message: /encrypt|password/i } }, 'an encrypted PDF fails and says why');
  }

  for (const e of EXPECTED) {
    const file = listed.get(e.file);
    if (e.contentType) t.equal(file?.source?.content_type, e.contentType, `${e.file} detected as ${e.contentType}`);
    for (const mode of ['keyword', 'semantic'] as const) {
      const r = await f.call('POST', `${base}:search`, { query: e.query, mode, limit: 5, filter: { field: 'path', op: 'eq', value: `/${e.file}` } });
      t.equal(r.status, 200);
      const hit = r.body.results[0];
      t.ok(hit, `${e.file}: '${e.query}' found (${mode})`);
      if (!hit) continue;
      const ev = hit.evidence[0];
      t.equal(ev.kind, e.kind, `${e.file}: evidence kind ${e.kind} (${mode})`);
      if (e.location) t.ok(e.location(ev.location), `${e.file}: location ${JSON.stringify(ev.location)}`);
    }
  }
  // Without a filter the phrase still ranks its own file first.
  const top = await f.call('POST', `${base}:search`, { query: 'quarterly aurora budget', mode: 'keyword', limit: 3 });
  t.equal(top.body.results[0]?.path, '/report.pdf');
});

t.test('OCR off: images fail as unsupported, text PDFs still index', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trove-formats-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { build: buildImages } = (await import(new URL('../../fixtures/build/image.mjs', import.meta.url).href)) as { build: (dir: string) => Promise<void> };
  const { build: buildPdfs } = (await import(new URL('../../fixtures/build/pdf.mjs', import.meta.url).href)) as { build: (dir: string) => Promise<void> };
  await buildImages(dir);
  await buildPdfs(dir);
  const f = await startFixture({ fileRoots: [dir] });
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'formats', 'noocr', { processing: { ocr: false } });
  for (const name of ['sign.png', 'report.pdf', 'scanned.pdf']) {
    await f.call('POST', `${base}/files`, { path: `/${name}`, source: { type: 'uri', uri: `file://${join(dir, name)}` } });
  }
  await f.waitForIdle(ns, col);
  const items = new Map((await f.call('GET', `${base}/files`)).body.items.map((x: any) => [x.path, x]));
  t.match(items.get('/sign.png'), { status: 'failed', error: { code: 'unsupported_content', message: /ocr/i } });
  t.match(items.get('/report.pdf'), { status: 'ready' });
  t.match(items.get('/scanned.pdf'), { status: 'failed', error: { code: 'extraction_failed', message: /text layer|ocr/i } });
});

t.test('a declared type the bytes contradict is read as what the bytes are, and the file says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trove-formats-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { build: buildPdfs } = (await import(new URL('../../fixtures/build/pdf.mjs', import.meta.url).href)) as { build: (dir: string) => Promise<void> };
  await buildPdfs(dir);
  const f = await startFixture({ fileRoots: [dir] });
  t.teardown(() => f.close());
  const { ns, col, base } = await seedCollection(f, 'formats', 'declared');
  await f.call('POST', `${base}/files`, { path: '/mislabelled.txt', source: { type: 'uri', uri: `file://${join(dir, 'report.pdf')}`, content_type: 'text/plain' } });
  await f.waitForIdle(ns, col);
  const file = (await f.call('GET', `${base}/files/${encodeURIComponent('/mislabelled.txt')}`)).body;
  t.equal(file.status, 'ready');
  t.equal(file.source.content_type, 'application/pdf');
  t.match(file.notes, [/declared content type text\/plain is contradicted/]);
  const r = await f.call('POST', `${base}:search`, { query: 'quarterly aurora budget', mode: 'keyword' });
  t.equal(r.body.results[0]?.evidence[0]?.kind, 'page');
});
