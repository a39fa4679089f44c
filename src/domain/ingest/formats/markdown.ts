// Markdown: headings (ATX and setext), paragraphs and fenced code, with link URLs dropped and front matter kept.
import type { ExtractedDocument } from '../types.js';
import type { TextFormat } from './format.js';
import { assemble, collapseWhitespace, type RenderedBlock } from './rendered-blocks.js';

export const markdownFormat: TextFormat = {
  name: 'Markdown',
  contentTypes: ['text/markdown'],
  aliases: { 'text/x-markdown': 'text/markdown', 'text/md': 'text/markdown' },
  extensions: ['.md', '.markdown', '.mdown', '.mkd', '.mdx'],
  evidence: ['text'],
  reads: 'text',
  extract: extractMarkdown,
};

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_OR_QUOTE_START = /^ {0,3}(?:[-+*]|\d{1,9}[.)]|>)(?:[ \t]|$)/;
/** `[text](url "title")` and `![alt](src)`: the URL is noise for reading and ranking, the text is kept. */
const INLINE_LINK = /!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?\)/g;
const AUTOLINK = /<((?:https?|mailto|ftp):[^\s<>]*)>/g;

function simplifyInline(line: string): string {
  return line.replace(INLINE_LINK, '$1').replace(AUTOLINK, '$1');
}

export function extractMarkdown(source: string): ExtractedDocument {
  const lines = source.split('\n');
  const rendered: RenderedBlock[] = [];
  let paragraph: string[] = [];

  const flushParagraph = (): void => {
    if (paragraph.length > 0) rendered.push({ type: 'paragraph', text: paragraph.join('\n').trim() });
    paragraph = [];
  };

  let index = readFrontMatter(lines, rendered);
  while (index < lines.length) {
    const line = lines[index] ?? '';
    index++;

    if (line.trim() === '') {
      flushParagraph();
      continue;
    }

    const fence = FENCE_OPEN.exec(line);
    if (fence !== null && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) {
      flushParagraph();
      const indent = fence[1]?.length ?? 0;
      const marker = fence[2] ?? '```';
      const code: string[] = [];
      while (index < lines.length) {
        const codeLine = lines[index] ?? '';
        index++;
        if (isClosingFence(codeLine, marker)) break;
        code.push(stripIndent(codeLine, indent).trimEnd());
      }
      // Leading blank lines carry nothing; the first line's own indentation is kept.
      rendered.push({ type: 'code', text: code.join('\n').replace(/^(?:[ \t]*\n)+/, '').trimEnd() });
      continue;
    }

    const heading = ATX_HEADING.exec(line);
    if (heading !== null) {
      flushParagraph();
      const text = simplifyInline(heading[2] ?? '').trim();
      rendered.push({ type: 'heading', level: heading[1]?.length ?? 1, text });
      continue;
    }

    const underline = SETEXT_UNDERLINE.exec(line);
    if (underline !== null && paragraph.length > 0 && !LIST_OR_QUOTE_START.test(paragraph[0] ?? '')) {
      const level = underline[1]?.startsWith('=') ? 1 : 2;
      rendered.push({ type: 'heading', level, text: collapseWhitespace(paragraph.join(' ')) });
      paragraph = [];
      continue;
    }

    if (THEMATIC_BREAK.test(line)) {
      flushParagraph();
      continue;
    }

    paragraph.push(simplifyInline(line).trimEnd());
  }
  flushParagraph();
  return assemble(rendered, '\n\n');
}

/** YAML front matter becomes a paragraph (it often holds the title and tags); returns the first body line. */
function readFrontMatter(lines: readonly string[], rendered: RenderedBlock[]): number {
  if (lines[0]?.trim() !== '---') return 0;
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]?.trim();
    if (line === '---' || line === '...') {
      rendered.push({ type: 'paragraph', text: lines.slice(1, index).join('\n').trim() });
      return index + 1;
    }
  }
  return 0;
}

function isClosingFence(line: string, openingMarker: string): boolean {
  const trimmed = line.trim();
  const fenceChar = openingMarker.charAt(0);
  if (/^ {4}/.test(line) || trimmed.length < openingMarker.length) return false;
  for (const char of trimmed) if (char !== fenceChar) return false;
  return true;
}

function stripIndent(line: string, indent: number): string {
  let strip = 0;
  while (strip < indent && line.charAt(strip) === ' ') strip++;
  return line.slice(strip);
}
