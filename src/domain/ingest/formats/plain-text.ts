// Plain text, and every text/* type no other format reads (logs, YAML, shell scripts, ...): paragraphs.
import type { Block, ExtractedDocument } from '../types.js';

const WHITESPACE = /\s/;

/** Paragraphs are runs of non-blank lines; each block is trimmed to its first and last non-space character. */
export function extractPlainText(text: string): ExtractedDocument {
  const blocks: Block[] = [];
  let paragraphStart = -1;
  let paragraphEnd = -1;
  const closeParagraph = (): void => {
    if (paragraphStart >= 0) blocks.push({ type: 'paragraph', charStart: paragraphStart, charEnd: paragraphEnd });
    paragraphStart = -1;
  };
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    let first = lineStart;
    while (first < lineEnd && WHITESPACE.test(text.charAt(first))) first++;
    if (first === lineEnd) {
      closeParagraph();
    } else {
      let last = lineEnd;
      while (last > first && WHITESPACE.test(text.charAt(last - 1))) last--;
      if (paragraphStart < 0) paragraphStart = first;
      paragraphEnd = last;
    }
    lineStart = lineEnd + 1;
  }
  closeParagraph();
  return { text, blocks };
}
