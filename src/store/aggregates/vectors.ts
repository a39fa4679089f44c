// Passage vectors: unit-length embeddings, one per passage whose text the model could place. An
// engine serves them as data: the dense stage's scan, its in-memory copies and their budget live
// above the store (src/domain/search/vector-scan.ts, vector-copies.ts).
import type { FileSelection } from './retrievable-files.js';

export interface NewVector {
  passageRid: number;
  textHash: string;
  embedding: Float32Array;
}

/** Partitions of each collection's vectors (passage rid % VECTOR_SHARDS); one helper thread scans each (src/domain/search/dense-pool.ts). */
export const VECTOR_SHARDS = 2;

export interface DenseHit {
  passageRid: number;
  fileRid: number;
  /** Cosine similarity, -1..1. */
  similarity: number;
}

/** One shard's vectors as a consistent read gives them: the version they are at, how many, their length. */
export interface VectorShardShape {
  version: number;
  rows: number;
  dimensions: number;
}

/** Takes one shard's vectors as they are read (src/domain/search/vector-copies.ts builds an in-memory copy). */
export interface VectorShardReader {
  /** Told the shard's shape before any row; false reads no row (the copy would not fit, or the shard is empty). */
  start(shape: VectorShardShape): boolean;
  /** Each vector in passage rid order, as its stored float32 bytes (a view valid during the call only). */
  row(passageRid: number, embedding: Uint8Array): void;
}

export interface VectorReads {
  /** Cosine similarity of the query to the given passages of a collection; passages without a vector are left out. */
  similarities(collectionRid: number, query: Float32Array, passageRids: readonly number[]): Promise<Map<number, number>>;
  /**
   * What changes whenever a collection's vectors do, by any writer: an in-memory copy made at one
   * version is current while the version is still that. 0 for a collection that never had vectors.
   */
  version(collectionRid: number): Promise<number>;
  /** Reads one shard's vectors (passage rid % VECTOR_SHARDS = shard) in one snapshot: the shape, then each row. */
  readShard(collectionRid: number, shard: number, reader: VectorShardReader): Promise<void>;
  /**
   * The dense stage's exact scores of given passages, each with its file, for those with a vector
   * in a ready file the selection keeps (null keeps every ready file). The similarity is 1 - d²/2 with
   * d the float32 L2 distance of the stored vector to the query; `nearest` gives the same value.
   */
  exactHits(collectionRid: number, query: Float32Array, passageRids: readonly number[], selection: FileSelection | null): Promise<DenseHit[]>;
  /**
   * The exact nearest passages of one shard over ready files the selection keeps, best first (ties:
   * lower passage rid first), at most `limit`: every vector scored, the selection applied before the
   * cut. The dense stage's answer when it has no current in-memory copy of the shard.
   */
  nearest(collectionRid: number, query: Float32Array, options: { shard: number; selection: FileSelection | null; limit: number }): Promise<DenseHit[]>;
  /** A file's vectors by the hash of the text they embed (NewVector.textHash), so unchanged passages need not be embedded again. */
  ofFileByTextHash(collectionRid: number, fileRid: number): Promise<Map<string, Float32Array>>;
}

/** A passage's vector goes with the passage (PassageWrites). */
export interface VectorWrites {
  /** Vectors of passages that have none; an all-zero vector (a text the model could not place) is left out. */
  insert(collectionRid: number, vectors: readonly NewVector[]): Promise<void>;
  /** All the collection's vectors go: a reindex under another model starts from none (its dimensions may differ). */
  dropAll(collectionRid: number): Promise<void>;
}
