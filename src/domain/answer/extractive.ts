// The offline answer generator: no language model, only sentences lifted verbatim from the
// sources and chosen by maximal marginal relevance (MMR). Every sentence carries a marker to the
// source it was taken from, so the answer never says anything the collection does not.
//
// Scoring, per candidate sentence s and question term set Q (light stemming, stopwords removed):
//   coverage(s) = Σ_{t∈Q∩s} w(t)·idf(t) / Σ_{t∈Q} w(t)·idf(t)          (idf over the candidates)
//   rel(s)      = min(1, coverage + 0.3·heading/path matches) + 0.05 per question bigram in s (≤ 0.15)
//   score(s)    = rel · shape(s) · (0.85 + 0.15·prior(source))
// where w = 1 for the question's own terms and 0.5 for terms a follow-up borrows from history,
// shape penalises fragments, very long sentences and questions, and prior mixes the source's
// rank (0.6) with its min-max normalised score (0.4). Nothing is relevant when the best
// coverage is below MIN_RELEVANCE (a question whose weightiest words no sentence holds gets no answer).
// Picking: MMR, argmax λ·score/best − (1−λ)·max cosine(s, picked) with λ = 0.7 over TF-IDF
// vectors, among the 300 best; a candidate at ≥ 0.6 similarity to a pick is a near duplicate and
// is dropped; every pick needs coverage ≥ 0.5·best (the first pick's neighbour in its passage
// ≥ 0.35·best, as context for a second sentence); up to 5 (standard) or 8 (ultra, recall)
// sentences and 1,200 / 3,000 characters.
import { detached } from '../detached.js';
import { checkDeadline, followUpQuery, type AnswerSource, type GenerateInput, type GeneratedAnswer, type Generator } from './generator.js';
import { finishAnswer, formatMarker, hasMarkerLikeText } from './markers.js';

export interface ExtractiveOptions {
  /** Most sentences per mode; defaults standard 5, ultra 8, recall 8. */
  maxSentences?: Partial<Record<GenerateInput['mode'], number>>;
  /** Most characters of answer text per mode (markers excluded); defaults 1,200 / 3,000 / 3,000. */
  maxChars?: Partial<Record<GenerateInput['mode'], number>>;
  /** Below this best coverage (0..1) nothing is relevant. Default MIN_RELEVANCE (0.05). */
  minRelevance?: number;
  /** MMR trade-off: 1 is pure relevance, 0 pure novelty. Default 0.7. */
  lambda?: number;
  /** Cosine similarity at which a sentence counts as a near duplicate of a picked one. Default 0.6. */
  duplicateSimilarity?: number;
  /** The answer when nothing is relevant. */
  nothingFound?: string;
}

/**
 * Below this best coverage nothing is relevant. Whether the sources support the question at all is
 * decided before the generator runs, on the collection's statistics (support.ts); this floor only
 * keeps a sentence that shares no informative word from being quoted. At 0.2 (measured over the
 * candidates' own statistics) it refused 55% of CISI's answerable questions, whose several
 * sentences each cover a part (answer_has_markers 0.45, cites relevant 0.36); at 0.05 0.96 and 0.71.
 */
export const MIN_RELEVANCE = 0.05;

export const NOTHING_FOUND = 'The collection holds nothing that answers this question.';

const DEFAULT_MAX_SENTENCES: Record<GenerateInput['mode'], number> = { standard: 5, ultra: 8, recall: 8 };
const DEFAULT_MAX_CHARS: Record<GenerateInput['mode'], number> = { standard: 1200, ultra: 3000, recall: 3000 };
/** Candidate sentences considered at most (the best-ranked sources' first). */
const MAX_CANDIDATES = 6000;
/** Segments longer than this are split further (at ; and :, then into runs of words). */
const LONG_SEGMENT = 400;
/** A segment that ends as a sentence ends is kept whole up to this length. */
const LONG_SENTENCE = 700;
/** Candidates (best scores first) that MMR chooses among. */
const MMR_POOL = 300;
const WINDOW_WORDS = 40;

// ---------------------------------------------------------------------------------------------
// Terms

const STOPWORDS = new Set(
  `a about above after again against all almost also am among an and any are as at be because been before being below between both but by
  can cannot could did do does doing done down during each either else even ever every few for from further get gets getting got had has have
  having he her here hers herself him himself his how however i if in into is it its itself just least less let like ll many may me might more
  most much must my myself neither no nor not now of off often on once one only onto or other others otherwise our ours ourselves out over own
  per perhaps please quite rather re really said same say says shall she should since so some such than that the their theirs them themselves
  then there thereby therefore these they thing things this those though through thus to too toward towards under unless until up upon us
  use used using very via want was way we well were what whatever when whenever where whether which while who whoever whom whose why will with
  within without would yes yet you your yours yourself yourselves explain explains describe tell know give show find makes make made mean means ones
  whats dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt hasnt havent hadnt ive youre theyre s t d m ve`.split(/\s+/),
);

const TOKEN_RE = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*/gu;
/** Scripts written without spaces between words: matched on character bigrams instead. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** A doubled final consonant counts once (except l, s, z), so "purr/purring" and "run/running" meet. */
function undouble(w: string): string {
  return w.length >= 4 && /([b-df-hj-kmnp-rtv-y])\1$/.test(w) ? w.slice(0, -1) : w;
}

/** A light English stemmer: plurals, -ing, -ed and a final e, so "tides/tide/tidal" ≠ but "causes/caused/causing/cause" =. */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w) || !/^[a-z]+$/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length >= 6) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length >= 5) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length >= 4) w = w.slice(0, -1);
  return undouble(w);
}

/** Token → term (null for a stopword); bounded, cleared when full. */
const termCache = new Map<string, string | null>();

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The content terms of a text, stemmed, in order (repeats kept). */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  scanTerms(text, (term) => out.push(term));
  return out;
}

/** Each content term of a text once, with the first word it came from (what the keyword index is asked for). */
export function termWords(text: string): Map<string, string> {
  const out = new Map<string, string>();
  scanTerms(text, (term, word) => {
    if (!out.has(term)) out.set(term, word);
  });
  return out;
}

function scanTerms(text: string, emit: (term: string, word: string) => void): void {
  // NFKC changes no ASCII text, and match() returns the words alone where matchAll built a match
  // object for each: a fifth of splitting a file for the collection model.
  for (const token of (ASCII_ONLY.test(text) ? text : text.normalize('NFKC')).toLowerCase().match(TOKEN_RE) ?? []) {
    const cached = termCache.get(token);
    if (cached !== undefined) {
      if (cached !== null) emit(cached, token);
      continue;
    }
    const raw = token.replace(/['’]s$/, '').replace(/['’]/g, '');
    if (/[^\u0000-\u2e7f]/.test(raw) && UNSPACED.test(raw)) {
      const chars = [...raw];
      if (chars.length === 1) emit(raw, raw);
      for (let i = 0; i + 1 < chars.length; i++) emit(chars[i]! + chars[i + 1]!, chars[i]! + chars[i + 1]!);
      continue;
    }
    const term = STOPWORDS.has(raw) || raw.length === 0 || (raw.length === 1 && !/\p{N}/u.test(raw)) ? null : stem(raw);
    if (termCache.size >= 100_000) termCache.clear();
    termCache.set(detached(token), term === null ? null : detached(term));
    if (term !== null) emit(term, token);
  }
}

/** "How long/much/many/…" asks for a quantity: the adverb is part of the question, not its topic. */
export function questionText(question: string): string {
  return question.replace(/\bhow\s+(?:long|much|many|far|often|old|big|large|small|soon|fast|quickly|well|hot|cold|high|deep)\b/giu, 'how');
}

// ---------------------------------------------------------------------------------------------
// Sentences

const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });
/** Abbreviations that never end a sentence (titles before names, e.g., i.e., ...). */
const ALWAYS_JOIN = /(?:^|[\s(\[])(?:mr|mrs|ms|dr|prof|sr|jr|st|mt|ft|vs|cf|fig|figs|no|nos|vol|vols|pp|approx|ca|incl|dept|est|gen|gov|sen|rep|e\.g|i\.e|a\.k\.a|et al|resp)\.$/i;
/** Abbreviations that end a sentence unless the next one starts in lower case (etc., Inc., a.m.). */
const JOIN_IF_LOWER = /(?:^|[\s(\[])(?:etc|inc|ltd|co|corp|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|p|pg|sec|secs|eq|eqs|ref|refs|ch|chap|tab|a\.m|p\.m|u\.s|u\.k|[a-z](?:\.[a-z])+)\.$/i;
/** A single capital initial: "J. Smith". */
const INITIAL = /(?:^|[\s(\[])\p{Lu}\.$/u;

interface Span {
  start: number;
  end: number;
  /** A run of words cut out of a longer sentence: quotable text, but not a sentence. */
  fragment?: true;
}

/**
 * Where a sentence ends although the next starts in lower case: after a word of four letters or
 * more that is no abbreviation ("…anticancer applications. mTOR interacts…", "…in size. mTOR
 * is…"). Unicode's sentence rules never break before a lower-case letter, so a gene or product
 * name opening a sentence (mTOR, p53, iPhone) glued two or three sentences into one, and the cut
 * into runs of words that follows quoted "vessel restenosis and has potential…" as a sentence.
 * Punctuation standing apart (" . ", as in text lower-cased and tokenised for an old test
 * collection: "…in a slipstream . an experimental study…") ends a sentence whatever precedes it.
 */
const BREAK_BEFORE_LOWER = /(?<=(?:(?:^|[\s(\[])\p{L}{4,}|\s)[.!?]["'”’)\]]*)\s+(?=\p{Ll})/gu;

/** A segment split at BREAK_BEFORE_LOWER; a break after an abbreviation ("approx. ten") is joined again by sentenceSpans's merge. */
function splitBeforeLower(text: string, span: Span): Span[] {
  const out: Span[] = [];
  let from = span.start;
  for (const m of text.slice(span.start, span.end).matchAll(BREAK_BEFORE_LOWER)) {
    const at = span.start + m.index;
    out.push({ start: from, end: at });
    from = at + m[0].length;
  }
  out.push({ start: from, end: span.end });
  return out;
}

/**
 * A line that opens a block of its own in Markdown and plain-text notes, with the marker that is
 * not part of its text: a heading's hashes, a list item's bullet or number, a quote's ">". A table
 * row is a block of one line, kept whole.
 */
const HEADING_LINE = /^[ \t]{0,3}#{1,6}(?:[ \t]+|$)/;
const TABLE_ROW = /^[ \t]*\|/;
const LIST_ITEM = /^[ \t]*(?:[-*+•·‣▪–—>]|\(?\d{1,3}[.)]|\(?[a-z][.)])[ \t]+(?=\S)/u;

interface Block {
  start: number;
  end: number;
}

/**
 * The text's blocks, as its line structure draws them: a blank line ends one; a heading and a
 * table row are blocks of a line; a list item runs from its marker (left out) over the lines that
 * go on from it (indented or not, up to the next item, heading, row or blank line), so a wrapped
 * item is one block where the sentence segmenter cut it at the line break; other lines form
 * paragraphs. Sentences never cross a block's edge.
 */
function blocksOf(text: string): Block[] {
  const out: Block[] = [];
  let open: Block | null = null;
  const close = () => {
    if (open && open.end > open.start) out.push({ start: open.start, end: open.end });
    open = null;
  };
  let at = 0;
  while (at <= text.length) {
    const lineBreak = /\r\n|[\n\r\u2028\u2029]/g;
    lineBreak.lastIndex = at;
    const m = lineBreak.exec(text);
    const lineEnd = m ? m.index : text.length;
    const next = m ? m.index + m[0].length : text.length + 1;
    const line = text.slice(at, lineEnd);
    if (/^\s*$/.test(line)) close();
    else {
      const heading = HEADING_LINE.exec(line);
      const item = heading ? null : LIST_ITEM.exec(line);
      if (heading || TABLE_ROW.test(line)) {
        close();
        out.push({ start: at + (heading ? heading[0].length : 0), end: lineEnd });
      } else if (item) {
        close();
        open = { start: at + item[0].length, end: lineEnd };
      } else if (open) open.end = lineEnd;
      else open = { start: at, end: lineEnd };
    }
    at = next;
  }
  close();
  return out;
}

/** Sentence spans of a text (offsets into it), with abbreviations and initials kept inside. */
export function sentenceSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const block of blocksOf(text)) out.push(...blockSentences(text, block));
  return out;
}

/** The sentences of one block (blocksOf), whose list marker or heading hashes are already left out. */
function blockSentences(text: string, block: Block): Span[] {
  const raw: Span[] = [];
  const body = text.slice(block.start, block.end);
  for (const s of segmenter.segment(body)) {
    raw.push(...splitBeforeLower(text, { start: block.start + s.index, end: block.start + s.index + s.segment.length }));
  }
  const merged: Span[] = [];
  for (const span of raw) {
    const prev = merged.at(-1);
    if (prev) {
      const prevText = text.slice(prev.start, prev.end);
      const body = prevText.replace(/[ \t\u00a0]+$/, '');
      const next = text.slice(span.start, span.end).trimStart();
      // A line break ends a sentence, unless it only wraps one (hardWrapped).
      const join = /[\r\n\u2028\u2029]\s*$/.test(prevText)
        ? hardWrapped(prevText, next)
        : ALWAYS_JOIN.test(body) || (JOIN_IF_LOWER.test(body) && /^[\p{Ll}\p{N}]/u.test(next)) || (INITIAL.test(body) && /^\p{Lu}/u.test(next));
      if (join) {
        prev.end = span.end;
        continue;
      }
    }
    merged.push({ ...span });
  }
  // Long segments (tables, transcripts without punctuation) are cut at ; and :, then into runs of words.
  const out: Span[] = [];
  for (const span of merged) {
    for (const piece of splitLong(text, span)) {
      let { start, end } = piece;
      while (start < end && /\s/.test(text[start]!)) start++;
      while (end > start && /\s/.test(text[end - 1]!)) end--;
      if (end > start) out.push(piece.fragment ? { start, end, fragment: true } : { start, end });
    }
  }
  return out;
}

/**
 * A list item, a heading, a table row, a quote, or a labelled line (a spreadsheet row or JSON value
 * as extraction renders them, "animal: badger; habitat: river", or a transcript's "Speaker: …"):
 * a line that stands on its own.
 */
const LINE_OF_ITS_OWN = /^(?:[-*+•·‣▪–—>|#]|\(?\d{1,3}[.)]\s|\(?[a-z][.)]\s|[\p{L}\p{N}][\p{L}\p{N} _.-]{0,39}:\s)/u;
/** What ends a sentence (or introduces what follows) at the end of a line. */
const LINE_END_PUNCTUATION = /[.!?:;。！？…]["'”’)\]}»]*$/u;

/**
 * True when a single line break inside a paragraph only wraps a sentence (text wrapped at a fixed
 * width, as in many Markdown and plain-text notes): the line before ends without punctuation, the
 * next does not start a list item or heading, and it either goes on in lower case or follows a
 * line long enough to have been wrapped. The sentence segmenter breaks at every line break, and
 * each wrapped half became a fragment of an answer ("…kept for a week, next" / "to the data dir.").
 */
function hardWrapped(prevText: string, next: string): boolean {
  if (/\n[ \t]*\r?\n\s*$/.test(prevText) || /[\u2028\u2029]/.test(prevText)) return false; // a blank line ends a paragraph
  const lastLine = prevText.replace(/\s+$/, '').split('\n').at(-1)!.trim();
  if (lastLine.length === 0 || LINE_END_PUNCTUATION.test(lastLine) || LINE_OF_ITS_OWN.test(lastLine)) return false;
  if (next.length === 0 || LINE_OF_ITS_OWN.test(next)) return false;
  return /^\p{Ll}/u.test(next) || lastLine.length >= 40;
}

/**
 * A piece of a sentence rather than one: it goes on from text before it (it starts in lower case
 * and opens a passage of several sentences: the chunker cuts long paragraphs mid-sentence, where
 * its overlap begins; a short note written in lower case is whole), or it stops mid-clause (a
 * comma, a dash or a word such as "and" or "the" with no punctuation after it).
 */
function isFragment(text: string, opensLongerPassage: boolean): boolean {
  // A first word all in lower case goes on from something; "mTOR", "p53" or "iPhone" can open a sentence.
  if (opensLongerPassage && /^\p{Ll}[\p{Ll}'’-]*(?![\p{L}\p{N}])/u.test(text)) return true;
  if (LINE_END_PUNCTUATION.test(text)) return false;
  if (/[,\-–—(]$/.test(text)) return true;
  const lastWord = /([\p{L}']+)$/u.exec(text)?.[1]?.toLowerCase();
  return lastWord !== undefined && DANGLING.has(lastWord);
}

/** Words a sentence does not end on: articles, prepositions, conjunctions. */
const DANGLING = new Set(
  'a an the and or but nor so if as than that which who whose whom of to in on at by for from with into onto over under between about through while when where because next'.split(' '),
);

/** Sentence punctuation, and closing quotes or brackets after it, at the end of a text. */
const SENTENCE_END = /[.!?…。！？]["'”’)\]}»]*$/u;
/** Sentence punctuation anywhere that ends a sentence (not the point of "3.50"). */
const SENTENCE_PUNCTUATION = /[.!?…。！？]["'”’)\]}»]*(?:\s|$)/u;

function splitLong(text: string, span: Span): Span[] {
  const length = span.end - span.start;
  if (length <= LONG_SEGMENT) return [span];
  const segment = text.slice(span.start, span.end);
  // A long sentence is still one (scientific abstracts hold many of 60 words and more).
  if (length <= LONG_SENTENCE && SENTENCE_END.test(segment.trimEnd())) return [span];
  // Runs of words cut from prose (a sentence too long to quote whole) are fragments of it; a run
  // without sentence punctuation (a transcript, a table flattened to text) has nothing better.
  const prose = SENTENCE_PUNCTUATION.test(segment);
  const parts: Span[] = [];
  let from = span.start;
  const re = /[;:]\s+/g;
  re.lastIndex = span.start;
  for (let m = re.exec(text); m !== null && m.index < span.end; m = re.exec(text)) {
    parts.push({ start: from, end: m.index + 1 });
    from = m.index + m[0].length;
  }
  parts.push({ start: from, end: span.end });
  const out: Span[] = [];
  for (const part of parts) {
    if (part.end - part.start <= LONG_SEGMENT) {
      out.push(part);
      continue;
    }
    const wordRe = /\S+/g;
    wordRe.lastIndex = part.start;
    let count = 0;
    let windowStart = part.start;
    let lastEnd = part.start;
    for (let m = wordRe.exec(text); m !== null && m.index < part.end; m = wordRe.exec(text)) {
      if (count === WINDOW_WORDS) {
        out.push(prose ? { start: windowStart, end: lastEnd, fragment: true } : { start: windowStart, end: lastEnd });
        windowStart = m.index;
        count = 0;
      }
      count++;
      lastEnd = Math.min(m.index + m[0].length, part.end);
    }
    out.push(prose && windowStart > part.start ? { start: windowStart, end: part.end, fragment: true } : { start: windowStart, end: part.end });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Candidates and scoring

interface Candidate {
  /** Whitespace collapsed; verbatim otherwise. */
  text: string;
  source: number;
  passage: number;
  offset: number;
  /** Position among the passage's sentences. */
  index: number;
  terms: string[];
  termSet: Set<string>;
  /** Terms of the passage heading and the source path, for a small context bonus. */
  context: Set<string>;
  first: boolean;
  coverage: number;
  score: number;
  vector: Map<string, number>;
}

function candidatesOf(sources: AnswerSource[]): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (let si = 0; si < sources.length; si++) {
    const src = sources[si]!;
    const pathTerms = termsOf(src.path.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[/_.-]+/g, ' '));
    for (let pi = 0; pi < src.passages.length; pi++) {
      const passage = src.passages[pi]!;
      const context = new Set([...termsOf(passage.heading ?? ''), ...pathTerms]);
      const headingText = (passage.heading ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
      let first = true;
      let index = -1;
      const spans = sentenceSpans(passage.text ?? '');
      // A lower-case opening tells a piece of a sentence only in text that capitalises its sentences.
      const cased = spans.some((sp) => /^\p{Lu}/u.test(passage.text.slice(sp.start, sp.end)));
      for (const span of spans) {
        index++;
        if (out.length >= MAX_CANDIDATES) return out;
        const text = passage.text.slice(span.start, span.end).replace(/\s+/g, ' ');
        if (span.fragment || hasMarkerLikeText(text) || !/[\p{L}\p{N}]/u.test(text) || isFragment(text, cased && index === 0 && spans.length > 1)) continue;
        const key = text.toLowerCase();
        if (key === headingText || seen.has(key)) continue; // the same sentence in a worse source adds nothing
        seen.add(key);
        const terms = termsOf(text);
        if (terms.length === 0) continue;
        out.push({ text, source: si, passage: pi, offset: span.start, index, terms, termSet: new Set(terms), context, first, coverage: 0, score: 0, vector: new Map() });
        first = false;
      }
    }
  }
  return out;
}

/** 0..1 per source, from its rank (0.6) and its score (0.4), whichever way the scores run. */
function sourcePriors(sources: AnswerSource[]): number[] {
  const scores = sources.map((s) => (Number.isFinite(s.score) ? s.score : 0));
  const min = Math.min(...scores);
  const max = Math.max(...scores);
  // Sources come best first: scores that rise along the list are "lower is better".
  const rising = scores.length > 1 && scores[0]! < scores.at(-1)!;
  return scores.map((s, i) => {
    const norm = max > min ? (s - min) / (max - min) : 1;
    const byScore = rising ? 1 - norm : norm;
    const byRank = 1 / Math.sqrt(1 + i);
    return 0.6 * byRank + 0.4 * byScore;
  });
}

function shapeFactor(c: Candidate): number {
  const words = c.text.split(' ').length;
  let f = 1;
  if (words < 5) f *= 0.7;
  else if (words > 45) f *= Math.max(0.5, 45 / words);
  if (/\?["'”’)]*$/.test(c.text)) f *= 0.5; // a question in the text is not its answer
  if (c.first) f *= 1.05;
  return f;
}

function cosine(a: Map<string, number>, b: Map<string, number>): number {
  let dot = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const [t, v] of small) {
    const w = large.get(t);
    if (w !== undefined) dot += v * w;
  }
  return dot;
}

// ---------------------------------------------------------------------------------------------
// The steps of one answer

/** Question terms weigh 1; terms a follow-up borrows from earlier turns weigh 0.5 (1 if the question has none of its own). */
function questionWeights(input: GenerateInput): { weights: Map<string, number>; questionTerms: string[] } {
  const weights = new Map<string, number>();
  const questionTerms = termsOf(questionText(input.question));
  for (const t of questionTerms) weights.set(t, 1);
  const expanded = followUpQuery(input.question, input.history);
  if (expanded !== input.question.trim()) {
    const borrowed = weights.size === 0 ? 1 : 0.5;
    for (const t of termsOf(expanded.slice(input.question.trim().length))) if (!weights.has(t)) weights.set(t, borrowed);
  }
  return { weights, questionTerms };
}

/** IDF over the candidate sentences (BM25's smoothing: a term in every sentence tells little), memoised. */
function sentenceIdf(candidates: Candidate[]): (term: string) => number {
  const df = new Map<string, number>();
  for (const c of candidates) for (const t of c.termSet) df.set(t, (df.get(t) ?? 0) + 1);
  const n = candidates.length;
  const cache = new Map<string, number>();
  return (term) => {
    let v = cache.get(term);
    if (v === undefined) {
      const d = df.get(term) ?? 0;
      v = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      cache.set(term, v);
    }
    return v;
  };
}

interface QuestionProfile {
  /** Each question term with its weight times its IDF. */
  weighted: (readonly [string, number])[];
  /** Σ of those; a candidate's coverage is its share of it. */
  total: number;
  /** Adjacent question terms: a sentence repeating them earns a small phrase bonus. */
  bigrams: [string, string][];
  /** 0..1 per source (sourcePriors). */
  priors: number[];
}

/** Sets each candidate's coverage and score (the formula at the top of this file); returns the best coverage. */
function scoreCandidates(candidates: Candidate[], q: QuestionProfile): number {
  let bestCoverage = 0;
  for (const c of candidates) {
    let matched = 0;
    let fromContext = 0;
    for (const [t, v] of q.weighted) {
      if (c.termSet.has(t)) matched += v;
      else if (c.context.has(t)) fromContext += v;
    }
    c.coverage = matched / q.total;
    if (c.coverage === 0) continue;
    let phrase = 0;
    if (q.bigrams.length > 0) {
      for (let i = 0; i + 1 < c.terms.length && phrase < 0.15; i++) {
        if (q.bigrams.some(([a, b]) => a === c.terms[i] && b === c.terms[i + 1])) phrase += 0.05;
      }
    }
    const rel = Math.min(1, c.coverage + (0.3 * fromContext) / q.total) + Math.min(0.15, phrase);
    c.score = rel * shapeFactor(c) * (0.85 + 0.15 * q.priors[c.source]!);
    bestCoverage = Math.max(bestCoverage, c.coverage);
  }
  return bestCoverage;
}

/** TF-IDF vectors (all terms, unit length), for the redundancy side of MMR. */
function setTfIdfVectors(pool: Candidate[], idf: (term: string) => number): void {
  for (const c of pool) {
    const tf = new Map<string, number>();
    for (const t of c.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    let norm = 0;
    for (const [t, f] of tf) {
      const v = (1 + Math.log(f)) * idf(t);
      tf.set(t, v);
      norm += v * v;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [t, v] of tf) tf.set(t, v / norm);
    c.vector = tf;
  }
}

interface PickLimits {
  maxSentences: number;
  maxChars: number;
  lambda: number;
  duplicate: number;
  /** Coverage every pick needs. */
  floor: number;
  /** Coverage the first pick's neighbour in its passage needs, to be a second sentence. */
  neighbourFloor: number;
}

/** Maximal marginal relevance over the pool, within the limits; near duplicates of a pick leave the pool. */
function pickByMmr(candidatePool: Candidate[], limits: PickLimits): Candidate[] {
  let pool = candidatePool;
  const bestScore = Math.max(...pool.map((c) => c.score));
  const picked: Candidate[] = [];
  const maxSim = new Map<Candidate, number>(pool.map((c) => [c, 0]));
  let chars = 0;
  while (picked.length < limits.maxSentences && pool.length > 0) {
    let best: Candidate | undefined;
    let bestMmr = -Infinity;
    for (const c of pool) {
      const mmr = limits.lambda * (c.score / bestScore) - (1 - limits.lambda) * maxSim.get(c)!;
      if (mmr > bestMmr) {
        bestMmr = mmr;
        best = c;
      }
    }
    if (!best) break;
    pool = pool.filter((c) => c !== best);
    const neighbour = picked.length === 1 && picked[0]!.source === best.source && picked[0]!.passage === best.passage && Math.abs(picked[0]!.index - best.index) === 1;
    if (best.coverage < (neighbour ? limits.neighbourFloor : limits.floor)) continue;
    if (picked.length > 0 && chars + best.text.length > limits.maxChars) continue;
    picked.push(best);
    chars += best.text.length + 1;
    pool = pool.filter((c) => {
      const sim = cosine(c.vector, best.vector);
      if (sim >= limits.duplicate) return false;
      if (sim > maxSim.get(c)!) maxSim.set(c, sim);
      return true;
    });
  }
  return picked;
}

/**
 * Readable order: sources in the order of their first pick (most relevant first), each source's
 * passages likewise, and within a passage the order of the text itself.
 */
function readingOrder(picked: Candidate[]): Candidate[] {
  const order = new Map<string, number>();
  picked.forEach((c, i) => {
    if (!order.has(`s${c.source}`)) order.set(`s${c.source}`, i);
    if (!order.has(`p${c.source}:${c.passage}`)) order.set(`p${c.source}:${c.passage}`, i);
  });
  const rankOf = (c: Candidate) => [order.get(`s${c.source}`)!, order.get(`p${c.source}:${c.passage}`)!, c.offset] as const;
  return [...picked].sort((a, b) => {
    const [x, y] = [rankOf(a), rankOf(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
}

// ---------------------------------------------------------------------------------------------
// The generator

export function extractiveGenerator(options: ExtractiveOptions = {}): Generator {
  const minRelevance = options.minRelevance ?? MIN_RELEVANCE;
  const lambda = options.lambda ?? 0.7;
  const duplicate = options.duplicateSimilarity ?? 0.6;
  const nothing = options.nothingFound ?? NOTHING_FOUND;

  function answer(input: GenerateInput): GeneratedAnswer {
    const nothingFound: GeneratedAnswer = { answer: nothing, cited: [], declined: true };
    const { weights, questionTerms } = questionWeights(input);
    if (weights.size === 0) return nothingFound;

    const candidates = candidatesOf(input.sources);
    if (candidates.length === 0) return nothingFound;

    const idf = sentenceIdf(candidates);
    const weighted = [...weights].map(([t, w]) => [t, w * idf(t)] as const);
    let total = 0;
    for (const [, v] of weighted) total += v;
    if (total <= 0) return nothingFound;

    const bigrams: [string, string][] = [];
    for (let i = 0; i + 1 < questionTerms.length; i++) bigrams.push([questionTerms[i]!, questionTerms[i + 1]!]);
    const bestCoverage = scoreCandidates(candidates, { weighted, total, bigrams, priors: sourcePriors(input.sources) });
    if (bestCoverage < minRelevance) return nothingFound;

    // Every pick must cover at least half of what the best sentence covers; to reach two
    // sentences, a neighbour of the first pick in its passage may cover a little less (context).
    const neighbourFloor = Math.max(0.6 * minRelevance, 0.35 * bestCoverage);
    // MMR over the best few hundred: eight picks never reach further down.
    const pool = candidates
      .filter((c) => c.coverage >= neighbourFloor)
      .sort((a, b) => b.score - a.score)
      .slice(0, MMR_POOL);
    setTfIdfVectors(pool, idf);
    const picked = pickByMmr(pool, {
      maxSentences: options.maxSentences?.[input.mode] ?? DEFAULT_MAX_SENTENCES[input.mode],
      maxChars: options.maxChars?.[input.mode] ?? DEFAULT_MAX_CHARS[input.mode],
      lambda,
      duplicate,
      floor: Math.max(0.6 * minRelevance, 0.5 * bestCoverage),
      neighbourFloor,
    });
    if (picked.length === 0) return nothingFound;

    const parts = readingOrder(picked).map((c) => `${c.text} ${formatMarker(input.sources[c.source]!.key)}`);
    return finishAnswer(parts.join(' '), input.sources.map((s) => s.key));
  }

  return {
    provider: 'extractive',
    model: 'mmr-v1',
    async generate(input: GenerateInput): Promise<GeneratedAnswer> {
      checkDeadline(input);
      return answer(input);
    },
  };
}
