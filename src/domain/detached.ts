// A string that does not keep a larger one alive. V8 makes a substring of 13 characters or more
// (what match() and slice() return) a view into its source: kept as a cache key, one word held a
// whole passage in memory (found by a review: 100,000 cached words could pin ~280 MB of text).
/** `s` as a string of its own, sharing no memory with the text it was cut from. */
export function detached(s: string): string {
  // Concatenating makes a new two-part string; slicing it flattens that into a fresh copy first.
  return s.length < 13 ? s : (' ' + s).slice(1);
}
