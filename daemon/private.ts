// The data dir holds every document, the webhook secrets and the cluster key: only its owner may
// read it. What the daemon creates there is created private (folders 0700, files 0600, whatever the
// umask); this closes what an older version, or a data dir made by hand, left open to other users.
import { chmodSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface Tightened {
  /** Paths (relative to the data dir, '.' for itself) whose group/other permissions were removed. */
  changed: string[];
  /** Paths whose mode could not be changed (e.g. owned by another user), with the reason. */
  failed: { path: string; reason: string }[];
}

/**
 * Removes group and other permissions from the data dir and everything in it (0755 → 0700,
 * 0644 → 0600). Symlinks are neither changed nor followed: chmod would act on their target, which
 * may lie outside the data dir. The owner's own bits are kept, so nothing becomes unusable to them.
 *
 * It runs at every start, so it looks only where looseness can be: the data dir's own entries, and
 * the inside of a folder that was itself open to others (left by an older version, or by hand).
 * A private folder holds only what the daemon created private (blobs are written 0600 in 0700
 * folders), so the blob store's many files are not listed again on every start (about 0.4 s per
 * 100,000 blobs).
 */
export function tightenDataDir(dataDirPath: string): Tightened {
  // The data dir itself may be a symlink the owner made (to another disk): that one is followed.
  const dataDir = realpathSync(dataDirPath);
  const result: Tightened = { changed: [], failed: [] };
  const visit = (path: string): void => {
    let st;
    try {
      st = lstatSync(path);
    } catch (err) {
      // Removed meanwhile (a socket of a daemon that just stopped): nothing left to protect.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (st.isSymbolicLink()) return;
    const name = relative(dataDir, path) || '.';
    if ((st.mode & 0o077) !== 0) {
      try {
        chmodSync(path, st.mode & 0o700);
        result.changed.push(name);
      } catch (err) {
        result.failed.push({ path: name, reason: (err as NodeJS.ErrnoException).code ?? String(err) });
      }
    }
    if (!st.isDirectory() || (path !== dataDir && (st.mode & 0o077) === 0)) return;
    let entries: string[];
    try {
      entries = readdirSync(path);
    } catch (err) {
      result.failed.push({ path: name, reason: (err as NodeJS.ErrnoException).code ?? String(err) });
      return;
    }
    for (const entry of entries) visit(join(path, entry));
  };
  visit(dataDir);
  return result;
}
