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
}
