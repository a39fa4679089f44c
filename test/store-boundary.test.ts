// The store's boundary: only src/store speaks SQL. The layers above reach storage through one
// interface (src/store/interface.ts), passing rules as data (a filter clause, principals, an event
// audience), so that any engine can stand behind it. This reads the sources: a layer above that
// imports better-sqlite3, sqlite-vec or any module of an engine's folder, or holds SQL text, fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ABOVE_THE_STORE = ['src/domain', 'src/http', 'src/rpc', 'src/mcp', 'src/cli', 'src/tui', 'src/client', 'src/contract', 'src/testing'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

const FORBIDDEN: { pattern: RegExp; why: string }[] = [
  { pattern: /from ['"]better-sqlite3['"]/, why: 'imports better-sqlite3' },
  { pattern: /from ['"]sqlite-vec['"]/, why: 'imports sqlite-vec' },
  { pattern: /from ['"][./]*store\/(?:sqlite\/)?statements\.js['"]/, why: "imports the store's statement cache" },
  { pattern: /import[^;]*\b(sqlite|SqliteDb)\b[^;]*from ['"][./]*store\/(?:sqlite\/)?db\.js['"]/, why: "imports the store's SQLite accessor" },
  { pattern: /from ['"][./]*store\/(?:sqlite\/)?sqlite\.js['"]/, why: "imports the store's SQLite accessor" },
  // SQL text: an engine compiles what the layers above pass as data (a filter clause, principals).
  { pattern: /\bSELECT\b[^;]*?\bFROM\b/, why: 'holds SQL text (SELECT … FROM)' },
  { pattern: /\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM|(?:CREATE|DROP|ALTER)\s+(?:TABLE|INDEX|VIRTUAL TABLE|TRIGGER|VIEW))\b/, why: 'holds SQL text' },
  { pattern: /\bPRAGMA\s+[a-z_]+/, why: 'holds SQL text (PRAGMA)' },
  { pattern: /\bUPDATE\s+[a-z_]+\s+SET\b/, why: 'holds SQL text (UPDATE … SET)' },
  { pattern: /\bjson_each\s*\(/, why: "holds SQL text (SQLite's json_each)" },
];

t.test('no layer above the store reaches SQLite', async (t) => {
  const offences: string[] = [];
  let files = 0;
  for (const dir of ABOVE_THE_STORE) {
    for (const file of sources(join(root, dir))) {
      files++;
      const text = readFileSync(file, 'utf8');
      for (const { pattern, why } of FORBIDDEN) if (pattern.test(text)) offences.push(`${relative(root, file)} ${why}`);
    }
  }
  t.ok(files > 100, `read the sources (${files} files)`);
  t.same(offences, [], 'every layer above src/store talks to it through store functions only');
});

t.test('the checks catch what they are meant to', async (t) => {
  const samples = [
    "import Database from 'better-sqlite3';",
    "import * as vec from 'sqlite-vec';",
    "import { stmt } from '../../store/sqlite/statements.js';",
    "import { sqlite, type Db } from '../store/sqlite/db.js';",
    "import type { SqliteDb } from '../../store/sqlite/db.js';",
    "import { type Db } from '../store/sqlite/sqlite.js';",
    "const sql = `SELECT f.rid AS rid FROM files f WHERE ${where}`;",
    "return { sql: 'f.rid IN (SELECT value FROM json_each(?))', params };",
    "db.exec('DELETE FROM search_snapshots');",
    "`UPDATE files SET status = ? WHERE rid = ?`",
    "'INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)'",
    "db.exec('DROP TABLE fts_3')",
    "db.pragma('PRAGMA journal_mode = WAL')",
  ];
  for (const sample of samples) t.ok(FORBIDDEN.some(({ pattern }) => pattern.test(sample)), sample);
  t.notOk(FORBIDDEN.some(({ pattern }) => pattern.test('// Select the files the reader may read from the list, then update the settings.')), 'prose is allowed');
});

/**
 * Above the store, code reaches an engine only through the interface (src/store/interface.ts).
 * The composition root (daemon/) picks the engine; the worker threads' entry points open their own
 * connection, so they alone import an engine's modules. Type imports count: a type from an engine
 * (its connection handle, say) ties the code above to that engine as much as a call does.
 */
const ENGINE_ENTRY_POINTS = ['src/domain/ingest/worker-thread.ts', 'src/domain/search/dense-worker.ts', 'src/domain/search/model-helper-thread.ts'];
const ENGINE_IMPORT = /(?:from\s+|import\()['"](?:\.\.\/)+store\/(?!interface\.js|aggregates\/)[^'"]+['"]/;

t.test('above the store, only the interface is imported (the engine by the entry points alone)', async (t) => {
  const importers: string[] = [];
  for (const dir of ABOVE_THE_STORE) {
    for (const file of sources(join(root, dir))) if (ENGINE_IMPORT.test(readFileSync(file, 'utf8'))) importers.push(relative(root, file));
  }
  const allowed = new Set(ENGINE_ENTRY_POINTS);
  t.same(importers.filter((f) => !allowed.has(f)), [], 'no other file imports an engine module');
  t.same(ENGINE_ENTRY_POINTS.filter((f) => !importers.includes(f)), [], 'each entry point listed still opens an engine (take it off once it does not)');
  t.ok(ENGINE_IMPORT.test("import { findCollection } from '../store/sqlite/collections.js';"), 'the check sees an engine import');
  t.ok(ENGINE_IMPORT.test("import type { Db } from '../../store/sqlite/db.js';"), 'and a type import from an engine');
  t.notOk(ENGINE_IMPORT.test("import type { Store } from '../store/interface.js';"), 'and lets the interface through');
});

/** Imports of a blob engine's folder; only the composition root and the indexing worker's entry may make them. */
const BLOB_ENGINE_IMPORT = /from ['"][./]*(?:src\/)?store\/[a-z-]+-blobs\//;
const MAY_PICK_A_BLOB_ENGINE = new Set(['src/domain/ingest/worker-thread.ts']);

t.test('the domain sees the blob store through its interface: only daemon/ and the worker thread pick an engine', async (t) => {
  const offences: string[] = [];
  for (const dir of ABOVE_THE_STORE) {
    for (const file of sources(join(root, dir))) {
      const path = relative(root, file);
      if (!MAY_PICK_A_BLOB_ENGINE.has(path) && BLOB_ENGINE_IMPORT.test(readFileSync(file, 'utf8'))) offences.push(path);
    }
  }
  t.same(offences, [], 'no other layer above the store imports src/store/*-blobs/');
  const daemon = sources(join(root, 'daemon')).filter((file) => BLOB_ENGINE_IMPORT.test(readFileSync(file, 'utf8')));
  t.ok(daemon.length > 0, 'the daemon picks the engine');
  t.ok(BLOB_ENGINE_IMPORT.test("import { FsBlobStore } from '../../store/fs-blobs/fs-blob-store.js';"), 'the check sees an engine import');
  t.notOk(BLOB_ENGINE_IMPORT.test("import type { BlobStore } from '../store/blob-store.js';"), 'and lets the interface through');
});
