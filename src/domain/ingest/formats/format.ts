// What the ingest pipeline knows of a file format: every format is one FileFormat value, listed in
// ./registry.ts; detection (../detect.ts) and extraction (../extract.ts) learn about formats only there.
import type { EvidenceKind, ExtractedDocument, Extractor } from '../types.js';

interface FormatDescription {
  /** How tests and messages name the format. */
  name: string;
  /** The content types it reads, as detection reports them: lowercase, without parameters. */
  contentTypes: readonly string[];
  /** Other spellings seen in the wild, each mapped to one of `contentTypes` (normalizeContentType applies them). */
  aliases?: Readonly<Record<string, string>>;
  /**
   * File name extensions (lowercase, with the dot) that src/contract/content-types.ts maps to a type this
   * format reads. That table stays in contract/ because the CLI reads it too; test/formats-conformance
   * holds the two to each other.
   */
  extensions: readonly string[];
  /** The evidence kinds its passages carry (docs/decisions.md, "Evidence kinds"). */
  evidence: readonly EvidenceKind[];
}

/**
 * A format read as text: ../extract.ts decodes the bytes (UTF-8, UTF-16 with a byte order mark, or
 * Windows-1252) and normalises line breaks, then `extract` reads the structure. Synchronous and linear in
 * the text, so the per-file size limit bounds it; it needs none of ExtractContext's limits.
 */
export interface TextFormat extends FormatDescription {
  reads: 'text';
  /** `contentType` is the normalised type, for formats that read several (source code: its language). */
  extract(text: string, contentType: string): ExtractedDocument;
}

/**
 * A format read from its bytes, usually by a library. `extract` must import any heavy library on its first
 * call (../lazy.ts), never at start-up: test/startup-lazy.test.ts holds the daemon to that. It honours
 * ExtractContext: its time limit, its page limit where the format has pages, and OCR being off.
 */
export interface BinaryFormat extends FormatDescription {
  reads: 'bytes';
  /** How detection reads the signature `file-type` finds in the bytes, when that needs more than the type. */
  magic?: {
    /**
     * The signature is ASCII (`%PDF-`): believed even when the bytes are otherwise clean text, where a
     * signature such as "BM" or "MZ" is taken to be the start of a sentence.
     */
    asciiSignature?: true;
    /**
     * The format is a container of this type (Office files are zips). Bytes `file-type` calls only the
     * container, because they are damaged, are still this format when the declared type or the extension
     * says so (so they fail `extraction_failed`, not `unsupported_content`).
     */
    container?: string;
  };
  extract: Extractor;
}

export type FileFormat = TextFormat | BinaryFormat;
