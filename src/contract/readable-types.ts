// Which content types a collection can index, as a client must know before it sends a file: the
// CLI decides at plan time what to upload, so a folder of archives and binaries does not become a
// collection of failed files. The daemon's formats (src/domain/ingest/formats/registry.ts) are the
// authority; test/cli-unsupported.test.ts holds this module to them.
import { EXTENSION_TYPES } from './content-types.js';

/** Types read only by OCR: a collection whose processing has `ocr: false` cannot index them. */
export const OCR_CONTENT_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp', 'image/tiff'];

/** Every type the extension table maps is a type some format reads (the formats' conformance test checks the table). */
const READABLE_TYPES: ReadonlySet<string> = new Set(Object.values(EXTENSION_TYPES));

export type UnreadableReason = 'unsupported_type' | 'ocr_off';

/**
 * Why a collection with these processing settings cannot index a file of `contentType`, or null
 * when it can: any text type, any type of the extension table, and images only with OCR on.
 */
export function unreadableReason(contentType: string, processing: { ocr?: boolean | undefined } = {}): UnreadableReason | null {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (OCR_CONTENT_TYPES.includes(bare)) return processing.ocr === false ? 'ocr_off' : null;
  if (bare.startsWith('text/') || READABLE_TYPES.has(bare)) return null;
  return 'unsupported_type';
}
