// Which of a folder's files the collection can index, decided before anything is sent: a file the
// daemon cannot read would be uploaded only to fail, reported on a line of its own, and leave the
// collection degraded. Pure: no I/O. The types come from the contract (src/contract/readable-types.ts).
import { posix } from 'node:path';
import { unreadableReason, type UnreadableReason } from '../contract/readable-types.js';

export interface UnreadableFile {
  path: string;
  content_type: string;
  reason: UnreadableReason;
}

/**
 * Splits the files into those the collection can index and those it cannot. With
 * `includeUnsupported` every file is sent (the user asked for the daemon's verdict on each).
 */
export function partitionReadable<F extends { path: string; contentType: string }>(
  files: readonly F[],
  options: { ocr?: boolean | undefined; includeUnsupported?: boolean | undefined },
): { readable: F[]; unreadable: UnreadableFile[] } {
  if (options.includeUnsupported) return { readable: [...files], unreadable: [] };
  const readable: F[] = [];
  const unreadable: UnreadableFile[] = [];
  for (const file of files) {
    const reason = unreadableReason(file.contentType, { ocr: options.ocr });
    if (reason === null) readable.push(file);
    else unreadable.push({ path: file.path, content_type: file.contentType, reason });
  }
  return { readable, unreadable };
}

/** `.gz`, or the content type for a name without an extension. */
function groupOf(file: UnreadableFile): string {
  const extension = posix.extname(posix.basename(file.path)).toLowerCase();
  return extension !== '' ? extension : (file.content_type.split(';', 1)[0] ?? file.content_type);
}

/**
 * One line for them all, the largest group first:
 * `skipped 14 files: 9 .gz, 5 .bin; --include-unsupported to send them anyway`. Images left out
 * because the collection's OCR is off say so.
 */
export function unreadableSummary(unreadable: readonly UnreadableFile[]): string {
  const groups = new Map<string, number>();
  for (const file of unreadable) {
    const key = `${groupOf(file)}${file.reason === 'ocr_off' ? ' (OCR is off for this collection)' : ''}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([key, n]) => `${n} ${key}`);
  const n = unreadable.length;
  return `skipped ${n} file${n === 1 ? '' : 's'} the collection cannot index: ${parts.join(', ')}; --include-unsupported to send ${n === 1 ? 'it' : 'them'} anyway`;
}
