// Citation markers in answers (retrieval-api.md: Research run, Answer response): `[[SRC:0001]]`
// points at the key `SRC:0001` of the sources map. The caller fixes the keys; nothing here
// renumbers them. Shared by the extractive and the OpenAI-compatible generators.

/** A marker as written in answers. Tolerates inner spaces on input; `formatMarker` writes none. */
const MARKER_SOURCE = String.raw`\[\[\s*(SRC:\d+)\s*\]\]`;

export interface MarkerHit {
  key: string;
  /** Offset of the opening `[[` in the text. */
  index: number;
  /** Length of the marker as written. */
  length: number;
}

export function formatMarker(key: string): string {
  return `[[${key}]]`;
}

/** True when the text holds something that reads as a marker (used to keep such text out of extracts). */
export function hasMarkerLikeText(text: string): boolean {
  return text.includes('[[') || text.includes(']]');
}

/** Every marker in the text, in order. */
export function findMarkers(text: string): MarkerHit[] {
  const out: MarkerHit[] = [];
  for (const m of text.matchAll(new RegExp(MARKER_SOURCE, 'g'))) out.push({ key: m[1]!, index: m.index, length: m[0].length });
  return out;
}

/** The keys cited, each once, in the order of their first marker. */
export function citedKeys(text: string): string[] {
  return [...new Set(findMarkers(text).map((m) => m.key))];
}

/**
 * Removes (or, with `keep`, keeps) citation tokens and tidies the spacing left behind: a
 * removed marker takes the whitespace before it along when punctuation or the end follows
 * ("moon [[SRC:0009]]." → "moon."). `replace` returns the text that stands for one match.
 */
export function replaceCitations(text: string, pattern: RegExp, replace: (match: RegExpExecArray) => string): string {
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  let out = '';
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const replacement = replace(m);
    let before = text.slice(last, m.index);
    let end = m.index + m[0].length;
    if (replacement === '') {
      const after = text.slice(end, end + 2);
      // The whitespace before a removed marker goes when punctuation, a line end, the end of the
      // text or more whitespace follows; before another citation it stays, to separate it.
      const trimmed = before.replace(/[ \t]+$/, '');
      if (trimmed.length !== before.length && /^(?:[ \t]|[.,;:!?)\]}…»”’"'\r\n]|$)/.test(after)) before = trimmed;
      // A removed marker that opened a line takes the spaces after it along.
      const prev = before.length > 0 ? before.at(-1) : out.at(-1);
      if (prev === undefined || prev === '\n') while (text[end] === ' ' || text[end] === '\t') end++;
    }
    out += before + replacement;
    last = end;
    re.lastIndex = Math.max(re.lastIndex, end);
  }
  return out + text.slice(last);
}

/**
 * Drops every marker whose key is not in `known` (a set of keys such as 'SRC:0001'), writes the
 * rest in canonical form, and collapses repeats of one key in a row (`[[SRC:0001]][[SRC:0001]]`).
 */
export function stripUnknownMarkers(text: string, known: Iterable<string>): string {
  const keys = known instanceof Set ? (known as Set<string>) : new Set(known);
  const kept = replaceCitations(text, new RegExp(MARKER_SOURCE, 'g'), (m) => (keys.has(m[1]!) ? formatMarker(m[1]!) : ''));
  return collapseRepeats(kept);
}

/** Removes every marker (e.g. from history turns whose keys meant other sources). */
export function stripMarkers(text: string): string {
  return replaceCitations(text, new RegExp(MARKER_SOURCE, 'g'), () => '');
}

/** `[[A]][[A]]` or `[[A]] [[A]]` → `[[A]]`; a group of markers keeps each key once. */
export function collapseRepeats(text: string): string {
  return text.replace(new RegExp(String.raw`(?:\[\[SRC:\d+\]\][ \t]*){2,}`, 'g'), (group) => {
    const trailing = /[ \t]*$/.exec(group)![0];
    const keys = [...new Set(findMarkers(group).map((m) => m.key))];
    return keys.map(formatMarker).join('') + trailing;
  });
}

/** The final shape of every generator's answer: unknown markers removed, `cited` read from the text. */
export function finishAnswer(text: string, known: Iterable<string>): { answer: string; cited: string[] } {
  const answer = stripUnknownMarkers(text, known).trim();
  return { answer, cited: citedKeys(answer) };
}
