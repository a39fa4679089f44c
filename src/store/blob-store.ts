// The blob store: uploaded bytes, content-addressed by sha256, behind one async interface so an
// engine other than files in the data dir (blobs in database chunks) can stand behind it. Types only:
// the domain holds a BlobStore and never learns where the bytes live. test/conformance/blob-store.ts
// is the contract every engine passes.
//
// Errors every engine gives (TroveErrors from src/contract/errors.ts, so a request gets its envelope):
// - more than a cap, received or read: `request_too_large`, details { limit_bytes } (and { bytes }
//   when reading, the blob's size);
// - no blob stored under a hash: `not_found`, details { sha256 };
// - no room left: the engine's own error, which `isStorageFull` recognises (ENOSPC, EDQUOT,
//   SQLITE_FULL, or one that wraps it as its cause), so the request is answered 503
//   insufficient_storage. A failed write leaves nothing of itself behind.
import type { Readable } from 'node:stream';

/**
 * Bytes received but not yet stored: `commit` stores them under their hash, `discard` drops them.
 * Until one of the two, they are invisible to `read`, `exists` and every other reader.
 */
export interface PendingBlob {
  readonly sha256: string;
  readonly bytes: number;
}

export interface ReceiveOptions {
  /** More bytes than this rejects with `request_too_large` (nothing is kept). */
  maxBytes: number;
  /** Sees every chunk as it is received, e.g. to compute a declared checksum of another algorithm. */
  onChunk?: (chunk: Buffer) => void;
}

export interface BlobStore {
  /**
   * Streams `body` into a pending blob, hashing it as it goes. If the body fails, is over the cap or
   * finds no room, the promise rejects with that error and nothing of the body is kept.
   */
  receive(body: Readable, options: ReceiveOptions): Promise<PendingBlob>;
  /**
   * Stores a pending blob under its hash; if those bytes are stored already, keeps the one copy.
   * Call it inside the write change that records the row referring to the blob, so that the row and
   * the blob are made in one step. On failure the pending blob is gone too (nothing half-written).
   */
  commit(blob: PendingBlob): Promise<void>;
  /** Drops a pending blob (a checksum mismatch, a row that failed); a no-op once committed or discarded. */
  discard(blob: PendingBlob): Promise<void>;
  /** The whole blob, for extractors; one larger than `maxBytes` rejects with `request_too_large` unread. */
  read(sha256: string, options: { maxBytes: number }): Promise<Buffer>;
  /** The blob as a stream, and its size (e.g. for a content-length). */
  open(sha256: string): Promise<{ bytes: number; stream: Readable }>;
  exists(sha256: string): Promise<boolean>;
  /** Removes a stored blob (none stored: no-op); the caller has checked that no row refers to it. */
  remove(sha256: string): Promise<void>;
  /**
   * Removes the pending blobs a crash left behind; resolves with how many. Only at start-up, while
   * the data dir's lock is held: then no request of this or another daemon can be receiving one.
   */
  removeUnfinishedUploads(): Promise<number>;
}
