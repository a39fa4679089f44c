// The text `get` reads: a file's extracted text, made from its bytes by the extractor the indexing
// worker used (src/domain/ingest/extract.ts), because that is the text search's evidence offsets
// count in (retrieval-api.md, Evidence: "offsets in extracted text"). The raw bytes are another
// text for HTML, Markdown and every binary format. trove keeps passages, not the whole extracted
// text, so it is made again here: about 0.2 s for a two-page PDF and 0.5 s for a small DOCX on
// the 2-core dev machine, on the thread that asks (the daemon's HTTP thread for /mcp). The last
// few are kept, since an agent reads one file in steps.
import { createHash } from 'node:crypto';
import { extractDocument } from '../domain/ingest/extract.js';
import { IngestFailure } from '../domain/ingest/types.js';
import { INDEXING_LIMITS } from '../domain/limits.js';
import { ToolFailure } from './errors.js';

/** Extracted texts kept, by bytes, type and OCR setting; a bound on both count and size. */
const CACHE_ENTRIES = 8;
const CACHE_CHARS = 16 * 1024 * 1024;
const cache = new Map<string, string>();

function remember(key: string, text: string): void {
  cache.delete(key);
  cache.set(key, text);
  let chars = 0;
  for (const value of cache.values()) chars += value.length;
  for (const [oldest, value] of cache) {
    if (cache.size <= CACHE_ENTRIES && chars <= CACHE_CHARS) break;
    cache.delete(oldest);
    chars -= value.length;
  }
}

/**
 * The extracted text of these bytes read as `contentType` (the type the file was indexed as), with
 * OCR as the collection has it, under the indexing worker's page and time limits. A file that
 * cannot be read is a tool error that says why, in the words the file's own indexing error uses.
 */
export async function extractedText(bytes: Buffer, contentType: string, ocr: boolean): Promise<string> {
  const key = `${createHash('sha256').update(bytes).digest('base64url')} ${contentType} ${ocr}`;
  const kept = cache.get(key);
  if (kept !== undefined) {
    remember(key, kept);
    return kept;
  }
  try {
    const doc = await extractDocument(bytes, contentType, { ocr, maxPages: INDEXING_LIMITS.maxPages, deadline: Date.now() + INDEXING_LIMITS.extractTimeoutMs });
    remember(key, doc.text);
    return doc.text;
  } catch (err) {
    if (err instanceof IngestFailure) throw ToolFailure.invalid(`The file's text cannot be read (${err.code}): ${err.message}`, { reason: err.code, content_type: contentType });
    throw err;
  }
}
