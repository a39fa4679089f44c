// Passage vectors, in one plain table all collections share, keyed by passage rid and indexed by
// (collection, rid) (float32 blobs; a collection's rows hold one length, its model's dimensions), so
// a collection's first vectors need no new table; a reindex that moves the collection to another
// model deletes its rows. A collection made before migration 22 that has a table of its own
// (vec_N_data) keeps it until such a reindex drops it. A scan reads one collection's rows through the
// index whichever table holds them. Nearest-neighbour scans run on an in-memory int8 copy of
// it (src/store/sqlite/simd-scan.ts), split into VECTOR_SHARDS by rid so that one query's scan runs on
// several threads at once; the copy shortlists and this table scores the shortlist exactly. Until
// migration 12 a sqlite-vec vec0 table held every vector a second time for scans; the copy made it
// redundant. Every stored vector is unit length, so cos = 1 - d²/2 with d the L2 distance.
import { sqlite, type Db } from './sqlite.js';
import { SHARED_VECTOR_TABLE, vectorTableName } from './migrations.js';
import { firstWindow, selectionSql } from './search.js';
import type { FileSelection } from '../aggregates/retrievable-files.js';
import { Int8Scanner } from './simd-scan.js';
import { IN_BLOCK, IN_BLOCK_PARAMS, stmt } from './statements.js';

import { VECTOR_SHARDS, type DenseHit, type NewVector, type VectorReads, type VectorWrites } from '../aggregates/vectors.js';

export function sqliteVectors(db: Db): VectorReads & VectorWrites {
  return {
    similarities: async (collectionRid, query, passageRids) => similarities(db, collectionRid, query, passageRids),
    ofFileByTextHash: async (collectionRid, fileRid) => vectorsByHash(db, collectionRid, fileRid),
    insert: async (collectionRid, vectors) => insertVectors(db, collectionRid, vectors),
    dropAll: async (collectionRid) => dropVectors(db, collectionRid),
  };
}

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const isZero = (v: Float32Array) => v.every((x) => x === 0);

/**
 * The table holding a collection's vectors and what keeps its rows there, as SQL over an alias `v`
 * with its parameters (to follow the query's earlier ones).
 */
interface VectorTable {
  table: string;
  own: boolean;
  /** ` AND v.collection_rid = ?` in the shared table, '' in a table of its own. */
  scope: string;
  params: number[];
}

function vectorTableOf(db: Db, collectionRid: number): VectorTable {
  const own = `${vectorTableName(collectionRid)}_data`;
  // table_info looks the name up in the parsed schema; a query on sqlite_master scans every table,
  // index and trigger of the data dir, on each file indexed and each semantic search.
  if (stmt(db, 'SELECT 1 FROM pragma_table_info(?) LIMIT 1').get(own) !== undefined) return { table: own, own: true, scope: '', params: [] };
  return { table: SHARED_VECTOR_TABLE, own: false, scope: ' AND v.collection_rid = ?', params: [collectionRid] };
}

export function insertVectors(db: Db, collectionRid: number, vectors: readonly NewVector[]): void {
  // A text with no word the model knows has no direction: it is simply not in the dense index.
  const usable = vectors.filter((v) => !isZero(v.embedding));
  if (usable.length === 0) return;
  const dimensions = usable[0]!.embedding.length;
  if (!Number.isInteger(dimensions) || dimensions <= 0 || dimensions > 8192) throw new Error(`bad vector dimensions ${dimensions}`);
  const t = vectorTableOf(db, collectionRid);
  if (t.own) {
    const insertData = stmt(db, `INSERT INTO ${t.table} (rid, text_hash, embedding) VALUES (?, ?, ?)`);
    for (const v of usable) insertData.run(v.passageRid, v.textHash, blob(v.embedding));
  } else {
    const insertData = stmt(db, `INSERT INTO ${t.table} (rid, collection_rid, text_hash, embedding) VALUES (?, ?, ?, ?)`);
    for (const v of usable) insertData.run(v.passageRid, collectionRid, v.textHash, blob(v.embedding));
  }
  bumpVectorVersion(db, collectionRid);
}

/** Marks a collection's vectors changed (in the writer's transaction): in-memory copies are now stale. */
export function bumpVectorVersion(db: Db, collectionRid: number): void {
  stmt(
    db,
    `INSERT INTO vector_versions (collection_rid, version) VALUES (?, (SELECT coalesce(max(version), 0) + 1 FROM vector_versions))
     ON CONFLICT (collection_rid) DO UPDATE SET version = excluded.version`,
  ).run(collectionRid);
}

function vectorVersion(db: Db, collectionRid: number): number {
  return (stmt(db, 'SELECT version FROM vector_versions WHERE collection_rid = ?').get(collectionRid) as { version: number } | undefined)?.version ?? 0;
}

/** A file's vectors by the hash of the text they embed, so unchanged passages are not embedded again. */
export function vectorsByHash(db: Db, collectionRid: number, fileRid: number): Map<string, Float32Array> {
  const t = vectorTableOf(db, collectionRid);
  const rows = stmt(db, `SELECT text_hash AS h, embedding AS e FROM ${t.table} v WHERE v.rid IN (SELECT rid FROM passages WHERE file_rid = ?)${t.scope}`).all(fileRid, ...t.params) as {
    h: string;
    e: Buffer;
  }[];
  return new Map(rows.map((r) => [r.h, new Float32Array(r.e.buffer.slice(r.e.byteOffset, r.e.byteOffset + r.e.byteLength))]));
}

export function deleteFileVectors(db: Db, collectionRid: number, fileRid: number): void {
  const t = vectorTableOf(db, collectionRid);
  const rids = stmt(db, `SELECT rid FROM ${t.table} v WHERE v.rid IN (SELECT rid FROM passages WHERE file_rid = ?)${t.scope}`).all(fileRid, ...t.params) as { rid: number }[];
  const delData = stmt(db, `DELETE FROM ${t.table} WHERE rid = ?`);
  for (const { rid } of rids) {
    delData.run(rid);
  }
  if (rids.length > 0) bumpVectorVersion(db, collectionRid);
}

/**
 * A reindex under another model starts from an empty dense index (its dimensions may differ), and
 * so does a purge: a table of the collection's own goes, or its rows of the shared one.
 */
export function dropVectors(db: Db, collectionRid: number): void {
  const t = vectorTableOf(db, collectionRid);
  if (t.own) sqlite(db).exec(`DROP TABLE IF EXISTS ${t.table}`);
  stmt(db, `DELETE FROM ${SHARED_VECTOR_TABLE} WHERE collection_rid = ?`).run(collectionRid);
  bumpVectorVersion(db, collectionRid);
}

/**
 * Exact nearest passages of one shard over ready files that the filter selects, best first (the
 * caller merges shards). With a current in-memory copy, its int8 scan orders the shard and a
 * window of the best rows is scored exactly from the vectors table, in the same statement that
 * drops rows of files that are not ready or not selected. The int8 scores are off by at most
 * `bound` (Int8Scanner.errorBound), so once the window's limit-th exact score beats the best
 * score any row outside it could have, the answer is the exact one; otherwise the window grows to
 * every row that could (or by 8× while too few rows survive the filter). Without a current copy
 * the table is scanned exactly, filter first. Either way the ranking is the float32 one, and
 * filtering never happens after the cut.
 */
export function denseHits(db: Db, opts: { collectionRid: number; query: Float32Array; selection: FileSelection | null; limit: number; shard: number }): DenseHit[] {
  const t = vectorTableOf(db, opts.collectionRid);
  const narrowed = opts.selection && selectionSql(opts.selection);
  const where = narrowed ? `AND (${narrowed.sql})` : '';
  const filterParams = narrowed?.params ?? [];
  const q = blob(opts.query);
  const cached = currentCopy(db, opts.collectionRid, opts.shard);
  if (!cached || cached.scanner.dimensions !== opts.query.length) {
    const rows = stmt(
      db,
      `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
       FROM ${t.table} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
       WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope} AND f.status = 'ready' AND f.deleted_at IS NULL ${where}
       ORDER BY d ASC, p.rid ASC LIMIT ?`,
    ).all(q, opts.shard, ...t.params, ...filterParams, opts.limit) as { pid: number; fr: number; d: number | null }[];
    return rows.filter((r) => r.d !== null).map(hitOf);
  }
  const scores = cached.scanner.scan(opts.query);
  const bound = cached.scanner.errorBound(opts.query);
  const n = scores.length;
  const exact = new Map<number, DenseHit>();
  const scored = new Set<number>();
  const score = (indices: number[]) => {
    const fresh = indices.filter((i) => !scored.has(i));
    if (fresh.length === 0) return;
    for (const i of fresh) scored.add(i);
    const rows = stmt(
      db,
      `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
       FROM ${t.table} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
       WHERE v.rid IN (SELECT value FROM json_each(?))${t.scope} AND f.status = 'ready' AND f.deleted_at IS NULL ${where}`,
    ).all(q, JSON.stringify(fresh.map((i) => cached.rids[i]!)), ...t.params, ...filterParams) as { pid: number; fr: number; d: number | null }[];
    for (const r of rows) if (r.d !== null) exact.set(r.pid, hitOf(r));
  };
  // `inside`: rows to score exactly; `outside`: the best int8 score of any other row.
  let k = Math.min(n, firstWindow(opts.limit, opts.selection, Math.max(opts.limit * 4, 64)));
  let { inside, outside } = topWindow(scores, k);
  for (;;) {
    score(inside);
    const best = [...exact.values()].sort((a, b) => b.similarity - a.similarity || a.passageRid - b.passageRid);
    if (outside === -Infinity) return best.slice(0, opts.limit);
    if (best.length >= opts.limit) {
      const kth = best[opts.limit - 1]!.similarity;
      if (outside + bound < kth) return best.slice(0, opts.limit);
      // Only a row whose int8 score is at least kth - bound can still beat the limit-th; once
      // those are scored, every other row is below it (and the limit-th only rises).
      ({ inside, outside } = atLeast(scores, kth - bound));
    } else ({ inside, outside } = topWindow(scores, (k = Math.min(n, k * 8))));
  }
}

const hitOf = (r: { pid: number; fr: number; d: number | null }): DenseHit => ({ passageRid: r.pid, fileRid: r.fr, similarity: 1 - (r.d! * r.d!) / 2 });

/** The `k` best rows by int8 score and the best score among the rest (-Infinity when none is left). */
function topWindow(scores: Float32Array, k: number): { inside: number[]; outside: number } {
  const ordered = topIndices(scores, Math.min(scores.length, k + 1));
  return { inside: ordered.slice(0, k), outside: ordered.length > k ? scores[ordered[k]!]! : -Infinity };
}

/** Every row scoring at least `floor`, and the best score among the rest. */
function atLeast(scores: Float32Array, floor: number): { inside: number[]; outside: number } {
  const inside: number[] = [];
  let outside = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (s >= floor) inside.push(i);
    else if (s > outside) outside = s;
  }
  return { inside, outside };
}

/** Indices of the `k` highest scores, highest first (ties: lower index first). */
function topIndices(scores: Float32Array, k: number): number[] {
  const byScore = (a: number, b: number) => scores[b]! - scores[a]! || a - b;
  if (k >= scores.length) return Array.from(scores.keys()).sort(byScore);
  if (k > 512) {
    // Insertion into a sorted buffer costs O(k) a row: for a wide window, a histogram finds a
    // score that at least k rows reach, and only those are sorted.
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of scores) {
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    const buckets = 4096;
    const width = (hi - lo) / buckets || 1;
    const counts = new Uint32Array(buckets);
    for (const s of scores) counts[Math.min(buckets - 1, Math.floor((s - lo) / width))]!++;
    let bucket = buckets - 1;
    for (let seen = counts[bucket]!; seen < k; seen += counts[--bucket]!);
    const keep: number[] = [];
    for (let i = 0; i < scores.length; i++) if (Math.min(buckets - 1, Math.floor((scores[i]! - lo) / width)) >= bucket) keep.push(i);
    return keep.sort(byScore).slice(0, k);
  }
  // A threshold pass: keep a sorted buffer of the best k; most rows fail the first comparison.
  const best: number[] = [];
  let floor = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (best.length === k && s <= floor) continue;
    let at = best.length;
    while (at > 0 && scores[best[at - 1]!]! < s) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
    if (best.length === k) floor = scores[best[k - 1]!]!;
  }
  return best;
}

// ---- In-memory copies of a collection's vectors (one per shard, in the helper thread that scans it).

/** A copy is rebuilt once the vectors stopped changing for this long (or at once, the first time). */
const SETTLE_MS = 1000;

interface VectorCopy {
  version: number;
  rids: Float64Array;
  scanner: Int8Scanner;
  usedAt: number;
}

/** What a copy of `rows` vectors of `dimensions` costs in memory (its scanner and its rid index). */
const copyBytes = (rows: number, dimensions: number) => Int8Scanner.bytesFor(rows, dimensions) + rows * 8;

interface CopyState {
  copy?: VectorCopy;
  /** The latest version seen, and since when. */
  seenVersion?: number;
  seenSince?: number;
  /** A version whose copy exceeds the whole budget: not measured again (a full read) until the vectors or the budget change. */
  tooLarge?: { version: number; budgetBytes: number };
}

const copies = new WeakMap<Db, Map<string, CopyState>>();

function copyState(db: Db, collectionRid: number, shard: number): CopyState {
  let perDb = copies.get(db);
  if (!perDb) copies.set(db, (perDb = new Map()));
  const key = `${collectionRid}:${shard}`;
  let state = perDb.get(key);
  if (!state) perDb.set(key, (state = {}));
  return state;
}

/** The in-memory copy of a shard if it matches the stored vectors now, else null (scan the table). */
function currentCopy(db: Db, collectionRid: number, shard: number): VectorCopy | null {
  const state = copyState(db, collectionRid, shard);
  if (!state.copy || state.copy.version !== vectorVersion(db, collectionRid)) return null;
  state.copy.usedAt = Date.now();
  return state.copy;
}

/** Whether a shard is scanned from memory right now (tests and the bench report it). */
export function hasCurrentVectorCopy(db: Db, collectionRid: number, shard: number): boolean {
  return currentCopy(db, collectionRid, shard) !== null;
}

/** Bytes the in-memory copies made through this connection hold now. */
export function vectorCopyBytes(db: Db): number {
  let total = 0;
  for (const state of copies.get(db)?.values() ?? []) if (state.copy) total += copyBytes(state.copy.rids.length, state.copy.scanner.dimensions);
  return total;
}

export interface RefreshOptions {
  /** Bytes all copies of this connection may hold together (src/domain/search/vector-memory.ts). */
  budgetBytes: number;
  now?: number;
}

/**
 * Brings a shard's in-memory copy up to date when that is worth it: at once if it never had one,
 * otherwise once the vectors have settled (an ingest in progress would make every rebuild stale at
 * once). The helper thread calls this after answering a query, so no query waits for a rebuild.
 * Copies share `budgetBytes`: the least recently used ones are dropped to make room, and a shard
 * whose copy alone would not fit gets none. A shard without a copy is scanned from the vectors
 * table, exactly, so the budget changes speed, never ranking.
 */
export function refreshVectorCopy(db: Db, collectionRid: number, shard: number, options: RefreshOptions): void {
  const now = options.now ?? Date.now();
  const state = copyState(db, collectionRid, shard);
  const current = vectorVersion(db, collectionRid);
  if (state.copy?.version === current) return;
  if (state.tooLarge?.version === current && state.tooLarge.budgetBytes === options.budgetBytes) return;
  if (state.seenVersion !== current) {
    state.seenVersion = current;
    state.seenSince = now;
    if (state.copy) return;
  } else if (state.copy && now - state.seenSince! < SETTLE_MS) return;
  delete state.copy;
  // One read transaction: the version, the count and the rows all come from the same snapshot.
  const built = sqlite(db).transaction(() => {
    const t = vectorTableOf(db, collectionRid);
    const at = vectorVersion(db, collectionRid);
    const shape = stmt(db, `SELECT count(*) AS n, max(length(embedding)) AS bytes FROM ${t.table} v WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope}`).get(shard, ...t.params) as {
      n: number;
      bytes: number | null;
    };
    if (shape.n === 0 || !shape.bytes) return null;
    const needed = copyBytes(shape.n, shape.bytes / 4);
    if (needed > options.budgetBytes) {
      state.tooLarge = { version: at, budgetBytes: options.budgetBytes };
      return null;
    }
    // Room first, so the old copies and the new one never exceed the budget together.
    evictCopies(db, options.budgetBytes - needed);
    const scanner = new Int8Scanner(shape.n, shape.bytes / 4);
    const rids = new Float64Array(shape.n);
    // Streamed row by row: holding every row's Buffer at once would need the float32 size again.
    let row = 0;
    for (const r of stmt(db, `SELECT v.rid AS rid, v.embedding AS e FROM ${t.table} v WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope} ORDER BY v.rid`).iterate(shard, ...t.params) as IterableIterator<{
      rid: number;
      e: Buffer;
    }>) {
      rids[row] = r.rid;
      scanner.setBytes(row++, r.e);
    }
    return { version: at, scanner, rids };
  })();
  if (!built) return;
  state.copy = { version: built.version, rids: built.rids, scanner: built.scanner, usedAt: now };
}

/** Drops the least recently used copies until the rest hold at most `budget` bytes. */
function evictCopies(db: Db, budget: number): void {
  const held = [...(copies.get(db)?.values() ?? [])].filter((s) => s.copy).sort((a, b) => b.copy!.usedAt - a.copy!.usedAt);
  let total = 0;
  for (const state of held) {
    total += copyBytes(state.copy!.rids.length, state.copy!.scanner.dimensions);
    if (total > budget) delete state.copy;
  }
}

/** Cosine similarity of the query to given passages (BM25 candidates the dense stage did not return). */
export function similarities(db: Db, collectionRid: number, query: Float32Array, passageRids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (passageRids.length === 0) return out;
  const t = vectorTableOf(db, collectionRid);
  // Bound IN blocks, a key lookup each: \`rid IN (SELECT value FROM json_each(?))\` cost 0.6 ms of a
  // semantic SciFact search for its ~100 keyword hits (issue 16: semantic p50 within 1.3× keyword).
  let sql = SIMILARITY_SQL.get(t.table);
  if (!sql) SIMILARITY_SQL.set(t.table, (sql = `SELECT rid, vec_distance_cosine(embedding, ?) AS d FROM ${t.table} v WHERE rid IN (${IN_BLOCK_PARAMS})${t.scope}`));
  const q = blob(query);
  for (let from = 0; from < passageRids.length; from += IN_BLOCK) {
    const block: (number | null)[] = passageRids.slice(from, from + IN_BLOCK);
    while (block.length < IN_BLOCK) block.push(null);
    for (const r of stmt(db, sql).all(q, ...block, ...t.params) as { rid: number; d: number | null }[]) if (r.d !== null) out.set(r.rid, 1 - r.d);
  }
  return out;
}
/** similarities' SQL per table, built once (a fresh string per call costs a hash in the statement cache). */
const SIMILARITY_SQL = new Map<string, string>();
