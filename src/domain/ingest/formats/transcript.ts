// WebVTT and SRT subtitles: one paragraph per cue, located by its time span in milliseconds.
//
// Parsed with `webvtt-parser` (the W3C WebVTT parsing algorithm, with its error recovery: a bad cue
// is reported and skipped, the rest are kept). SRT is the same cue syntax with a comma before the
// milliseconds, numbered cues and no header, so it is rewritten to WebVTT first. Real files often lack
// the WEBVTT header line; one is supplied and the file notes it. A file without a single readable cue fails.
import { lazyRequire } from '../lazy.js';
import { type Block, type ExtractedDocument, IngestFailure } from '../types.js';
import type { TextFormat } from './format.js';

// Loaded on the first subtitle file, not at start-up (issue 15); it ships CommonJS only.
const webvtt = lazyRequire<typeof import('webvtt-parser').default>('webvtt-parser');

type Dialect = 'WebVTT' | 'SRT';

interface Cue {
  startMs: number;
  endMs: number;
  text: string;
}

/** A markup tag in cue text: a name (or a timestamp) right after `<`, so a literal `a < b > c` stays. */
const CUE_TAG = /<\/?(?:[a-z][\w.-]*|\d{1,9}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)(?:[ \t][^<>\n]*)?>/gi;

/** Speakers are kept as a `Name: ` prefix, the way a transcript is read aloud; set false to drop them. */
const KEEP_SPEAKER_NAMES = true;

export const webVttFormat: TextFormat = {
  name: 'WebVTT',
  contentTypes: ['text/vtt'],
  extensions: ['.vtt'],
  evidence: ['transcript'],
  reads: 'text',
  extract: extractVtt,
};

export const srtFormat: TextFormat = {
  name: 'SRT',
  contentTypes: ['application/x-subrip'],
  aliases: { 'text/srt': 'application/x-subrip', 'application/srt': 'application/x-subrip', 'text/x-subrip': 'application/x-subrip' },
  extensions: ['.srt'],
  evidence: ['transcript'],
  reads: 'text',
  extract: extractSrt,
};

export function extractVtt(text: string): ExtractedDocument {
  return extractSubtitles(text, 'WebVTT');
}

export function extractSrt(text: string): ExtractedDocument {
  return extractSubtitles(text, 'SRT');
}

/**
 * SRT as WebVTT: a header, `hh:mm:ss,ttt` timestamps written with a dot, and a blank line before
 * each cue number that follows text directly (common in hand-edited SRT; WebVTT would read the
 * number as the previous cue's text).
 */
function srtAsVtt(source: string): string {
  return 'WEBVTT\n\n' + source.replace(/\n(\d+)\n(?=\s*\d{1,2}:\d{2}:\d{2}[.,]\d{1,3}\s*-->)/g, '\n\n$1\n');
}

/**
 * Timing lines as the WebVTT grammar wants them: a dot and three digits before the milliseconds.
 * Real files write `00:01:05,5` or `05:01.5`; the parser would drop those cues.
 */
function normalizeTimings(vtt: string): string {
  return vtt.replace(/^.*-->.*$/gm, (line) => line.replace(/(\d+:\d{2}(?::\d{2})?)[.,](\d{1,3})(?!\d)/g, (_, hms: string, ms: string) => `${hms}.${ms.padEnd(3, '0')}`));
}

function extractSubtitles(source: string, dialect: Dialect): ExtractedDocument {
  const notes: string[] = [];
  let vtt = normalizeNewlines(source);
  if (dialect === 'SRT') vtt = srtAsVtt(vtt);
  else if (!/^WEBVTT(?:[ \t].*)?(?:\n|$)/.test(vtt)) {
    notes.push('the WEBVTT header line is missing');
    vtt = 'WEBVTT\n\n' + vtt;
  }
  const parsed = new (webvtt().WebVTTParser)().parse(normalizeTimings(vtt), 'metadata');
  const cues: Cue[] = parsed.cues
    .filter((c) => Number.isFinite(c.startTime) && Number.isFinite(c.endTime) && c.endTime >= c.startTime)
    .map((c) => ({ startMs: Math.round(c.startTime * 1000), endMs: Math.round(c.endTime * 1000), text: cueText(c.text.split('\n')) }));
  const malformed = parsed.errors.length;

  if (cues.length === 0) {
    const why = parsed.errors[0] ? `; the parser says: ${parsed.errors[0].message}` : '';
    throw new IngestFailure('extraction_failed', `The ${dialect} file has no cue with a valid timing line (hh:mm:ss${dialect === 'SRT' ? ',' : '.'}ttt --> hh:mm:ss${dialect === 'SRT' ? ',' : '.'}ttt)${why}.`);
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
  if (malformed > 0) notes.push(`${malformed} parser warning${malformed === 1 ? '' : 's'}; unreadable cues were skipped (e.g. ${parsed.errors[0]!.message})`);
  if (empty > 0) notes.push(`${empty} cue${empty === 1 ? '' : 's'} without text`);
  return { text: parts.join(''), blocks, notes };
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

function normalizeNewlines(text: string): string {
  const withoutBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return withoutBom.includes('\r') ? withoutBom.replace(/\r\n?/g, '\n') : withoutBom;
}
