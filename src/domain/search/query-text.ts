// Turning a literal query into an FTS5 expression: the query's words OR'd together, so BM25 ranks
// documents by how many of them (weighted by rarity) they contain, as classic keyword search does.
import { hasCjk, keywordPhraseText, splitCjkRuns } from '../../contract/cjk.js';
import { STOPWORDS } from '../../contract/stopwords.js';


/** The most distinct words a query contributes; longer queries keep their first words. */
export const MAX_QUERY_TERMS = 64;

/**
 * The words of a text as the keyword stage sees them: NFKC, lower case, runs of letters and digits,
 * with a Han or kana run a word of its own where it meets other letters (src/contract/cjk.ts).
 */
export function wordsOf(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return hasCjk(text) ? words.flatMap(splitCjkRuns) : words;
}

export function queryTerms(query: string): string[] {
  const words = wordsOf(query).filter((w) => w.length <= 64);
  const unique = [...new Set(words)];
  const content = unique.filter((w) => !STOPWORDS.has(w));
  return (content.length > 0 ? content : unique).slice(0, MAX_QUERY_TERMS);
}

/** The FTS5 strings the query's words become (OR'd by the keyword stage), or null when it has no searchable word. */
export function buildMatchPhrases(query: string): string[] | null {
  const terms = queryTerms(query);
  if (terms.length === 0) return null;
  // Each term is a quoted FTS5 string, so no query text is ever read as FTS5 syntax. A Han or kana
  // run is the string of its bigrams, which FTS5 reads as a phrase: they must stand together.
  return terms.map((t) => `"${keywordPhraseText(t).replaceAll('"', '""')}"`);
}
