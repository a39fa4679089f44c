// Passages: the pieces of a file's indexed text that search returns as evidence.

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
