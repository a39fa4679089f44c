// Passage vectors: unit-length embeddings, one per passage whose text the model could place.

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

export interface VectorReads {
  /** Cosine similarity of the query to the given passages of a collection; passages without a vector are left out. */
  similarities(collectionRid: number, query: Float32Array, passageRids: readonly number[]): Promise<Map<number, number>>;
}
