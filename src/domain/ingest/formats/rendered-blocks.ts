// Text formats that render their structure (Markdown, HTML, JSON, CSV) build their text from rendered
// blocks, joined here, with each block's span recorded in the joined text.
import type { Block, ExtractedDocument } from '../types.js';

export interface RenderedBlock {
  type: Block['type'];
  text: string;
  level?: number;
  jsonPath?: string;
}

/** Joins rendered blocks with `separator`, recording each block's span in the joined text. */
export function assemble(rendered: readonly RenderedBlock[], separator: string): ExtractedDocument {
  const parts: string[] = [];
  const blocks: Block[] = [];
  let offset = 0;
  for (const block of rendered) {
    if (block.text.trim() === '') continue;
    if (parts.length > 0) {
      parts.push(separator);
      offset += separator.length;
    }
    parts.push(block.text);
    const entry: Block = { type: block.type, charStart: offset, charEnd: offset + block.text.length };
    if (block.level !== undefined) entry.level = block.level;
    if (block.jsonPath !== undefined) entry.jsonPath = block.jsonPath;
    blocks.push(entry);
    offset += block.text.length;
  }
  return { text: parts.join(''), blocks };
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
