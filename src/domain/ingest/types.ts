// Shapes shared by the ingest pipeline: detect → extract → chunk → index.

import type { FileErrorCode } from '../../contract/errors.js';

/** Why one file failed to index; shown as the file's `error.code` (never an HTTP status). Cancellations are the job's doing, not the file's. */
export type IngestFailureCode = Exclude<FileErrorCode, 'canceled' | 'superseded'>;

export class IngestFailure extends Error {
  readonly code: IngestFailureCode;
  constructor(code: IngestFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IngestFailure';
    this.code = code;
  }
}

/** The contract's evidence kinds (retrieval-api.md, Evidence). */
export type EvidenceKind = 'text' | 'transcript' | 'ocr' | 'json_path' | 'page' | 'image_region';

/**
 * Where a block sits in its source, beyond the extracted text: a page (PDF page, slide, image;
 * 1-based) with an optional bounding box `[x0, y0, x1, y1]` (PDF points or image pixels, origin
 * top-left), or a time span of a transcript in milliseconds.
 */
export type SourceLocation = { page: number; bbox?: number[] | null } | { start_ms: number; end_ms: number };

/** A structural unit of extracted text; offsets are UTF-16 indices into ExtractedDocument.text. */
export interface Block {
  type: 'heading' | 'paragraph' | 'row' | 'json' | 'code';
  /** Heading level 1-6, for headings only. */
  level?: number;
  charStart: number;
  charEnd: number;
  /** For json blocks: the JSON path of the value the block renders, e.g. `$.items[2].title`. */
  jsonPath?: string;
  /** Page or time span; passages never mix pages, and join time spans (src/domain/ingest/chunk.ts). */
  location?: SourceLocation;
  /** Evidence kind of passages made from this block; `text` (or `json_path` with a jsonPath) when absent. */
  evidenceKind?: EvidenceKind;
}

export interface ExtractedDocument {
  /** The readable text of the file; evidence offsets point into it. */
  text: string;
  blocks: Block[];
  /** Facts about the extraction worth keeping on the file (pages, OCR used, ...). */
  notes?: string[];
}

/** What an extractor may use and must respect (per-file limits, docs/decisions.md). */
export interface ExtractContext {
  /** The collection's `processing.ocr`: images and pages without a text layer may be read by OCR. */
  ocr: boolean;
  /** Pages (PDF pages, slides, sheets' rows are not pages) beyond which a file fails `too_large`. */
  maxPages: number;
  /** Epoch ms after which extraction gives up with `extraction_failed` (a time limit). */
  deadline: number;
  /** What the file's compressed parts may expand to; INDEXING_LIMITS.maxInflatedBytes when absent. */
  maxInflatedBytes?: number;
}

/** One format's extractor: bytes in, text and structure out, or an IngestFailure. */
export type Extractor = (bytes: Buffer, ctx: ExtractContext) => Promise<ExtractedDocument>;

export type EvidenceLocation = { char_start: number; char_end: number } | { json_path: string } | SourceLocation;

/** One retrievable passage. `text` is exactly ExtractedDocument.text.slice(charStart, charEnd). */
export interface Passage {
  ordinal: number;
  evidenceKind: EvidenceKind;
  /** The heading trail above the passage ("Intro > Setup"), '' when none; indexed as its own column. */
  heading: string;
  text: string;
  charStart: number;
  charEnd: number;
  location: EvidenceLocation;
  /**
   * For JSON passages: where each value's rendered line lies in `text`, so evidence can point at
   * the value that holds the matched words rather than at the passage's common ancestor.
   */
  jsonSpans?: JsonSpan[];
}

/** `[start, end, path]`: UTF-16 offsets into a passage's text of one JSON value, and its JSON path. */
export type JsonSpan = [start: number, end: number, path: string];

export interface ChunkOptions {
  /** Target passage size in tokens (approximated as whitespace-separated words). */
  chunkTokens: number;
  /** Tokens repeated from the end of one passage at the start of the next when a block is split. */
  chunkOverlap: number;
}
