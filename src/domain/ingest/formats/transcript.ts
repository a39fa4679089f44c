// PLACEHOLDER (being written): WebVTT and SRT cues with their time spans.
import { IngestFailure, type ExtractedDocument } from '../types.js';

export function extractVtt(_text: string): ExtractedDocument {
  throw new IngestFailure('unsupported_content', 'WebVTT extraction is not built yet');
}
export function extractSrt(_text: string): ExtractedDocument {
  throw new IngestFailure('unsupported_content', 'SRT extraction is not built yet');
}
