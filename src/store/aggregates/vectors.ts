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
