// Per-reader visibility at query time (retrieval-api.md, Principals): in an enforced collection a
// file is retrievable only when one of the request's principals reads the rule that governs it and
// no unfinished apply_access_rule job holds it. The predicate joins the retrieval query itself, so
// it applies before ranking, the top-k cut, counts, evidence and cursors. No key bypasses it.
import { TroveError } from '../../contract/errors.js';
import { visibleFileCounts, visibleToPrincipalsSql } from '../../store/access-rules.js';
import type { CollectionRow, FileCounts } from '../../store/collections.js';
import type { Db } from '../../store/db.js';
import { selectedFilesFragment, type SqlFragment } from '../../store/search.js';

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

/**
 * The files one retrieval may draw from, as one fragment both stages join: what the filter selects
 * and the reader may read. Null when nothing narrows the collection.
 */
export function retrievalScope(db: Db, collectionRid: number, reader: Reader, filter: SqlFragment | null): SqlFragment | null {
  if (reader.kind === 'everyone') return filter ? selectedFilesFragment(db, collectionRid, filter) : null;
  const visible: SqlFragment = { sql: visibleToPrincipalsSql(), params: [JSON.stringify(reader.principals)] };
  const both: SqlFragment = filter ? { sql: `(${visible.sql}) AND (${filter.sql})`, params: [...visible.params, ...filter.params] } : visible;
  return selectedFilesFragment(db, collectionRid, both);
}

/** File counts as the reader may know them: an enforced collection counts only files the principals read. */
export function countsFor(db: Db, collectionRid: number, reader: Reader, all: FileCounts): FileCounts {
  if (reader.kind === 'everyone') return all;
  const mine = visibleFileCounts(db, collectionRid, JSON.stringify(reader.principals));
  return { pending: mine.pending ?? 0, indexing: mine.indexing ?? 0, ready: mine.ready ?? 0, failed: mine.failed ?? 0 };
}
