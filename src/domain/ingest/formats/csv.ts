// CSV (and semicolon-, tab- or pipe-separated files): one row block per record, each field labelled with
// its column's header.
import { lazyRequire } from '../lazy.js';
import { type ExtractedDocument, IngestFailure } from '../types.js';
import type { TextFormat } from './format.js';
import { assemble, collapseWhitespace, type RenderedBlock } from './rendered-blocks.js';

// The parser loads on the first CSV file, not at start-up (issue 15: both threads loaded it for every
// daemon, ~60 ms). Synchronous `require`, because extraction of text formats is synchronous; the package
// ships a CommonJS build.
const csvModule = lazyRequire<typeof import('csv-parse/sync')>('csv-parse/sync');
const parseCsv: typeof import('csv-parse/sync').parse = ((...args: Parameters<typeof import('csv-parse/sync').parse>) =>
  csvModule().parse(...args)) as typeof import('csv-parse/sync').parse;

export const csvFormat: TextFormat = {
  name: 'CSV',
  contentTypes: ['text/csv'],
  aliases: { 'application/csv': 'text/csv', 'text/comma-separated-values': 'text/csv' },
  extensions: ['.csv'],
  evidence: ['text'],
  reads: 'text',
  extract: extractCsv,
};

const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;

export function extractCsv(source: string): ExtractedDocument {
  let records: string[][];
  try {
    records = parseCsv(source, {
      delimiter: guessDelimiter(source),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }) as string[][];
  } catch (error) {
    throw new IngestFailure('extraction_failed', `invalid CSV: ${errorMessage(error)}`, { cause: error });
  }

  const header = (records[0] ?? []).map((name, i) => collapseWhitespace(name) || columnName(i));
  const rendered: RenderedBlock[] = [];
  for (let r = 1; r < records.length; r++) {
    const fields: string[] = [];
    (records[r] ?? []).forEach((cell, i) => {
      const value = collapseWhitespace(cell);
      if (value !== '') fields.push(`${header[i] ?? columnName(i)}: ${value}`);
    });
    if (fields.length > 0) rendered.push({ type: 'row', text: fields.join('; ') });
  }
  return assemble(rendered, '\n');
}

function columnName(index: number): string {
  return `column ${index + 1}`;
}

/** The candidate that occurs most often, outside quotes, on the header line. */
function guessDelimiter(source: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const char of source.slice(0, 4096)) {
    if (char === '"') quoted = !quoted;
    else if (char === '\n' && !quoted) break;
    else if (!quoted && (DELIMITER_CANDIDATES as readonly string[]).includes(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const candidate of DELIMITER_CANDIDATES) {
    const count = counts.get(candidate) ?? 0;
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return best;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
