import { randomBytes } from 'node:crypto';

// Prefixed, opaque IDs: creation time then random characters (newId says why); an ID grants nothing,
// and its random part cannot be guessed from another's (DESIGN.md: "Prefix IDs are random").
export const ID_PREFIXES = ['ns', 'col', 'fil', 'job', 'acr', 'key', 'rsr', 'evt', 'ver', 'whk', 'dlv'] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random bytes drawn in blocks: one randomBytes call per ID cost more than the rest of making it. */
let pool = Buffer.alloc(0);
let poolOffset = 0;
function randomBlock(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  poolOffset += n;
  return pool.subarray(poolOffset - n, poolOffset);
}

/** `bytes` random bytes as hex, from the same blocks (request ids: one per request). */
export function randomHex(bytes: number): string {
  return randomBlock(bytes).toString('hex');
}

/**
 * 20 base-36 characters: the creation time in ms (8, fixed width, so IDs sort by time until 2059)
 * then 12 random ones (~62 bits). Random IDs put every new row at a random place in its unique
 * index, so each commit rewrote a page per row; IDs that grow with time append (issue 15). An ID
 * still tells nothing its resource's created_at does not.
 */
export function newId(prefix: IdPrefix): string {
  let out = Date.now().toString(36).padStart(8, '0').slice(-8);
  for (const b of randomBlock(12)) out += ALPHABET[b % 36];
  return `${prefix}_${out}`;
}

const ID_SHAPE = new RegExp(`^(${ID_PREFIXES.join('|')})_[0-9a-z]+$`);

/** Names "cannot match a resource ID format" (retrieval-api.md, Namespace.name). */
export function looksLikeId(value: string): boolean {
  return ID_SHAPE.test(value);
}

export function hasPrefix(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(`${prefix}_`);
}

export function nowIso(): string {
  return new Date().toISOString();
}
