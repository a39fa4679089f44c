// Content-addressed storage of uploaded bytes under <data-dir>/blobs/<aa>/<sha256>.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { TroveError } from '../contract/errors.js';

export function blobPath(blobsDir: string, sha256: string): string {
  return join(blobsDir, sha256.slice(0, 2), sha256);
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
  const tmpDir = join(blobsDir, 'tmp');
  mkdirSync(tmpDir, { recursive: true });
  const tempPath = join(tmpDir, randomBytes(12).toString('hex'));
  const hash = createHash('sha256');
  const out = createWriteStream(tempPath, { mode: 0o600 });
  let bytes = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      if (bytes > maxBytes) throw new TroveError('request_too_large', `The upload is larger than ${maxBytes} bytes.`, { limit_bytes: maxBytes });
      hash.update(buf);
      onChunk?.(buf);
      if (!out.write(buf)) await new Promise<void>((resolve) => out.once('drain', resolve));
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

export function commitBlob(blobsDir: string, blob: StoredBlob): void {
  const target = blobPath(blobsDir, blob.sha256);
  if (existsSync(target)) {
    rmSync(blob.tempPath, { force: true });
    return;
  }
  mkdirSync(join(blobsDir, blob.sha256.slice(0, 2)), { recursive: true });
  renameSync(blob.tempPath, target);
}

export function discardBlob(blob: StoredBlob): void {
  rmSync(blob.tempPath, { force: true });
}
