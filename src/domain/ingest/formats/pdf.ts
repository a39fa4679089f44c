// PLACEHOLDER (being written): PDF text per page with unpdf, OCR for pages without a text layer.
import { IngestFailure, type Extractor } from '../types.js';

export const extractPdf: Extractor = async () => {
  throw new IngestFailure('unsupported_content', 'PDF extraction is not built yet');
};
