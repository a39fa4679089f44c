// PLACEHOLDER (being written): source code cut on function and class boundaries.
import type { ExtractedDocument } from '../types.js';

export function isSourceCodeType(_contentType: string): boolean {
  return false;
}
export function extractCode(_text: string, _contentType: string): ExtractedDocument {
  throw new Error('not built yet');
}
