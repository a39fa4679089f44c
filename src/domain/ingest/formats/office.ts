// PLACEHOLDER (being written): DOCX (mammoth), PPTX and XLSX.
import { IngestFailure, type Extractor } from '../types.js';

const notYet: Extractor = async () => {
  throw new IngestFailure('unsupported_content', 'Office extraction is not built yet');
};
export const extractDocx = notYet;
export const extractPptx = notYet;
export const extractXlsx = notYet;
