// Checksums a client may declare for a file's bytes (`source.checksum`), as `<algorithm>:<lowercase hex>`.

import { createHash, type Hash } from 'node:crypto';
import CRC32C from 'crc-32/crc32c.js';
import { CHECKSUM_PATTERN } from '../../contract/schemas.js';

export type ChecksumAlgorithm = 'sha256' | 'md5' | 'crc32c';

// The shape is the contract's (retrieval-api.md, File.source.checksum); one definition for both.
export { CHECKSUM_PATTERN };

export interface ParsedChecksum {
  algorithm: ChecksumAlgorithm;
  hex: string;
}

export function parseChecksum(s: string): ParsedChecksum | null {
  if (!CHECKSUM_PATTERN.test(s)) return null;
  const separator = s.indexOf(':');
  return { algorithm: s.slice(0, separator) as ChecksumAlgorithm, hex: s.slice(separator + 1) };
}

/** GCS and gsutil show CRC32C as the big-endian bytes of the unsigned value, i.e. its 8-digit hex. */
function crc32cHex(crc: number): string {
  return (crc >>> 0).toString(16).padStart(8, '0');
}

export function computeChecksum(bytes: Uint8Array, algorithm: ChecksumAlgorithm): string {
  if (algorithm === 'crc32c') return crc32cHex(CRC32C.buf(bytes));
  return createHash(algorithm).update(bytes).digest('hex');
}

/** False for a checksum that does not parse; validate the declared checksum before relying on this. */
export function checksumMatches(bytes: Uint8Array, checksum: string): boolean {
  const parsed = parseChecksum(checksum);
  return parsed !== null && computeChecksum(bytes, parsed.algorithm) === parsed.hex;
}

export interface Checksummer<A extends ChecksumAlgorithm> {
  update(chunk: Uint8Array): void;
  /** Hex digests of everything passed to update; may be called more than once, after which update throws. */
  digest(): Record<A, string>;
}

/** Computes several checksums in one pass over a stream, e.g. an upload body. */
export function createChecksummer<A extends ChecksumAlgorithm>(algorithms: readonly A[]): Checksummer<A> {
  const hashes = new Map<A, Hash>();
  let crc32c: number | undefined;
  for (const algorithm of new Set(algorithms)) {
    if (algorithm === 'crc32c') crc32c = 0;
    else hashes.set(algorithm, createHash(algorithm));
  }
  let result: Record<A, string> | undefined;

  return {
    update(chunk) {
      if (result !== undefined) throw new Error('Checksummer.update called after digest.');
      for (const hash of hashes.values()) hash.update(chunk);
      // crc-32 takes the previous CRC as its seed, so chunked calls equal one call over the whole input.
      if (crc32c !== undefined) crc32c = CRC32C.buf(chunk, crc32c);
    },
    digest() {
      if (result === undefined) {
        const digests: Partial<Record<ChecksumAlgorithm, string>> = {};
        for (const [algorithm, hash] of hashes) digests[algorithm] = hash.digest('hex');
        if (crc32c !== undefined) digests.crc32c = crc32cHex(crc32c);
        result = digests as Record<A, string>;
      }
      return { ...result };
    },
  };
}
