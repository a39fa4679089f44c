// The SQLite engine's vector tables: what migration 12 leaves of the vec0 tables sqlite-vec once held.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../../src/store/sqlite/db.js';

t.test('migration 12 drops the vec0 copies and keeps the vectors', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-m12-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(path.join(dir, 'trove.db'), { migrate: true });
  t.teardown(() => db.close());
  // A database as version 11 left it: a collection's vectors in a vec0 table and in its _data table.
  db.prepare('DELETE FROM schema_migrations WHERE version >= 12').run();
  db.exec('CREATE VIRTUAL TABLE vec_5 USING vec0(shard integer partition key, embedding float[4])');
  db.exec('CREATE TABLE vec_5_data (rid INTEGER PRIMARY KEY, text_hash TEXT NOT NULL, embedding BLOB NOT NULL)');
  const v = Buffer.from(new Float32Array([1, 0, 0, 0]).buffer);
  db.prepare('INSERT INTO vec_5 (rowid, shard, embedding) VALUES (1, 1, ?)').run(v);
  db.prepare("INSERT INTO vec_5_data VALUES (1, 'h', ?)").run(v);
  migrate(db);
  const names = (db.prepare("SELECT name FROM sqlite_master WHERE name GLOB 'vec_5*'").all() as { name: string }[]).map((r) => r.name);
  t.same(names, ['vec_5_data'], 'the vec0 table and its shadow tables are gone');
  t.equal((db.prepare('SELECT count(*) AS n FROM vec_5_data').get() as { n: number }).n, 1, 'the vectors stay');
});
