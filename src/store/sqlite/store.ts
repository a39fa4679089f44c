// The SQLite engine behind the store interface: one connection per thread, writes through the data
// dir's one writer (writer.ts). Its calls run synchronously and settle in microtasks, so a change
// keeps the single-writer guarantees of a synchronous transaction.
import type { Store, StoreTx } from '../interface.js';
import type { Db } from './db.js';
import { sqliteAccessRules } from './access-rules.js';
import { sqliteCollectionModels } from './collection-models.js';
import { sqliteCollections } from './collections.js';
import { sqliteEvents } from './events.js';
import { sqliteFiles } from './files.js';
import { sqliteJobs } from './jobs.js';
import { sqliteKeys } from './keys.js';
import { sqliteKeywordIndex } from './keyword-postings.js';
import { sqliteNamespaces } from './namespaces.js';
import { sqliteOperator } from './operator.js';
import { sqlitePassages } from './passages.js';
import { sqliteResearch } from './research.js';
import { sqliteRetention } from './purge.js';
import { sqliteRetrievableFiles } from './search.js';
import { sqliteSearchSnapshots } from './search-snapshots.js';
import { sqliteVectors } from './vectors.js';
import { untilWriteAsync } from './read-cache.js';
import { sqliteWebhooks } from './webhooks.js';
import type { WriteFn } from './writer.js';

export function sqliteStore(db: Db, write: WriteFn): Store {
  // One connection: a transaction's reads and writes are the connection's own.
  const tx: StoreTx = {
    accessRules: sqliteAccessRules(db),
    collectionModels: sqliteCollectionModels(db),
    collections: sqliteCollections(db),
    events: sqliteEvents(db),
    files: sqliteFiles(db),
    jobs: sqliteJobs(db),
    keys: sqliteKeys(db),
    keywordIndex: sqliteKeywordIndex(db),
    namespaces: sqliteNamespaces(db),
    operator: sqliteOperator(db),
    passages: sqlitePassages(db),
    research: sqliteResearch(db),
    retention: sqliteRetention(db),
    retrievableFiles: sqliteRetrievableFiles(db),
    searchSnapshots: sqliteSearchSnapshots(db),
    vectors: sqliteVectors(db),
    webhooks: sqliteWebhooks(db),
  };
  return {
    ...tx,
    untilChanged: (key, compute) => untilWriteAsync(db, key, compute),
    write: (change) => write(() => change(tx)),
  };
}
