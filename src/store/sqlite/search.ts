import type { FileSelection, RetrievableFileReads, SelectionRule } from '../aggregates/retrievable-files.js';
import { visibleFileCounts, visibleReadyFiles, visibleToPrincipalsSql } from './access-rules.js';
import { liveFiles } from './keyword-postings.js';
import type { Db } from './db.js';
import { compileFilter } from './filter-sql.js';
import { stmt } from './statements.js';

export function sqliteRetrievableFiles(db: Db): RetrievableFileReads {
  return {
    select: async (collectionRid, rule) => selectFiles(db, collectionRid, rule),
    live: async (collectionRid) => liveFiles(db, collectionRid),
    countsFor: async (collectionRid, principals) => {
      const counts = visibleFileCounts(db, collectionRid, principals);
      return { pending: counts.pending ?? 0, indexing: counts.indexing ?? 0, ready: counts.ready ?? 0, failed: counts.failed ?? 0 };
    },
    readyFor: async (collectionRid, principals) => visibleReadyFiles(db, collectionRid, principals),
  };
}

/** A selection as a predicate over a files table aliased `f`, for the queries of both stages. */
export function selectionSql(selection: FileSelection): { sql: string; params: unknown[] } {
  return { sql: 'f.rid IN (SELECT value FROM json_each(?))', params: [JSON.stringify(selection.fileRids)] };
}

/**
 * The ready files of a collection that a rule selects, listed once so that both retrieval stages
 * join a list: evaluating metadata predicates once per file beats once per matching passage.
 */
export function selectFiles(db: Db, collectionRid: number, rule: SelectionRule): FileSelection {
  const where: string[] = [];
  const params: unknown[] = [];
  if (rule.principals) {
    where.push(visibleToPrincipalsSql());
    params.push(JSON.stringify(rule.principals));
  }
  if (rule.filter) {
    const compiled = compileFilter(rule.filter, 'f');
    where.push(compiled.sql);
    params.push(...compiled.params);
  }
  const rows = stmt(
    db,
    `SELECT f.rid AS rid FROM files f WHERE f.collection_rid = ? AND f.status = 'ready' AND f.deleted_at IS NULL${where.map((w) => ` AND (${w})`).join('')}`,
  ).all(collectionRid, ...params) as { rid: number }[];
  const ready = (stmt(db, 'SELECT files_ready AS n FROM collections WHERE rid = ?').get(collectionRid) as { n: number } | undefined)?.n ?? 0;
  return { fileRids: rows.map((r) => r.rid), selectivity: ready === 0 ? 0 : rows.length / ready };
}
