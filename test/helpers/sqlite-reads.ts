// The store interface over a SQLite connection a test built by hand, for reads: the SQLite engine's
// own tests set rows up with SQL and then read them as the domain does.
import type { Store } from '../../src/store/interface.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';

export function sqliteReads(db: Db): Store {
  return sqliteStore(db, () => Promise.reject(new Error('this test store only reads')));
}
