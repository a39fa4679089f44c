import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { stmt } from './statements.js';

export interface SqlFragment {
  sql: string;
  params: unknown[];
  /** Share of the collection's ready files the fragment keeps (0..1), when known: sizes the first window. */
  selectivity?: number;
}

/** The first candidate window: big enough that, at the filter's selectivity, `limit` rows survive. */
export function firstWindow(limit: number, filter: SqlFragment | null, floor: number): number {
  const keep = filter?.selectivity ?? 1;
  return Math.max(floor, Math.ceil((limit * 1.5) / Math.max(keep, 1e-6)));
}

export interface PassageHit {
  passageRid: number;
  fileRid: number;
  score: number;
}

// BM25 column weights: the heading trail (a document's title, a section's heading) says more per word
// than body text. Tuned on SciFact and checked not to hurt on plain text (see docs/ranking.md).
const HEADING_WEIGHT = 2.0;
const BODY_WEIGHT = 1.0;

/** Candidate windows grow by this factor; past FULL_SCAN_AFTER the scan has no window at all. */
const WINDOW_GROWTH = 4;
const FULL_SCAN_AFTER = 20_000;

/**
 * Keyword matches over ready files, best first. Exact top-k over what the filter selects: the FTS
 * index ranks a window of its best passages on its own (cheap), the join then drops passages of files
 * that are not ready or not selected; when that leaves fewer than `limit` while the window was full,
 * the window grows, ending in a full scan. Filtering never happens after the cut.
 */
export function keywordPassageHits(db: Db, opts: { collectionRid: number; match: string; filter: SqlFragment | null; limit: number }): PassageHit[] {
  const fts = ftsTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const filterParams = opts.filter?.params ?? [];
  for (let window = firstWindow(opts.limit, opts.filter, Math.max(opts.limit * 2, 64)); ; window *= WINDOW_GROWTH) {
    const full = window > FULL_SCAN_AFTER;
    const sql = `SELECT p.rid AS pid, p.file_rid AS fr, -m.r AS s
      FROM (SELECT rowid, bm25(${fts}, ${HEADING_WEIGHT}, ${BODY_WEIGHT}) AS r FROM ${fts} WHERE ${fts} MATCH ? ORDER BY r ${full ? '' : 'LIMIT ?'}) m
      JOIN passages p ON p.rid = m.rowid JOIN files f ON f.rid = p.file_rid
      WHERE f.status = 'ready' AND f.deleted_at IS NULL ${where}
      ORDER BY m.r ASC, p.rid ASC LIMIT ?`;
    const params = full ? [opts.match, ...filterParams, opts.limit] : [opts.match, window, ...filterParams, opts.limit];
    const rows = stmt(db, sql).all(...params) as { pid: number; fr: number; s: number }[];
    if (full || rows.length >= opts.limit) return rows.map((r) => ({ passageRid: r.pid, fileRid: r.fr, score: r.s }));
    const windowCount = (stmt(db, `SELECT count(*) AS n FROM (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? LIMIT ?)`).get(opts.match, window) as { n: number }).n;
    if (windowCount < window) return rows.map((r) => ({ passageRid: r.pid, fileRid: r.fr, score: r.s }));
  }
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
  const ready = (stmt(db, "SELECT count(*) AS n FROM files WHERE collection_rid = ? AND status = 'ready' AND deleted_at IS NULL").get(collectionRid) as { n: number }).n;
  return { sql: 'f.rid IN (SELECT value FROM json_each(?))', params: [JSON.stringify(rows.map((r) => r.rid))], selectivity: ready === 0 ? 0 : rows.length / ready };
}
