import type { Db } from './db.js';
import { stmt } from './statements.js';

export interface SqlFragment {
  sql: string;
  params: unknown[];
  /** Share of the collection's ready files the fragment keeps (0..1), when known: sizes the first window. */
  selectivity?: number;
  /** The files the fragment selects, when it is a list of them (selectedFilesFragment). */
  fileRids?: readonly number[];
}

/**
 * The first candidate window: big enough that, at the filter's selectivity, `limit` rows survive.
 * Without a filter only passages of files not ready drop out, which is rare: a small margin, since
 * every windowed row is joined afterwards and a short window only costs a second, wider try.
 */
export function firstWindow(limit: number, filter: SqlFragment | null, floor: number): number {
  if (!filter) return Math.max(floor, Math.ceil(limit * 1.1));
  return Math.max(floor, Math.ceil((limit * 1.5) / Math.max(filter.selectivity ?? 1, 1e-6)));
}

export interface PassageHit {
  passageRid: number;
  fileRid: number;
  score: number;
}

/**
 * The ready files of a collection that a filter selects, as a fragment both retrieval stages can
 * join cheaply: evaluating metadata predicates once per file beats once per matching passage.
 */
export function selectedFilesFragment(db: Db, collectionRid: number, filter: SqlFragment): SqlFragment {
  const rows = stmt(db, `SELECT f.rid AS rid FROM files f WHERE f.collection_rid = ? AND f.status = 'ready' AND f.deleted_at IS NULL AND (${filter.sql})`).all(
    collectionRid,
    ...filter.params,
  ) as { rid: number }[];
  const ready = (stmt(db, 'SELECT files_ready AS n FROM collections WHERE rid = ?').get(collectionRid) as { n: number } | undefined)?.n ?? 0;
  const fileRids = rows.map((r) => r.rid);
  return { sql: 'f.rid IN (SELECT value FROM json_each(?))', params: [JSON.stringify(fileRids)], selectivity: ready === 0 ? 0 : rows.length / ready, fileRids };
}
