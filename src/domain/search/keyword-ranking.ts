// The keyword stage's ranking: BM25 (bm25.ts) over the postings and statistics the store reads for a
// set of files. An open collection counts its live files, an enforced one the files its reader may
// read, so a reader who may read everything gets the open collection's scores.
import type { StoreReads } from '../../store/interface.js';
import { bm25Scores, topBm25, type Bm25Scores } from './bm25.js';

export interface PassageHit {
  passageRid: number;
  fileRid: number;
  score: number;
}

export interface KeywordRanking {
  /** The best `limit` matches among the selected files, best first, ties by passage rid. */
  top(limit: number): PassageHit[];
  /** The passages the statistics count. */
  passages: number;
}

/**
 * `files` are the files whose passages count; `selectedFiles` (a subset, e.g. after a metadata
 * filter) the ones that may be returned, null for all of them. A filter narrows what is returned,
 * never the statistics: a file's score is the same with or without one.
 */
export async function keywordRanking(
  store: StoreReads,
  request: { collectionRid: number; collectionId: string; phrases: readonly string[]; files: readonly number[]; selectedFiles: ReadonlySet<number> | null },
): Promise<KeywordRanking> {
  const postings = await store.keywordIndex.postings(request);
  const { rids, fileRids } = postings.passages;
  const scores: Bm25Scores = bm25Scores(postings.passages, postings.phrases);
  const selected = request.selectedFiles;
  const keep = selected ? (passage: number) => selected.has(fileRids[passage]!) : undefined;
  return {
    passages: rids.length,
    top: (limit) => topBm25(scores, limit, keep).map(({ passage, score }) => ({ passageRid: rids[passage]!, fileRid: fileRids[passage]!, score })),
  };
}
