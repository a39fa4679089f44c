// Every file format trove reads. Detection (../detect.ts) and extraction (../extract.ts) know formats only
// through this list.
//
// To add a format:
//   1. Write formats/<name>.ts exporting a FileFormat (./format.ts): its content types and their aliases,
//      extensions, evidence kinds, and `extract`. A reader that needs a heavy library goes in
//      <name>-reader.ts, which `extract` imports on its first call (see ./pdf.ts), so start-up stays light.
//   2. Add it to FORMATS below.
//   3. Map its extensions in src/contract/content-types.ts, the table the CLI shares with detection.
//   4. Give it a fixture in test/formats-conformance.test.ts. That suite runs over FORMATS, so it fails
//      for a format without one; it also checks the extensions against the table of step 3.
import type { FileFormat } from './format.js';
import { sourceCodeFormat } from './code.js';
import { csvFormat } from './csv.js';
import { htmlFormat } from './html.js';
import { imageFormat } from './image.js';
import { jsonFormat, ndjsonFormat } from './json.js';
import { markdownFormat } from './markdown.js';
import { docxFormat, pptxFormat, xlsxFormat } from './office.js';
import { pdfFormat } from './pdf.js';
import { plainTextFormat } from './plain-text.js';
import { srtFormat, webVttFormat } from './transcript.js';

export const FORMATS: readonly FileFormat[] = [
  plainTextFormat,
  markdownFormat,
  htmlFormat,
  jsonFormat,
  ndjsonFormat,
  csvFormat,
  webVttFormat,
  srtFormat,
  pdfFormat,
  docxFormat,
  pptxFormat,
  xlsxFormat,
  imageFormat,
  sourceCodeFormat,
];

/** Text types no format names (logs, YAML, shell scripts, text/xml, ...) are read as plain text. */
const OTHER_TEXT_FORMAT: FileFormat = plainTextFormat;

/** Every content type a format names, in the order of FORMATS (messages list them). */
export const SUPPORTED_CONTENT_TYPES: readonly string[] = FORMATS.flatMap((format) => format.contentTypes);

const FORMAT_BY_TYPE: ReadonlyMap<string, FileFormat> = new Map(
  FORMATS.flatMap((format) => format.contentTypes.map((type) => [type, format] as const)),
);

const CANONICAL_BY_ALIAS: ReadonlyMap<string, string> = new Map(FORMATS.flatMap((format) => Object.entries(format.aliases ?? {})));

/** The type a format knows `bareType` (lowercase, without parameters) by: an alias's canonical type, else itself. */
export function canonicalContentType(bareType: string): string {
  return CANONICAL_BY_ALIAS.get(bareType) ?? bareType;
}

/** The format that reads a normalised content type, if any. */
export function formatFor(contentType: string): FileFormat | undefined {
  return FORMAT_BY_TYPE.get(contentType) ?? (contentType.startsWith('text/') ? OTHER_TEXT_FORMAT : undefined);
}
