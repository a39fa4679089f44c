// Chinese and Japanese text in the keyword index (issue 16, item 5). FTS5's unicode61 tokenizer
// makes a whole run of Han or kana characters one token, since these scripts put no spaces between
// words: "東京都庁" was one token, so a search for "東京" never found it. So the keyword stage sees
// such a run as its overlapping character bigrams (東京 京都 都庁), the usual treatment of
// unsegmented text (Lucene's CJK analyzer does the same), followed by its single characters, so a
// one-character word (猫) is found too. A query's run becomes the phrase of its bigrams, which
// matches wherever those characters stand together. Text without such characters is unchanged.
//
// Only the keyword index and its queries see this form: passages keep their text as written.

/** Han ideographs (with 々), hiragana, katakana (with the prolonged sound mark ー, which Unicode files under Common). */
const RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc\u3005]+/gu;
const ANY = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * 1 or 2 (a surrogate pair) when a Han or kana character starts at `text[i]` (whose code unit is
 * `code`), else 0: the code-unit test of the same scripts, for loops over text (the chunker counts
 * each such character as a word, as this index sees them, and may break a passage between any two).
 */
export function cjkCharLength(text: string, i: number, code: number): number {
  if (code < 0x3040) return 0; // everything before kana: Latin, Greek, Cyrillic, CJK punctuation, …
  if (code <= 0x30ff || (code >= 0x3400 && code <= 0x4dbf) || (code >= 0x4e00 && code <= 0x9fff) || (code >= 0xf900 && code <= 0xfaff)) return 1;
  // Han ideographs of the supplementary planes (U+20000–U+3FFFF): high surrogates D840–D8BF.
  if (code >= 0xd840 && code <= 0xd8bf) {
    const low = text.charCodeAt(i + 1);
    return low >= 0xdc00 && low <= 0xdfff ? 2 : 0;
  }
  return 0;
}

/** True when the text holds a Han or kana character (the cheap test before any rewriting). */
export function hasCjk(text: string): boolean {
  return ANY.test(text);
}

/** A run's characters (code points: some Han ideographs lie outside the BMP). */
function charsOf(run: string): string[] {
  return Array.from(run);
}

/** The run's bigrams in order, then its characters; a one-character run is itself. */
function indexForm(run: string): string {
  const chars = charsOf(run);
  if (chars.length === 1) return chars[0]!;
  const bigrams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) bigrams.push(chars[i]! + chars[i + 1]!);
  return `${bigrams.join(' ')} ${chars.join(' ')}`;
}

/**
 * The text the keyword index stores for `text`: each Han or kana run replaced by its bigrams and
 * characters, set off by spaces (so "abc東京" indexes "abc" apart from the run, as a query sees it).
 */
export function keywordIndexText(text: string): string {
  if (!hasCjk(text)) return text;
  return text.replace(RUN, (run) => ` ${indexForm(run)} `);
}

/**
 * A query word split where Han or kana meets other letters ("iphone価格" → "iphone", "価格"),
 * as keywordIndexText splits the indexed text.
 */
export function splitCjkRuns(word: string): string[] {
  if (!hasCjk(word)) return [word];
  return word.replace(RUN, (run) => ` ${run} `).trim().split(/\s+/);
}

/**
 * The FTS5 phrase text for a query word: a Han or kana run of two or more characters is the
 * phrase of its bigrams, which must stand together; anything else is the word itself.
 */
export function keywordPhraseText(word: string): string {
  if (!hasCjk(word)) return word;
  const chars = charsOf(word);
  if (chars.length === 1) return word;
  const bigrams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) bigrams.push(chars[i]! + chars[i + 1]!);
  return bigrams.join(' ');
}
