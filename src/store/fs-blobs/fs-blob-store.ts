// The default blob engine: files in the data dir, <blobs>/<aa>/<sha256>, received into <blobs>/tmp
// first. Uploads are documents: folders are made 0700 and files 0600, readable by the data dir's
// owner only.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { TroveError } from '../../contract/errors.js';
import type { BlobStore, PendingBlob, ReceiveOptions } from '../blob-store.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Opens (creating it, private) the blob folder of a data dir. Only one daemon may hold it: the data dir's lock says which. */
export function openFsBlobStore(blobsDir: string): FsBlobStore {
  mkdirSync(blobsDir, { recursive: true, mode: 0o700 });
  return new FsBlobStore(blobsDir);
}

export class FsBlobStore implements BlobStore {
  /** Where each pending blob received by this store waits, by its handle. */
  private readonly pending = new WeakMap<PendingBlob, string>();

  constructor(readonly dir: string) {}

  /** A stored blob's file; null for a name that is no sha256 (it could name a path outside the store). */
  pathOf(sha256: string): string | null {
    return SHA256_HEX.test(sha256) ? join(this.dir, sha256.slice(0, 2), sha256) : null;
  }

  private get uploadsInProgress(): string {
    return join(this.dir, 'tmp');
  }

  async receive(body: Readable, { maxBytes, onChunk }: ReceiveOptions): Promise<PendingBlob> {
    const tmpDir = this.uploadsInProgress;
    mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
    const tempPath = join(tmpDir, randomBytes(12).toString('hex'));
    const hash = createHash('sha256');
    const out = createWriteStream(tempPath, { mode: 0o600 });
    // Every error of the file stream is caught here and thrown where the loop can see it: destroying
    // the stream below with a write still in flight (a client that gave up mid-upload) raises
    // ERR_STREAM_DESTROYED on its 'error' event, and a full disk raises ENOSPC there; unheard, either
    // is an uncaught exception that ends the daemon.
    let failure: Error | null = null;
    out.on('error', (err) => (failure ??= err));
    let bytes = 0;
    try {
      for await (const chunk of body) {
        const buf = chunk as Buffer;
        bytes += buf.length;
        if (bytes > maxBytes) throw new TroveError('request_too_large', `The upload is larger than ${maxBytes} bytes.`, { limit_bytes: maxBytes });
        hash.update(buf);
        onChunk?.(buf);
        if (!out.write(buf)) await drainedOrClosed(out);
        if (failure) throw failure;
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    } catch (err) {
      // The stream opens its file asynchronously: removing it before the stream has closed could run
      // before the open, which would then leave an empty temporary file behind.
      const closed = out.closed ? Promise.resolve() : new Promise<void>((resolve) => out.once('close', () => resolve()));
      out.destroy();
      await closed;
      rmSync(tempPath, { force: true });
      throw err;
    }
    const blob: PendingBlob = Object.freeze({ sha256: hash.digest('hex'), bytes });
    this.pending.set(blob, tempPath);
    return blob;
  }

  /**
   * Moves the received file under its hash (or drops it, if those bytes are stored already). On
   * failure (a full disk can refuse the folder) the temporary file is removed too. Synchronous
   * inside: a commit runs in the write change that records its row, and calls that settle in
   * microtasks let that change end with the turn's group commit instead of holding the write token
   * for a round trip through the thread pool; a rename and a stat are a few microseconds.
   */
  async commit(blob: PendingBlob): Promise<void> {
    const tempPath = this.takePending(blob);
    const target = this.pathOf(blob.sha256)!;
    try {
      if (existsSync(target)) {
        rmSync(tempPath, { force: true });
        return;
      }
      mkdirSync(join(this.dir, blob.sha256.slice(0, 2)), { recursive: true, mode: 0o700 });
      renameSync(tempPath, target);
    } catch (err) {
      rmSync(tempPath, { force: true });
      throw err;
    }
  }

  async discard(blob: PendingBlob): Promise<void> {
    const tempPath = this.pending.get(blob);
    if (tempPath === undefined) return;
    this.pending.delete(blob);
    await rm(tempPath, { force: true });
  }

  async read(sha256: string, { maxBytes }: { maxBytes: number }): Promise<Buffer> {
    const handle = await this.openFile(sha256);
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw new TroveError('request_too_large', `The blob is ${size} bytes; the limit is ${maxBytes}.`, { limit_bytes: maxBytes, bytes: size });
      // One buffer of the size the file has, filled by as few reads as the kernel allows:
      // FileHandle.readFile reads in 512 KiB steps and copies them together at the end.
      const buf = Buffer.allocUnsafe(size);
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await handle.read(buf, filled, size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled === size ? buf : buf.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  async open(sha256: string): Promise<{ bytes: number; stream: Readable }> {
    const handle = await this.openFile(sha256);
    try {
      const { size } = await handle.stat();
      return { bytes: size, stream: handle.createReadStream() };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async exists(sha256: string): Promise<boolean> {
    const path = this.pathOf(sha256);
    if (path === null) return false;
    try {
      return (await stat(path)).isFile();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    const path = this.pathOf(sha256);
    if (path !== null) await rm(path, { force: true });
  }

  async removeUnfinishedUploads(): Promise<number> {
    const dir = this.uploadsInProgress;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    for (const name of names) await rm(join(dir, name), { recursive: true, force: true });
    return names.length;
  }

  private takePending(blob: PendingBlob): string {
    const tempPath = this.pending.get(blob);
    if (tempPath === undefined) throw new Error('This blob is not pending in this store: it was committed or discarded already, or received by another one.');
    this.pending.delete(blob);
    return tempPath;
  }

  private async openFile(sha256: string) {
    const path = this.pathOf(sha256);
    try {
      if (path !== null) return await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    throw new TroveError('not_found', `No blob is stored under ${sha256}.`, { sha256 });
  }
}

/** Waits for a write stream to take more, or to have closed (after an error): never forever. */
function drainedOrClosed(out: NodeJS.WritableStream & { closed: boolean }): Promise<void> {
  if (out.closed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
