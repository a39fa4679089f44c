// Office Open XML: DOCX, PPTX (a page per slide) and XLSX, read by ./office-reader.ts.
import { lazyImport } from '../lazy.js';
import type { BinaryFormat } from './format.js';

// jszip and exceljs load with the first Office file, not at start-up.
const reader = lazyImport(() => import('./office-reader.js'));

/** Office files are zip packages; see BinaryFormat's `magic.container`. */
const ZIP_PACKAGE = { container: 'application/zip' } as const;

export const docxFormat: BinaryFormat = {
  name: 'DOCX',
  contentTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  extensions: ['.docx'],
  evidence: ['text'],
  reads: 'bytes',
  magic: ZIP_PACKAGE,
  extract: async (bytes, ctx) => (await reader()).extractDocx(bytes, ctx),
};

export const pptxFormat: BinaryFormat = {
  name: 'PPTX',
  contentTypes: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  extensions: ['.pptx'],
  evidence: ['page'],
  reads: 'bytes',
  magic: ZIP_PACKAGE,
  extract: async (bytes, ctx) => (await reader()).extractPptx(bytes, ctx),
};

export const xlsxFormat: BinaryFormat = {
  name: 'XLSX',
  contentTypes: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  extensions: ['.xlsx'],
  evidence: ['text'],
  reads: 'bytes',
  magic: ZIP_PACKAGE,
  extract: async (bytes, ctx) => (await reader()).extractXlsx(bytes, ctx),
};
