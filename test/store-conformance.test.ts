// Every store engine passes the one contract (test/conformance/store.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../src/store/sqlite/db.js';
import { sqliteStore } from '../src/store/sqlite/store.js';
import { WriteGate } from '../src/store/sqlite/write-gate.js';
import { Writer } from '../src/store/sqlite/writer.js';
import { storeConformance } from './conformance/store.js';

t.test('SQLite (src/store/sqlite)', async (t) => {
  storeConformance(t, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trove-store-'));
    const db = openDatabase(join(dir, 'trove.db'), { migrate: true });
    const writer = new Writer(db, new WriteGate(), 'main');
    return {
      store: sqliteStore(db, (change) => writer.write(change)),
      close: async () => {
        await writer.drained();
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
