// Collections as the store keeps them: settings, index generation, and counters of their files.
import type { Processing } from '../../contract/schemas.js';

/** A collection: `processing` parsed once, in the store. */
export interface CollectionRow {
  rid: number;
  id: string;
  namespace_rid: number;
  name: string;
  display_name: string | null;
  processing: Processing;
  access_control: 'off' | 'enforced';
  generation: number;
  embedding_model: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A collection's living files by status. */
export interface FileCounts {
  pending: number;
  indexing: number;
  ready: number;
  failed: number;
}

export interface CollectionReads {
  /** A living collection of a namespace by ID or name. */
  find(namespaceRid: number, ref: string): Promise<CollectionRow | undefined>;
  /** Deleted ones included. */
  byRid(rid: number): Promise<CollectionRow | undefined>;
  /** The most recently deleted collection of a namespace with this ID or name. */
  findDeleted(namespaceRid: number, ref: string): Promise<CollectionRow | undefined>;
  /** Living collections in creation order after `afterRid`; `onlyNames` narrows to those. */
  list(opts: { namespaceRid: number; afterRid: number; limit: number; onlyNames?: readonly string[] | undefined }): Promise<CollectionRow[]>;
  liveRids(namespaceRid: number): Promise<number[]>;
  /** Every collection of a namespace, deleted ones included. */
  allRids(namespaceRid: number): Promise<number[]>;
  fileCounts(collectionRid: number): Promise<FileCounts>;
}

/** The writes that name a collection by `rid` need one that exists (callers resolved it first). */
export interface CollectionWrites {
  /** Ready to take files at once; reported as `collection.updated`. */
  insert(row: Omit<CollectionRow, 'rid' | 'deleted_at' | 'generation'>): Promise<CollectionRow>;
  /** Reported (collection.updated) when a field its resource shows changed. */
  update(rid: number, fields: { display_name: string | null; processing: Processing; access_control: string }, now: string): Promise<CollectionRow>;
  /** Reported (collection.updated) when it was living. */
  markDeleted(rid: number, now: string): Promise<void>;
  /** Back from deletion, its counters as they were; reported when it was deleted. */
  restore(rid: number, now: string): Promise<CollectionRow>;
  /** A new index generation (each indexing batch). */
  bumpGeneration(rid: number): Promise<void>;
  setEmbeddingModel(rid: number, model: string | null): Promise<void>;
}
