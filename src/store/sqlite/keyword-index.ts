// Where a collection's keyword rows live, and writing them there.
//
// A collection is a key, not a table: a new collection keeps its rows in the FTS5 table collections
// share (SHARED_FTS_TABLE, made once by migration 22), so creating it and indexing its first files
// change no schema. Each term there is written behind the collection's key (`7:orchard`), so a term's
// postings are the collection's own: a query reads its own rows only, however many tenants share the
// table, and nobody's rows enter another's statistics (keyword-postings.ts counts passages, lengths
// and postings of the collection's files). FTS5 cannot key terms itself (a porter tokenizer stems
// `7:running` differently from `running`), so the text is tokenized first, by FTS5 with
// FTS_TOKENIZE in a private table (keyword-terms.ts), and stored as those terms for a tokenizer that
// keeps each as it is (PRETOKENIZED_TOKENIZE): the same terms, offsets and lengths as a table of
// its own, so the same scores.
//
// A collection that reaches OWN_INDEX_AT live passages moves to a table of its own (`fts_N`, as
// collections made before migration 22 have, tokenizing text itself), in one write transaction of
// the indexing worker: readers go on in their snapshots, and its keyword writes are the worker's own,
// so none is lost. Its rows there are made again from its passages' text as the ingest made them
// (contract/cjk.ts keywordIndexText), so they hold the same terms and every score stays. In the
// shared table a large collection would cost everyone: merging its index into one segment (what
// keeps a large index quick to search) would rewrite every tenant's rows, and each of its files
// would be tokenized twice. Collections made before migration 22 keep their own tables.
import { sqlite, type Db } from './sqlite.js';
import { SHARED_FTS_TABLE, ftsInstancesTableName, ftsTableName } from './migrations.js';
import { passageTerms, type PassageTerms } from './keyword-terms.js';
import { stmt } from './statements.js';
import type { KeywordText, PreparedKeywordText } from '../aggregates/keyword-index.js';
import type { KeywordTextOfPassages } from '../aggregates/passages.js';

export interface KeywordIndex {
  /** The FTS5 table holding the collection's rows. */
  table: string;
  /** Its fts5vocab 'instance' view. */
  instances: string;
  /** The shared table (rows are keyed terms, see above), or the collection's own (rows are text). */
  shared: boolean;
  /** What each of the collection's terms is written behind: its key in the shared table, '' in its own. */
  prefix: string;
}

/**
 * Live passages at which a collection leaves the shared table: SciFact (5,183 abstracts) leaves
 * early in its ingest, a collection of a few notes never does. Until it leaves, each file is
 * tokenized twice: at 2,000 SciFact's ingest through the API took 1.78× its floor against 1.57×
 * before shared tables (keyword-only, medians of 6 to 8 interleaved runs), at 500 1.59×. The move
 * re-tokenizes this many passages in one transaction (0.17 s for 2,000 SciFact abstracts), where
 * copying their terms from the shared table's instance view took 2.8 s.
 */
export const OWN_INDEX_AT = 500;

// table_info looks the name up in the parsed schema (a query on sqlite_master would scan all of it);
// the shadow `_data` table is a plain table, so no virtual table is connected to answer.
const hasTable = (db: Db, name: string) => stmt(db, 'SELECT 1 FROM pragma_table_info(?) LIMIT 1').get(`${name}_data`) !== undefined;

export function keywordIndexOf(db: Db, collectionRid: number): KeywordIndex {
  const own = ftsTableName(collectionRid);
  if (hasTable(db, own)) return { table: own, instances: ftsInstancesTableName(collectionRid), shared: false, prefix: '' };
  return { table: SHARED_FTS_TABLE, instances: `${SHARED_FTS_TABLE}_instances`, shared: true, prefix: `${collectionRid}:` };
}

/**
 * A string that changes whenever the collection's keyword rows do, read in the caller's snapshot. In
 * the shared table it counts the collection's changes (keyword_versions), so another tenant's writes
 * leave its cached statistics valid; an own table gives its structure record (FTS5_STRUCTURE_ROWID,
 * fts5Int.h; rewritten by every write and merge) and its averages record (rowid 1, rewritten by
 * every insert and delete).
 */
export function keywordIndexState(db: Db, index: KeywordIndex, collectionRid: number): string {
  if (index.shared) {
    const row = stmt(db, 'SELECT version FROM keyword_versions WHERE collection_rid = ?').get(collectionRid) as { version: number } | undefined;
    return `${index.table}:${row?.version ?? 0}`;
  }
  const block = (id: number) => (stmt(db, `SELECT block FROM ${index.table}_data WHERE id = ?`).get(id) as { block: Buffer } | undefined)?.block?.toString('base64') ?? '';
  return `${block(1)}:${block(10)}`;
}

function bumpKeywordVersion(db: Db, collectionRid: number): void {
  stmt(db, 'INSERT INTO keyword_versions (collection_rid, version) VALUES (?, 1) ON CONFLICT (collection_rid) DO UPDATE SET version = version + 1').run(collectionRid);
}

/** A passage's keyword text, and its terms when they were made beforehand (passageTerms of that text). */
export interface KeywordRow {
  rid: number;
  heading: string;
  text: string;
  terms?: PassageTerms | undefined;
}

/**
 * Passages' text into the collection's keyword index: the last write of its transaction
 * (passages.ts replacePassageRows says why), so the version is bumped before.
 */
export function writeKeywordRows(db: Db, collectionRid: number, rows: readonly KeywordRow[]): void {
  if (rows.length === 0) return;
  const index = keywordIndexOf(db, collectionRid);
  const insert = stmt(db, `INSERT INTO ${index.table} (rowid, heading, body) VALUES (?, ?, ?)`);
  if (!index.shared) {
    for (const r of rows) insert.run(r.rid, r.heading, r.text);
    return;
  }
  bumpKeywordVersion(db, collectionRid);
  const missing = rows.filter((r) => !r.terms);
  const made = new Map(passageTerms(missing).map((terms, i) => [missing[i]!, terms]));
  const key = (terms: string) => (terms === '' ? '' : index.prefix + terms.replaceAll(' ', ` ${index.prefix}`));
  for (const r of rows) {
    const terms = r.terms ?? made.get(r)!;
    insert.run(r.rid, key(terms.heading), key(terms.body));
  }
}

/**
 * What this engine prepares of passages' keyword text: the text, and when the collection's rows go
 * to the shared table, its terms (tokenized here, before the transaction; writeKeywordRows makes
 * them otherwise). A collection moved to a table of its own meanwhile just stores the text.
 */
interface SqlitePreparedKeywordText {
  count: number;
  texts: readonly KeywordText[];
  terms: PassageTerms[] | null;
}

export function prepareKeywordText(db: Db, collectionRid: number, texts: readonly KeywordText[]): PreparedKeywordText {
  const prepared: SqlitePreparedKeywordText = { count: texts.length, texts, terms: keywordIndexOf(db, collectionRid).shared ? passageTerms(texts) : null };
  return prepared as unknown as PreparedKeywordText;
}

/** Prepared passages' rows with the rids their passages got, in order. */
export function preparedKeywordRows(files: readonly KeywordTextOfPassages[]): KeywordRow[] {
  const rows: KeywordRow[] = [];
  for (const { passageRids, text } of files) {
    const { count, texts, terms } = text as unknown as SqlitePreparedKeywordText;
    if (passageRids.length !== count) throw new Error(`keyword text prepared for ${count} passages, given ${passageRids.length} rids`);
    for (let i = 0; i < count; i++) rows.push({ rid: passageRids[i]!, heading: texts[i]!.heading, text: texts[i]!.text, terms: terms?.[i] });
  }
  return rows;
}

/** A file's rows out of the collection's keyword index. */
export function deleteKeywordRows(db: Db, collectionRid: number, fileRid: number): void {
  const index = keywordIndexOf(db, collectionRid);
  if (index.shared) bumpKeywordVersion(db, collectionRid);
  stmt(db, `DELETE FROM ${index.table} WHERE rowid IN (SELECT rid FROM passages WHERE file_rid = ?)`).run(fileRid);
}

/** Everything of a purged collection: its own tables, or exactly its rows of the shared one (before its passages go). */
export function purgeKeywordIndex(db: Db, collectionRid: number): void {
  const index = keywordIndexOf(db, collectionRid);
  stmt(db, 'DELETE FROM keyword_versions WHERE collection_rid = ?').run(collectionRid);
  if (index.shared) {
    stmt(db, `DELETE FROM ${index.table} WHERE rowid IN (SELECT p.rid FROM passages p WHERE p.file_rid IN (SELECT rid FROM files WHERE collection_rid = ?))`).run(collectionRid);
    return;
  }
  sqlite(db).exec(`DROP TABLE IF EXISTS ${index.instances}; DROP TABLE IF EXISTS ${index.table};`);
}

/** Whether a collection in the shared table has grown to OWN_INDEX_AT live passages (a read: the worker asks before it writes). */
export function keywordIndexOutgrown(db: Db, collectionRid: number, threshold = OWN_INDEX_AT): boolean {
  if (!keywordIndexOf(db, collectionRid).shared) return false;
  const row = stmt(db, 'SELECT count(*) AS n FROM passages WHERE file_rid IN (SELECT rid FROM files WHERE collection_rid = ? AND deleted_at IS NULL)').get(collectionRid) as { n: number };
  return row.n >= threshold;
}

