// Shapes shared by the ingest pipeline: detect → extract → chunk → index.

/** Why one file failed to index; shown as the file's `error.code` (never an HTTP status). */
export type IngestFailureCode = 'unsupported_content' | 'extraction_failed' | 'source_mismatch' | 'too_large' | 'fetch_failed' | 'embedding_failed' | 'embedding_model_mismatch';

export class IngestFailure extends Error {
  readonly code: IngestFailureCode;
  constructor(code: IngestFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IngestFailure';
    this.code = code;
  }
}

/** A structural unit of extracted text; offsets are UTF-16 indices into ExtractedDocument.text. */
export interface Block {
  type: 'heading' | 'paragraph' | 'row' | 'json' | 'code';
  /** Heading level 1-6, for headings only. */
  level?: number;
  charStart: number;
  charEnd: number;
  /** For json blocks: the JSON path of the value the block renders, e.g. `$.items[2].title`. */
  jsonPath?: string;
}

export interface ExtractedDocument {
  /** The readable text of the file; evidence offsets point into it. */
  text: string;
  blocks: Block[];
}

export type EvidenceLocation = { char_start: number; char_end: number } | { json_path: string };

/** One retrievable passage. `text` is exactly ExtractedDocument.text.slice(charStart, charEnd). */
export interface Passage {
  ordinal: number;
  evidenceKind: 'text' | 'json_path';
  /** The heading trail above the passage ("Intro > Setup"), '' when none; indexed as its own column. */
  heading: string;
  text: string;
  charStart: number;
  charEnd: number;
  location: EvidenceLocation;
}

export interface ChunkOptions {
  /** Target passage size in tokens (approximated as whitespace-separated words). */
  chunkTokens: number;
  /** Tokens repeated from the end of one passage at the start of the next when a block is split. */
  chunkOverlap: number;
}
