// The shape of an API key's secret and the non-secret prefix it is filed under (decisions.md §1:
// `trove_<prefix>_<random>`), shared by the daemon, which looks keys up by it, and the CLI, which
// names a refused key by it: a key the daemon files under a hash must not be shown under a prefix
// it never looks at.
import { createHash } from 'node:crypto';

export const KEY_SECRET_SHAPE = /^trove_([a-z0-9]{8,32})_[A-Za-z0-9_-]{20,}$/;

/**
 * The prefix of a secret of the minted shape; any other string (a TROVE_CLUSTER_KEY of one's own, a
 * mistyped key) is filed under 'h' + 11 hex digits of its SHA-256. `sha256` may be passed when the
 * caller has it already.
 */
export function keyPrefixOf(secret: string, sha256?: Buffer): string {
  const minted = KEY_SECRET_SHAPE.exec(secret);
  if (minted?.[1]) return minted[1];
  return 'h' + (sha256 ?? createHash('sha256').update(secret, 'utf8').digest()).toString('hex', 0, 6).slice(0, 11);
}
