// What the operator channel (src/rpc) reads and keeps: cluster-wide counts for `status`, and the
// file:// roots the operator granted at run time (kept by the store, so they survive restarts).

export interface ClusterCounts {
  /** Deleted ones are counted until the sweeper purges them. */
  namespaces: { live: number; deleted: number };
  /** A collection counts as living only while its namespace is living too; `by_status` counts living ones. */
  collections: { live: number; deleted: number; by_status: Record<string, number> };
  /** Files of living collections by status; a status no file has is left out. */
  files: Record<string, number>;
  /** Jobs by status, and the queued ones by type. */
  jobs: Record<string, number>;
  queued_jobs_by_type: Record<string, number>;
  research_runs: Record<string, number>;
}

export interface GrantedRoot {
  /** Absolute and resolved. */
  path: string;
  granted_at: string;
}

export interface OperatorReads {
  clusterCounts(): Promise<ClusterCounts>;
  /** In the order they were saved; none until a first save. */
  grantedFileRoots(): Promise<GrantedRoot[]>;
}

export interface OperatorWrites {
  /** Replaces the whole list (read it in the same transaction to add or remove one). */
  saveGrantedFileRoots(roots: readonly GrantedRoot[]): Promise<void>;
}
