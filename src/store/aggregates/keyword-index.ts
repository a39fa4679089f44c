// What BM25 needs from a keyword index (src/domain/search/bm25.ts scores it): the lengths of the
// passages that count and each query phrase's occurrences among them. An engine serves these from
// its own index and never scores; the statistics are the live ones, over the files the caller names.

/** The passages that count, in rid order, with what BM25 needs of each. */
export interface CountedPassages {
  rids: Int32Array;
  fileRids: Int32Array;
  /** Tokens in the passage, heading and body together. */
  lengths: Uint32Array;
  totalLength: number;
}

/** One query phrase's occurrences among the counted passages. */
export interface PhrasePostings {
  /** Indexes into CountedPassages of the passages holding the phrase, ascending. */
  passages: Int32Array;
  /** Occurrences in each of those passages' heading and body. */
  heading: Uint32Array;
  body: Uint32Array;
}

export interface KeywordPostings {
  passages: CountedPassages;
  /** One per query phrase, in the query's order. */
  phrases: PhrasePostings[];
}

export interface PostingsRequest {
  collectionRid: number;
  /** The collection's public ID: an engine's caches key on it (a purged collection's rid may come back). */
  collectionId: string;
  /** The query's phrases in the index's query syntax (src/domain/search/query-text.ts buildMatchPhrases). */
  phrases: readonly string[];
  /** The files whose passages count, ascending or not; the same array while unchanged lets an engine reuse its work. */
  files: readonly number[];
}

export interface KeywordIndexReads {
  /** The counted passages and the phrases' postings among them, read from one state of the index. */
  postings(request: PostingsRequest): Promise<KeywordPostings>;
  /**
   * Readies passages' text for the collection's keyword index, in their order, outside any
   * transaction: the work an engine can do before it holds the write token. Writes nothing.
   */
  prepare(collectionRid: number, texts: readonly KeywordText[]): Promise<PreparedKeywordText>;
}

/** A passage's text as the keyword index is to hold it. */
export interface KeywordText {
  heading: string;
  text: string;
}

declare const preparedByTheEngine: unique symbol;

/**
 * Passages' keyword text as an engine readied it for its index (tokenized, say), so that the write
 * transaction, which holds up every other writer, only stores it. Opaque: only the engine that made
 * it reads it (PassageWrites.indexKeywordText).
 */
export interface PreparedKeywordText {
  readonly [preparedByTheEngine]: true;
  /** Passages prepared. */
  readonly count: number;
}
