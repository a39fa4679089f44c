// HTML: headings and block-level text, without scripts, styles and (unless a page has nothing else) site
// chrome; the <title> stands in for a missing <h1>. The DOCX reader renders to HTML and reads it here too.
import { lazyRequire } from '../lazy.js';
import type { ExtractedDocument } from '../types.js';
import type { TextFormat } from './format.js';
import { assemble, collapseWhitespace, type RenderedBlock } from './rendered-blocks.js';

export const htmlFormat: TextFormat = {
  name: 'HTML',
  contentTypes: ['text/html'],
  aliases: { 'application/xhtml+xml': 'text/html' },
  extensions: ['.html', '.htm', '.xhtml'],
  evidence: ['text'],
  reads: 'text',
  extract: extractHtml,
};

// The parser loads on the first page that needs it, not at start-up (issue 15: both threads loaded it for
// every daemon, ~60 ms). Synchronous `require`, because extraction of text formats is synchronous; the
// package ships a CommonJS build.
const htmlModule = lazyRequire<typeof import('htmlparser2')>('htmlparser2');
const htmlParser = (): typeof import('htmlparser2').Parser => htmlModule().Parser;

/** Elements whose content is never readable text. */
const SKIPPED_ELEMENTS = new Set(['head', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'select']);
/** Site chrome; skipped unless a page has nothing else. */
const BOILERPLATE_ELEMENTS = new Set(['nav', 'footer', 'aside']);
const HEADING_LEVELS: Readonly<Record<string, number>> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
/** Elements whose boundaries end a run of text. */
const BLOCK_ELEMENTS = new Set([
  'address', 'article', 'blockquote', 'body', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'form', 'header', 'hgroup', 'hr', 'html', 'legend', 'li', 'main', 'ol', 'p', 'section',
  'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'nav', 'footer', 'aside', 'option',
]);

export function extractHtml(source: string): ExtractedDocument {
  const content = renderHtml(source, true);
  if (content.some((block) => block.type !== 'heading')) return assemble(content, '\n\n');
  const everything = renderHtml(source, false);
  return assemble(everything.length > content.length ? everything : content, '\n\n');
}

function renderHtml(source: string, skipBoilerplate: boolean): RenderedBlock[] {
  const rendered: RenderedBlock[] = [];
  let buffer = '';
  let skipDepth = 0;
  let skipRoot = '';
  let preDepth = 0;
  let headingLevel: number | undefined;
  let inTitle = false;
  let title = '';
  let sawH1 = false;

  const flush = (): void => {
    const text = preDepth > 0 ? tidyPreformatted(buffer) : buffer.replace(/ *\n */g, '\n').trim();
    buffer = '';
    if (text !== '') rendered.push({ type: 'paragraph', text });
  };

  const HtmlParser = htmlParser();
  const parser = new HtmlParser(
    {
      onopentag(name) {
        if (name === 'title' && (skipDepth === 0 || skipRoot === 'head')) inTitle = true;
        if (skipDepth > 0) {
          skipDepth++;
          return;
        }
        if (SKIPPED_ELEMENTS.has(name) || (skipBoilerplate && BOILERPLATE_ELEMENTS.has(name))) {
          skipDepth = 1;
          skipRoot = name;
          return;
        }
        const level = HEADING_LEVELS[name];
        if (level !== undefined) {
          flush();
          headingLevel = level;
          if (level === 1) sawH1 = true;
        } else if (name === 'br') {
          buffer = buffer.trimEnd() + '\n';
        } else if (name === 'pre') {
          flush();
          preDepth++;
        } else if (headingLevel === undefined && BLOCK_ELEMENTS.has(name)) {
          flush();
        }
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        const level = HEADING_LEVELS[name];
        if (level !== undefined && headingLevel !== undefined) {
          const text = collapseWhitespace(buffer);
          buffer = '';
          if (text !== '') rendered.push({ type: 'heading', level: headingLevel, text });
          headingLevel = undefined;
        } else if (name === 'pre') {
          flush();
          preDepth = Math.max(0, preDepth - 1);
        } else if (headingLevel === undefined && BLOCK_ELEMENTS.has(name)) {
          flush();
        }
      },
      ontext(data) {
        if (inTitle) {
          title += data;
          return;
        }
        if (skipDepth > 0) return;
        if (preDepth > 0) {
          buffer += data;
          return;
        }
        const collapsed = data.replace(/\s+/g, ' ');
        buffer += buffer === '' || /\s$/.test(buffer) ? collapsed.trimStart() : collapsed;
      },
    },
    { decodeEntities: true },
  );
  parser.write(source);
  parser.end();
  flush();

  const titleText = collapseWhitespace(title);
  if (!sawH1 && titleText !== '') rendered.unshift({ type: 'heading', level: 1, text: titleText });
  return rendered;
}

function tidyPreformatted(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .trimEnd();
}
