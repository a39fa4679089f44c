// FNV-1a, 32 bits: a fast, stable, well-spread hash of a string, for choices that must come out the
// same on every run (the builtin model's hashed words, the collection model's sample, the
// calibration's pseudo-queries). Not for anything an attacker chooses.
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
