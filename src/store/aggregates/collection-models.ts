// A collection's own semantic model and its files' vectors in it. The model is the opaque bytes
// src/domain/search/collection-model.ts makes; an engine only keeps them.

export interface StoredCollectionModel {
  /** Unique across the store and never reused: readers cache models by collection and version. */
  version: number;
  /** Ready files when it was trained. */
  files: number;
  model: Buffer;
  /** The embedding's calibrated weight, or null for the default. */
  semantic_weight: number | null;
  /** The embedding model the weight was fitted for. */
  semantic_model: string | null;
}

export type CollectionModelHeader = Omit<StoredCollectionModel, 'model'>;

export interface TrainedModel {
  files: number;
  model: Buffer;
  semanticWeight: number | null;
  semanticModel: string | null;
}

export interface CollectionModelReads {
  /** The model's row without its bytes: what a reader checks against its cached copy at every search. */
  header(collectionRid: number): Promise<CollectionModelHeader | null>;
  get(collectionRid: number): Promise<StoredCollectionModel | null>;
  /** Files' vectors by file rid; a file without one is absent. */
  fileTopics(fileRids: readonly number[]): Promise<Map<number, Buffer>>;
  /** Ready files of a collection with the versions their passages are of, in rid order after `afterRid`, up to `limit`. */
  readyFileVersions(collectionRid: number, afterRid: number, limit: number): Promise<{ rid: number; version_id: string }[]>;
}

export interface CollectionModelWrites {
  /** Replaces the collection's model; returns its new version (greater than any version before, in any collection). */
  put(collectionRid: number, trained: TrainedModel, now: string): Promise<number>;
  /** Writes files' vectors, replacing any they had; a file without passages gets none (they may have gone since it was computed). */
  putFileTopics(rows: readonly { fileRid: number; vector: Buffer }[]): Promise<void>;
}
