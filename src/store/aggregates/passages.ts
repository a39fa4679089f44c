// Passages: the pieces of a file's indexed text that search returns as evidence.
import type { PreparedKeywordText } from './keyword-index.js';

export interface NewPassage {
  ordinal: number;
  evidence_kind: string;
  heading: string;
  text: string;
  char_start: number;
  char_end: number;
  /** JSON: the evidence location; a JSON passage's also holds `json_spans`, where each value lies in the text (src/domain/ingest/json-path.ts relativeSpans). */
  location: string | null;
}

export interface PassageRow extends NewPassage {
  rid: number;
  file_rid: number;
}

/** A file's inline source, when its passages may be read from it rather than stored twice. */
export interface PassageSource {
  versionId: string;
  text: string;
}

export interface PassageReads {
  /** The passages with these rids (any order; missing ones left out), text included. */
  byRids(rids: readonly number[]): Promise<PassageRow[]>;
  /** Each file's passages in order; a file without any maps to an empty list. */
  ofFiles(fileRids: readonly number[]): Promise<Map<number, PassageRow[]>>;
}

/** One file's new passages, and the inline source they were cut from, if any. */
export interface FilePassages {
  fileRid: number;
  passages: readonly NewPassage[];
  source?: PassageSource | undefined;
}

/** Rows of a file's passages for the keyword index: what `prepare` made of their text, and the rids they got. */
export interface KeywordTextOfPassages {
  /** The passages' rids, in the order their text was prepared. */
  passageRids: readonly number[];
  text: PreparedKeywordText;
}

/**
 * Everything made of a passage goes with it: its vector, its keyword row, and its file's topic
 * vector (src/store/aggregates/collection-models.ts).
 */
export interface PassageWrites {
  /**
   * Replaces these files' passages: the old ones go, the new ones are written, and each file's new
   * rids come back in its passages' order. A rid is never given twice, not even one whose passage
   * has gone. The new passages are not in the keyword index until `indexKeywordText`.
   */
  replace(collectionRid: number, files: readonly FilePassages[]): Promise<number[][]>;
  /** A file's passages; a file without any is no change. */
  deleteOfFile(collectionRid: number, fileRid: number): Promise<void>;
  /**
   * The passages' text into the collection's keyword index, each file's as prepared
   * (KeywordIndexReads.prepare) for its rids in order; a count that differs is refused. The LAST
   * write of its transaction: an engine's keyword index may make each later write in the same
   * transaction cost more (SQLite's FTS5 flushes its pending terms at every later statement), so
   * a change writes all else first.
   */
  indexKeywordText(collectionRid: number, files: readonly KeywordTextOfPassages[]): Promise<void>;
}
