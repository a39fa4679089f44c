// A full disk for the blob store's file writes, through Node's own fs bindings
// (module.syncBuiltinESMExports), so the code under test meets ENOSPC where a real disk would give it.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

export function enospc(syscall: string, path?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}${path ? ` '${path}'` : ''}`), { errno: -28, code: 'ENOSPC', syscall, ...(path ? { path } : {}) });
}

/**
 * Until the returned function is called, files written with fs.createWriteStream take `room` bytes
 * more and then fail with ENOSPC (the bytes before stay in the file, as on a real disk).
 */
export function diskFullAfter(room: number): () => void {
  const original = fs.createWriteStream;
  fs.createWriteStream = ((path: fs.PathLike, options?: Parameters<typeof fs.createWriteStream>[1]) => {
    let left = room;
    const write = (fd: number, buffer: Buffer, offset: number, length: number, position: number | null, callback: (err: Error | null, written?: number, buffer?: Buffer) => void) => {
      if (left <= 0) return process.nextTick(callback, enospc('write'));
      fs.write(fd, buffer, offset, Math.min(length, left), position, (err, written) => {
        if (!err) left -= written;
        callback(err, written, buffer);
      });
    };
    const opts = typeof options === 'string' ? { encoding: options } : (options ?? {});
    return original(path, { ...opts, fs: { open: fs.open, close: fs.close, write } } as never);
  }) as typeof fs.createWriteStream;
  syncBuiltinESMExports();
  return () => {
    fs.createWriteStream = original;
    syncBuiltinESMExports();
  };
}

/** Until the returned function is called, making a folder under `under` fails with ENOSPC. */
export function noRoomForFoldersUnder(under: string): () => void {
  const original = fs.mkdirSync;
  fs.mkdirSync = ((path: fs.PathLike, options?: fs.MakeDirectoryOptions) => {
    if (String(path).startsWith(under)) throw enospc('mkdir', String(path));
    return original(path, options);
  }) as typeof fs.mkdirSync;
  syncBuiltinESMExports();
  return () => {
    fs.mkdirSync = original;
    syncBuiltinESMExports();
  };
}
