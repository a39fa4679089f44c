// Namespaces (tenants) as the store keeps them.

export interface NamespaceRow {
  rid: number;
  id: string;
  name: string;
  display_name: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface NamespaceUsage {
  collections: number;
  files: number;
  source_bytes: bigint;
}

export interface NamespaceReads {
  /** A living namespace by ID or name (the contract accepts both in URLs). */
  find(ref: string): Promise<NamespaceRow | undefined>;
  /** Including deleted ones: jobs and keys keep pointing at a namespace after it is deleted. */
  byId(id: string): Promise<NamespaceRow | undefined>;
  byRid(rid: number): Promise<NamespaceRow | undefined>;
  /** The most recently deleted namespace with this ID or name. */
  findDeleted(ref: string): Promise<NamespaceRow | undefined>;
  /** Living namespaces in creation order after `afterRid`; `onlyRids` narrows to those. */
  list(opts: { afterRid: number; limit: number; onlyRids?: readonly number[] | undefined }): Promise<NamespaceRow[]>;
  /** A namespace's usage, over all its living collections or (`onlyCollections`, by name) some of them. */
  usage(rid: number, onlyCollections?: readonly string[]): Promise<NamespaceUsage>;
}

/** The writes that name a namespace by `rid` need one that exists (callers resolved it first). */
export interface NamespaceWrites {
  insert(row: Omit<NamespaceRow, 'rid' | 'deleted_at'>): Promise<NamespaceRow>;
  updateDisplayName(rid: number, displayName: string | null, now: string): Promise<NamespaceRow>;
  markDeleted(rid: number, now: string): Promise<void>;
  /**
   * Back from deletion with the collections its deletion took (those deleted at the same time; one
   * deleted before stays deleted), each reported as `collection.updated`; returns their rids.
   */
  restore(rid: number, now: string): Promise<number[]>;
}
