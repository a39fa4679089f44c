// The directories file:// sources may read (decisions.md §3), changeable while the daemon runs.
// Start-up roots (--allow-file-root, TROVE_FILE_ROOTS) hold for that run; roots the operator grants
// are kept in the database and hold until removed. The live list is the one array the HTTP side
// checks (Services.fileRoots): it is edited in place, and the indexing worker is sent the new list.
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { TroveError } from '../contract/errors.js';
import { nowIso } from '../contract/ids.js';
import type { GrantedRoot, Store, StoreReads } from '../store/interface.js';

export interface RootEntry {
  path: string;
  source: 'startup' | 'operator';
  granted_at: string | null;
  /** False when the directory is gone (a granted root stays listed until removed). */
  exists: boolean;
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

export class FileRoots {
  private readonly startup: string[];

  /**
   * `live` is the array Services.fileRoots (and the worker's start-up data) holds; `onChange` gets
   * the new list after every change, to pass on to the indexing worker.
   */
  static async open(store: Store, startupRoots: readonly string[], live: string[], onChange: (roots: string[]) => void): Promise<FileRoots> {
    // A grant that is also a start-up root this run stays stored: it holds when the flag is gone.
    return new FileRoots(store, startupRoots, await store.operator.grantedFileRoots(), live, onChange);
  }

  private constructor(
    private readonly store: Store,
    startupRoots: readonly string[],
    private granted: GrantedRoot[],
    private readonly live: string[],
    private readonly onChange: (roots: string[]) => void,
  ) {
    this.startup = [...new Set(startupRoots.map((r) => resolve(r)))];
    this.sync(false);
  }

  /** The roots a daemon opening this store starts with: the flags' and the granted ones. */
  static async initialRoots(store: StoreReads, startupRoots: readonly string[]): Promise<string[]> {
    const startup = startupRoots.map((r) => resolve(r));
    return [...new Set([...startup, ...(await store.operator.grantedFileRoots()).map((r) => r.path)])];
  }

  list(): RootEntry[] {
    return [
      ...this.startup.map((path) => ({ path, source: 'startup' as const, granted_at: null, exists: isDirectory(path) })),
      ...this.granted
        .filter((r) => !this.startup.includes(r.path))
        .map((r) => ({ path: r.path, source: 'operator' as const, granted_at: r.granted_at, exists: isDirectory(r.path) })),
    ];
  }

  async add(dir: string): Promise<{ root: RootEntry; added: boolean; roots: RootEntry[] }> {
    if (!isAbsolute(dir)) throw new TroveError('invalid_request', `A file root must be an absolute path, got '${dir}'.`, { path: dir });
    const path = resolve(dir);
    let kind: string;
    try {
      const st = statSync(path);
      kind = st.isDirectory() ? 'directory' : 'not a directory';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new TroveError('invalid_request', code === 'ENOENT' ? `No directory ${path}.` : `Cannot read ${path} (${code ?? String(err)}).`, { path });
    }
    if (kind !== 'directory') throw new TroveError('invalid_request', `${path} is not a directory: a file root must be one.`, { path });
    const known = this.list().find((r) => r.path === path);
    if (known) return { root: known, added: false, roots: this.list() };
    // The list is read and replaced inside the change, so two grants at once (or another daemon's) both stay.
    this.granted = await this.store.write(async (tx) => {
      const next = [...(await tx.operator.grantedFileRoots()).filter((r) => r.path !== path), { path, granted_at: nowIso() }];
      await tx.operator.saveGrantedFileRoots(next);
      return next;
    });
    this.sync(true);
    return { root: this.list().find((r) => r.path === path)!, added: true, roots: this.list() };
  }

  async remove(dir: string): Promise<{ removed: string; roots: RootEntry[] }> {
    const path = isAbsolute(dir) ? resolve(dir) : dir;
    if (this.startup.includes(path)) {
      throw new TroveError('invalid_request', `${path} was allowed at start-up (--allow-file-root or TROVE_FILE_ROOTS); it stays allowed until the daemon restarts without it.`, { path, source: 'startup' });
    }
    if (!this.granted.some((r) => r.path === path)) {
      throw new TroveError('not_found', `${path} is not an allowed file root. Allowed: ${this.list().map((r) => r.path).join(', ') || 'none'}.`, { path });
    }
    this.granted = await this.store.write(async (tx) => {
      const next = (await tx.operator.grantedFileRoots()).filter((r) => r.path !== path);
      await tx.operator.saveGrantedFileRoots(next);
      return next;
    });
    this.sync(true);
    return { removed: path, roots: this.list() };
  }

  private sync(notify: boolean): void {
    const roots = [...new Set([...this.startup, ...this.granted.map((r) => r.path)])];
    this.live.splice(0, this.live.length, ...roots);
    if (notify) this.onChange([...roots]);
  }
}
