// Where the operator socket lives, decided the same way by the daemon and by its clients.
// Normally `<data-dir>/operator.sock`: the data dir is the user's own (0700), so nobody else reaches
// it. A Unix socket path has a small byte limit (sun_path), so a data dir with a long path gets a
// socket in a private folder of the temp dir instead, and `<data-dir>/operator.sock.path` names it.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SOCKET_FILE = 'operator.sock';
export const SOCKET_POINTER_FILE = 'operator.sock.path';

/** sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, the terminating NUL included. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

export const preferredSocketPath = (dataDir: string): string => join(dataDir, SOCKET_FILE);
export const socketPointerFile = (dataDir: string): string => join(dataDir, SOCKET_POINTER_FILE);

const fits = (path: string): boolean => Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;

function privateTempFolder(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return join(tmpdir(), `trove-operator-${uid}`);
}

/** The socket of a data dir whose own path is too long: one per data dir, in the private temp folder. */
export function fallbackSocketPath(dataDir: string): string {
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join(privateTempFolder(), `${digest}.sock`);
}

/**
 * The temp folder is shared with every user of the machine: another user could have made a folder
 * of that name first, to receive our connections. It must be ours, a real folder, and closed to others.
 */
export function ensurePrivateTempFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const st = lstatSync(folder);
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new Error(
      `The folder ${folder} (for the operator socket of a data dir whose path is too long for a socket) is not a private folder of this user: remove it, or use a data dir with a shorter path.`,
    );
  }
}

/** Where the daemon listens: the data dir when its path fits, otherwise the private temp folder. */
export function serverSocketPath(dataDir: string): { path: string; fallback: boolean } {
  const preferred = preferredSocketPath(dataDir);
  if (fits(preferred)) return { path: preferred, fallback: false };
  const fallback = fallbackSocketPath(dataDir);
  if (!fits(fallback)) {
    throw new Error(`Neither ${preferred} nor ${fallback} fits in a Unix socket path (${MAX_SOCKET_PATH_BYTES} bytes): use a data dir or a TMPDIR with a shorter path.`);
  }
  return { path: fallback, fallback: true };
}

/** Where a client connects: the same rule, reading the pointer file the daemon wrote when it fell back. */
export function clientSocketPath(dataDir: string): string {
  const preferred = preferredSocketPath(dataDir);
  if (fits(preferred)) return preferred;
  try {
    const pointed = readFileSync(socketPointerFile(dataDir), 'utf8').trim();
    if (pointed) return pointed;
  } catch {
    // No pointer: no daemon has served this data dir yet; the computed path is where one would be.
  }
  return fallbackSocketPath(dataDir);
}
