// A blob engine in memory: the second engine the conformance suite (test/conformance/blob-store.ts)
// runs against, so that the suite and the domain depend on the interface and not on files. It
// keeps nothing across restarts: for tests and ephemeral use, not for a data dir.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { TroveError } from '../../contract/errors.js';
import type { BlobStore, PendingBlob, ReceiveOptions } from '../blob-store.js';

export class MemoryBlobStore implements BlobStore {
  private readonly stored = new Map<string, Buffer>();
  private readonly pending = new Map<PendingBlob, Buffer>();
  /** Bytes held (stored and pending) and being received. */
  private used = 0;

  /**
   * Bytes it may hold, stored, pending and being received together; a write past it fails as on a
   * full disk (ENOSPC) and keeps nothing of itself.
   */
  capacityBytes = Number.POSITIVE_INFINITY;

  /** Bytes held now, stored and pending. */
  get usedBytes(): number {
    return this.used;
  }

  async receive(body: Readable, { maxBytes, onChunk }: ReceiveOptions): Promise<PendingBlob> {
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let bytes = 0;
    try {
      for await (const chunk of body) {
        const buf = chunk as Buffer;
        if (bytes + buf.length > maxBytes) throw new TroveError('request_too_large', `The upload is larger than ${maxBytes} bytes.`, { limit_bytes: maxBytes });
        if (this.used + buf.length > this.capacityBytes) throw noSpace();
        bytes += buf.length;
        this.used += buf.length;
        hash.update(buf);
        onChunk?.(buf);
        // A copy: the body's chunks may be views of buffers its producer reuses.
        chunks.push(Buffer.from(buf));
      }
    } catch (err) {
      this.used -= bytes;
      throw err;
    }
    const blob: PendingBlob = Object.freeze({ sha256: hash.digest('hex'), bytes });
    this.pending.set(blob, Buffer.concat(chunks, bytes));
    return blob;
  }

  async commit(blob: PendingBlob): Promise<void> {
    const bytes = this.pending.get(blob);
    if (bytes === undefined) throw new Error('This blob is not pending in this store: it was committed or discarded already, or received by another one.');
    this.pending.delete(blob);
    if (this.stored.has(blob.sha256)) this.used -= bytes.length;
    else this.stored.set(blob.sha256, bytes);
  }

  async discard(blob: PendingBlob): Promise<void> {
    const bytes = this.pending.get(blob);
    if (bytes === undefined) return;
    this.pending.delete(blob);
    this.used -= bytes.length;
  }

  async read(sha256: string, { maxBytes }: { maxBytes: number }): Promise<Buffer> {
    const bytes = this.get(sha256);
    if (bytes.length > maxBytes) throw new TroveError('request_too_large', `The blob is ${bytes.length} bytes; the limit is ${maxBytes}.`, { limit_bytes: maxBytes, bytes: bytes.length });
    // A copy: a caller that writes into what it read must not change the stored blob.
    return Buffer.from(bytes);
  }

  async open(sha256: string): Promise<{ bytes: number; stream: Readable }> {
    const bytes = this.get(sha256);
    return { bytes: bytes.length, stream: Readable.from([Buffer.from(bytes)]) };
  }

  async exists(sha256: string): Promise<boolean> {
    return this.stored.has(sha256);
  }

  async remove(sha256: string): Promise<void> {
    const bytes = this.stored.get(sha256);
    if (bytes === undefined) return;
    this.stored.delete(sha256);
    this.used -= bytes.length;
  }

  async removeUnfinishedUploads(): Promise<number> {
    const count = this.pending.size;
    for (const bytes of this.pending.values()) this.used -= bytes.length;
    this.pending.clear();
    return count;
  }

  private get(sha256: string): Buffer {
    const bytes = this.stored.get(sha256);
    if (bytes === undefined) throw new TroveError('not_found', `No blob is stored under ${sha256}.`, { sha256 });
    return bytes;
  }
}

function noSpace(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device (the memory blob store is at its capacity)'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}
