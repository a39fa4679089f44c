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
// A collection that grows past OWN_INDEX_AT passages moves to a table of its own (`fts_own_N`,
// pre-tokenized too, without the key), in one write transaction of the indexing worker: its terms are
// copied as they are, so scores do not move, readers go on in their snapshots, and its writes are the
// worker's own, so none is lost. A large collection in the shared table would pay for the others: its
// index merges into one segment rewrite the whole table, and a large index is where segments cost a
// search. Collections made before migration 22 keep their own tables (`fts_N`, which tokenize text
// themselves).
import { sqlite, type Db } from './sqlite.js';
import { PRETOKENIZED_TOKENIZE, SHARED_FTS_TABLE, ftsInstancesTableName, ftsTableName } from './migrations.js';
import { passageTerms, type PassageTerms } from './keyword-terms.js';
import { stmt } from './statements.js';

export interface KeywordIndex {
  /** The FTS5 table holding the collection's rows. */
  table: string;
  /** Its fts5vocab 'instance' view. */
  instances: string;
  /** What each of the collection's terms is written behind: its key in the shared table, '' in a table of its own. */
  prefix: string;
  /** Rows are stored as passageTerms' terms; false: a table from before migration 22, which tokenizes text itself. */
  pretokenized: boolean;
  shared: boolean;
}

/** Passages (of live files) at which a collection leaves the shared table for one of its own. */
export const OWN_INDEX_AT = 2000;

/** The own table a grown collection moves to. */
export function ownFtsTableName(collectionRid: number): string {
  if (!Number.isSafeInteger(collectionRid) || collectionRid <= 0) throw new Error(`bad collection rid ${collectionRid}`);
  return `fts_own_${collectionRid}`;
}

// table_info looks the name up in the parsed schema (a query on sqlite_master would scan all of it);
// the shadow `_data` table is a plain table, so no virtual table is connected to answer.
const hasTable = (db: Db, name: string) => stmt(db, 'SELECT 1 FROM pragma_table_info(?) LIMIT 1').get(`${name}_data`) !== undefined;

export function keywordIndexOf(db: Db, collectionRid: number): KeywordIndex {
  const own = ownFtsTableName(collectionRid);
  if (hasTable(db, own)) return { table: own, instances: `${own}_instances`, prefix: '', pretokenized: true, shared: false };
  const legacy = ftsTableName(collectionRid);
  if (hasTable(db, legacy)) return { table: legacy, instances: ftsInstancesTableName(collectionRid), prefix: '', pretokenized: false, shared: false };
  return { table: SHARED_FTS_TABLE, instances: `${SHARED_FTS_TABLE}_instances`, prefix: `${collectionRid}:`, pretokenized: true, shared: true };
}

/**
 * A string that changes whenever the collection's keyword rows do, read in the caller's snapshot. A
 * pre-tokenized index counts the collection's changes (keyword_versions), so another tenant's writes
 * to the shared table leave its cached statistics valid; an index from before migration 22 gives its
 * structure record (FTS5_STRUCTURE_ROWID, fts5Int.h; rewritten by every write and merge) and its
 * averages record (rowid 1, rewritten by every insert and delete).
 */
export function keywordIndexState(db: Db, index: KeywordIndex, collectionRid: number): string {
  if (index.pretokenized) {
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
  if (!index.pretokenized) {
    for (const r of rows) insert.run(r.rid, r.heading, r.text);
    return;
  }
  bumpKeywordVersion(db, collectionRid);
  const missing = rows.filter((r) => !r.terms);
  const made = new Map(passageTerms(missing).map((terms, i) => [missing[i]!, terms]));
  const key = (terms: string[]) => (index.prefix === '' ? terms.join(' ') : terms.map((term) => index.prefix + term).join(' '));
  for (const r of rows) {
    const terms = r.terms ?? made.get(r)!;
    insert.run(r.rid, key(terms.heading), key(terms.body));
  }
}

/** A file's rows out of the collection's keyword index. */
export function deleteKeywordRows(db: Db, collectionRid: number, fileRid: number): void {
  const index = keywordIndexOf(db, collectionRid);
  if (index.pretokenized) bumpKeywordVersion(db, collectionRid);
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

/** Whether a collection in the shared table has grown to OWN_INDEX_AT passages (a read: the worker asks before it writes). */
export function keywordIndexOutgrown(db: Db, collectionRid: number, threshold = OWN_INDEX_AT): boolean {
  if (!keywordIndexOf(db, collectionRid).shared) return false;
  const row = stmt(db, 'SELECT count(*) AS n FROM passages WHERE file_rid IN (SELECT rid FROM files WHERE collection_rid = ? AND deleted_at IS NULL)').get(collectionRid) as { n: number };
  return row.n >= threshold;
}

/**
 * Moves a collection that outgrew the shared table to a table of its own, in the caller's write
 * transaction; false when it stays (not shared, or not grown). Every row the collection has there
 * (its passages with a length record, deleted files' included until their job removes them) is
 * copied term for term, without the key, so postings, offsets and lengths, and every score, stay.
 */
export function moveKeywordIndexToOwnTable(db: Db, collectionRid: number, threshold = OWN_INDEX_AT): boolean {
  if (!keywordIndexOutgrown(db, collectionRid, threshold)) return false;
  const shared = keywordIndexOf(db, collectionRid);
  const own = ownFtsTableName(collectionRid);
  sqlite(db).exec(createPretokenizedFtsSql(own));
  bumpKeywordVersion(db, collectionRid);
  const docs = new Map<number, { heading: string[]; body: string[] }>();
  for (const [rid] of stmt(
    db,
    `SELECT p.rid FROM passages p JOIN ${shared.table}_docsize d ON d.id = p.rid WHERE p.file_rid IN (SELECT rid FROM files WHERE collection_rid = ?)`,
  )
    .raw()
    .iterate(collectionRid) as IterableIterator<[number]>)
    docs.set(rid, { heading: [], body: [] });
  // The key's terms are a contiguous range: `7:` up to `7;` (';' follows ':').
  const from = shared.prefix;
  const to = `${shared.prefix.slice(0, -1)};`;
  for (const [term, doc, column, offset] of stmt(db, `SELECT term, doc, col, offset FROM ${shared.instances} WHERE term >= ? AND term < ?`)
    .raw()
    .iterate(from, to) as IterableIterator<[string, number, string, number]>) {
    const terms = docs.get(doc);
    if (terms) (column === 'heading' ? terms.heading : terms.body)[offset] = term.slice(from.length);
  }
  const remove = stmt(db, `DELETE FROM ${shared.table} WHERE rowid = ?`);
  for (const rid of docs.keys()) remove.run(rid);
  // The inserts last: a write after an FTS5 insert in the same transaction makes it flush a segment.
  const insert = stmt(db, `INSERT INTO ${own} (rowid, heading, body) VALUES (?, ?, ?)`);
  for (const [rid, terms] of docs) insert.run(rid, terms.heading.join(' '), terms.body.join(' '));
  return true;
}

function createPretokenizedFtsSql(table: string): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(heading, body, content='', contentless_delete=1, tokenize="${PRETOKENIZED_TOKENIZE}");
    CREATE VIRTUAL TABLE IF NOT EXISTS ${table}_instances USING fts5vocab(${table}, 'instance');`;
}
