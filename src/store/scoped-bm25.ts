// BM25 over the passages one reader may read (issue 16, item 4). FTS5's bm25() takes its statistics
// (row count, each phrase's document frequency, the average length) from the whole index, so in an
// enforced collection a reader's scores moved when files it cannot read were added or deleted: a
// visible file scored 1.358 beside a hidden canary and 1.854 without it, enough to probe which words
// hidden files hold. This scorer reads the index's postings (an fts5vocab 'instance' table) and the
// passages' lengths (the index's docsize table), and counts only the reader's passages: the same
// formula as fts5_aux.c's bm25(), with the same constants and column weights, so a reader who may read
// everything gets FTS5's own scores (test/scoped-bm25.test.ts holds it to that).
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Db } from './db.js';
import { FTS_TOKENIZE, ftsInstancesTableName, ftsTableName } from './migrations.js';
import { BM25_B, BM25_K1, BM25_MIN_IDF, BODY_WEIGHT, HEADING_WEIGHT, keywordIndexState, type PassageHit } from './search.js';
import { sqlite } from './sqlite.js';
import { stmt } from './statements.js';

/** The passages a reader may read, in rid order, with what BM25 needs of each. */
interface ReadableIndex {
  rids: Int32Array;
  fileRids: Int32Array;
  /** Tokens in the passage, all columns (FTS5's xColumnSize(-1)). */
  lengths: Uint32Array;
  averageLength: number;
}

/**
 * What this scorer keeps between queries, per connection: readable indexes by collection, keyword-index
 * state and reader's file list (the same reader's next query reuses one), and each term's postings
 * by collection and index state. Keyed by the collection's ID, not its rid: a purged collection's rid
 * may come back with a new index whose state string is the same as the old one's.
 */
interface Caches {
  readable: Map<string, ReadableIndex>;
  /** Passages held across readable indexes (12 bytes each). */
  passages: number;
  postings: Map<string, { state: string; terms: Map<string, Int32Array>; size: number }>;
  /** Postings held across collections (12 bytes each). */
  postingsSize: number;
}
const CACHES = new WeakMap<Db, Caches>();
const MAX_CACHED_PASSAGES = 4_000_000;
const MAX_CACHED_POSTINGS = 2_000_000;

function cachesOf(db: Db): Caches {
  let caches = CACHES.get(db);
  if (!caches) CACHES.set(db, (caches = { readable: new Map(), passages: 0, postings: new Map(), postingsSize: 0 }));
  return caches;
}

/**
 * The best `limit` passages among the selected files by BM25 whose statistics count only the readable
 * files' passages; best first, ties by passage rid. `readableFiles` are the ready files the reader may
 * read; `selectedFiles` (a subset, e.g. after a metadata filter) are the ones that may be returned,
 * null for all readable ones. A filter narrows what is returned, never the statistics: a file's score
 * is the same with or without one, as on an open collection.
 */
export function scopedKeywordPassageHits(db: Db, opts: ScopedSearch): { hits: PassageHit[]; readablePassages: number } {
  // One snapshot for the index's state, the readable passages and the postings: a commit between
  // them would pair one state's postings with another's passages.
  return sqlite(db).transaction(() => scopedHits(db, opts))();
}

export interface ScopedSearch {
  collectionRid: number;
  /** The collection's public ID: the caches' key (see Caches). */
  collectionId: string;
  phrases: readonly string[];
  readableFiles: readonly number[];
  selectedFiles: ReadonlySet<number> | null;
  /** The most hits returned; all of them when absent. */
  limit?: number;
}

function scopedHits(db: Db, opts: ScopedSearch): { hits: PassageHit[]; readablePassages: number } {
  const fts = ftsTableName(opts.collectionRid);
  const state = keywordIndexState(db, fts);
  const caches = cachesOf(db);
  const readable = readableIndex(db, caches, opts, state);
  const n = readable.rids.length;
  const limit = opts.limit ?? Infinity;
  if (n === 0 || limit <= 0) return { hits: [], readablePassages: n };
  const scores = new Float64Array(n);
  const touched: number[] = [];
  const postingsByTerm = new Map<string, Posting[]>();
  for (const phrase of opts.phrases) {
    const terms = phraseTerms(phrase);
    if (terms.length === 0) continue;
    const postings = terms.map((term) => {
      let p = postingsByTerm.get(term);
      if (!p) postingsByTerm.set(term, (p = readablePostings(termPostings(db, caches, opts, state, term), readable.rids)));
      return p;
    });
    const frequencies = phraseFrequencies(postings);
    const docs = frequencies.size;
    if (docs === 0) continue;
    const idf = Math.log((n - docs + 0.5) / (docs + 0.5));
    const weight = idf > 0 ? idf : BM25_MIN_IDF;
    for (const [index, frequency] of frequencies) {
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * readable.lengths[index]!) / readable.averageLength);
      if (scores[index] === 0) touched.push(index);
      // Grouped as fts5_aux.c groups it, so that the scores are FTS5's to the last bit and ties stay ties.
      scores[index]! += weight * ((frequency * (BM25_K1 + 1)) / (frequency + norm));
    }
  }
  const selected = opts.selectedFiles;
  const hits: PassageHit[] = [];
  for (const index of touched) {
    const fileRid = readable.fileRids[index]!;
    if (selected && !selected.has(fileRid)) continue;
    hits.push({ passageRid: readable.rids[index]!, fileRid, score: scores[index]! });
  }
  hits.sort((a, b) => b.score - a.score || a.passageRid - b.passageRid);
  return { hits: hits.length > limit ? hits.slice(0, limit) : hits, readablePassages: n };
}

/** One occurrence of a term in a readable passage: the passage's index in ReadableIndex, its column, its token offset. */
interface Posting {
  index: number;
  column: 'heading' | 'body';
  offset: number;
}

/**
 * A term's occurrences in readable passages, in passage order: the index's postings (in rowid order)
 * merged against the sorted readable rids, so others' passages are skipped.
 */
function readablePostings(postings: Int32Array, rids: Int32Array): Posting[] {
  const out: Posting[] = [];
  let index = 0;
  for (let i = 0; i < postings.length; i += 3) {
    const doc = postings[i]!;
    while (index < rids.length && rids[index]! < doc) index++;
    if (index === rids.length) break;
    if (rids[index] === doc) out.push({ index, column: postings[i + 1] === 1 ? 'heading' : 'body', offset: postings[i + 2]! });
  }
  return out;
}

/**
 * Every posting of a term in the index, as (rowid, 1 if heading else 0, token offset) triples, for one
 * state of the index. Reading them row by row from the instance table is most of this scorer's
 * cost, and a collection's queries repeat its words (42% of SciFact's query terms had come before).
 */
function termPostings(db: Db, caches: Caches, opts: ScopedSearch, state: string, term: string): Int32Array {
  const key = opts.collectionId;
  let byTerm = caches.postings.get(key);
  if (!byTerm || byTerm.state !== state) {
    if (byTerm) caches.postingsSize -= byTerm.size;
    caches.postings.delete(key);
    caches.postings.set(key, (byTerm = { state, terms: new Map(), size: 0 }));
  }
  const cached = byTerm.terms.get(term);
  if (cached) return cached;
  const rows = stmt(db, `SELECT doc, col, offset FROM ${ftsInstancesTableName(opts.collectionRid)} WHERE term = ?`).raw().all(term) as [number, string, number][];
  const postings = new Int32Array(rows.length * 3);
  rows.forEach(([doc, column, offset], i) => {
    postings[i * 3] = doc;
    postings[i * 3 + 1] = column === 'heading' ? 1 : 0;
    postings[i * 3 + 2] = offset;
  });
  // Oldest collections' postings go first when the bound is reached; a term past it alone is not kept.
  for (const [name, entry] of caches.postings) {
    if (caches.postingsSize + rows.length <= MAX_CACHED_POSTINGS) break;
    caches.postings.delete(name);
    caches.postingsSize -= entry.size;
    if (entry === byTerm) return postings;
  }
  if (caches.postingsSize + rows.length > MAX_CACHED_POSTINGS) return postings;
  byTerm.terms.set(term, postings);
  byTerm.size += rows.length;
  caches.postingsSize += rows.length;
  return postings;
}

/**
 * Weighted frequency of a phrase per passage (FTS5 weighs each occurrence by its column's weight): a
 * one-term phrase counts its postings; a longer one (a Han or kana run's bigrams) counts the offsets
 * where every term follows the one before in the same column, as FTS5's phrase match does.
 */
function phraseFrequencies(postings: Posting[][]): Map<number, number> {
  const out = new Map<number, number>();
  const weight = (column: Posting['column']) => (column === 'heading' ? HEADING_WEIGHT : BODY_WEIGHT);
  if (postings.length === 1) {
    for (const p of postings[0]!) out.set(p.index, (out.get(p.index) ?? 0) + weight(p.column));
    return out;
  }
  const at = (p: Posting) => `${p.index}:${p.column}:${p.offset}`;
  const later = postings.slice(1).map((list) => new Set(list.map(at)));
  for (const first of postings[0]!) {
    const whole = later.every((set, i) => set.has(`${first.index}:${first.column}:${first.offset + i + 1}`));
    if (whole) out.set(first.index, (out.get(first.index) ?? 0) + weight(first.column));
  }
  return out;
}

function readableIndex(db: Db, caches: Caches, opts: ScopedSearch, state: string): ReadableIndex {
  const fts = ftsTableName(opts.collectionRid);
  const filesJson = JSON.stringify(opts.readableFiles);
  const key = `${opts.collectionId}:${state}:${createHash('sha256').update(filesJson).digest('base64')}`;
  const cached = caches.readable.get(key);
  if (cached) {
    // Most recently used last: eviction takes the oldest first.
    caches.readable.delete(key);
    caches.readable.set(key, cached);
    return cached;
  }
  const rows = stmt(
    db,
    `SELECT p.rid AS rid, p.file_rid AS fileRid, d.sz AS sz FROM passages p JOIN ${fts}_docsize d ON d.id = p.rid
      WHERE p.file_rid IN (SELECT value FROM json_each(?)) ORDER BY p.rid`,
  )
    .raw()
    .all(filesJson) as [number, number, Buffer][];
  const index: ReadableIndex = { rids: new Int32Array(rows.length), fileRids: new Int32Array(rows.length), lengths: new Uint32Array(rows.length), averageLength: 0 };
  let total = 0;
  rows.forEach(([rid, fileRid, sizes], i) => {
    index.rids[i] = rid;
    index.fileRids[i] = fileRid;
    const length = sumOfVarints(sizes);
    index.lengths[i] = length;
    total += length;
  });
  index.averageLength = rows.length === 0 ? 0 : total / rows.length;
  while (caches.readable.size > 0 && caches.passages + rows.length > MAX_CACHED_PASSAGES) {
    const [oldest, entry] = caches.readable.entries().next().value as [string, ReadableIndex];
    caches.readable.delete(oldest);
    caches.passages -= entry.rids.length;
  }
  caches.readable.set(key, index);
  caches.passages += rows.length;
  return index;
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
function phraseTerms(phrase: string): string[] {
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
