// One bomb of bench/bombs.ts, in a process of its own: argv = bomb file, content type, warm-up fixture.
// Prints {idle_mb, peak_mb, outcome}: peak RSS after the warm-up, and after the bomb was read.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../src/domain/ingest/extract.js';
import { shutdownOcr } from '../src/domain/ingest/formats/ocr.js';

const [file, contentType, warmUp] = process.argv.slice(2) as [string, string, string];
const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'formats');
const ctx = () => ({ ocr: true, maxPages: 2_000, deadline: Date.now() + 300_000 });
const peakMb = (): number => Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;

await extractDocument(readFileSync(join(fixtures, warmUp)), contentType, ctx());
const bytes = readFileSync(file);
const idle = peakMb();
let outcome: string;
try {
  const doc = await extractDocument(bytes, contentType, ctx());
  outcome = `read: ${doc.text.length} characters`;
} catch (error) {
  const code = (error as { code?: string }).code ?? 'thrown';
  outcome = `${code}: ${error instanceof Error ? error.message : String(error)}`;
}
const peak = peakMb();
await shutdownOcr();
process.stdout.write(`${JSON.stringify({ idle_mb: idle, peak_mb: peak, outcome })}\n`);
process.exit(0);
