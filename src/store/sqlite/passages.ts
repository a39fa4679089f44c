import type { Db } from './db.js';
import { deleteKeywordRows, keywordIndexOf, preparedKeywordRows, writeKeywordRows, type KeywordRow } from './keyword-index.js';
import { deleteFileVectors } from './vectors.js';
import { rowsByRid, stmt } from './statements.js';
import type { FilePassages, PassageReads, PassageRow, PassageWrites } from '../aggregates/passages.js';

export function sqlitePassages(db: Db): PassageReads & PassageWrites {
  return {
    byRids: async (rids) => getPassages(db, rids),
    ofFiles: async (fileRids) => passagesOfFiles(db, fileRids),
    replace: async (collectionRid, files) => replacePassageRows(db, collectionRid, files),
    deleteOfFile: async (collectionRid, fileRid) => deletePassages(db, collectionRid, fileRid),
    // One write for all the files: the index is looked up, and its version bumped, once.
    indexKeywordText: async (collectionRid, files) => indexPassageText(db, collectionRid, preparedKeywordRows(files)),
  };
}


/**
 * Replacing many files' passages, first half in one transaction: their old passages (rows,
 * FTS rows, vectors) go and the new rows are written, without their FTS rows; returns each file's
 * new rids in order. The caller writes what else it has (vectors, …) and then indexPassageText,
 * last: every write statement after an FTS5 insert in the same transaction makes FTS5 flush its
 * pending terms into a new segment (its savepoint hook), so interleaving them cost ~70 µs per
 * file and grew with the index (issue 15's ingest profile).
 */
export function replacePassageRows(db: Db, collectionRid: number, files: readonly FilePassages[]): number[][] {
  for (const f of files) deletePassages(db, collectionRid, f.fileRid);
  const insertPassage = stmt(
    db,
    'INSERT INTO passages (rid, file_rid, ordinal, evidence_kind, heading, text, char_start, char_end, location, source_version_rid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let next = nextPassageRid(db);
  const rids = files.map((f) => {
    // A passage that is exactly its offsets' slice of the inline source it was cut from is stored
    // as those offsets: the source is kept anyway (downloads, reindexing), and the text twice was
    // ~400 bytes a passage at 1M passages (issue 15). Any other passage (extraction changed the
    // text, or there is no inline source) keeps its text.
    const versionRid = f.source ? (stmt(db, 'SELECT rowid AS rid FROM file_versions WHERE id = ?').get(f.source.versionId) as { rid: number } | undefined)?.rid : undefined;
    return f.passages.map((p) => {
      const fromSource = versionRid !== undefined && p.text.length > 0 && f.source!.text.slice(p.char_start, p.char_end) === p.text;
      const rid = next++;
      insertPassage.run(rid, f.fileRid, p.ordinal, p.evidence_kind, p.heading, fromSource ? '' : p.text, p.char_start, p.char_end, p.location, fromSource ? versionRid : null);
      return rid;
    });
  });
  stmt(db, `INSERT INTO meta (key, value) VALUES ('${PASSAGE_HIGH_WATER}', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(String(next - 1));
  return rids;
}

/**
 * Passage rids are never used twice: SQLite gives a new row the largest rid plus one, so a file
 * re-indexed after its passages held the largest rids got the same rids back for other text, and
 * a search page kept from before (src/domain/search/snapshot.ts) could not tell its evidence had
 * changed. The largest rid ever given is kept in `meta`.
 */
const PASSAGE_HIGH_WATER = 'passages_high_water';

function nextPassageRid(db: Db): number {
  const row = stmt(db, `SELECT max(coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '${PASSAGE_HIGH_WATER}'), 0), coalesce((SELECT max(rid) FROM passages), 0)) AS n`).get() as { n: number };
  return row.n + 1;
}

/**
 * The passages' text into the collection's keyword index: the last write of its transaction (see
 * replacePassageRows). `terms`, when given, are the text's (keyword-terms.ts passageTerms, made
 * before the transaction by prepareKeywordText); otherwise a pre-tokenized index makes them here.
 */
export function indexPassageText(db: Db, collectionRid: number, rows: readonly KeywordRow[]): void {
  writeKeywordRows(db, collectionRid, rows);
}

export function deletePassages(db: Db, collectionRid: number, fileRid: number): void {
  // A new file has none: one lookup instead of a vector, an FTS and a passage delete per file.
  if (!stmt(db, 'SELECT 1 FROM passages WHERE file_rid = ? LIMIT 1').get(fileRid)) return;
  deleteFileVectors(db, collectionRid, fileRid);
  stmt(db, 'DELETE FROM file_topics WHERE file_rid = ?').run(fileRid);
  deleteKeywordRows(db, collectionRid, fileRid);
  stmt(db, 'DELETE FROM passages WHERE file_rid = ?').run(fileRid);
}

export function getPassages(db: Db, rids: readonly number[]): PassageRow[] {
  const rows = rowsByRid<PassageRow & { source_version_rid: number | null }>(db, 'passages', rids);
  const versionRids = [...new Set(rows.flatMap((r) => (r.source_version_rid === null ? [] : [r.source_version_rid])))];
  if (versionRids.length === 0) return rows;
  const sources = new Map<number, string>();
  for (const v of rowsByRid<{ rid: number; text: string | null }>(db, 'file_versions', versionRids, 'rowid AS rid, inline_text AS text')) if (v.text !== null) sources.set(v.rid, v.text);
  for (const r of rows) {
    if (r.source_version_rid === null) continue;
    const source = sources.get(r.source_version_rid);
    // Versions are removed only with their passages (src/store/sqlite/purge.ts); a missing one is damage.
    if (source === undefined) throw new Error(`passage ${r.rid}: its source version ${r.source_version_rid} is missing`);
    r.text = source.slice(r.char_start, r.char_end);
  }
  return rows;
}

/** Each file's passages in order, text read as getPassages reads it (from the inline source where stored as offsets). */
export function passagesOfFiles(db: Db, fileRids: readonly number[]): Map<number, PassageRow[]> {
  const rids = stmt(db, 'SELECT rid FROM passages WHERE file_rid = ?');
  const out = new Map<number, PassageRow[]>(fileRids.map((f) => [f, []]));
  for (const p of getPassages(db, fileRids.flatMap((f) => (rids.all(f) as { rid: number }[]).map((r) => r.rid)))) out.get(p.file_rid)!.push(p);
  for (const list of out.values()) list.sort((a, b) => a.ordinal - b.ordinal);
  return out;
}

/**
 * One bounded step of merging a collection's keyword index into a single segment; true while there
 * is more to merge. Every ingest transaction adds a segment and FTS5 only merges them in fours, so
 * an index left as ingest built it has many (11 for SciFact through the API) and every query reads
 * all of them: ~10% of a query's time on SciFact (issue 15). A negative budget is FTS5's
 * "merge across levels" (as 'optimize' does, but `pages` leaf pages at a time, so other writers
 * wait one step at most); FTS5's documented test for work done is total_changes() growing by 2.
 * A collection whose index is gone (deleted meanwhile, or keyword search off) has nothing to merge,
 * nor has one in the shared table: merging that into one segment would rewrite every tenant's rows
 * each time, so it keeps the merges FTS5 makes as it writes (automerge: a few segments per level).
 */
export function mergeKeywordIndexStep(db: Db, collectionRid: number, pages: number): boolean {
  const index = keywordIndexOf(db, collectionRid);
  if (index.shared) return false;
  const fts = index.table;
  const totalChanges = stmt(db, 'SELECT total_changes() AS n');
  const before = (totalChanges.get() as { n: number }).n;
  try {
    stmt(db, `INSERT INTO ${fts}(${fts}, rank) VALUES('merge', ?)`).run(-Math.max(1, Math.floor(pages)));
  } catch (err) {
    if (/no such table/.test(String((err as Error).message))) return false;
    throw err;
  }
  return (totalChanges.get() as { n: number }).n - before >= 2;
}

/** Segments in the keyword index holding a collection (1 when fully merged; 0 when empty or absent). */
export function keywordIndexSegments(db: Db, collectionRid: number): number {
  const fts = keywordIndexOf(db, collectionRid).table;
  try {
    return (stmt(db, `SELECT count(DISTINCT segid) AS n FROM ${fts}_idx`).get() as { n: number }).n;
  } catch {
    return 0;
  }
}
