// Cuts an extracted document into passages that follow its structure: sections, blocks, then sentences.
import { commonJsonPath, jsonPathSteps } from './json-path.js';
import { cjkCharLength } from '../../contract/cjk.js';
import type { Block, ChunkOptions, EvidenceKind, ExtractedDocument, JsonSpan, Passage, SourceLocation } from './types.js';

export { commonJsonPath };

/** Where a passage points besides its text: a page (with a box) or a time span, and its evidence kind. */
interface Place {
  location: SourceLocation | undefined;
  kind: EvidenceKind | undefined;
}

/** A passage before trimming and numbering: a span of the document text. */
interface Draft extends Place {
  start: number;
  end: number;
  heading: string;
  jsonPath: string | undefined;
  /** The JSON values in the span, document offsets (clipped to the passage by toPassages). */
  jsonSpans: JsonSpan[] | undefined;
}

/** Blocks packed so far into the passage being built. */
interface OpenPassage extends Place {
  start: number;
  end: number;
  words: number;
  jsonPath: string | undefined;
  jsonSpans: JsonSpan[] | undefined;
}

/** Cues join into one passage while they span at most this long. */
export const MAX_TRANSCRIPT_PASSAGE_MS = 30_000;

const placeOf = (block: Block): Place => ({ location: block.location, kind: block.evidenceKind });

/**
 * The place of a passage holding both: the same page (boxes joined), or time spans joined. Blocks
 * of different pages or evidence kinds never share a passage, so each passage has one location.
 */
function joinPlaces(a: Place, b: Place): Place | null {
  if (a.kind !== b.kind) return null;
  const x = a.location;
  const y = b.location;
  if (x === undefined || y === undefined) return x === y ? a : null;
  if ('page' in x && 'page' in y) {
    if (x.page !== y.page) return null;
    const bbox = x.bbox && y.bbox && x.bbox.length === 4 && y.bbox.length === 4 ? [Math.min(x.bbox[0]!, y.bbox[0]!), Math.min(x.bbox[1]!, y.bbox[1]!), Math.max(x.bbox[2]!, y.bbox[2]!), Math.max(x.bbox[3]!, y.bbox[3]!)] : null;
    return { kind: a.kind, location: { page: x.page, bbox } };
  }
  if ('start_ms' in x && 'start_ms' in y) {
    const span = { start_ms: Math.min(x.start_ms, y.start_ms), end_ms: Math.max(x.end_ms, y.end_ms) };
    // Evidence should point at a moment one can play, not at minutes of a recording.
    return span.end_ms - span.start_ms <= MAX_TRANSCRIPT_PASSAGE_MS ? { kind: a.kind, location: span } : null;
  }
  return null;
}

/** A run of blocks the chunker prefers to keep in one passage: a text block, or one top-level JSON member. */
interface Unit {
  words: number;
  /** An object or array element of a top-level JSON array (or an NDJSON record): a passage of its own. */
  isRecord: boolean;
}

const SENTENCE_END = /[.!?…。！？]["'”’)\]}»]*$/;

export function chunkDocument(doc: ExtractedDocument, opts: ChunkOptions): Passage[] {
  const limit = Math.max(1, Math.floor(opts.chunkTokens));
  const overlap = Math.min(Math.max(0, Math.floor(opts.chunkOverlap)), limit - 1);
  const { text, blocks } = doc;
  const blockWords = blocks.map((block) => countWords(text, block.charStart, block.charEnd));
  const units = findUnits(blocks, blockWords);

  const drafts: Draft[] = [];
  const trail: { level: number; text: string }[] = [];
  let heading = '';
  let open: OpenPassage | undefined;
  let pendingHeading: { block: Block; level: number; words: number; trail: string } | undefined;
  let previousUnitIsRecord = false;

  const flush = (): void => {
    if (open !== undefined) drafts.push({ start: open.start, end: open.end, heading, jsonPath: open.jsonPath, jsonSpans: open.jsonSpans, location: open.location, kind: open.kind });
    open = undefined;
  };

  // A heading with no body of its own still gets a passage, unless a subsection's trail already carries it.
  const closeBodilessHeading = (nextLevel: number): void => {
    if (pendingHeading !== undefined && nextLevel <= pendingHeading.level) {
      const { block, words, trail: headingTrail } = pendingHeading;
      const pieces =
        words > limit ? splitBlock(text, block, limit, overlap) : [{ start: block.charStart, end: block.charEnd }];
      for (const piece of pieces) drafts.push({ ...piece, heading: headingTrail, jsonPath: undefined, jsonSpans: undefined, ...placeOf(block) });
    }
    pendingHeading = undefined;
  };

  blocks.forEach((block, index) => {
    const words = blockWords[index] ?? 0;

    if (block.type === 'heading') {
      const headingText = collapseWhitespace(text.slice(block.charStart, block.charEnd));
      if (headingText === '') return;
      const level = block.level ?? 1;
      flush();
      closeBodilessHeading(level);
      while (trail.length > 0 && (trail[trail.length - 1]?.level ?? 0) >= level) trail.pop();
      trail.push({ level, text: headingText });
      heading = trail.map((entry) => entry.text).join(' > ');
      pendingHeading = { block, level, words, trail: heading };
      return;
    }
    pendingHeading = undefined;

    const unit = units[index];
    if (unit !== undefined) {
      if (open !== undefined) {
        const fitsWhole = unit.words <= limit;
        if (unit.isRecord || previousUnitIsRecord || (fitsWhole && open.words + unit.words > limit)) flush();
      }
      previousUnitIsRecord = unit.isRecord;
    }

    if (words > limit) {
      flush();
      for (const piece of splitBlock(text, block, limit, overlap)) {
        drafts.push({ start: piece.start, end: piece.end, heading, jsonPath: block.jsonPath, jsonSpans: spansOf(block), ...placeOf(block) });
      }
      return;
    }

    if (open !== undefined && open.words + words > limit) flush();
    const joined = open === undefined ? null : joinPlaces(open, placeOf(block));
    if (joined === null) flush();
    if (open === undefined) {
      open = { start: block.charStart, end: block.charEnd, words, jsonPath: block.jsonPath, jsonSpans: spansOf(block), ...placeOf(block) };
    } else {
      open.end = block.charEnd;
      open.words += words;
      open.location = joined!.location;
      // A passage of several JSON values is located at their nearest common ancestor.
      if (open.jsonPath !== undefined && block.jsonPath !== undefined) open.jsonPath = commonJsonPath(open.jsonPath, block.jsonPath);
      // ...and remembers where each value lies, for evidence that points at the one that matched.
      if (open.jsonSpans !== undefined && block.jsonPath !== undefined) open.jsonSpans.push([block.charStart, block.charEnd, block.jsonPath]);
    }
  });
  flush();
  closeBodilessHeading(0);

  return toPassages(text, drafts);
}

function toPassages(text: string, drafts: readonly Draft[]): Passage[] {
  const passages: Passage[] = [];
  for (const draft of drafts) {
    let start = Math.max(0, draft.start);
    let end = Math.min(text.length, draft.end);
    while (start < end && isWhitespace(text.charCodeAt(start))) start++;
    while (end > start && isWhitespace(text.charCodeAt(end - 1))) end--;
    if (start === end) continue;
    const isJson = draft.jsonPath !== undefined;
    const passage: Passage = {
      ordinal: passages.length,
      evidenceKind: draft.kind ?? (isJson ? 'json_path' : 'text'),
      heading: draft.heading,
      text: text.slice(start, end),
      charStart: start,
      charEnd: end,
      location: isJson ? { json_path: draft.jsonPath! } : (draft.location ?? { char_start: start, char_end: end }),
    };
    if (isJson && draft.jsonSpans !== undefined) {
      // Offsets into the passage text; a split value keeps the part of it this passage holds.
      passage.jsonSpans = draft.jsonSpans
        .map(([from, to, path]): JsonSpan => [Math.max(from, start) - start, Math.min(to, end) - start, path])
        .filter(([from, to]) => from < to);
    }
    passages.push(passage);
  }
  return passages;
}

/**
 * Marks where each unit starts (the entry is undefined for blocks inside a unit). JSON blocks are grouped by
 * their top-level member so a record stays whole when it fits; other blocks are units of their own.
 */
function findUnits(blocks: readonly Block[], blockWords: readonly number[]): (Unit | undefined)[] {
  const units: (Unit | undefined)[] = [];
  let current: Unit | undefined;
  let currentKey: string | undefined;
  blocks.forEach((block, index) => {
    const words = blockWords[index] ?? 0;
    const key = block.type === 'json' && block.jsonPath !== undefined ? topLevelMember(block.jsonPath) : undefined;
    if (key !== undefined && key === currentKey && current !== undefined) {
      current.words += words;
      units.push(undefined);
      return;
    }
    // Scalar array elements (`$[4]` itself) are packed together; records with members get their own passage.
    const isRecord = key !== undefined && /^\[\d+\]$/.test(key) && block.jsonPath !== `$${key}`;
    current = { words, isRecord };
    currentKey = key;
    units.push(current);
  });
  return units;
}

/** The first step of a JSON path after `$`: `[3]`, `.name` or `['a key']`; '' for the root itself. */
function topLevelMember(jsonPath: string): string {
  return jsonPathSteps(jsonPath)[0] ?? '';
}

const spansOf = (block: Block): JsonSpan[] | undefined => (block.jsonPath === undefined ? undefined : [[block.charStart, block.charEnd, block.jsonPath]]);

/**
 * Splits one block longer than `limit` words into pieces of at most `limit` words, each ending at a sentence
 * end where one lies in the second half of the window (else at a line break, else after exactly `limit`
 * words); each piece after the first starts `overlap` words before the previous one ended.
 */
function splitBlock(text: string, block: Block, limit: number, overlap: number): { start: number; end: number }[] {
  const wordStarts: number[] = [];
  const wordEnds: number[] = [];
  scanWords(text, block.charStart, block.charEnd, (from, to) => {
    wordStarts.push(from);
    wordEnds.push(to);
  });

  const pieces: { start: number; end: number }[] = [];
  const count = wordStarts.length;
  const minPiece = Math.max(Math.ceil(limit / 2), overlap + 1);
  let first = 0;
  while (first < count) {
    let stop = Math.min(first + limit, count);
    if (stop < count) stop = bestBreak(text, wordStarts, wordEnds, first + Math.min(minPiece, limit), stop);
    pieces.push({ start: wordStarts[first] ?? block.charStart, end: wordEnds[stop - 1] ?? block.charEnd });
    if (stop >= count) break;
    first = Math.max(stop - overlap, first + 1);
  }
  return pieces;
}

/** The best exclusive end word index in [lowest, highest]: after a sentence end, else a line break, else `highest`. */
function bestBreak(text: string, wordStarts: readonly number[], wordEnds: readonly number[], lowest: number, highest: number): number {
  let lineBreak = -1;
  for (let stop = highest; stop >= lowest; stop--) {
    const lastWordEnd = wordEnds[stop - 1] ?? 0;
    const lastWord = text.slice(wordStarts[stop - 1] ?? 0, lastWordEnd);
    if (SENTENCE_END.test(lastWord)) return stop;
    if (lineBreak === -1 && text.slice(lastWordEnd, wordStarts[stop] ?? lastWordEnd).includes('\n')) lineBreak = stop;
  }
  return lineBreak === -1 ? highest : lineBreak;
}

function countWords(text: string, start: number, end: number): number {
  return scanWords(text, start, end);
}

/**
 * The words of text[start, end): runs of non-space characters, except that each Han or kana
 * character is a word of its own (Chinese and Japanese put no spaces between words; see
 * cjkCharLength). Reports each word's span to `each` when given; returns how many there are.
 */
function scanWords(text: string, start: number, end: number, each?: (from: number, to: number) => void): number {
  let words = 0;
  let wordStart = -1;
  const close = (at: number) => {
    if (wordStart < 0) return;
    words++;
    each?.(wordStart, at);
    wordStart = -1;
  };
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    const ideograph = cjkCharLength(text, i, code);
    if (ideograph > 0) {
      close(i);
      words++;
      each?.(i, i + ideograph);
      i += ideograph - 1;
    } else if (isWhitespace(code)) close(i);
    else if (wordStart < 0) wordStart = i;
  }
  close(end);
  return words;
}

function collapseWhitespace(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/** The characters JavaScript's `\s` matches, tested by code for speed. */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
