// What the sweeper removes for good once the recovery window has passed (decisions.md §5): deleted
// collections with everything in them, then deleted namespaces, and whether uploaded bytes are
// still used by any file version (the blob store keeps them by sha256, shared between versions).

export interface RetentionReads {
  /** Collections deleted before `cutoff` (an ISO time), whatever their namespace. */
  collectionsDeletedBefore(cutoff: string): Promise<number[]>;
  namespacesDeletedBefore(cutoff: string): Promise<number[]>;
  /** Whether any file version, in any collection, still uses these bytes. */
  blobInUse(sha256: string): Promise<boolean>;
}

export interface RetentionWrites {
  /**
   * Removes a collection and everything in it: files and their versions, passages and their
   * indexes, access rules, research runs and jobs. Returns the sha256 of every blob its file
   * versions used; the caller removes those no other version uses (`blobInUse`).
   */
  purgeCollection(rid: number): Promise<string[]>;
  /** Removes a namespace and its jobs; its collections must be purged first. */
  purgeNamespace(rid: number): Promise<void>;
}
