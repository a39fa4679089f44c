import { randomBytes } from 'node:crypto';

// Prefixed, random, opaque IDs (DESIGN.md: "Prefix IDs are random").
export const ID_PREFIXES = ['ns', 'col', 'fil', 'job', 'acr', 'key', 'rsr', 'evt', 'ver', 'whk', 'dlv'] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(20);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % 36];
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
