// The store handle and the SQLite connection behind it. A module of its own, importing nothing of
// the store, so that every store module can unwrap a handle without importing db.ts (which imports
// the migrations, which import store modules: a cycle).
import type Database from 'better-sqlite3';

/** A SQLite connection, as only src/store (and the daemon that opens it) handles it. */
export type SqliteDb = Database.Database;

/**
 * A store connection as the layers above the store see it (issue 15, item 6): a handle to pass
 * back to store functions, with nothing to query. The domain never sees SQL or better-sqlite3's
 * API, so a second engine (PostgreSQL is planned) can stand behind the same functions. A
 * better-sqlite3 connection is one (the daemon and tests hand theirs straight in).
 */
export interface Db {
  readonly open: boolean;
}

/** The SQLite connection behind a store handle: for src/store's own use. */
export function sqlite(db: Db): SqliteDb {
  return db as SqliteDb;
}

