// Passages' index terms as FTS_TOKENIZE makes them, for the pre-tokenized keyword indexes
// (keyword-index.ts). Asked of FTS5 itself, in a private in-memory table, so they are the very terms
// a table tokenized by FTS_TOKENIZE holds: porter stemming and diacritic folding are FTS5's, and a
// copy of them in JavaScript could drift from it by a character and move a score.
import Database from 'better-sqlite3';
import { FTS_TOKENIZE } from './migrations.js';

/** One passage's terms per column, in order, separated by single spaces (a term holds no space). */
export interface PassageTerms {
  heading: string;
  body: string;
}

interface Tokenizer {
  db: Database.Database;
  insert: Database.Statement;
  read: Database.Statement;
  clear: Database.Statement;
}
let tokenizer: Tokenizer | undefined;

function tokenizerOf(): Tokenizer {
  if (!tokenizer) {
    const db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(heading, body, content='', contentless_delete=1, tokenize='${FTS_TOKENIZE}');
             CREATE VIRTUAL TABLE t_instances USING fts5vocab(t, 'instance');`);
    tokenizer = {
      db,
      insert: db.prepare('INSERT INTO t (rowid, heading, body) VALUES (?, ?, ?)'),
      // Joined in SQL: a row per occurrence into JavaScript cost 3× as much (447k SciFact tokens:
      // 3.4-3.7 s against 0.9-1.2 s on a loaded machine).
      read: db.prepare("SELECT doc, col, group_concat(term, ' ' ORDER BY offset) FROM t_instances GROUP BY doc, col"),
      clear: db.prepare("INSERT INTO t (t) VALUES ('delete-all')"),
    };
  }
  return tokenizer;
}

/** Each row's terms, heading and body, in the rows' order. */
export function passageTerms(rows: readonly { heading: string; text: string }[]): PassageTerms[] {
  const out: PassageTerms[] = rows.map(() => ({ heading: '', body: '' }));
  if (rows.length === 0) return out;
  const t = tokenizerOf();
  t.db.transaction(() => rows.forEach((r, i) => t.insert.run(i + 1, r.heading, r.text)))();
  try {
    for (const [doc, column, terms] of t.read.raw().iterate() as IterableIterator<[number, string, string]>) {
      if (column === 'heading') out[doc - 1]!.heading = terms;
      else out[doc - 1]!.body = terms;
    }
  } finally {
    t.clear.run();
  }
  return out;
}
