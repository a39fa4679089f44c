// PLACEHOLDER (being written): images read by OCR (tesseract.js, offline).
import { IngestFailure, type Extractor } from '../types.js';

export const extractImage: Extractor = async () => {
  throw new IngestFailure('unsupported_content', 'image OCR is not built yet');
};
