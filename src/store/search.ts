import type { Db } from './db.js';
import { ftsTableName } from './migrations.js';
import { IN_BLOCK, IN_BLOCK_PARAMS, stmt } from './statements.js';

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

/** Passages in a collection's keyword index (FTS5's own row count), or null when it cannot be read. */
export function keywordPassageCount(db: Db, collectionRid: number): number | null {
  return ftsRowCount(db, ftsTableName(collectionRid));
}

export interface PassageHit {
  passageRid: number;
  fileRid: number;
  score: number;
}

// BM25 column weights: the heading trail (a document's title, a section's heading) says more per word
// than body text. Tuned on SciFact and checked not to hurt on plain text (see docs/ranking.md).
export const HEADING_WEIGHT = 2.0;
export const BODY_WEIGHT = 1.0;

/** Candidate windows grow by this factor; past FULL_SCAN_AFTER the scan has no window at all. */
const WINDOW_GROWTH = 4;
const FULL_SCAN_AFTER = 20_000;

/**
 * Keyword matches over ready files, best first. Exact top-k over what the filter selects: the FTS
 * index ranks a window of its best passages on its own (cheap), the join then drops passages of files
 * that are not ready or not selected; when that leaves fewer than `limit` while the window was full,
 * the window grows, ending in a full scan. Filtering never happens after the cut.
 * `phrases` are the query's FTS5 strings (already quoted), OR'd together.
 */
export function keywordPassageHits(db: Db, opts: { collectionRid: number; phrases: string[]; filter: SqlFragment | null; limit: number }): PassageHit[] {
  const fts = ftsTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const filterParams = opts.filter?.params ?? [];
  // The terms' document frequencies do not change as the window grows: counted once per search.
  const termStats: TermStatsCache = {};
  // The window is sized to the page: the ranking's cost barely depends on it (bm25() runs for every
  // match either way), but every windowed row is then joined, so an oversized window is pure waste.
  for (let window = firstWindow(opts.limit, opts.filter, opts.limit); ; window *= WINDOW_GROWTH) {
    if (window > FULL_SCAN_AFTER) {
      const rows = stmt(
        db,
        `SELECT p.rid AS pid, p.file_rid AS fr, -bm25(${fts}, ${HEADING_WEIGHT}, ${BODY_WEIGHT}) AS s
          FROM ${fts} m JOIN passages p ON p.rid = m.rowid JOIN files f ON f.rid = p.file_rid
          WHERE ${fts} MATCH ? AND f.status = 'ready' AND f.deleted_at IS NULL ${where}
          ORDER BY s DESC, p.rid LIMIT ?`,
      ).all(opts.phrases.join(' OR '), ...filterParams, opts.limit) as { pid: number; fr: number; s: number }[];
      return rows.map((r) => ({ passageRid: r.pid, fileRid: r.fr, score: r.s }));
    }
    const ranked = rankedWindow(db, fts, opts.phrases, window, { termStats });
    const kept = keptPassages(db, ranked, where, filterParams);
    const hits: PassageHit[] = [];
    for (const r of ranked) {
      const fileRid = kept.get(r.rowid);
      if (fileRid === undefined) continue;
      hits.push({ passageRid: r.rowid, fileRid, score: r.score });
      if (hits.length === opts.limit) break;
    }
    if (hits.length >= opts.limit || ranked.length < window) return hits;
  }
}


/**
 * Of a ranked window, the passages whose file is ready, live and selected (passage rid → file rid).
 * A bound IN list on the primary keys, not a json_each join: no JSON is built or parsed per row.
 */
function keptPassages(db: Db, ranked: { rowid: number }[], where: string, filterParams: unknown[]): Map<number, number> {
  const kept = new Map<number, number>();
  if (ranked.length === 0) return kept;
  const blocks = Math.min(Math.ceil(ranked.length / IN_BLOCK), 16);
  const size = blocks * IN_BLOCK;
  const q = stmt(db, keptPassagesSql(where, blocks));
  for (let from = 0; from < ranked.length; from += size) {
    const ids: (number | null)[] = ranked.slice(from, from + size).map((r) => r.rowid);
    while (ids.length < size) ids.push(null);
    for (const row of q.all(...ids, ...filterParams) as { pid: number; fr: number }[]) kept.set(row.pid, row.fr);
  }
  return kept;
}

/** keptPassages' SQL by filter and block count, built once: a fresh string per call cost a hash of it in the statement cache. */
const KEPT_SQL = new Map<string, string[]>();
function keptPassagesSql(where: string, blocks: number): string {
  let byBlocks = KEPT_SQL.get(where);
  if (!byBlocks) {
    if (KEPT_SQL.size >= 256) KEPT_SQL.clear();
    KEPT_SQL.set(where, (byBlocks = []));
  }
  return (byBlocks[blocks] ??= `SELECT p.rid AS pid, p.file_rid AS fr FROM passages p JOIN files f ON f.rid = p.file_rid
      WHERE p.rid IN (${Array.from({ length: blocks }, () => IN_BLOCK_PARAMS).join(',')}) AND f.status = 'ready' AND f.deleted_at IS NULL ${where}`);
}

// FTS5's bm25() constants (fts5_aux.c): k1 = 1.2, b = 0.75; a non-positive IDF counts as 1e-6.
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const BM25_MIN_IDF = 1e-6;
/** Terms in more than this share of the passages are "common" and may be left to the bound check. */
const COMMON_TERM_SHARE = 0.05;
/** Below this many passages the plain query takes a few milliseconds: pruning would cost more than it saves. */
const PRUNE_MIN_ROWS = 50_000;
/** Pruned attempts before the plain query; each failed one costs about as much as a success. */
const MAX_PRUNED_RUNS = 2;

interface TermStat {
  phrase: string;
  docs: number;
  /** The most this term can add to a passage's score: idf × (k1 + 1). */
  ceiling: number;
}

/** Filled by the first rankedWindow call of a search that needs it, reused by the next ones. */
interface TermStatsCache {
  terms?: TermStat[];
}

/**
 * The `window` best passages by BM25, best first.
 *
 * Most of a keyword search's time goes to computing bm25() for every passage that matches any term,
 * and a query with a common word matches a large share of the collection. So this is MaxScore: only
 * passages holding at least one of the rarer ("essential") terms are scored (with every term, so
 * scores are unchanged). A passage holding common terms only scores at most the sum of their
 * ceilings, idf × (k1 + 1); when the window's last score beats that sum, no such passage could have
 * entered the window and the result is exactly the full query's. Otherwise the next-rarest common
 * term becomes essential and the window is ranked again, ending with the plain query.
 * `plan.essentialTerms` tells (tests) how many terms were essential when pruning was used; `minRows`
 * lets tests prune small tables.
 */
export function rankedWindow(
  db: Db,
  fts: string,
  phrases: string[],
  window: number,
  options: { plan?: { essentialTerms?: number }; minRows?: number; termStats?: TermStatsCache } = {},
): { rowid: number; score: number }[] {
  const { plan, minRows = PRUNE_MIN_ROWS, termStats = {} } = options;
  const all = phrases.join(' OR ');
  const plain = (): { rowid: number; score: number }[] =>
    stmt(db, `SELECT rowid, -bm25(${fts}, ${HEADING_WEIGHT}, ${BODY_WEIGHT}) AS score FROM ${fts} WHERE ${fts} MATCH ? ORDER BY score DESC, rowid LIMIT ?`).all(all, window) as {
      rowid: number;
      score: number;
    }[];
  if (phrases.length < 2) return plain();
  const rows = ftsRowCount(db, fts);
  if (rows === null || rows < minRows) return plain();
  const terms = (termStats.terms ??= termDocuments(db, fts, phrases, rows)
    .map((docs, i) => {
      const phrase = phrases[i]!;
      const idf = Math.log((rows - docs + 0.5) / (docs + 0.5));
      return { phrase, docs, ceiling: (idf > 0 ? idf : BM25_MIN_IDF) * (BM25_K1 + 1) };
    })
    .sort((a, b) => a.docs - b.docs));
  const pruned = stmt(
    db,
    `SELECT rowid, -bm25(${fts}, ${HEADING_WEIGHT}, ${BODY_WEIGHT}) AS score FROM ${fts}
      WHERE ${fts} MATCH ? AND +rowid IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?) ORDER BY score DESC, rowid LIMIT ?`,
  );
  const first = Math.max(1, terms.filter((t) => t.docs <= COMMON_TERM_SHARE * rows).length);
  // Worth it only when the common terms hold most of the postings that would be scored.
  const postings = (from: number, to: number) => terms.slice(from, to).reduce((sum, t) => sum + t.docs, 0);
  if (postings(first, terms.length) < 2 * postings(0, first)) return plain();
  for (let essential = first; essential < Math.min(terms.length, first + MAX_PRUNED_RUNS); essential++) {
    const ranked = pruned.all(all, terms.slice(0, essential).map((t) => t.phrase).join(' OR '), window) as { rowid: number; score: number }[];
    const ceiling = terms.slice(essential).reduce((sum, t) => sum + t.ceiling, 0);
    const last = ranked[window - 1];
    // A small margin: SQLite's and our arithmetic may round differently.
    if (last && last.score > ceiling * (1 + 1e-9) + 1e-9) {
      if (plan) plan.essentialTerms = essential;
      return ranked;
    }
  }
  return plain();
}

/**
 * Each index's term document counts, valid for one state of it. Counting a common term's postings
 * was ~13 ms of a 1M-passage query's ~92 (issue 15), and a collection's queries repeat its words.
 * A count must be exact: the bound that lets rankedWindow skip passages is built from it. So the
 * cache holds for one state of the index: its structure record (the list of segments and their
 * sizes, which every write changes, since FTS5 writes each transaction's terms as a new segment and
 * merges rewrite the list) and its row count, both read in the query's own snapshot.
 */
const TERM_COUNTS = new Map<string, { state: string; dfs: Map<string, number> }>();
const MAX_CACHED_TERMS = 20_000;

/** Each phrase's document count in the index, from the cache while the index is unchanged. */
export function termDocuments(db: Db, fts: string, phrases: readonly string[], rows = ftsRowCount(db, fts) ?? 0): number[] {
  const dfs = documentFrequencies(db, fts, rows);
  return phrases.map((phrase) => {
    let docs = dfs.get(phrase);
    if (docs === undefined) {
      docs = (stmt(db, `SELECT count(*) AS n FROM ${fts} WHERE ${fts} MATCH ?`).get(phrase) as { n: number }).n;
      if (dfs.size >= MAX_CACHED_TERMS) dfs.clear();
      dfs.set(phrase, docs);
    }
    return docs;
  });
}

function documentFrequencies(db: Db, fts: string, rows: number): Map<string, number> {
  const state = keywordIndexState(db, fts, rows);
  let entry = TERM_COUNTS.get(fts);
  if (!entry || entry.state !== state) {
    if (!entry && TERM_COUNTS.size >= 1000) TERM_COUNTS.clear();
    entry = { state, dfs: new Map() };
    TERM_COUNTS.set(fts, entry);
  }
  return entry.dfs;
}

/**
 * A string that changes whenever the keyword index does: its structure record (FTS5_STRUCTURE_ROWID,
 * fts5Int.h; a few dozen bytes per segment) and its row count, read in the caller's snapshot.
 */
export function keywordIndexState(db: Db, fts: string, rows = ftsRowCount(db, fts) ?? 0): string {
  const structure = (stmt(db, `SELECT block FROM ${fts}_data WHERE id = 10`).get() as { block: Buffer } | undefined)?.block;
  return `${rows}:${structure ? structure.toString('base64') : ''}`;
}

/**
 * The row count bm25() itself uses for IDF: FTS5 keeps it as the first varint of the "averages"
 * record (rowid 1 of the %_data table; fts5Int.h, FTS5_AVERAGES_ROWID). null if it cannot be read.
 */
function ftsRowCount(db: Db, fts: string): number | null {
  const block = (stmt(db, `SELECT block FROM ${fts}_data WHERE id = 1`).get() as { block: Buffer } | undefined)?.block;
  if (!block || block.length === 0) return null;
  // SQLite varint: big-endian 7-bit groups, high bit set on every byte but the last (the 9th is 8 bits).
  let value = 0;
  for (let i = 0; i < Math.min(block.length, 9); i++) {
    const byte = block[i]!;
    if (i === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return null;
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
