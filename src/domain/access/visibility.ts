// Per-reader visibility at query time (retrieval-api.md, Principals): in an enforced collection a
// file is retrievable only when one of the request's principals reads the rule that governs it and
// no unfinished apply_access_rule job holds it. The predicate joins the retrieval query itself, so
// it applies before ranking, the top-k cut, counts, evidence and cursors. No key bypasses it.
import { createHash } from 'node:crypto';
import { TroveError } from '../../contract/errors.js';
import type { Collection } from '../../contract/schemas.js';
import type { FilterClause } from '../../contract/filter.js';
import type { CollectionRow, FileCounts, FileSelection, Store } from '../../store/interface.js';
import { collectionStatus, indexGeneration } from '../present.js';

/** retrieval-api.md, Principals: required when enforced, invalid when off. */
export function checkPrincipals(col: CollectionRow, principals: string[] | null | undefined): void {
  if (col.access_control === 'off' && principals !== undefined && principals !== null) {
    throw new TroveError('invalid_request', 'principals are only accepted by collections with access_control "enforced".');
  }
  if (col.access_control === 'enforced' && (principals === undefined || principals === null)) {
    throw new TroveError('invalid_request', 'This collection enforces access rules: send principals (an empty list yields no results).');
  }
}

/** The reader a retrieval runs for: everyone (access control off) or a set of principals. */
export type Reader = { kind: 'everyone' } | { kind: 'principals'; principals: string[] };

export function readerFor(col: CollectionRow, principals: string[] | null | undefined): Reader {
  checkPrincipals(col, principals);
  return col.access_control === 'enforced' ? { kind: 'principals', principals: [...new Set(principals!)] } : { kind: 'everyone' };
}

/** What one retrieval may draw from. */
export interface RetrievalScope {
  /** What the filter selects and the reader may read, as one list both stages join; null when nothing narrows the collection. */
  selected: FileSelection | null;
  /**
   * The ready files the reader may read, filter aside: an enforced search's BM25 statistics count
   * these and nothing else (keyword-ranking.ts). Null when the reader is everyone.
   */
  readableFiles: readonly number[] | null;
}

export async function retrievalScope(store: Store, collectionRid: number, reader: Reader, filter: FilterClause | null): Promise<RetrievalScope> {
  const files = store.retrievableFiles;
  if (reader.kind === 'everyone') return { selected: filter ? await files.select(collectionRid, { filter, principals: null }) : null, readableFiles: null };
  const { principals } = reader;
  // The same for every query of this reader until something is written.
  const readable = await store.untilChanged(`readable:${collectionRid}:${JSON.stringify(principals)}`, () => files.select(collectionRid, { filter: null, principals }));
  if (!filter) return { selected: readable, readableFiles: readable.fileRids };
  return { selected: await files.select(collectionRid, { filter, principals }), readableFiles: readable.fileRids };
}

/** File counts as the reader may know them: an enforced collection counts only files the principals read. */
function readableCounts(store: Store, collectionRid: number, principals: readonly string[]): Promise<FileCounts> {
  return store.untilChanged(`counts:${collectionRid}:${JSON.stringify(principals)}`, () => store.retrievableFiles.countsFor(collectionRid, principals));
}

/**
 * A generation that moves when what the principals can retrieve moves (a readable file indexed,
 * edited, deleted, made readable or hidden) and never with a file hidden from them: a digest of
 * their ready files (docs/decisions.md, index_generation).
 */
function readableGeneration(store: Store, collectionRid: number, principals: readonly string[]): Promise<string> {
  return store.untilChanged(`generation:${collectionRid}:${JSON.stringify(principals)}`, async () => {
    const hash = createHash('sha256');
    for (const f of await store.retrievableFiles.readyFor(collectionRid, principals)) hash.update(`${f.id} ${f.indexed_version_id ?? ''} ${f.updated_at}\n`);
    return `gen-${hash.digest('hex').slice(0, 16)}`;
  });
}

/** The collection as one reader sees it: what search, answer and research decide their state from. */
export interface ReaderView {
  status: Collection['status'];
  counts: FileCounts;
  /** The response's `index_generation`. */
  generation: string | null;
}

/**
 * In an enforced collection, the state a reader sees (empty, not ready, failed, ready; counts,
 * generation) is that of a collection holding only the files its principals may read, so no
 * answer tells a reader whether files hidden from it exist or change (docs/decisions.md).
 */
export async function readerView(store: Store, col: CollectionRow, reader: Reader): Promise<ReaderView> {
  if (reader.kind === 'everyone') {
    const all = await store.collections.fileCounts(col.rid);
    return { status: collectionStatus(col, all), counts: all, generation: indexGeneration(col, all) };
  }
  const { principals } = reader;
  const counts = await readableCounts(store, col.rid, principals);
  return { status: collectionStatus(col, counts), counts, generation: counts.ready > 0 ? await readableGeneration(store, col.rid, principals) : null };
}
