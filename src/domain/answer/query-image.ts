// `query_image` of answer and research (retrieval-api.md, POST ...:answer): base64 without a
// data-URI prefix, at most 4 MiB decoded, bytes that really are the declared media type; read by
// OCR (offline) for this request only. The image is never stored: only what was read from it.
import { TroveError } from '../../contract/errors.js';
import { IngestFailure } from '../ingest/types.js';
import { recognize } from '../ingest/formats/ocr.js';
import type { Generator } from './generator.js';
import { asServiceError } from './answer.js';

export const MAX_QUERY_IMAGE_BYTES = 4 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The decoded bytes, or invalid_request saying what is wrong with the image. */
export async function decodeQueryImage(image: { data: string; media_type: string }): Promise<Buffer> {
  const invalid = (why: string) => new TroveError('invalid_request', `query_image.data ${why}.`);
  if (/^data:/i.test(image.data)) throw invalid('must be plain base64, without a "data:" URI prefix');
  if (image.data.length % 4 !== 0 || !BASE64.test(image.data)) throw invalid('is not valid base64');
  // 4 base64 characters carry 3 bytes: refuse before decoding anything too large.
  if ((image.data.length / 4) * 3 - (image.data.endsWith('==') ? 2 : image.data.endsWith('=') ? 1 : 0) > MAX_QUERY_IMAGE_BYTES) {
    throw invalid(`decodes to more than ${MAX_QUERY_IMAGE_BYTES} bytes (4 MiB)`);
  }
  const bytes = Buffer.from(image.data, 'base64');
  if (bytes.length === 0) throw invalid('is empty');
  // Loaded on the first query image, not at start-up (issue 15).
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  if (detected?.mime !== image.media_type) {
    throw invalid(`is not a ${image.media_type} image (its bytes ${detected ? `are ${detected.mime}` : 'match no image format'})`);
  }
  return bytes;
}

/** What OCR read in the image, for `image_description` and the retrieval query. */
export interface ImageReading {
  description: string;
  text: string;
}

export async function readQueryImage(image: { data: string; media_type: string }, deadline: number, generator?: Generator): Promise<ImageReading> {
  const bytes = await decodeQueryImage(image);
  let text: string;
  try {
    const result = await recognize(bytes, { deadline });
    text = result.paragraphs.map((p) => p.lines.map((l) => l.text).join(' ')).join('\n').trim();
  } catch (err) {
    if (err instanceof IngestFailure) throw new TroveError('invalid_request', `query_image could not be read: ${err.message}`);
    throw err;
  }
  const parts = [text ? `Text read from the image (OCR): ${text}` : 'OCR found no text in the image.'];
  // A vision-capable model, when configured, says what the image shows; OCR alone cannot.
  const seen = generator?.describeImage ? await generator.describeImage(image, deadline).catch((err: unknown) => { throw asServiceError(err); }) : '';
  if (seen) parts.unshift(`The image shows: ${seen}`);
  return { text: [seen, text].filter(Boolean).join('\n'), description: parts.join('\n') };
}
