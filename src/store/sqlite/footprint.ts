// Where a database's bytes go, by kind of table (bench: semantic-scale prints it, and docs/performance.md's
// "1M passages" figures come from it). dbstat counts whole pages, so free space inside pages is
// charged to the table that owns them, as it is on disk.
import type { Db } from './db.js';
import { stmt } from './statements.js';

export interface Footprint {
  /** Every page of the main database file (not the WAL). */
  fileBytes: number;
  /** FTS5 tables and their shadow tables. */
  ftsBytes: number;
  /** The passages table and its indexes. */
  passagesBytes: number;
  /** Stored file text (inline sources) and version rows. */
  fileVersionsBytes: number;
  /** The float32 vectors kept per passage (vec_shared, and vec_N_data of collections made before migration 22). */
  vectorBytes: number;
  /** sqlite-vec vec0 tables, when a database still has them (before migration 12). */
  vec0Bytes: number;
  otherBytes: number;
  /** The largest tables of `otherBytes`, by name. */
  largestOther: Record<string, number>;
  /** A floor: the FTS5 index plus one float32 copy of each vector (4 × dimensions bytes). */
  rawBytes: number;
  /** Another floor: the passages' text (UTF-8, heading and body) plus one float32 copy of each vector. */
  rawTextBytes: number;
  vectors: number;
  passages: number;
}

export function footprint(db: Db): Footprint {
  const owner = new Map((stmt(db, "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string; tbl_name: string }[]).map((r) => [r.name, r.tbl_name]));
  const pages = stmt(db, "SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE").all() as { name: string; pgsize: number }[];
  const out: Footprint = { fileBytes: 0, ftsBytes: 0, passagesBytes: 0, fileVersionsBytes: 0, vectorBytes: 0, vec0Bytes: 0, otherBytes: 0, largestOther: {}, rawBytes: 0, rawTextBytes: 0, vectors: 0, passages: 0 };
  let rawVectorBytes = 0;
  const other = new Map<string, number>();
  for (const { name, pgsize } of pages) {
    out.fileBytes += pgsize;
    const table = owner.get(name) ?? name;
    if (/^fts_(\d+|shared)(_|$)/.test(table)) out.ftsBytes += pgsize;
    else if (table === 'passages') out.passagesBytes += pgsize;
    else if (table === 'file_versions') out.fileVersionsBytes += pgsize;
    else if (/^vec_(\d+_data|shared)$/.test(table)) {
      out.vectorBytes += pgsize;
      // Counted once per table, not again for its index.
      if (name !== table) continue;
      const shape = stmt(db, `SELECT count(*) AS n, coalesce(sum(length(embedding)), 0) AS bytes FROM "${table}"`).get() as { n: number; bytes: number };
      out.vectors += shape.n;
      rawVectorBytes += shape.bytes;
    } else if (/^vec_\d+(_|$)/.test(table)) out.vec0Bytes += pgsize;
    else {
      out.otherBytes += pgsize;
      other.set(table, (other.get(table) ?? 0) + pgsize);
    }
  }
  out.largestOther = Object.fromEntries([...other].sort((a, b) => b[1] - a[1]).slice(0, 4));
  const text = stmt(db, 'SELECT count(*) AS n, coalesce(sum(length(CAST(heading AS BLOB)) + length(CAST(text AS BLOB))), 0) AS bytes FROM passages').get() as { n: number; bytes: number };
  out.passages = text.n;
  out.rawBytes = out.ftsBytes + rawVectorBytes;
  out.rawTextBytes = text.bytes + sourcedTextBytes(db) + rawVectorBytes;
  return out;
}

/**
 * The UTF-8 bytes of the passages stored as offsets into their file's inline source (migration 13):
 * the floor counts their text as if it were stored. One read of each source, not one per passage.
 */
function sourcedTextBytes(db: Db): number {
  const bySource = stmt(
    db,
    `SELECT v.inline_text AS text, group_concat(p.char_start || ':' || p.char_end) AS spans
       FROM passages p JOIN file_versions v ON v.rowid = p.source_version_rid GROUP BY p.source_version_rid`,
  );
  let bytes = 0;
  for (const row of bySource.all() as { text: string | null; spans: string }[]) {
    const text = row.text ?? '';
    for (const span of row.spans.split(',')) {
      const [start, end] = span.split(':').map(Number) as [number, number];
      bytes += Buffer.byteLength(text.slice(start, end), 'utf8');
    }
  }
  return bytes;
}
