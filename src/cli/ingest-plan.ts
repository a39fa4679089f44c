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
