// What BM25 needs from the keyword index, counted over a given set of files: their passages' lengths
// and each query phrase's occurrences per field (domain/search/bm25.ts scores them). An open
// collection passes its live files (ready, not deleted), an enforced one the files its reader may
// read. FTS5's own statistics are not used: its averages record keeps counting deleted rows on a
// contentless_delete table, and it counts every file, readable or not, ready or not. The postings
// come from an fts5vocab 'instance' table and the lengths from the index's docsize table; in the
// table collections share, a term is looked up behind the collection's key, so the postings read are
// the collection's own (keyword-index.ts).
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Db } from './db.js';
import { FTS_TOKENIZE } from './migrations.js';
import { keywordIndexOf, keywordIndexState, prepareKeywordText, type KeywordIndex } from './keyword-index.js';
import { untilWrite } from './read-cache.js';
import { sqlite } from './sqlite.js';
import { stmt } from './statements.js';
import type { CountedPassages, KeywordIndexReads, KeywordPostings, PhrasePostings, PostingsRequest } from '../aggregates/keyword-index.js';

export function sqliteKeywordIndex(db: Db): KeywordIndexReads {
  return {
    postings: async (request) => keywordPostings(db, request),
    prepare: async (collectionRid, texts) => prepareKeywordText(db, collectionRid, texts),
  };
}


/**
 * What this module keeps between queries, per connection: counted passages by collection, index
 * state and file list, and each term's per-passage counts by collection and index state. Keyed by
 * the collection's ID, not its rid: a purged collection's rid may come back with a new index whose
 * state string is the same as the old one's.
 */
interface Caches {
  counted: Map<string, { collectionId: string; state: string; passages: CountedPassages }>;
  /** Passages held across entries of `counted` (12 bytes each). */
  passages: number;
  terms: Map<string, { state: string; terms: Map<string, Int32Array>; size: number }>;
  /** Triples held across collections (12 bytes each). */
  termsSize: number;
}
const CACHES = new WeakMap<Db, Caches>();
const MAX_CACHED_PASSAGES = 4_000_000;
const MAX_CACHED_TERM_ROWS = 2_000_000;

function cachesOf(db: Db): Caches {
  let caches = CACHES.get(db);
  if (!caches) CACHES.set(db, (caches = { counted: new Map(), passages: 0, terms: new Map(), termsSize: 0 }));
  return caches;
}

/** The live files of a collection (ready, not deleted), the same array until the database is written. */
export function liveFiles(db: Db, collectionRid: number): readonly number[] {
  return untilWrite(db, `live-files:${collectionRid}`, () =>
    (stmt(db, "SELECT rid FROM files WHERE collection_rid = ? AND status = 'ready' AND deleted_at IS NULL ORDER BY rid").raw().all(collectionRid) as [number][]).map((r) => r[0]),
  );
}

/** The counted passages and the query phrases' postings among them, read in one snapshot. */
export function keywordPostings(db: Db, request: PostingsRequest): KeywordPostings {
  // One snapshot for the index's state, the passages and the postings: a commit between them would
  // pair one state's postings with another's passages.
  return sqlite(db).transaction(() => {
    const index = keywordIndexOf(db, request.collectionRid);
    const state = keywordIndexState(db, index, request.collectionRid);
    const caches = cachesOf(db);
    const passages = countedPassages(db, caches, request, index, state);
    const phrases = request.phrases.map((phrase) => phrasePostings(db, caches, request, index, state, phrase, passages.rids));
    return { passages, phrases };
  })();
}

const EMPTY: PhrasePostings = { passages: new Int32Array(0), heading: new Uint32Array(0), body: new Uint32Array(0) };

function phrasePostings(db: Db, caches: Caches, request: PostingsRequest, index: KeywordIndex, state: string, phrase: string, rids: Int32Array): PhrasePostings {
  const terms = phraseTerms(phrase);
  if (terms.length === 0 || rids.length === 0) return EMPTY;
  if (terms.length === 1) return countedOnly(termCounts(db, caches, request, index, state, terms[0]!), rids);
  return countedOnly(phraseCounts(db, index, terms), rids);
}

/**
 * Of (rowid, heading count, body count) triples in rowid order, those of counted passages, as
 * passage indexes. A sparse term finds each rid by binary search, a dense one walks the rids.
 */
function countedOnly(triples: Int32Array, rids: Int32Array): PhrasePostings {
  const rows = triples.length / 3;
  const passages: number[] = [];
  const heading: number[] = [];
  const body: number[] = [];
  const sparse = rows * Math.log2(rids.length + 1) < rids.length;
  let index = 0;
  for (let i = 0; i < triples.length; i += 3) {
    const doc = triples[i]!;
    if (sparse) {
      let hi = rids.length;
      while (index < hi) {
        const mid = (index + hi) >>> 1;
        if (rids[mid]! < doc) index = mid + 1;
        else hi = mid;
      }
    } else while (index < rids.length && rids[index]! < doc) index++;
    if (index === rids.length) break;
    if (rids[index] !== doc) continue;
    passages.push(index);
    heading.push(triples[i + 1]!);
    body.push(triples[i + 2]!);
  }
  return { passages: Int32Array.from(passages), heading: Uint32Array.from(heading), body: Uint32Array.from(body) };
}

/**
 * A term's occurrences per row of the index, as (rowid, in heading, in body) triples in rowid order,
 * for one state of the index. Reading them from the instance table is most of a keyword search's
 * cost when they are not kept, and a collection's queries repeat its words (42% of SciFact's query
 * terms had come before). Counted in SQL: one row per passage and field instead of one per
 * occurrence.
 */
function termCounts(db: Db, caches: Caches, request: PostingsRequest, index: KeywordIndex, state: string, term: string): Int32Array {
  const key = request.collectionId;
  let byTerm = caches.terms.get(key);
  if (!byTerm || byTerm.state !== state) {
    if (byTerm) caches.termsSize -= byTerm.size;
    caches.terms.delete(key);
    caches.terms.set(key, (byTerm = { state, terms: new Map(), size: 0 }));
  }
  const cached = byTerm.terms.get(term);
  if (cached) return cached;
  const rows = stmt(db, `SELECT doc, col, count(*) FROM ${index.instances} WHERE term = ? GROUP BY doc, col ORDER BY doc`)
    .raw()
    .all(index.prefix + term) as [number, string, number][];
  const triples: number[] = [];
  for (const [doc, column, count] of rows) {
    if (triples.length === 0 || triples[triples.length - 3] !== doc) triples.push(doc, 0, 0);
    const at = triples.length - (column === 'heading' ? 2 : 1);
    triples[at] = triples[at]! + count;
  }
  const counts = Int32Array.from(triples);
  const size = counts.length / 3;
  // Oldest collections' terms go first when the bound is reached; a term past it alone is not kept.
  for (const [name, entry] of caches.terms) {
    if (caches.termsSize + size <= MAX_CACHED_TERM_ROWS) break;
    caches.terms.delete(name);
    caches.termsSize -= entry.size;
    if (entry === byTerm) return counts;
  }
  if (caches.termsSize + size > MAX_CACHED_TERM_ROWS) return counts;
  byTerm.terms.set(term, counts);
  byTerm.size += size;
  caches.termsSize += size;
  return counts;
}

/**
 * A phrase of several terms (a Han or kana run's bigrams) per row, as (rowid, in heading, in body)
 * triples in rowid order: the offsets where every term follows the one before in the same column, as
 * FTS5's phrase match counts them. Rare enough not to be kept.
 */
function phraseCounts(db: Db, index: KeywordIndex, terms: readonly string[]): Int32Array {
  const read = stmt(db, `SELECT doc, col, offset FROM ${index.instances} WHERE term = ?`).raw();
  const at = (doc: number, column: string, offset: number) => `${doc}:${column}:${offset}`;
  const later = terms.slice(1).map((term) => new Set((read.all(index.prefix + term) as [number, string, number][]).map(([doc, column, offset]) => at(doc, column, offset))));
  const perDoc = new Map<number, [number, number]>();
  for (const [doc, column, offset] of read.all(index.prefix + terms[0]) as [number, string, number][]) {
    if (!later.every((set, i) => set.has(at(doc, column, offset + i + 1)))) continue;
    const counts = perDoc.get(doc) ?? [0, 0];
    counts[column === 'heading' ? 0 : 1]++;
    perDoc.set(doc, counts);
  }
  const docs = [...perDoc.keys()].sort((a, b) => a - b);
  return Int32Array.from(docs.flatMap((doc) => [doc, ...perDoc.get(doc)!]));
}

/** Each file list's digest, kept while the list is (untilWrite hands out the same array until a write). */
const DIGESTS = new WeakMap<readonly number[], string>();
function digestOf(files: readonly number[]): string {
  let digest = DIGESTS.get(files);
  if (!digest) DIGESTS.set(files, (digest = createHash('sha256').update(JSON.stringify(files)).digest('base64')));
  return digest;
}

function countedPassages(db: Db, caches: Caches, request: PostingsRequest, index: KeywordIndex, state: string): CountedPassages {
  const fts = index.table;
  const key = `${request.collectionId}:${state}:${digestOf(request.files)}`;
  const cached = caches.counted.get(key);
  if (cached) {
    // Most recently used last: eviction takes the oldest first.
    caches.counted.delete(key);
    caches.counted.set(key, cached);
    return cached.passages;
  }
  const rows = stmt(
    db,
    `SELECT p.rid AS rid, p.file_rid AS fileRid, d.sz AS sz FROM passages p JOIN ${fts}_docsize d ON d.id = p.rid
      WHERE p.file_rid IN (SELECT value FROM json_each(?)) ORDER BY p.rid`,
  )
    .raw()
    .all(JSON.stringify(request.files)) as [number, number, Buffer][];
  const passages: CountedPassages = { rids: new Int32Array(rows.length), fileRids: new Int32Array(rows.length), lengths: new Uint32Array(rows.length), totalLength: 0 };
  rows.forEach(([rid, fileRid, sizes], i) => {
    passages.rids[i] = rid;
    passages.fileRids[i] = fileRid;
    const length = sumOfVarints(sizes);
    passages.lengths[i] = length;
    passages.totalLength += length;
  });
  // An older state of the same collection is never asked for again.
  for (const [name, entry] of caches.counted)
    if (entry.collectionId === request.collectionId && entry.state !== state) {
      caches.counted.delete(name);
      caches.passages -= entry.passages.rids.length;
    }
  while (caches.counted.size > 0 && caches.passages + rows.length > MAX_CACHED_PASSAGES) {
    const [oldest, entry] = caches.counted.entries().next().value as [string, { passages: CountedPassages }];
    caches.counted.delete(oldest);
    caches.passages -= entry.passages.rids.length;
  }
  caches.counted.set(key, { collectionId: request.collectionId, state, passages });
  caches.passages += rows.length;
  return passages;
}

/** A docsize record: one SQLite varint per column (fts5_index.c). */
function sumOfVarints(block: Buffer): number {
  let sum = 0;
  let i = 0;
  while (i < block.length) {
    let value = 0;
    for (let byte = 0; i < block.length && byte < 9; byte++) {
      const b = block[i++]!;
      if (byte === 8) {
        value = value * 256 + b;
        break;
      }
      value = value * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    sum += value;
  }
  return sum;
}

/**
 * The index terms of a quoted FTS5 string (query-text.ts buildMatchPhrases), as the index's own
 * tokenizer makes them: porter stemming and diacritic folding are FTS5's, so they are asked of FTS5,
 * in a private in-memory table (a query never writes to the data dir's database).
 */
export function phraseTerms(phrase: string): string[] {
  let terms = TERMS.get(phrase);
  if (terms) return terms;
  const text = phrase.startsWith('"') && phrase.endsWith('"') ? phrase.slice(1, -1).replaceAll('""', '"') : phrase;
  const t = tokenizer();
  t.insert.run(text);
  terms = (t.read.raw().all() as [string][]).map((r) => r[0]);
  t.clear.run();
  if (TERMS.size >= 10_000) TERMS.clear();
  TERMS.set(phrase, terms);
  return terms;
}
const TERMS = new Map<string, string[]>();

let tokenizerDb: { insert: Database.Statement; read: Database.Statement; clear: Database.Statement } | undefined;
function tokenizer() {
  if (!tokenizerDb) {
    const db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE q USING fts5(text, tokenize='${FTS_TOKENIZE}'); CREATE VIRTUAL TABLE q_instances USING fts5vocab(q, 'instance');`);
    tokenizerDb = {
      insert: db.prepare('INSERT INTO q (rowid, text) VALUES (1, ?)'),
      read: db.prepare('SELECT term FROM q_instances WHERE doc = 1 ORDER BY offset'),
      clear: db.prepare('DELETE FROM q'),
    };
  }
  return tokenizerDb;
}
