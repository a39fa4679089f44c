// XML in its own right (configuration, feeds, schemas, SVG drawings): the markup is read as plain text, so a
// search finds element and attribute names as well as the words between them, and evidence offsets are
// offsets into the file as it is. HTML and XHTML have their own format (./html.ts).
import { extractPlainText } from './plain-text.js';
import type { TextFormat } from './format.js';

export const xmlFormat: TextFormat = {
  name: 'XML',
  contentTypes: ['application/xml', 'image/svg+xml'],
  extensions: ['.xml', '.svg'],
  evidence: ['text'],
  reads: 'text',
  extract: extractPlainText,
};
