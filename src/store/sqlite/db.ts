// Connection set-up: WAL, pragmas, sqlite-vec, versioned migrations. Only src/store writes SQL.
import { closeSync, fchmodSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { MIGRATIONS } from './migrations.js';
import { sqlite, type Db, type SqliteDb } from './sqlite.js';

export { sqlite, type Db, type SqliteDb } from './sqlite.js';

export interface OpenOptions {
  /** Run migrations (the daemon's main connection); worker connections only open. */
  migrate?: boolean;
  readonly?: boolean;
}

/**
 * Checkpoints the whole WAL into the database and truncates the WAL file to nothing. Outside any
 * transaction and with the write token held (Writer.withTokenOutsideTransaction); it waits for
 * readers on older snapshots (the busy timeout). The indexing worker runs it once indexing and the
 * keyword merge have gone quiet, so an idle data dir is its database file (issue 15's disk figure).
 */
export function truncateWal(db: Db): void {
  sqlite(db).pragma('wal_checkpoint(TRUNCATE)');
}

export function openDatabase(file: string, options: OpenOptions = {}): SqliteDb {
  if (!options.readonly && file !== '' && file !== ':memory:') createPrivately(file);
  const db = new Database(file, { readonly: options.readonly ?? false });
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  db.pragma('cache_size = -32000');
  db.pragma('temp_store = MEMORY');
  // A checkpoint resets the WAL but keeps its file as large as it ever grew: after the keyword index
  // of 1M passages was merged while searches held old snapshots, 360 MB of it (issue 15). Past this
  // size a reset truncates it; an idle daemon truncates it to nothing (truncateWal). A lower limit
  // made heavy ingest truncate and regrow the file at every reset.
  db.pragma('journal_size_limit = 67108864');
  sqliteVec.load(db);
  if (options.migrate) migrate(db);
  return db;
}

/**
 * The database holds every document and secret. SQLite would create its file with the process's
 * umask (0644 usually), and it gives the -wal and -shm files it creates later the database file's own
 * mode: a database file made 0600 first keeps all three readable by the owner only. An existing
 * file is left as it is (the daemon tightens its data dir at start, daemon/private.ts).
 */
function createPrivately(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    // Exactly 0600, whatever the umask took away.
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

export function schemaVersion(db: SqliteDb): number {
  const row = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'").get();
  if (!row) return 0;
  const v = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null };
  return v.v ?? 0;
}

export function migrate(db: SqliteDb): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const current = schemaVersion(db);
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      migration.run?.(db);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
    }).immediate();
  }
}

export function integrityCheck(db: SqliteDb): string {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).join('; ');
}

/** The database's file, which another thread may open too; null for a database in memory. */
export function databaseFile(db: Db): string | null {
  return sqlite(db).memory ? null : sqlite(db).name;
}
