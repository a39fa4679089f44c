// Content-addressed storage of uploaded bytes under <data-dir>/blobs/<aa>/<sha256>. Uploads are
// documents: folders are made 0700 and files 0600, readable by the data dir's owner only.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { TroveError } from '../contract/errors.js';

export function blobPath(blobsDir: string, sha256: string): string {
  return join(blobsDir, sha256.slice(0, 2), sha256);
}

const uploadsInProgress = (blobsDir: string): string => join(blobsDir, 'tmp');

/** Creates the blob store's folder (private, as every folder under it). */
export function ensureBlobsDir(blobsDir: string): void {
  mkdirSync(blobsDir, { recursive: true, mode: 0o700 });
}

/**
 * Removes uploads a crash left half-written; returns how many. Only for start-up, once the data
 * dir's lock is held: then no request of this or another daemon can be writing one.
 */
export function removeUnfinishedUploads(blobsDir: string): number {
  const dir = uploadsInProgress(blobsDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  for (const name of names) rmSync(join(dir, name), { recursive: true, force: true });
  return names.length;
}

export function readBlob(blobsDir: string, sha256: string): Buffer {
  return readFileSync(blobPath(blobsDir, sha256));
}

export interface StoredBlob {
  sha256: string;
  bytes: number;
  /** Digests of other algorithms asked for, e.g. to check a declared md5 or crc32c checksum. */
  tempPath: string;
}

/**
 * Streams a body into a temporary file while hashing it, refusing more than maxBytes. The caller
 * decides whether to keep it (commitBlob) or drop it (discardBlob) after checking what was declared.
 */
export async function receiveBlob(blobsDir: string, body: Readable, maxBytes: number, onChunk?: (chunk: Buffer) => void): Promise<StoredBlob> {
  const tmpDir = uploadsInProgress(blobsDir);
  mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
  const tempPath = join(tmpDir, randomBytes(12).toString('hex'));
  const hash = createHash('sha256');
  const out = createWriteStream(tempPath, { mode: 0o600 });
  // Every error of the file stream is caught here and thrown where the loop can see it. Unheard, one
  // killed the daemon: a client that gave up mid-upload left a write in flight when the stream was
  // destroyed below, and its ERR_STREAM_DESTROYED went to an 'error' event nobody listened to (and a
  // full disk would have done the same).
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
  return { sha256: hash.digest('hex'), bytes, tempPath };
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

/** Moves a received blob under its hash (or drops it, if those bytes are stored already); on failure (a full disk can refuse the folder) the temporary file is removed too. */
export function commitBlob(blobsDir: string, blob: StoredBlob): void {
  const target = blobPath(blobsDir, blob.sha256);
  try {
    if (existsSync(target)) {
      rmSync(blob.tempPath, { force: true });
      return;
    }
    mkdirSync(join(blobsDir, blob.sha256.slice(0, 2)), { recursive: true, mode: 0o700 });
    renameSync(blob.tempPath, target);
  } catch (err) {
    rmSync(blob.tempPath, { force: true });
    throw err;
  }
}

/** Removes a stored blob; the caller has checked that no file version refers to it. */
export function removeBlob(blobsDir: string, sha256: string): void {
  rmSync(blobPath(blobsDir, sha256), { force: true });
}

export function discardBlob(blob: StoredBlob): void {
  rmSync(blob.tempPath, { force: true });
}
