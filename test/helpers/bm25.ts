// BM25 from scratch, for tests: the live passages' text (ready files, not deleted) as the ingest
// pipeline gives it to the keyword index (src/contract/cjk.ts keywordIndexText), tokenized by a
// keyword index of the test's own, and docs/ranking.md's formula: k1 1.2, b 0.75, heading ×2,
// Lucene's IDF. Nothing here reads the collection's own index or the scorer's code.
import Database from 'better-sqlite3';
import { keywordIndexText } from '../../src/contract/cjk.js';
import { buildMatchPhrases } from '../../src/domain/search/query-text.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { FTS_TOKENIZE } from '../../src/store/sqlite/migrations.js';
import { getPassages } from '../../src/store/sqlite/passages.js';
import { sqlite } from '../../src/store/sqlite/sqlite.js';

const K1 = 1.2;
const B = 0.75;
const WEIGHT: Record<string, number> = { heading: 2, body: 1 };

/** Passage rid → BM25 of `query` (its words OR'd, as buildMatchPhrases makes them) over the given passages. */
export function bm25FromScratch(passages: readonly { rid: number; heading: string; text: string }[], query: string): Map<number, number> {
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE p USING fts5(heading, body, tokenize='${FTS_TOKENIZE}'); CREATE VIRTUAL TABLE p_i USING fts5vocab(p, 'instance');`);
    const insert = db.prepare('INSERT INTO p (rowid, heading, body) VALUES (?, ?, ?)');
    for (const p of passages) insert.run(p.rid, keywordIndexText(p.heading), keywordIndexText(p.text));
    const lengths = new Map(passages.map((p) => [p.rid, 0]));
    const occurrences = new Map<string, { doc: number; col: string; offset: number }[]>();
    for (const o of db.prepare('SELECT term, doc, col, offset FROM p_i').all() as { term: string; doc: number; col: string; offset: number }[]) {
      lengths.set(o.doc, lengths.get(o.doc)! + 1);
      const list = occurrences.get(o.term) ?? [];
      list.push(o);
      occurrences.set(o.term, list);
    }
    const n = passages.length;
    const average = [...lengths.values()].reduce((a, b) => a + b, 0) / n;
    const scores = new Map<number, number>();
    for (const phrase of buildMatchPhrases(query) ?? []) {
      // The phrase's terms as the tokenizer makes them, from a row of their own.
      insert.run(-1, '', phrase.slice(1, -1).replaceAll('""', '"'));
      const terms = (db.prepare('SELECT term FROM p_i WHERE doc = -1 ORDER BY offset').all() as { term: string }[]).map((r) => r.term);
      db.prepare('DELETE FROM p WHERE rowid = -1').run();
      if (terms.length === 0) continue;
      const at = new Set(terms.slice(1).flatMap((term, i) => (occurrences.get(term) ?? []).map((o) => `${i}:${o.doc}:${o.col}:${o.offset}`)));
      const tf = new Map<number, number>();
      for (const o of occurrences.get(terms[0]!) ?? []) {
        if (!terms.slice(1).every((_, i) => at.has(`${i}:${o.doc}:${o.col}:${o.offset + i + 1}`))) continue;
        tf.set(o.doc, (tf.get(o.doc) ?? 0) + WEIGHT[o.col]!);
      }
      const df = tf.size;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const [rid, f] of tf) {
        const dl = lengths.get(rid)!;
        scores.set(rid, (scores.get(rid) ?? 0) + (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * dl) / average)));
      }
    }
    return scores;
  } finally {
    db.close();
  }
}

/** The live passages of a collection, or of the given files only (ready, not deleted), with their text. */
export function livePassages(db: Db, collectionRid: number, files?: readonly number[]): { rid: number; heading: string; text: string }[] {
  const rids = (
    sqlite(db)
      .prepare("SELECT p.rid AS rid, p.file_rid AS file FROM passages p JOIN files f ON f.rid = p.file_rid WHERE f.collection_rid = ? AND f.status = 'ready' AND f.deleted_at IS NULL")
      .all(collectionRid) as { rid: number; file: number }[]
  )
    .filter((r) => !files || files.includes(r.file))
    .map((r) => r.rid);
  return getPassages(db, rids).map((p) => ({ rid: p.rid, heading: p.heading, text: p.text }));
}

export const relativeError = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-300);
