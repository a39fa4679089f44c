import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { stmt } from './statements.js';

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

export interface PassageHit {
  passageRid: number;
  fileRid: number;
  score: number;
  fileScore: number;
}

// BM25 column weights: the heading trail (a document's title, a section's heading) says more per word
// than body text. Tuned on SciFact and checked not to hurt on plain text (see docs/ranking.md).
const HEADING_WEIGHT = 2.0;
const BODY_WEIGHT = 1.0;

/**
 * Keyword matches over ready files, filtered inside the query so top-k is taken over what matches.
 * Returns up to `perFile` passages of each of the best files, best file first, until `maxRows`.
 */
export function keywordHits(
  db: Db,
  opts: { collectionRid: number; match: string; filter: SqlFragment | null; unit: 'file' | 'passage'; perFile: number; maxRows: number },
): PassageHit[] {
  const fts = ftsTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const base = `SELECT p.rid AS pid, p.file_rid AS fr, -bm25(${fts}, ${HEADING_WEIGHT}, ${BODY_WEIGHT}) AS s
    FROM ${fts} JOIN passages p ON p.rid = ${fts}.rowid JOIN files f ON f.rid = p.file_rid
    WHERE ${fts} MATCH ? AND f.status = 'ready' AND f.deleted_at IS NULL ${where}`;
  const params = [opts.match, ...(opts.filter?.params ?? [])];
  if (opts.unit === 'passage') {
    const rows = stmt(db, `${base} ORDER BY s DESC, pid ASC LIMIT ?`).all(...params, opts.maxRows) as { pid: number; fr: number; s: number }[];
    return rows.map((r) => ({ passageRid: r.pid, fileRid: r.fr, score: r.s, fileScore: r.s }));
  }
  const sql = `WITH m AS (${base}),
    r AS (SELECT pid, fr, s, row_number() OVER (PARTITION BY fr ORDER BY s DESC, pid) AS rn, max(s) OVER (PARTITION BY fr) AS fs FROM m)
    SELECT pid, fr, s, fs FROM r WHERE rn <= ? ORDER BY fs DESC, fr ASC, rn ASC LIMIT ?`;
  const rows = stmt(db, sql).all(...params, opts.perFile, opts.maxRows) as { pid: number; fr: number; s: number; fs: number }[];
  return rows.map((r) => ({ passageRid: r.pid, fileRid: r.fr, score: r.s, fileScore: r.fs }));
}
