// Plain text, and every text/* type no other format reads (logs, YAML, shell scripts, ...): paragraphs.
import type { Block, ExtractedDocument } from '../types.js';
import type { TextFormat } from './format.js';

export const plainTextFormat: TextFormat = {
  name: 'plain text',
  contentTypes: ['text/plain'],
  // text/plain's, and those of the other text types read as plain text (./registry.ts hands this format
  // every text/* type no format names).
  extensions: [
    '.txt', '.text', '.log', '.ini', '.cfg', '.conf', '.env', '.tsv', '.rst', '.tex', '.yaml', '.yml', '.toml',
    '.css', '.scss', '.less', '.vue', '.svelte', '.fs', '.pl', '.pm', '.lua', '.r', '.jl', '.dart', '.ex', '.exs',
    '.erl', '.hs', '.clj', '.ml', '.zig', '.nim', '.sh', '.bash', '.zsh', '.fish', '.ps1', '.bat', '.sql',
    '.graphql', '.proto', '.tf', '.gradle', '.groovy', '.diff', '.patch',
  ],
  evidence: ['text'],
  reads: 'text',
  extract: extractPlainText,
};

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
