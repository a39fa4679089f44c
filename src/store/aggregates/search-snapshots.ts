// Search snapshots: the ranking a search's first page saw, kept for its later pages. Rows expire
// with the cursors that name them and are bounded in number and bytes (docs/decisions.md, "Search
// cursors"). What a snapshot holds is the domain's encoding: the store keeps it as text and only
// counts its length against the byte budget.

export interface SearchSnapshotRow {
  /** Random; the signed cursor names it. */
  id: string;
  collection_rid: number;
  /** The key and request values the cursor is bound to. */
  binding: string;
  /** The domain's JSON: what the first page reported. */
  page_one: string;
  /** The domain's JSON array of entries, best first. */
  entries: string;
  entry_count: number;
  /** True when the ranking ends with the entries. */
  complete: boolean;
  /** Milliseconds since the epoch. */
  expires_at: number;
}

/** How many snapshots the store keeps at most, and how many bytes of entries. */
export interface SnapshotBounds {
  rows: number;
  bytes: number;
}

export interface SearchSnapshotReads {
  /** Whether a snapshot is kept at all, expired or not. */
  exists(id: string): Promise<boolean>;
  /** A snapshot that has not expired at `now` (ms). */
  get(id: string, now: number): Promise<SearchSnapshotRow | undefined>;

  // What a later page reads to serve the kept entries as the collection is now.

  /** Of these files, those of the collection that are live and ready: what a page may still show. */
  liveReadyFiles(collectionRid: number, fileRids: readonly number[]): Promise<Set<number>>;
  /** Which of these passages exist, and the file each belongs to. */
  passageFiles(passageRids: readonly number[]): Promise<Map<number, number>>;
  /** A file's passages, in order. */
  passagesOfFile(fileRid: number): Promise<number[]>;
}

export interface SearchSnapshotWrites {
  /**
   * Keeps a snapshot. Those expired at `now` (ms) go first, then, past the bounds, the oldest: the
   * store stays bounded however many searches run, whether or not the sweeper has run. The newest
   * always stays.
   */
  insert(row: SearchSnapshotRow, now: number, bounds: SnapshotBounds): Promise<void>;
  /**
   * Replaces a snapshot's entries with a longer list, unless another request extended it first (its
   * count is no longer `expectedCount`): false then, and the caller reads it again. Past `bytesBudget`
   * the oldest other snapshots go.
   */
  extend(id: string, expectedCount: number, longer: Pick<SearchSnapshotRow, 'entries' | 'entry_count' | 'complete'>, bytesBudget: number): Promise<boolean>;
  /** A snapshot lives as long as the last cursor that names it: its expiry only moves later. */
  keepUntil(id: string, expiresAt: number): Promise<void>;
  /** Removes those expired at `now` (ms); returns how many. */
  deleteExpired(now: number): Promise<number>;
}
