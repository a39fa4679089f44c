// WebVTT and SRT subtitles: one paragraph per cue, located by its time span in milliseconds.
//
// Parsed by hand (no subtitle library is installed), after the WebVTT parsing rules
// (https://www.w3.org/TR/webvtt1/#file-parsing) and the de facto SRT format, leniently: a missing WEBVTT
// header, a comma or a dot before the milliseconds, short fractions and one-digit hours are all accepted,
// because real files have them. A cue whose timing line cannot be read is skipped; a file without a single
// readable cue fails.
import { type Block, type ExtractedDocument, IngestFailure } from '../types.js';

type Dialect = 'WebVTT' | 'SRT';

interface Cue {
  startMs: number;
  endMs: number;
  text: string;
}

/**
 * `[hh:]mm:ss.ttt --> [hh:]mm:ss.ttt [settings]`. WebVTT requires two-digit minutes and seconds and three
 * fraction digits; SRT writes `hh:mm:ss,ttt`. Both separators are accepted in both formats.
 */
const TIMESTAMP = /^(?:(\d{1,9}):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?$/;
const ARROW = '-->';
const TIMESTAMP_START = /^\s*(?:\d{1,9}:)?\d{1,2}:\d{1,2}(?:[.,]\d{1,3})?(?:\s|-|$)/;

/** A markup tag in cue text: a name (or a timestamp) right after `<`, so a literal `a < b > c` stays. */
const CUE_TAG = /<\/?(?:[a-z][\w.-]*|\d{1,9}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)(?:[ \t][^<>\n]*)?>/gi;

/** Speakers are kept as a `Name: ` prefix, the way a transcript is read aloud; set false to drop them. */
const KEEP_SPEAKER_NAMES = true;

export function extractVtt(text: string): ExtractedDocument {
  return extractSubtitles(text, 'WebVTT');
}

export function extractSrt(text: string): ExtractedDocument {
  return extractSubtitles(text, 'SRT');
}

function extractSubtitles(source: string, dialect: Dialect): ExtractedDocument {
  const lines = normalizeNewlines(source).split('\n');
  const notes: string[] = [];
  let index = 0;

  if (dialect === 'WebVTT') {
    // "WEBVTT", alone or followed by a space or tab and anything, then header lines up to a blank line.
    if (/^WEBVTT(?:[ \t].*)?$/.test(lines[0] ?? '')) {
      index = 1;
      while (index < lines.length && !isBlank(lines[index] ?? '')) {
        if ((lines[index] ?? '').includes(ARROW)) break; // a cue right after the header line
        index++;
      }
    } else {
      notes.push('the WEBVTT header line is missing');
    }
  }

  const cues: Cue[] = [];
  let malformed = 0;
  while (index < lines.length) {
    // Skip blank lines between blocks.
    while (index < lines.length && isBlank(lines[index] ?? '')) index++;
    if (index >= lines.length) break;
    const blockStart = index;
    while (index < lines.length && !isBlank(lines[index] ?? '')) index++;
    const block = lines.slice(blockStart, index);
    const result = readBlock(block, dialect);
    cues.push(...result.cues);
    malformed += result.malformed;
  }

  if (cues.length === 0) {
    const why = malformed > 0 ? `; ${malformed} cue${malformed === 1 ? ' has an unreadable timing line' : 's have unreadable timing lines'}` : '';
    throw new IngestFailure(
      'extraction_failed',
      `The ${dialect} file has no cue with a valid timing line (hh:mm:ss${dialect === 'SRT' ? ',' : '.'}ttt --> hh:mm:ss${dialect === 'SRT' ? ',' : '.'}ttt)${why}.`,
    );
  }

  const parts: string[] = [];
  const blocks: Block[] = [];
  let offset = 0;
  let empty = 0;
  for (const cue of cues) {
    if (cue.text === '') {
      empty++;
      continue;
    }
    if (parts.length > 0) {
      parts.push('\n');
      offset += 1;
    }
    parts.push(cue.text);
    blocks.push({
      type: 'paragraph',
      charStart: offset,
      charEnd: offset + cue.text.length,
      location: { start_ms: cue.startMs, end_ms: cue.endMs },
      evidenceKind: 'transcript',
    });
    offset += cue.text.length;
  }
  notes.unshift(`${cues.length} cue${cues.length === 1 ? '' : 's'}`);
  if (malformed > 0) notes.push(`${malformed} cue${malformed === 1 ? '' : 's'} skipped: unreadable timing line`);
  if (empty > 0) notes.push(`${empty} cue${empty === 1 ? '' : 's'} without text`);
  return { text: parts.join(''), blocks, notes };
}

/**
 * One block of non-blank lines: a comment, style or region block (WebVTT), or cues. A cue is an optional
 * identifier line, a timing line and text lines; a line holding `-->` inside the text starts the next cue.
 */
function readBlock(block: readonly string[], dialect: Dialect): { cues: Cue[]; malformed: number } {
  const cues: Cue[] = [];
  let malformed = 0;
  const first = block[0] ?? '';
  if (dialect === 'WebVTT' && /^(?:NOTE|STYLE|REGION)(?:[ \t]|$)/.test(first) && !first.includes(ARROW)) {
    return { cues, malformed };
  }
  let i = block.findIndex((line) => line.includes(ARROW));
  if (i < 0) {
    // No timing line: a block of text is ignored, but one whose first or second line starts with a timestamp is
    // a cue with a broken timing line (`00:00:01,000 -> 00:00:02,000`).
    const broken = block.slice(0, 2).some((line) => TIMESTAMP_START.test(line));
    return { cues, malformed: broken ? 1 : 0 };
  }

  while (i < block.length) {
    const timing = parseTimingLine(block[i] ?? '');
    let end = i + 1;
    while (end < block.length && !startsNextCue(block, end, dialect)) end++;
    if (timing === undefined) {
      malformed++;
    } else {
      cues.push({ ...timing, text: cueText(block.slice(i + 1, end)) });
    }
    if (end >= block.length) break;
    // The next cue's timing line, after its identifier line if it has one.
    i = (block[end] ?? '').includes(ARROW) ? end : end + 1;
  }
  return { cues, malformed };
}

/** Inside a cue's text: a timing line, or (SRT without blank lines) a cue number followed by one. */
function startsNextCue(block: readonly string[], index: number, dialect: Dialect): boolean {
  const line = block[index] ?? '';
  if (line.includes(ARROW)) return true;
  return dialect === 'SRT' && /^\s*\d+\s*$/.test(line) && (block[index + 1] ?? '').includes(ARROW);
}

function parseTimingLine(line: string): { startMs: number; endMs: number } | undefined {
  const arrow = line.indexOf(ARROW);
  if (arrow < 0) return undefined;
  const start = parseTimestamp(line.slice(0, arrow).trim());
  // After the end time come cue settings (WebVTT) or SRT's X1:.. Y1:.. box, both ignored.
  const rest = line.slice(arrow + ARROW.length).trim().split(/[ \t]+/, 1)[0] ?? '';
  const end = parseTimestamp(rest);
  if (start === undefined || end === undefined || end < start) return undefined;
  return { startMs: start, endMs: end };
}

function parseTimestamp(value: string): number | undefined {
  const match = TIMESTAMP.exec(value);
  if (match === null) return undefined;
  const hours = Number(match[1] ?? '0');
  const minutes = Number(match[2]);
  const seconds = Number(match[3]);
  if (minutes > 59 || seconds > 59) return undefined;
  const fraction = match[4] ?? '';
  const millis = fraction === '' ? 0 : Number(fraction.padEnd(3, '0'));
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
}

/** Cue text without markup: voice spans become a speaker prefix, other tags and timestamps are dropped. */
function cueText(lines: readonly string[]): string {
  const rendered: string[] = [];
  let lastSpeaker = '';
  for (const raw of lines) {
    let line = raw;
    let speaker = '';
    // <v Name> or <v.loud Name>: the voice of the rest of the line.
    const voice = /<v(?:\.[^\s>]*)?[ \t]+([^>]*)>/.exec(line);
    if (voice !== null) speaker = collapse(decodeEntities(voice[1] ?? ''));
    line = line
      .replace(CUE_TAG, '') // <i>, </i>, <c.yellow>, <v Name>, <00:00:01.000>, <font color="…">; not `a < b`
      .replace(/\{\\[^}\n]*\}/g, ''); // SSA override codes some SRT files carry: {\an8}, {\i1}
    line = collapse(decodeEntities(line));
    if (line === '') continue;
    if (KEEP_SPEAKER_NAMES && speaker !== '' && speaker !== lastSpeaker) line = `${speaker}: ${line}`;
    if (speaker !== '') lastSpeaker = speaker;
    rendered.push(line);
  }
  return rendered.join(' ').trim();
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  lrm: '',
  rlm: '',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (entity, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function normalizeNewlines(text: string): string {
  const withoutBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return withoutBom.includes('\r') ? withoutBom.replace(/\r\n?/g, '\n') : withoutBom;
}
