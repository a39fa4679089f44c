// PDF: each page's text layer, or OCR of the pages without one (./pdf-reader.ts).
import { lazyImport } from '../lazy.js';
import type { BinaryFormat } from './format.js';

// pdf.js (and, with OCR, a canvas and tesseract.js) load with the first PDF, not at start-up.
const reader = lazyImport(() => import('./pdf-reader.js'));

export const pdfFormat: BinaryFormat = {
  name: 'PDF',
  contentTypes: ['application/pdf'],
  aliases: { 'application/x-pdf': 'application/pdf' },
  extensions: ['.pdf'],
  evidence: ['page', 'ocr'],
  reads: 'bytes',
  magic: { asciiSignature: true },
  extract: async (bytes, ctx) => (await reader()).extractPdf(bytes, ctx),
};
