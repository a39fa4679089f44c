import type { Db } from './db.js';
import { createVectorTableSql, vectorTableName } from './migrations.js';
import type { SqlFragment } from './search.js';
import { stmt } from './statements.js';

export interface NewVector {
  passageRid: number;
  textHash: string;
  embedding: Float32Array;
}

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export function ensureVectorTable(db: Db, collectionRid: number): void {
  db.exec(createVectorTableSql(collectionRid));
}

export function insertVectors(db: Db, collectionRid: number, vectors: NewVector[]): void {
  const insert = stmt(db, `INSERT OR REPLACE INTO ${vectorTableName(collectionRid)} (rid, text_hash, embedding) VALUES (?, ?, ?)`);
  for (const v of vectors) insert.run(v.passageRid, v.textHash, blob(v.embedding));
}

/** A file's vectors by the hash of the text they embed, so unchanged passages are not embedded again. */
export function vectorsByHash(db: Db, collectionRid: number, fileRid: number): Map<string, Float32Array> {
  const rows = stmt(db, `SELECT v.text_hash AS h, v.embedding AS e FROM ${vectorTableName(collectionRid)} v JOIN passages p ON p.rid = v.rid WHERE p.file_rid = ?`).all(fileRid) as {
    h: string;
    e: Buffer;
  }[];
  return new Map(rows.map((r) => [r.h, new Float32Array(r.e.buffer.slice(r.e.byteOffset, r.e.byteOffset + r.e.byteLength))]));
}

export function deleteFileVectors(db: Db, collectionRid: number, fileRid: number): void {
  stmt(db, `DELETE FROM ${vectorTableName(collectionRid)} WHERE rid IN (SELECT rid FROM passages WHERE file_rid = ?)`).run(fileRid);
}

export interface DenseHit {
  passageRid: number;
  fileRid: number;
  /** Cosine similarity, -1..1. */
  similarity: number;
}

/**
 * Exact nearest passages over ready files that the filter selects: the filter narrows the rows
 * before distances are ranked, so `limit` results come back whenever that many match.
 */
export function denseHits(db: Db, opts: { collectionRid: number; query: Float32Array; filter: SqlFragment | null; limit: number }): DenseHit[] {
  const vec = vectorTableName(opts.collectionRid);
  const where = opts.filter ? `AND (${opts.filter.sql})` : '';
  const rows = stmt(
    db,
    `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_cosine(v.embedding, ?) AS d
     FROM ${vec} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
     WHERE f.status = 'ready' AND f.deleted_at IS NULL ${where}
     ORDER BY d ASC, p.rid ASC LIMIT ?`,
  ).all(blob(opts.query), ...(opts.filter?.params ?? []), opts.limit) as { pid: number; fr: number; d: number | null }[];
  return rows.filter((r) => r.d !== null).map((r) => ({ passageRid: r.pid, fileRid: r.fr, similarity: 1 - r.d! }));
}

/** Cosine similarity of the query to given passages (BM25 candidates the dense stage did not return). */
export function similarities(db: Db, collectionRid: number, query: Float32Array, passageRids: number[]): Map<number, number> {
  if (passageRids.length === 0) return new Map();
  const rows = stmt(db, `SELECT rid, vec_distance_cosine(embedding, ?) AS d FROM ${vectorTableName(collectionRid)} WHERE rid IN (SELECT value FROM json_each(?))`).all(
    blob(query),
    JSON.stringify(passageRids),
  ) as { rid: number; d: number | null }[];
  return new Map(rows.filter((r) => r.d !== null).map((r) => [r.rid, 1 - r.d!]));
}

export function deleteAllVectors(db: Db, collectionRid: number): void {
  stmt(db, `DELETE FROM ${vectorTableName(collectionRid)}`).run();
}
