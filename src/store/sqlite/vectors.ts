// Passage vectors, in one plain table all collections share, keyed by passage rid and indexed by
// (collection, rid) (float32 blobs; a collection's rows hold one length, its model's dimensions), so
// a collection's first vectors need no new table; a reindex that moves the collection to another
// model deletes its rows. A collection made before migration 22 that has a table of its own
// (vec_N_data) keeps it until such a reindex drops it. A scan reads one collection's rows through the
// index whichever table holds them. The engine serves the vectors as data: a shard's rows for the
// dense stage's in-memory int8 copy (src/domain/search/vector-copies.ts), split into VECTOR_SHARDS by
// rid so that one query's scan runs on several threads at once, and exact scores (sqlite-vec's
// float32 distances) for the shortlist that copy's scan makes, or for a whole shard without a copy.
// Until migration 12 a sqlite-vec vec0 table held every vector a second time for scans; the copy
// made it redundant. Every stored vector is unit length, so cos = 1 - d²/2 with d the L2 distance.
import { sqlite, type Db } from './sqlite.js';
import { SHARED_VECTOR_TABLE, vectorTableName } from './migrations.js';
import { selectionSql } from './search.js';
import type { FileSelection } from '../aggregates/retrievable-files.js';
import { IN_BLOCK, IN_BLOCK_PARAMS, stmt } from './statements.js';

import { VECTOR_SHARDS, type DenseHit, type NewVector, type VectorReads, type VectorShardReader, type VectorWrites } from '../aggregates/vectors.js';

export function sqliteVectors(db: Db): VectorReads & VectorWrites {
  return {
    similarities: async (collectionRid, query, passageRids) => similarities(db, collectionRid, query, passageRids),
    version: async (collectionRid) => vectorVersion(db, collectionRid),
    readShard: async (collectionRid, shard, reader) => readShard(db, collectionRid, shard, reader),
    exactHits: async (collectionRid, query, passageRids, selection) => exactHits(db, collectionRid, query, passageRids, selection),
    nearest: async (collectionRid, query, options) => nearest(db, collectionRid, query, options),
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
 * The exact nearest passages of one shard over ready files that the selection keeps, best first:
 * every vector of the shard scored in SQL, the files joined first, so the selection applies before
 * the cut. The dense stage asks this when it has no current in-memory copy of the shard.
 */
function nearest(db: Db, collectionRid: number, query: Float32Array, options: { shard: number; selection: FileSelection | null; limit: number }): DenseHit[] {
  const t = vectorTableOf(db, collectionRid);
  const selected = selectedFiles(options.selection);
  const rows = stmt(
    db,
    `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
     FROM ${t.table} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
     WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope} AND f.status = 'ready' AND f.deleted_at IS NULL ${selected.sql}
     ORDER BY d ASC, p.rid ASC LIMIT ?`,
  ).all(blob(query), options.shard, ...t.params, ...selected.params, options.limit) as DistanceRow[];
  return rows.filter((r) => r.d !== null).map(hitOf);
}

/** Exact scores of given passages (the dense stage's shortlist), dropping those of files not ready or not selected. */
function exactHits(db: Db, collectionRid: number, query: Float32Array, passageRids: readonly number[], selection: FileSelection | null): DenseHit[] {
  if (passageRids.length === 0) return [];
  const t = vectorTableOf(db, collectionRid);
  const selected = selectedFiles(selection);
  const rows = stmt(
    db,
    `SELECT p.rid AS pid, p.file_rid AS fr, vec_distance_l2(v.embedding, ?) AS d
     FROM ${t.table} v JOIN passages p ON p.rid = v.rid JOIN files f ON f.rid = p.file_rid
     WHERE v.rid IN (SELECT value FROM json_each(?))${t.scope} AND f.status = 'ready' AND f.deleted_at IS NULL ${selected.sql}`,
  ).all(blob(query), JSON.stringify(passageRids), ...t.params, ...selected.params) as DistanceRow[];
  return rows.filter((r) => r.d !== null).map(hitOf);
}

const selectedFiles = (selection: FileSelection | null): { sql: string; params: unknown[] } => {
  const narrowed = selection && selectionSql(selection);
  return narrowed ? { sql: `AND (${narrowed.sql})`, params: narrowed.params } : { sql: '', params: [] };
};

interface DistanceRow {
  pid: number;
  fr: number;
  d: number | null;
}

/** Every stored vector is unit length, so cos = 1 - d²/2 with d the L2 distance. */
const hitOf = (r: DistanceRow): DenseHit => ({ passageRid: r.pid, fileRid: r.fr, similarity: 1 - (r.d! * r.d!) / 2 });

/** One shard's vectors in one read transaction: the version, the count and the rows all come from the same snapshot. */
function readShard(db: Db, collectionRid: number, shard: number, reader: VectorShardReader): void {
  sqlite(db).transaction(() => {
    const t = vectorTableOf(db, collectionRid);
    const version = vectorVersion(db, collectionRid);
    const shape = stmt(db, `SELECT count(*) AS n, max(length(embedding)) AS bytes FROM ${t.table} v WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope}`).get(shard, ...t.params) as {
      n: number;
      bytes: number | null;
    };
    if (!reader.start({ version, rows: shape.n, dimensions: (shape.bytes ?? 0) / 4 })) return;
    // Streamed row by row: holding every row's Buffer at once would need the float32 size again.
    for (const r of stmt(db, `SELECT v.rid AS rid, v.embedding AS e FROM ${t.table} v WHERE v.rid % ${VECTOR_SHARDS} = ?${t.scope} ORDER BY v.rid`).iterate(shard, ...t.params) as IterableIterator<{
      rid: number;
      e: Buffer;
    }>) {
      reader.row(r.rid, r.e);
    }
  })();
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
