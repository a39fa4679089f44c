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
// A format read from bytes gets the decompression guard (../decompression.ts) before its `extract` runs:
// zip packages, PDFs, PNGs and TIFFs are measured by their container, whatever format reads them. A format
// whose library inflates some other container (gzip, 7z, ...) teaches the guard that container first.
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
import { xmlFormat } from './xml.js';

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
  xmlFormat,
];

/** Text types no format names (logs, YAML, shell scripts, text/xml, ...) are read as plain text. */
const OTHER_TEXT_FORMAT: FileFormat = plainTextFormat;

/**
 * Types outside text/* whose files are text all the same, as servers and browsers commonly label them
 * (IANA registers YAML, TOML and SQL under application/); read as plain text like the text/* types.
 */
const OTHER_TEXT_APPLICATION_TYPES: ReadonlySet<string> = new Set([
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-toml',
  'application/sql',
  'application/x-sh',
  'application/x-shellscript',
  'application/x-tex',
  'application/x-latex',
  'application/graphql',
]);

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
  const named = FORMAT_BY_TYPE.get(contentType);
  if (named !== undefined) return named;
  // Feeds, XSLT, MathML, KML, GPX, ... are XML dialects (RFC 7303's +xml suffix).
  if (contentType.endsWith('+xml')) return xmlFormat;
  return contentType.startsWith('text/') || OTHER_TEXT_APPLICATION_TYPES.has(contentType) ? OTHER_TEXT_FORMAT : undefined;
}
