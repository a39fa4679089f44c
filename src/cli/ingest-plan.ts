// What `trove ingest` must do to make a collection mirror a folder. Pure: no I/O.

export interface LocalFile {
  /** Collection path: leading '/', forward slashes. */
  path: string;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  contentType: string;
}

export interface RemoteFile {
  id: string;
  path: string;
  /** The file's source.checksum, e.g. `sha256:<hex>`; absent when none was declared. */
  checksum?: string | undefined;
  status: string;
  /** An upload source whose bytes never arrived (an interrupted earlier run): it would stay pending forever. */
  awaitingUpload?: boolean | undefined;
}

export interface IngestPlan<L extends LocalFile = LocalFile, R extends RemoteFile = RemoteFile> {
  add: L[];
  update: { local: L; remote: R }[];
  remove: R[];
  unchanged: { local: L; remote: R }[];
}

export function sha256Checksum(hex: string): string {
  return `sha256:${hex}`;
}

/** A remote file stays as it is when it holds the same bytes and is not failed or stuck; every list is sorted by path. */
export function planIngest<L extends LocalFile, R extends RemoteFile>(local: readonly L[], remote: readonly R[]): IngestPlan<L, R> {
  const remoteByPath = new Map(remote.map((file) => [file.path, file]));
  const plan: IngestPlan<L, R> = { add: [], update: [], remove: [], unchanged: [] };
  const localPaths = new Set<string>();
  for (const file of local) {
    localPaths.add(file.path);
    const existing = remoteByPath.get(file.path);
    if (!existing) plan.add.push(file);
    else if (existing.checksum === sha256Checksum(file.sha256) && existing.status !== 'failed' && !existing.awaitingUpload) plan.unchanged.push({ local: file, remote: existing });
    else plan.update.push({ local: file, remote: existing });
  }
  for (const file of remote) if (!localPaths.has(file.path)) plan.remove.push(file);

  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  plan.add.sort(byPath);
  plan.update.sort((a, b) => byPath(a.local, b.local));
  plan.unchanged.sort((a, b) => byPath(a.local, b.local));
  plan.remove.sort(byPath);
  return plan;
}

// ---------------------------------------------------------------- mirror safety
//
// A mirror deletes what the folder no longer has, which is exactly what goes wrong when the folder
// is the wrong one (an unmounted drive, a typo, an empty checkout). So deletions are narrowed three
// ways before anything is sent:
//  - ownership: the CLI's ingest records the folder a file came from in its metadata
//    (INGEST_ROOT_KEY); only files recorded from this folder are the mirror's to delete. Files added
//    through the API, by `trove files add`, from another folder or by an older CLI carry no such
//    record (or another folder's) and are left alone unless `--prune` says the collection is to
//    mirror this folder exactly.
//  - consent: deleting asks on a terminal; without one it needs `--prune` or `--yes`.
//  - an empty folder never empties a collection: it needs `--allow-empty` on top.

/** The metadata key under which `trove ingest` records the folder (its real path) a file came from. */
export const INGEST_ROOT_KEY = 'trove_ingest_root';

export interface RemovalSplit<R extends RemoteFile> {
  /** Recorded as ingested from this folder. */
  own: R[];
  /** Anything else: the API, another folder, `trove files add`, an older CLI. */
  foreign: R[];
}

export function splitRemovals<R extends RemoteFile & { ingestRoot?: string | undefined }>(remove: readonly R[], root: string): RemovalSplit<R> {
  const split: RemovalSplit<R> = { own: [], foreign: [] };
  for (const file of remove) (file.ingestRoot === root ? split.own : split.foreign).push(file);
  return split;
}

export interface RemovalPolicy {
  /** `--prune`: delete everything the folder lacks, whoever added it, without asking. */
  prune: boolean;
  /** `--yes`, or the person at the terminal said yes: delete this folder's own files. */
  confirmed: boolean;
  /** `--allow-empty`: an empty folder may empty the collection. */
  allowEmpty: boolean;
  /** How many files the folder holds now (after what is ignored, hidden or secret). */
  localCount: number;
  /** Paths whose deletion was seen as it happened (watch mode): the user's own act, no question. */
  seenDeleted?: ReadonlySet<string> | undefined;
}

export interface RemovalDecision<R> {
  remove: R[];
  /** This folder's files that stay because nobody confirmed (a terminal, --yes or --prune would). */
  unconfirmed: R[];
  /** Files added by other means that stay because --prune was not given. */
  foreign: R[];
  /** True when the folder is empty and that alone held back every deletion. */
  emptyFolder: boolean;
}

/** Which of the plan's removals go ahead under the policy; the rest are reported, never deleted. */
export function decideRemovals<R extends RemoteFile & { ingestRoot?: string | undefined }>(remove: readonly R[], root: string, policy: RemovalPolicy): RemovalDecision<R> {
  const { own, foreign } = splitRemovals(remove, root);
  const candidates = policy.prune ? [...own, ...foreign] : own;
  if (policy.localCount === 0 && candidates.length > 0 && !policy.allowEmpty) {
    return { remove: [], unconfirmed: own, foreign, emptyFolder: true };
  }
  if (policy.prune) return { remove: candidates, unconfirmed: [], foreign: [], emptyFolder: false };
  const decision: RemovalDecision<R> = { remove: [], unconfirmed: [], foreign, emptyFolder: false };
  for (const file of own) (policy.confirmed || policy.seenDeleted?.has(file.path) ? decision.remove : decision.unconfirmed).push(file);
  return decision;
}
