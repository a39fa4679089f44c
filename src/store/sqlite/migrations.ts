// Versioned schema migrations. Append new versions; never edit one that has shipped.
import { sqlite, type Db } from './sqlite.js';
import { WEBHOOK_MIGRATION_SQL } from './webhooks.js';
export interface Migration {
  version: number;
  sql: string;
  /** After `sql`, in the same transaction: for changes SQL cannot name up front (per-collection tables). */
  run?: (db: Db) => void;
}

/** The keyword index collections share (src/store/sqlite/keyword-index.ts). */
export const SHARED_FTS_TABLE = 'fts_shared';
/** The vectors table collections share (src/store/sqlite/vectors.ts). */
export const SHARED_VECTOR_TABLE = 'vec_shared';

/**
 * The tokenizer of the keyword index collections share: its text is the index terms FTS_TOKENIZE
 * made, space-separated, each behind its collection's key (`7:orchard`). FTS_TOKENIZE's terms hold only lower-case ASCII
 * letters, digits and non-ASCII characters: all token characters to `ascii`, which folds only ASCII
 * capitals, so each term comes back as exactly one token, itself, at the same offset.
 */
export const PRETOKENIZED_TOKENIZE = "ascii tokenchars ':'";

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL UNIQUE,
  secret_hash BLOB NOT NULL,
  scope TEXT NOT NULL,              -- JSON KeyScope; namespace refs stored as namespace IDs
  created_by TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE UNIQUE INDEX api_keys_name ON api_keys(name);

CREATE TABLE namespaces (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  display_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE UNIQUE INDEX namespaces_live_name ON namespaces(name) WHERE deleted_at IS NULL;

CREATE TABLE collections (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  namespace_rid INTEGER NOT NULL REFERENCES namespaces(rid),
  name TEXT NOT NULL,
  display_name TEXT,
  processing TEXT NOT NULL,
  access_control TEXT NOT NULL,
  generation INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE UNIQUE INDEX collections_live_name ON collections(namespace_rid, name) WHERE deleted_at IS NULL;

CREATE TABLE files (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  collection_rid INTEGER NOT NULL REFERENCES collections(rid),
  path TEXT NOT NULL,
  status TEXT NOT NULL,
  source_type TEXT NOT NULL,
  declared_content_type TEXT,
  content_type TEXT NOT NULL,
  bytes INTEGER,
  checksum TEXT,
  uri TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  error_code TEXT,
  error_message TEXT,
  version_id TEXT NOT NULL,
  indexed_version_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE UNIQUE INDEX files_live_path ON files(collection_rid, path) WHERE deleted_at IS NULL;
CREATE INDEX files_collection_status ON files(collection_rid, status) WHERE deleted_at IS NULL;

CREATE TABLE file_versions (
  id TEXT PRIMARY KEY,
  file_rid INTEGER NOT NULL REFERENCES files(rid),
  inline_text TEXT,
  blob_sha256 TEXT,
  upload_state TEXT,                -- 'waiting' until the signed PUT lands, then 'received'
  created_at TEXT NOT NULL
);
CREATE INDEX file_versions_file ON file_versions(file_rid);

CREATE TABLE passages (
  rid INTEGER PRIMARY KEY,
  file_rid INTEGER NOT NULL REFERENCES files(rid),
  ordinal INTEGER NOT NULL,
  evidence_kind TEXT NOT NULL,
  heading TEXT NOT NULL,
  text TEXT NOT NULL,
  char_start INTEGER NOT NULL,
  char_end INTEGER NOT NULL,
  location TEXT
);
CREATE INDEX passages_file ON passages(file_rid, ordinal);

CREATE TABLE jobs (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  namespace_rid INTEGER,
  collection_rid INTEGER,
  namespace TEXT,
  collection TEXT,
  file_rid INTEGER,
  file_id TEXT,
  version_id TEXT,
  runnable INTEGER NOT NULL DEFAULT 1,   -- 0 while an upload job waits for its bytes
  attempts INTEGER NOT NULL DEFAULT 0,
  error_code TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_claim ON jobs(status, runnable, rid);
CREATE INDEX jobs_namespace ON jobs(namespace_rid, rid);
CREATE INDEX jobs_file ON jobs(file_rid, status);
`,
  },
  {
    version: 2,
    sql: `
-- The embedding model a collection's vectors come from; mixing models is refused (needs :reindex).
ALTER TABLE collections ADD COLUMN embedding_model TEXT;
`,
  },
  {
    version: 3,
    sql: `
-- Access rules (retrieval-api.md, Access rule). The target is 'd' + folder or 'f' + file, so one
-- unique index enforces "one rule per target".
CREATE TABLE access_rules (
  -- AUTOINCREMENT: files point at their governing rule by rid, so a deleted rule's rid must never
  -- come back as another rule's (a delete and re-create in one batch would move files unseen).
  rid INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  collection_rid INTEGER NOT NULL REFERENCES collections(rid),
  folder TEXT,
  file TEXT,
  target TEXT NOT NULL,
  readers TEXT NOT NULL,            -- JSON array, in the order given
  sealed INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX access_rules_target ON access_rules(collection_rid, target);
-- One row per (rule, reader): retrieval joins a request's principals against it.
CREATE TABLE access_rule_readers (
  rule_rid INTEGER NOT NULL REFERENCES access_rules(rid) ON DELETE CASCADE,
  principal TEXT NOT NULL,
  PRIMARY KEY (principal, rule_rid)
) WITHOUT ROWID;
CREATE INDEX access_rule_readers_rule ON access_rule_readers(rule_rid);
-- The rule that governs each file (NULL: none, so nobody may read it in an enforced collection),
-- and the apply_access_rule job that is about to move it (hidden from retrieval until it succeeds).
ALTER TABLE files ADD COLUMN governing_rule_rid INTEGER;
ALTER TABLE files ADD COLUMN access_job_rid INTEGER;
CREATE INDEX files_access_job ON files(access_job_rid) WHERE access_job_rid IS NOT NULL;
-- Keys list in creation order; namespace keys see the collection keys of their namespace.
ALTER TABLE api_keys ADD COLUMN namespace_id TEXT;
UPDATE api_keys SET namespace_id = json_extract(scope, '$.namespace_id');
CREATE INDEX api_keys_namespace ON api_keys(namespace_id);
`,
  },
  {
    version: 4,
    sql: `
-- What indexing learned about a file worth telling its owner (JSON array of strings): a declared
-- content type the bytes contradict, pages read, pages read by OCR.
ALTER TABLE files ADD COLUMN notes TEXT;
`,
  },
  {
    version: 5,
    sql: `
-- Research runs (retrieval-api.md, Research run). The request is kept to run it (and re-run it after a
-- restart), without the query image: only what was read from it (image_description) is stored.
CREATE TABLE research_runs (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  namespace_rid INTEGER NOT NULL,
  collection_rid INTEGER NOT NULL,
  namespace TEXT NOT NULL,
  collection TEXT NOT NULL,
  key_id TEXT NOT NULL,
  idempotency_key TEXT,             -- cleared after 24 h, when the key may be reused
  body_hash TEXT NOT NULL,
  request TEXT NOT NULL,
  status TEXT NOT NULL,
  mode TEXT NOT NULL,
  progress TEXT,
  answer TEXT,
  sources TEXT,
  image_description TEXT,
  image_text TEXT,
  usage TEXT,
  error TEXT,
  deadline_at INTEGER NOT NULL,     -- epoch ms
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE UNIQUE INDEX research_idempotency ON research_runs(key_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX research_collection ON research_runs(collection_rid, rid);
CREATE INDEX research_status ON research_runs(status);
`,
  },
  {
    version: 6,
    sql: `
-- The outbox (decisions.md §6): one append-only log of every status change, written by triggers in
-- the same transaction as the change, so none is lost on a crash and none exists for a change that
-- rolled back. data holds the resource as its GET shows it (the workspace object.* events their
-- own fields). Kept 30 days (src/domain/events.ts sweeps).
CREATE TABLE events (
  rid INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  namespace_rid INTEGER,
  collection_rid INTEGER,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX events_namespace ON events(namespace_rid, rid);
CREATE INDEX events_created ON events(created_at);

CREATE VIEW job_json AS SELECT rid, json_object(
  'id', id, 'type', type, 'status', status, 'namespace', namespace, 'collection', collection, 'file_id', file_id,
  'error', CASE WHEN error_code IS NULL THEN NULL ELSE json_object('code', error_code, 'message', error_message) END,
  'created_at', created_at, 'updated_at', updated_at) AS data, namespace_rid, collection_rid FROM jobs;

CREATE TRIGGER events_job_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'job.updated', NEW.namespace_rid, NEW.collection_rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM job_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_job_status AFTER UPDATE OF status ON jobs WHEN NEW.status IS NOT OLD.status BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'job.updated', NEW.namespace_rid, NEW.collection_rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM job_json WHERE rid = NEW.rid;
END;

CREATE VIEW file_json AS SELECT f.rid, f.collection_rid, c.namespace_rid, f.status, f.id, f.path, f.version_id, c.id AS collection_id, n.id AS namespace_id, json_object(
  'id', f.id, 'path', f.path, 'status', f.status,
  'source', json_patch(json_object('type', f.source_type, 'content_type', f.content_type),
    json_object('bytes', f.bytes, 'checksum', f.checksum, 'uri', f.uri)),
  'metadata', json(f.metadata),
  'error', CASE WHEN f.error_code IS NULL THEN NULL ELSE json_object('code', f.error_code, 'message', f.error_message) END,
  'created_at', f.created_at, 'updated_at', f.updated_at) AS data
  FROM files f JOIN collections c ON c.rid = f.collection_rid JOIN namespaces n ON n.rid = c.namespace_rid;

CREATE TRIGGER events_file_status AFTER UPDATE OF status ON files WHEN NEW.status IS NOT OLD.status BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), t.type, v.namespace_rid, v.collection_rid,
         CASE WHEN t.type LIKE 'object.%' THEN json_object('workspaceId', v.namespace_id, 'bucketId', v.collection_id, 'key', v.path, 'versionId', v.version_id, 'fileId', v.id) ELSE v.data END,
         strftime('%Y-%m-%dT%H:%M:%fZ')
  FROM file_json v, (SELECT 'file.updated' AS type, 1 AS ord
                     UNION ALL SELECT 'file.ready', 2 WHERE NEW.status = 'ready'
                     UNION ALL SELECT 'object.indexed', 3 WHERE NEW.status = 'ready'
                     UNION ALL SELECT 'file.failed', 2 WHERE NEW.status = 'failed'
                     UNION ALL SELECT 'object.indexing_failed', 3 WHERE NEW.status = 'failed'
                     UNION ALL SELECT 'file.deleted', 2 WHERE NEW.status = 'deleting') t
  WHERE v.rid = NEW.rid ORDER BY t.ord;
END;
CREATE TRIGGER events_file_insert AFTER INSERT ON files BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'file.updated', v.namespace_rid, v.collection_rid, v.data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM file_json v WHERE v.rid = NEW.rid;
END;

-- A collection's status follows its files; it is reported when the collection changes: created,
-- edited, deleted, or its index moved on (each indexing batch bumps the generation).
CREATE VIEW collection_counts AS SELECT c.rid,
  (SELECT count(*) FROM files f WHERE f.collection_rid = c.rid AND f.deleted_at IS NULL AND f.status = 'pending') AS pending,
  (SELECT count(*) FROM files f WHERE f.collection_rid = c.rid AND f.deleted_at IS NULL AND f.status = 'indexing') AS indexing,
  (SELECT count(*) FROM files f WHERE f.collection_rid = c.rid AND f.deleted_at IS NULL AND f.status = 'ready') AS ready,
  (SELECT count(*) FROM files f WHERE f.collection_rid = c.rid AND f.deleted_at IS NULL AND f.status = 'failed') AS failed
  FROM collections c;

CREATE VIEW collection_json AS SELECT c.rid, c.namespace_rid, json_object(
  'id', c.id, 'namespace', n.name, 'name', c.name, 'display_name', c.display_name,
  'status', CASE
    WHEN c.deleted_at IS NOT NULL THEN 'deleting'
    WHEN k.pending + k.indexing + k.ready + k.failed = 0 THEN 'empty'
    WHEN k.pending + k.indexing > 0 THEN 'indexing'
    WHEN k.failed = 0 THEN 'ready'
    WHEN k.ready > 0 THEN 'degraded'
    ELSE 'failed' END,
  'processing', json(c.processing), 'access_control', c.access_control,
  'index_generation', CASE WHEN k.ready > 0 THEN 'gen-' || c.generation ELSE NULL END,
  'file_counts', json_object('pending', k.pending, 'indexing', k.indexing, 'ready', k.ready, 'failed', k.failed),
  'created_at', c.created_at, 'updated_at', c.updated_at) AS data
  FROM collections c JOIN namespaces n ON n.rid = c.namespace_rid JOIN collection_counts k ON k.rid = c.rid;

CREATE TRIGGER events_collection_insert AFTER INSERT ON collections BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'collection.updated', NEW.namespace_rid, NEW.rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM collection_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_collection_update AFTER UPDATE ON collections
  WHEN NEW.generation IS NOT OLD.generation OR NEW.deleted_at IS NOT OLD.deleted_at OR NEW.display_name IS NOT OLD.display_name
    OR NEW.processing IS NOT OLD.processing OR NEW.access_control IS NOT OLD.access_control BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'collection.updated', NEW.namespace_rid, NEW.rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM collection_json WHERE rid = NEW.rid;
END;

-- The collection settles (its last busy file ends) or starts indexing (its first file is added):
-- both change its status between indexing and ready/degraded/failed/empty.
CREATE TRIGGER events_collection_settled AFTER UPDATE OF status ON files
  WHEN NEW.status IS NOT OLD.status AND NEW.status NOT IN ('pending', 'indexing') AND OLD.status IN ('pending', 'indexing')
   AND NOT EXISTS (SELECT 1 FROM files WHERE collection_rid = NEW.collection_rid AND deleted_at IS NULL AND status IN ('pending', 'indexing')) BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'collection.updated', namespace_rid, rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM collection_json WHERE rid = NEW.collection_rid;
END;
CREATE TRIGGER events_collection_busy AFTER INSERT ON files
  WHEN NOT EXISTS (SELECT 1 FROM files WHERE collection_rid = NEW.collection_rid AND deleted_at IS NULL AND status IN ('pending', 'indexing') AND rid <> NEW.rid) BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'collection.updated', namespace_rid, rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM collection_json WHERE rid = NEW.collection_rid;
END;

CREATE TRIGGER events_collection_rebusy AFTER UPDATE OF status ON files
  WHEN NEW.status = 'pending' AND OLD.status NOT IN ('pending', 'indexing')
   AND NOT EXISTS (SELECT 1 FROM files WHERE collection_rid = NEW.collection_rid AND deleted_at IS NULL AND status IN ('pending', 'indexing') AND rid <> NEW.rid) BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'collection.updated', namespace_rid, rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM collection_json WHERE rid = NEW.collection_rid;
END;

CREATE VIEW research_json AS SELECT rid, namespace_rid, collection_rid, json_object(
  'id', id, 'namespace', namespace, 'collection', collection, 'status', status, 'mode', mode,
  'progress', json(progress), 'answer', answer, 'sources', json(sources), 'image_description', image_description,
  'usage', json(usage), 'error', json(error), 'created_at', created_at, 'updated_at', updated_at, 'completed_at', completed_at) AS data
  FROM research_runs;

CREATE TRIGGER events_research_insert AFTER INSERT ON research_runs BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.updated', NEW.namespace_rid, NEW.collection_rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_research_status AFTER UPDATE OF status ON research_runs WHEN NEW.status IS NOT OLD.status BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.updated', NEW.namespace_rid, NEW.collection_rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_research_progress AFTER UPDATE OF progress ON research_runs WHEN NEW.progress IS NOT OLD.progress AND NEW.progress IS NOT NULL BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.progress', NEW.namespace_rid, NEW.collection_rid, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;
`,
  },
  { version: 7, sql: WEBHOOK_MIGRATION_SQL },
  {
    version: 8,
    sql: `
-- Workspace API keys carry a revision, bumped by every PATCH (workspace-api.md, Workspace API key).
ALTER TABLE api_keys ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
`,
  },
  {
    version: 9,
    sql: `
-- A collection's vector version changes with every write to its vectors, so the dense stage's
-- in-memory copies (src/store/sqlite/vectors.ts) know when they are stale. Versions are drawn from one
-- sequence across collections, so a purged collection's rid reused later never repeats one.
CREATE TABLE vector_versions (collection_rid INTEGER PRIMARY KEY, version INTEGER NOT NULL);
`,
  },
  {
    version: 10,
    sql: `
-- Who may see an event (src/domain/event-audience.ts): research events only the key that created
-- the run (or a cluster key), so each carries that key; a webhook sees what the key that created it
-- may see, so each webhook remembers that key (NULL: made before this version, or by the operator);
-- a delivery keeps its event's collection and owner, so its log is filtered the same way after the
-- event itself has aged out of the outbox.
ALTER TABLE events ADD COLUMN owner_key_id TEXT;
UPDATE events SET owner_key_id = (SELECT r.key_id FROM research_runs r WHERE r.id = json_extract(events.data, '$.id'))
  WHERE type LIKE 'research.%';

DROP TRIGGER events_research_insert;
DROP TRIGGER events_research_status;
DROP TRIGGER events_research_progress;
CREATE TRIGGER events_research_insert AFTER INSERT ON research_runs BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, owner_key_id, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.updated', NEW.namespace_rid, NEW.collection_rid, NEW.key_id, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_research_status AFTER UPDATE OF status ON research_runs WHEN NEW.status IS NOT OLD.status BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, owner_key_id, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.updated', NEW.namespace_rid, NEW.collection_rid, NEW.key_id, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;
CREATE TRIGGER events_research_progress AFTER UPDATE OF progress ON research_runs WHEN NEW.progress IS NOT OLD.progress AND NEW.progress IS NOT NULL BEGIN
  INSERT INTO events (id, type, namespace_rid, collection_rid, owner_key_id, data, created_at)
  SELECT 'evt_' || lower(hex(randomblob(10))), 'research.progress', NEW.namespace_rid, NEW.collection_rid, NEW.key_id, data, strftime('%Y-%m-%dT%H:%M:%fZ') FROM research_json WHERE rid = NEW.rid;
END;

ALTER TABLE webhooks ADD COLUMN created_by_key_id TEXT;

ALTER TABLE webhook_deliveries ADD COLUMN event_collection_rid INTEGER;
ALTER TABLE webhook_deliveries ADD COLUMN event_owner_key_id TEXT;
UPDATE webhook_deliveries SET
  event_collection_rid = (SELECT e.collection_rid FROM events e WHERE e.id = webhook_deliveries.event_id),
  event_owner_key_id = (SELECT e.owner_key_id FROM events e WHERE e.id = webhook_deliveries.event_id);
`,
  },
  {
    version: 11,
    sql: `
-- Events without the per-row tax (issue 15): the store functions that change a job, file, collection
-- or research run write its events themselves, in the same transaction (src/store/sqlite/events.ts
-- appendEvent), so the triggers and the JSON views they read go. A collection's file counts are
-- counters kept with every change of a file's status or deletion (src/store/sqlite/files.ts), not four
-- count(*) over its files each time one file changes.
DROP TRIGGER events_job_insert;
DROP TRIGGER events_job_status;
DROP TRIGGER events_file_status;
DROP TRIGGER events_file_insert;
DROP TRIGGER events_collection_insert;
DROP TRIGGER events_collection_update;
DROP TRIGGER events_collection_settled;
DROP TRIGGER events_collection_busy;
DROP TRIGGER events_collection_rebusy;
DROP TRIGGER events_research_insert;
DROP TRIGGER events_research_status;
DROP TRIGGER events_research_progress;
DROP VIEW job_json;
DROP VIEW file_json;
DROP VIEW collection_json;
DROP VIEW collection_counts;
DROP VIEW research_json;

-- Living files (deleted_at IS NULL) by status; 'deleting' has no counter.
ALTER TABLE collections ADD COLUMN files_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE collections ADD COLUMN files_indexing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE collections ADD COLUMN files_ready INTEGER NOT NULL DEFAULT 0;
ALTER TABLE collections ADD COLUMN files_failed INTEGER NOT NULL DEFAULT 0;
UPDATE collections SET files_pending = k.pending, files_indexing = k.indexing, files_ready = k.ready, files_failed = k.failed
  FROM (SELECT collection_rid,
               count(*) FILTER (WHERE status = 'pending') AS pending,
               count(*) FILTER (WHERE status = 'indexing') AS indexing,
               count(*) FILTER (WHERE status = 'ready') AS ready,
               count(*) FILTER (WHERE status = 'failed') AS failed
        FROM files WHERE deleted_at IS NULL GROUP BY collection_rid) AS k
  WHERE k.collection_rid = collections.rid;
`,
  },
  {
    version: 12,
    sql: '',
    // Each collection kept its vectors twice: a sqlite-vec vec0 table for scans and vec_N_data for
    // lookups. Scans now run on an in-memory int8 copy re-scored from vec_N_data
    // (src/store/sqlite/vectors.ts), so the vec0 tables go (their shadow tables with them). The freed
    // pages are reused by later writes; VACUUM returns them to the file system.
    run: (db) => {
      const vec0 = sqlite(db).prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'vec_[0-9]*' AND sql LIKE '%USING vec0%'").all() as { name: string }[];
      for (const { name } of vec0) sqlite(db).exec(`DROP TABLE "${name}"`);
    },
  },
  {
    version: 13,
    // A passage that is a verbatim slice of its file's inline source (plain text; not Markdown, whose extraction changes the text)
    // keeps only its offsets and the version it was cut from; its text is read from that source.
    // The text was stored twice, a fifth of the data dir at 1M passages (issue 15, src/store/sqlite/passages.ts).
    sql: '',
    run: (db) => {
      // Re-runnable: a database rolled back to an older version by hand (tests do) keeps the column.
      addColumnIfMissing(db, 'passages', 'source_version_rid INTEGER');
    },
  },
  {
    version: 14,
    // The collection's own semantic model (issue 16, src/domain/search/collection-model.ts) and each
    // file's vector in it: one row a collection, one small row a file (64 bytes at 64 dimensions;
    // per passage would have broken the 1M data dir's 2× budget, issue 15).
    sql: `
CREATE TABLE IF NOT EXISTS collection_models (
  collection_rid INTEGER PRIMARY KEY REFERENCES collections(rid),
  version INTEGER NOT NULL,     -- bumped at every training: a reader's cached copy is stale when it differs
  files INTEGER NOT NULL,       -- ready files when it was trained; the next training waits for more
  model BLOB NOT NULL,
  trained_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_topics (
  file_rid INTEGER PRIMARY KEY REFERENCES files(rid),
  vector BLOB NOT NULL          -- the file's unit vector in its collection's model, int8 (× 127)
);
`,
  },
  {
    version: 15,
    // Each keyword index gets an fts5vocab 'instance' view of its postings: an enforced search scores
    // over the reader's passages only from it (src/store/sqlite/keyword-postings.ts). A view
    // stores nothing; made with its index, never on the search path (a temp table made there would
    // vanish with a rolled-back transaction).
    sql: '',
    run: (db) => {
      const indexes = sqlite(db).prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts_[0-9]*' AND sql LIKE '%USING fts5(%'").all() as { name: string }[];
      for (const { name } of indexes) sqlite(db).exec(createFtsInstancesSql(Number(name.slice('fts_'.length))));
    },
  },  {
    version: 16,
    // A collection's calibrated weight for its embedding provider's vote (issue 16, item 2;
    // src/domain/search/calibration.ts), fitted with each training of its model, and the provider it
    // was fitted for: under another provider the default weight applies. NULL: the default.
    // Idempotent like the migrations before it (a database may meet it twice).
    sql: '',
    run: (db) => {
      addColumnIfMissing(db, 'collection_models', 'semantic_weight REAL');
      addColumnIfMissing(db, 'collection_models', 'semantic_model TEXT');
    },
  },
  {
    version: 17,
    // How many times the indexing worker died while holding a job (src/domain/ingest/pipeline.ts
    // recoverFromWorkerDeath): a job that keeps killing it fails. Claims (`attempts`) also count
    // daemon restarts, which say nothing about the job. Idempotent like the migrations before it.
    sql: '',
    run: (db) => {
      addColumnIfMissing(db, 'jobs', 'worker_deaths INTEGER NOT NULL DEFAULT 0');
    },
  },
  {
    version: 18,
    // When a key last authenticated a request, to the minute (workspace-api.md, Workspace API key:
    // lastUsedAt; src/domain/keys.ts noteKeyUse). Idempotent like the migrations before it.
    sql: '',
    run: (db) => {
      addColumnIfMissing(db, 'api_keys', 'last_used_at TEXT');
    },
  },
  {
    version: 19,
    // Key names are unique within a namespace (and among cluster keys), not across namespaces: with
    // one global index, a key learnt from a 409 that a name was taken in another tenant (found by an
    // attack on the access rules). Names unique before stay unique, so the index always builds.
    sql: `
DROP INDEX IF EXISTS api_keys_name;
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_name_in_namespace ON api_keys(coalesce(namespace_id, ''), name);
`,
  },
  {
    version: 20,
    // The files whose source is a URI, found without reading the others: the indexing worker looks
    // for queued http(s) sources to fetch ahead on every turn (src/store/sqlite/jobs.ts queuedSourceFetches),
    // and scanning the whole queue for them cost a bulk ingest of inline files ~0.4 s.
    sql: `CREATE INDEX IF NOT EXISTS files_uri_sources ON files(rid) WHERE source_type = 'uri';`,
  },
  {
    version: 21,
    // A search's ranking as its first page saw it, which its later pages serve (src/store/sqlite/search-snapshots.ts):
    // in the database, not in one daemon's memory, so the next page may reach another daemon.
    sql: `
CREATE TABLE IF NOT EXISTS search_snapshots (
  rid INTEGER PRIMARY KEY AUTOINCREMENT, -- creation order: the oldest go first past the row cap
  id TEXT NOT NULL UNIQUE,               -- random; the signed cursor names it
  collection_rid INTEGER NOT NULL,
  binding TEXT NOT NULL,                 -- the key and request values the cursor is bound to
  page_one TEXT NOT NULL,                -- JSON: index_generation and stages the first page reported
  bytes INTEGER NOT NULL,                -- entries' length: the table's byte budget is summed from an index
  entries TEXT NOT NULL,                 -- JSON array, best first
  entry_count INTEGER NOT NULL,
  complete INTEGER NOT NULL,             -- 1 when the ranking ends with the entries
  expires_at INTEGER NOT NULL            -- ms since epoch
);
CREATE INDEX IF NOT EXISTS search_snapshots_expiry ON search_snapshots(expires_at);
CREATE INDEX IF NOT EXISTS search_snapshots_size ON search_snapshots(rid, bytes);
`,
  },
  {
    version: 22,
    // A collection is a key, not a table (src/store/sqlite/keyword-index.ts): collections made from
    // now on keep their keyword rows in one FTS5 table and their vectors in one table, keyed by
    // collection, so creating one and indexing its first files changes no schema. Every new table
    // made every connection re-read the whole schema: at 4,000 collections, a start took 3.65 s and
    // a new collection's first file 10 s. Collections made before keep the tables they have.
    sql: `
CREATE VIRTUAL TABLE IF NOT EXISTS ${SHARED_FTS_TABLE} USING fts5(heading, body, content='', contentless_delete=1, tokenize="${PRETOKENIZED_TOKENIZE}");
CREATE VIRTUAL TABLE IF NOT EXISTS ${SHARED_FTS_TABLE}_instances USING fts5vocab(${SHARED_FTS_TABLE}, 'instance');
CREATE TABLE IF NOT EXISTS ${SHARED_VECTOR_TABLE} (rid INTEGER PRIMARY KEY, collection_rid INTEGER NOT NULL, text_hash TEXT NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS ${SHARED_VECTOR_TABLE}_collection ON ${SHARED_VECTOR_TABLE}(collection_rid, rid);
-- Bumped with every change to a collection's rows in a pre-tokenized keyword index: what the
-- scorer's caches are keyed by (another tenant's writes to the shared table leave them valid).
CREATE TABLE IF NOT EXISTS keyword_versions (collection_rid INTEGER PRIMARY KEY, version INTEGER NOT NULL);
`,
  },
];

/**
 * ALTER TABLE … ADD COLUMN `definition` (its first word the column's name) unless the table has it:
 * what makes a migration re-runnable on a database that already met it.
 */
function addColumnIfMissing(db: Db, table: string, definition: string): void {
  const column = definition.split(' ')[0]!;
  const columns = sqlite(db).prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[];
  if (!columns.some((c) => c.name === column)) sqlite(db).exec(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
}

/** Passage vectors of a collection made before migration 22: the table is this name + `_data` (src/store/sqlite/vectors.ts). */
export function vectorTableName(collectionRid: number): string {
  if (!Number.isSafeInteger(collectionRid) || collectionRid <= 0) throw new Error(`bad collection rid ${collectionRid}`);
  return `vec_${collectionRid}`;
}


/** The keyword index of a collection made before migration 22, its own (src/store/sqlite/keyword-index.ts). */
export function ftsTableName(collectionRid: number): string {
  if (!Number.isSafeInteger(collectionRid) || collectionRid <= 0) throw new Error(`bad collection rid ${collectionRid}`);
  return `fts_${collectionRid}`;
}

/** The keyword index's tokenizer: src/store/sqlite/keyword-postings.ts tokenizes queries with the same one. */
export const FTS_TOKENIZE = 'porter unicode61 remove_diacritics 2';

/** A read-only view of a keyword index's postings, one row per occurrence (src/store/sqlite/keyword-postings.ts). */
export function ftsInstancesTableName(collectionRid: number): string {
  return `${ftsTableName(collectionRid)}_instances`;
}

function createFtsInstancesSql(collectionRid: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${ftsInstancesTableName(collectionRid)} USING fts5vocab(${ftsTableName(collectionRid)}, 'instance')`;
}

/** A collection's own keyword index as collections made before migration 22 have it (tests make such collections). */
export function createFtsTableSql(collectionRid: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${ftsTableName(collectionRid)} USING fts5(
    heading, body, content='', contentless_delete=1, tokenize='${FTS_TOKENIZE}');
  ${createFtsInstancesSql(collectionRid)}`;
}
