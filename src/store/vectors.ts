// Passage vectors, per collection, in two tables created when the first vectors arrive (their
// length fixes the dimensions) and dropped when a reindex moves the collection to another model:
// a sqlite-vec `vec0` table for nearest-neighbour scans, split into VECTOR_SHARDS partitions so
// that one query's scan runs on several threads at once, and a plain table keyed by passage rid
// for point lookups (vec0 answers those by scanning). Every stored vector is unit length, so the
// scan ranks by L2 distance (cheaper than cosine, same order) and cos = 1 - d²/2.
import type { Db } from './db.js';
import { vectorTableName } from './migrations.js';
import { firstWindow, type SqlFragment } from './search.js';
import { DotScanner } from './simd-scan.js';
import { stmt } from './statements.js';

export interface NewVector {
  passageRid: number;
  textHash: string;
  embedding: Float32Array;
}

/** Partitions of each collection's scan table; one helper thread scans each (src/domain/search/dense-pool.ts). */
export const VECTOR_SHARDS = 2;
const shardOf = (passageRid: number) => passageRid % VECTOR_SHARDS;

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const isZero = (v: Float32Array) => v.every((x) => x === 0);

const dataTable = (collectionRid: number) => `${vectorTableName(collectionRid)}_data`;

export function hasVectorTable(db: Db, collectionRid: number): boolean {
  return stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(dataTable(collectionRid)) !== undefined;
}

function ensureVectorTable(db: Db, collectionRid: number, dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions <= 0 || dimensions > 8192) throw new Error(`bad vector dimensions ${dimensions}`);
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${vectorTableName(collectionRid)} USING vec0(shard integer partition key, embedding float[${dimensions}])`);
  db.exec(`CREATE TABLE IF NOT EXISTS ${dataTable(collectionRid)} (rid INTEGER PRIMARY KEY, text_hash TEXT NOT NULL, embedding BLOB NOT NULL)`);
}

export function insertVectors(db: Db, collectionRid: number, vectors: NewVector[]): void {
  // A text with no word the model knows has no direction: it is simply not in the dense index.
  const usable = vectors.filter((v) => !isZero(v.embedding));
  if (usable.length === 0) return;
  ensureVectorTable(db, collectionRid, usable[0]!.embedding.length);
  const insertKnn = stmt(db, `INSERT INTO ${vectorTableName(collectionRid)} (rowid, shard, embedding) VALUES (?, ?, ?)`);
  const insertData = stmt(db, `INSERT INTO ${dataTable(collectionRid)} (rid, text_hash, embedding) VALUES (?, ?, ?)`);
  for (const v of usable) {
    insertKnn.run(BigInt(v.passageRid), BigInt(shardOf(v.passageRid)), blob(v.embedding));
    insertData.run(v.passageRid, v.textHash, blob(v.embedding));
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
  if (!hasVectorTable(db, collectionRid)) return new Map();
  const rows = stmt(db, `SELECT text_hash AS h, embedding AS e FROM ${dataTable(collectionRid)} WHERE rid IN (SELECT rid FROM passages WHERE file_rid = ?)`).all(fileRid) as {
    h: string;
    e: Buffer;
  }[];
  return new Map(rows.map((r) => [r.h, new Float32Array(r.e.buffer.slice(r.e.byteOffset, r.e.byteOffset + r.e.byteLength))]));
}

export function deleteFileVectors(db: Db, collectionRid: number, fileRid: number): void {
  if (!hasVectorTable(db, collectionRid)) return;
  const rids = stmt(db, `SELECT rid FROM ${dataTable(collectionRid)} WHERE rid IN (SELECT rid FROM passages WHERE file_rid = ?)`).all(fileRid) as { rid: number }[];
  const delKnn = stmt(db, `DELETE FROM ${vectorTableName(collectionRid)} WHERE rowid = ?`);
  const delData = stmt(db, `DELETE FROM ${dataTable(collectionRid)} WHERE rid = ?`);
  for (const { rid } of rids) {
    delKnn.run(BigInt(rid));
    delData.run(rid);
  }
  if (rids.length > 0) bumpVectorVersion(db, collectionRid);
}

/** A reindex under another model starts from an empty dense index (its dimensions may differ). */
export function dropVectors(db: Db, collectionRid: number): void {
  db.exec(`DROP TABLE IF EXISTS ${vectorTableName(collectionRid)}`);
  db.exec(`DROP TABLE IF EXISTS ${dataTable(collectionRid)}`);
  bumpVectorVersion(db, collectionRid);
}

export interface DenseHit {
  passageRid: number;
  fileRid: number;
  /** Cosine similarity, -1..1. */
  similarity: number;
}

/** sqlite-vec's largest k. */
const MAX_KNN = 4096;

/**
 * Exact nearest passages of one shard over ready files that the filter selects, best first (the
 * caller merges shards). A window of the shard's nearest rows is ranked first (a fast scan: the
 * in-memory copy when it is current, else sqlite-vec); the join drops rows of files that are not
 * ready or not selected; when that leaves fewer than `limit` while the window was full, the window
 * grows, ending in a full scan that filters before it ranks. Filtering never happens after the cut.
 */
export function denseHits(db: Db, opts: { collectionRid: number; query: Float32Array; filter: SqlFragment | null; limit: number; shard: number }): DenseHit[] {
  if (!hasVectorTable(db, opts.collectionRid)) return [];
  const vec = vectorTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const filterParams = opts.filter?.params ?? [];
  const q = blob(opts.query);
  const cached = currentCopy(db, opts.collectionRid, opts.shard);
  const scores = cached && cached.scanner.dimensions === opts.query.length ? cached.scanner.scan(opts.query) : null;
  const keptOf = (rids: number[]) =>
    stmt(
      db,
      `SELECT p.rid AS pid, p.file_rid AS fr FROM passages p JOIN files f ON f.rid = p.file_rid
       WHERE p.rid IN (SELECT value FROM json_each(?)) AND f.status = 'ready' AND f.deleted_at IS NULL ${where}`,
    ).all(JSON.stringify(rids), ...filterParams) as { pid: number; fr: number }[];
  const maxWindow = scores ? cached!.rids.length : MAX_KNN;
  for (let k = firstWindow(opts.limit, opts.filter, Math.max(opts.limit * 4, 64)); ; k *= 8) {
    let similarity: Map<number, number>;
    let windowFull: boolean;
    if (scores) {
      const top = topIndices(scores, Math.min(k, maxWindow));
      similarity = new Map(top.map((i) => [cached!.rids[i]!, scores[i]!]));
      windowFull = k < maxWindow;
    } else {
      if (k > MAX_KNN) break;
      const knn = stmt(db, `SELECT rowid AS rid, distance AS d FROM ${vec} WHERE embedding MATCH ? AND k = ? AND shard = ?`).all(q, k, opts.shard) as { rid: number | bigint; d: number | null }[];
      similarity = new Map(knn.filter((r) => r.d !== null).map((r) => [Number(r.rid), 1 - (r.d! * r.d!) / 2]));
      windowFull = knn.length >= k;
    }
    const rows = keptOf([...similarity.keys()])
      .map((r) => ({ passageRid: r.pid, fileRid: r.fr, similarity: similarity.get(r.pid)! }))
      .sort((a, b) => b.similarity - a.similarity || a.passageRid - b.passageRid)
      .slice(0, opts.limit);
    // Enough survivors, or the window already held every vector: the answer is exact.
    if (rows.length >= opts.limit || !windowFull) return rows;
  }
  const rows = stmt(
    db,
    `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
     FROM ${dataTable(opts.collectionRid)} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
     WHERE v.rid % ${VECTOR_SHARDS} = ? AND f.status = 'ready' AND f.deleted_at IS NULL ${where}
     ORDER BY d ASC, p.rid ASC LIMIT ?`,
  ).all(q, opts.shard, ...filterParams, opts.limit) as { pid: number; fr: number; d: number | null }[];
  return rows.filter((r) => r.d !== null).map((r) => ({ passageRid: r.pid, fileRid: r.fr, similarity: 1 - (r.d! * r.d!) / 2 }));
}

/** Indices of the `k` highest scores, highest first (ties: lower index first). */
function topIndices(scores: Float32Array, k: number): number[] {
  if (k >= scores.length) return Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]! || a - b);
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

/** Vector bytes one thread keeps in memory at most; the least recently used copies go first. */
const COPY_BUDGET_BYTES = 256 * 1024 * 1024;
/** A copy is rebuilt once the vectors stopped changing for this long (or at once, the first time). */
const SETTLE_MS = 1000;

interface VectorCopy {
  version: number;
  rids: Float64Array;
  scanner: DotScanner;
  usedAt: number;
}

interface CopyState {
  copy?: VectorCopy;
  /** The latest version seen, and since when. */
  seenVersion?: number;
  seenSince?: number;
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

/** The in-memory copy of a shard if it matches the stored vectors now, else null (use sqlite-vec). */
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

/**
 * Brings a shard's in-memory copy up to date when that is worth it: at once if it never had one,
 * otherwise once the vectors have settled (an ingest in progress would make every rebuild stale at
 * once). The helper thread calls this after answering a query, so no query waits for a rebuild.
 */
export function refreshVectorCopy(db: Db, collectionRid: number, shard: number, now = Date.now()): void {
  if (!hasVectorTable(db, collectionRid)) return;
  const state = copyState(db, collectionRid, shard);
  const current = vectorVersion(db, collectionRid);
  if (state.copy?.version === current) return;
  if (state.seenVersion !== current) {
    state.seenVersion = current;
    state.seenSince = now;
    if (state.copy) return;
  } else if (state.copy && now - state.seenSince! < SETTLE_MS) return;
  delete state.copy;
  // One read transaction: the version, the count and the rows all come from the same snapshot.
  const built = db.transaction(() => {
    const table = dataTable(collectionRid);
    const at = vectorVersion(db, collectionRid);
    const shape = stmt(db, `SELECT count(*) AS n, max(length(embedding)) AS bytes FROM ${table} WHERE rid % ${VECTOR_SHARDS} = ?`).get(shard) as { n: number; bytes: number | null };
    if (shape.n === 0 || !shape.bytes || shape.n * shape.bytes > COPY_BUDGET_BYTES) return null;
    const scanner = new DotScanner(shape.n, shape.bytes / 4);
    const rids = new Float64Array(shape.n);
    // Streamed row by row: holding every row's Buffer at once would double the memory a copy needs.
    let row = 0;
    for (const r of stmt(db, `SELECT rid, embedding AS e FROM ${table} WHERE rid % ${VECTOR_SHARDS} = ? ORDER BY rid`).iterate(shard) as IterableIterator<{ rid: number; e: Buffer }>) {
      rids[row] = r.rid;
      scanner.setBytes(row++, r.e);
    }
    return { version: at, scanner, rids };
  })();
  if (!built) return;
  const { scanner, rids } = built;
  const version = built.version;
  evictCopies(db, COPY_BUDGET_BYTES - scanner.bytes);
  state.copy = { version, rids, scanner, usedAt: now };
}

function evictCopies(db: Db, budget: number): void {
  const held = [...(copies.get(db)?.values() ?? [])].filter((s) => s.copy).sort((a, b) => b.copy!.usedAt - a.copy!.usedAt);
  let total = 0;
  for (const state of held) {
    total += state.copy!.scanner.bytes;
    if (total > budget) delete state.copy;
  }
}

/** Cosine similarity of the query to given passages (BM25 candidates the dense stage did not return). */
export function similarities(db: Db, collectionRid: number, query: Float32Array, passageRids: number[]): Map<number, number> {
  if (passageRids.length === 0 || !hasVectorTable(db, collectionRid)) return new Map();
  const rows = stmt(db, `SELECT rid, vec_distance_cosine(embedding, ?) AS d FROM ${dataTable(collectionRid)} WHERE rid IN (SELECT value FROM json_each(?))`).all(
    blob(query),
    JSON.stringify(passageRids),
  ) as { rid: number; d: number | null }[];
  return new Map(rows.filter((r) => r.d !== null).map((r) => [r.rid, 1 - r.d!]));
}
