// Headers of a signed download (GET {content.url}, decisions.md §2). The bytes are whatever a caller
// stored, served from the daemon's own origin, so a browser must never run them there: every
// response of the daemon carries `X-Content-Type-Options: nosniff` (router.ts), and a download is
// shown inline only when its type is on a short list of passive types; everything else — HTML,
// XHTML, SVG, any XML, JavaScript, and any type not on the list — is an attachment, saved rather than
// rendered. A sandboxing Content-Security-Policy is added as a second line of defence.

import { normalizeContentType } from '../domain/ingest/detect.js';

/** Types a browser displays without running anything: shown inline. */
const PASSIVE_TYPES: ReadonlySet<string> = new Set([
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/tab-separated-values',
  'text/vtt',
  'application/json',
  'application/x-ndjson',
  'application/x-subrip',
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/tiff',
]);

/** Compared as the media type without parameters, lower-cased, aliases resolved (`Text/HTML; charset=utf-8` → `text/html`). */
export function isPassiveType(contentType: string): boolean {
  return PASSIVE_TYPES.has(normalizeContentType(contentType));
}

// RFC 5987 attr-char: what may stand unescaped in `filename*`; encodeURIComponent also leaves ' ( ) *.
function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `attachment` with the last segment of the file's path as the name (RFC 6266): an ASCII
 * `filename` for old clients (anything outside printable ASCII, and `"` `\`, replaced by `_`) and
 * the exact name as UTF-8 in `filename*`.
 */
export function attachmentDisposition(filePath: string): string {
  const name = filePath.split('/').filter((segment) => segment !== '').at(-1) ?? 'download';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

/** Headers for the download of a file stored as `contentType` at `filePath` (nosniff comes from the router). */
export function downloadHeaders(contentType: string, filePath: string): Record<string, string> {
  if (isPassiveType(contentType)) {
    // No CSP here: Chrome's PDF viewer does not run in a sandboxed document, and these types run nothing.
    return {};
  }
  return {
    'content-disposition': attachmentDisposition(filePath),
    // Should a client render it anyway (an old browser, a preview pane): no scripts, no origin, no loads.
    'content-security-policy': "default-src 'none'; sandbox",
  };
}
