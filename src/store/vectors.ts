// Passage vectors, per collection, in two tables created when the first vectors arrive (their
// length fixes the dimensions) and dropped when a reindex moves the collection to another model:
// a sqlite-vec `vec0` table for nearest-neighbour scans, split into VECTOR_SHARDS partitions so
// that one query's scan runs on several threads at once, and a plain table keyed by passage rid
// for point lookups (vec0 answers those by scanning). Every stored vector is unit length, so the
// scan ranks by L2 distance (cheaper than cosine, same order) and cos = 1 - d²/2.
import type { Db } from './db.js';
import { vectorTableName } from './migrations.js';
import { firstWindow, type SqlFragment } from './search.js';
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
}

/** A reindex under another model starts from an empty dense index (its dimensions may differ). */
export function dropVectors(db: Db, collectionRid: number): void {
  db.exec(`DROP TABLE IF EXISTS ${vectorTableName(collectionRid)}`);
  db.exec(`DROP TABLE IF EXISTS ${dataTable(collectionRid)}`);
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
 * caller merges shards). The vector index
 * ranks a window of its nearest rows (a fast scan); the join drops rows of files that are not ready
 * or not selected; when that leaves fewer than `limit` while the window was full, the window grows,
 * ending in a full scan that filters before it ranks. Filtering never happens after the cut.
 */
export function denseHits(db: Db, opts: { collectionRid: number; query: Float32Array; filter: SqlFragment | null; limit: number; shard: number }): DenseHit[] {
  if (!hasVectorTable(db, opts.collectionRid)) return [];
  const vec = vectorTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const filterParams = opts.filter?.params ?? [];
  const q = blob(opts.query);
  const fromL2 = (rows: { pid: number; fr: number; d: number | null }[]) => rows.filter((r) => r.d !== null).map((r) => ({ passageRid: r.pid, fileRid: r.fr, similarity: 1 - (r.d! * r.d!) / 2 }));
  for (let k = firstWindow(opts.limit, opts.filter, Math.max(opts.limit * 4, 64)); k <= MAX_KNN; k *= 8) {
    const knn = stmt(db, `SELECT rowid AS rid, distance AS d FROM ${vec} WHERE embedding MATCH ? AND k = ? AND shard = ?`).all(q, k, opts.shard) as { rid: number | bigint; d: number | null }[];
    const distance = new Map(knn.map((r) => [Number(r.rid), r.d]));
    const kept = stmt(
      db,
      `SELECT p.rid AS pid, p.file_rid AS fr FROM passages p JOIN files f ON f.rid = p.file_rid
       WHERE p.rid IN (SELECT value FROM json_each(?)) AND f.status = 'ready' AND f.deleted_at IS NULL ${where}`,
    ).all(JSON.stringify([...distance.keys()]), ...filterParams) as { pid: number; fr: number }[];
    const rows = kept
      .map((r) => ({ ...r, d: distance.get(r.pid) ?? null }))
      .sort((a, b) => (a.d ?? Infinity) - (b.d ?? Infinity) || a.pid - b.pid)
      .slice(0, opts.limit);
    // Enough survivors, or the window already held every vector: the answer is exact.
    if (rows.length >= opts.limit || knn.length < k) return fromL2(rows);
  }
  const rows = stmt(
    db,
    `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
     FROM ${dataTable(opts.collectionRid)} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
     WHERE v.rid % ${VECTOR_SHARDS} = ? AND f.status = 'ready' AND f.deleted_at IS NULL ${where}
     ORDER BY d ASC, p.rid ASC LIMIT ?`,
  ).all(q, opts.shard, ...filterParams, opts.limit) as { pid: number; fr: number; d: number | null }[];
  return fromL2(rows);
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
