// Opening a data dir: lock, store, migrations, cluster key, services, indexing worker, app.
// `trove daemon start` wraps this in an HTTP server; tests use it in-process without a port.
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { nowIso } from '../src/contract/ids.js';
import { entryFile } from '../src/contract/package-files.js';
import { defaultDataDir } from './paths.js';
import { isAlive, readListeningRecord } from './listening.js';
import { tightenDataDir } from './private.js';
import { UserError } from './user-error.js';
import { ERROR_TABLE } from '../src/contract/errors.js';
import type { Services } from '../src/domain/context.js';
import { openFsBlobStore, type FsBlobStore } from '../src/store/fs-blobs/fs-blob-store.js';
import { ensureClusterKey } from '../src/domain/keys.js';
import { createGenerator, type GenerationConfig } from '../src/domain/answer/config.js';
import type { Generator } from '../src/domain/answer/generator.js';
import { startResearchRunner, type ResearchRunner } from '../src/domain/answer/research.js';
import { sweepEvents } from '../src/domain/events.js';
import { purgeExpired } from '../src/domain/restore.js';
import { startWebhookDispatcher, type WebhookDispatcher } from '../src/domain/webhooks/dispatcher.js';
import { shutdownOcr } from '../src/domain/ingest/formats/ocr.js';
import { UPLOAD_URL_TTL_MS } from '../src/domain/signed-urls.js';
import { INDEXING_LIMITS } from '../src/domain/limits.js';
import { DenseSearcher } from '../src/domain/search/dense-pool.js';
import type { VectorMemory } from '../src/domain/search/vector-memory.js';
import { workerExecArgv } from '../src/domain/threads.js';
import { lazyEmbedding, type EmbeddingConfig } from '../src/domain/embed/config.js';
import { configFilePath } from '../src/domain/config-file.js';
import type { WebhookConfig } from '../src/domain/webhooks/config.js';
import { readConfigFile, resolveFileSettings, resolveMcpSettings, resolveWebhookConfig, type FileSettings } from './config.js';
import type { ConfigFile } from '../src/domain/config-file.js';
import { DEFAULT_MCP_SETTINGS, type McpSettings } from '../src/domain/mcp-settings.js';
import type { FromWorker, ToWorker, WorkerInit } from '../src/domain/ingest/worker-thread.js';
import { createApp, type App } from '../src/http/app.js';
import { withMcp } from '../src/mcp/http.js';
import { packageVersion } from '../src/contract/version.js';
import { FileRoots } from '../src/domain/file-roots.js';
import type { Logger } from '../src/http/router.js';
import { openDatabase, type SqliteDb } from '../src/store/sqlite/db.js';
import { requeueInterruptedWork } from '../src/store/sqlite/jobs.js';
import { getOrCreateSecret } from '../src/store/sqlite/meta.js';
import { WriteGate } from '../src/store/sqlite/write-gate.js';
import { Writer } from '../src/store/sqlite/writer.js';
import { sqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/interface.js';

export { defaultDataDir };

export interface RuntimeOptions {
  dataDir?: string | undefined;
  ephemeral?: boolean;
  /** TROVE_CLUSTER_KEY: accept this secret as the cluster key (decisions.md §1). */
  clusterKey?: string | undefined;
  fileRoots?: string[];
  allowPrivateSources?: boolean;
  /** The embedding provider; by default from `<data-dir>/config.json` and TROVE_EMBEDDING_* (daemon/config.ts). */
  embedding?: EmbeddingConfig;
  /** The in-memory vector copies' budget; by default from `<data-dir>/config.json` and TROVE_VECTOR_MEMORY (daemon/config.ts). */
  vectorMemory?: VectorMemory;
  /** Lifetime of signed upload URLs (default one hour); tests shorten it. */
  uploadTtlMs?: number;
  /** false: open without the indexing worker, so queued jobs stay queued (tests of in-between states). */
  indexer?: boolean;
  /**
   * Webhook delivery: allowInsecure (decisions.md §6: http:// to loopback, for a developer's machine
   * or CI) and retryScale (tests compress the ~75-hour schedule); by default from TROVE_* (daemon/config.ts).
   */
  webhooks?: Partial<WebhookConfig>;
  /** `/mcp`'s allowed origins and hosts and its reply budget; by default from `<data-dir>/config.json` and TROVE_MCP_* (daemon/config.ts). */
  mcp?: Partial<McpSettings>;
  /** false: open without the webhook dispatcher (tests that drive their own). */
  webhookDispatcher?: boolean;
  /** false: open without the research runner, so queued runs stay queued (tests of restarts). */
  researchRunner?: boolean;
  /** The answer generator; by default from `<data-dir>/config.json` and TROVE_GENERATION_* (daemon/config.ts). */
  generation?: GenerationConfig;
  log?: Logger & { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
}

export interface Runtime {
  app: App;
  services: Services;
  /** The SQLite engine's connection, for the engine's own tests; the domain has only Services.store. */
  db: SqliteDb;
  /**
   * Runs a change on `db` in a write transaction through the daemon's writer (tests that set up
   * what the interface has no write for); resolves after COMMIT.
   */
  write<T>(change: () => T | Promise<T>): Promise<T>;
  dataDir: string;
  clusterKeyFile: string;
  /** The file:// roots: the start-up ones and those the operator grants while it runs. */
  roots: FileRoots;
  startedAt: Date;
  /** The data dir's write token, shared with the indexing worker (src/store/sqlite/write-gate.ts). */
  writeGate: WriteGate;
  setPublicBaseUrl(url: string): void;
  /**
   * The first step of stopping (docs/decisions.md, "Stopping"): `ready()` turns false, so new
   * requests are answered 503 and event streams and subscriptions end; requests in flight go on.
   */
  stopServing(): void;
  /** The end of the shutdown drain: `Services.shutdown` aborts, and work still running for a request gives up. */
  abandonRequests(): void;
  /** Stops serving, abandons what still runs, stops the workers and closes the store. */
  close(): Promise<void>;
}

/** Another daemon uses the data dir: a conflict, exit 6 as ERROR_TABLE's already_exists. */
export class DataDirLockedError extends UserError {
  constructor(message: string) {
    super(message, ERROR_TABLE.already_exists.exitCode);
    this.name = 'DataDirLockedError';
  }
}


const heldLocks = new Set<string>();

/** One daemon per data dir: a lock file holding the owner's pid; a dead owner's lock is taken over. */
function acquireLock(dataDir: string): () => void {
  const lockFile = join(dataDir, 'daemon.lock');
  if (heldLocks.has(lockFile)) throw new DataDirLockedError(`Another trove daemon in this process is already using the data dir ${dataDir}.`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      heldLocks.add(lockFile);
      return () => {
        heldLocks.delete(lockFile);
        rmSync(lockFile, { force: true });
      };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The message alone, as for every data-dir mistake (docs/daemon.md); a stack helped nobody
      // (found by a packed-install test).
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
        throw new UserError(`Cannot write to the data dir ${dataDir} (${code}): it must be writable by this user. Start with --data-dir <a writable dir>, or fix its permissions.`, 1, { cause: err });
      }
      if (code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        // Saying where it listens answers the usual question behind a second start ("is it up, and where?").
        const record = readListeningRecord(dataDir);
        const where = record?.pid === pid ? `, listening on ${record.url}` : '';
        throw new DataDirLockedError(`Another trove daemon (pid ${pid}${where}) is already using the data dir ${dataDir}. Stop it first, or start this one with --data-dir <another dir>.`);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock the data dir ${dataDir}.`);
}

const silentLog = { info() {}, warn() {}, error() {} };
type RuntimeLog = NonNullable<RuntimeOptions['log']>;

/** How often old events and deleted data past their recovery window are swept. */
const SWEEP_INTERVAL_MS = 3600_000;

export async function openRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const startedAt = new Date();
  const log = options.log ?? silentLog;
  const dataDir = createDataDir(options);
  const releaseLock = acquireLock(dataDir);
  let store: OpenedDatabase | undefined;
  try {
    const blobs = await prepareDataDir(dataDir, log);
    store = openStore(dataDir, log);
    const { db, dbFile } = store;
    // From here on every write of this thread goes through the writer.
    const writeGate = new WriteGate();
    const writer = new Writer(db, writeGate, 'main');
    const troveStore = sqliteStore(db, (change) => writer.write(change));
    await ensureClusterKeyFile(troveStore, store.clusterKeyFile, options.clusterKey);
    const settings = runtimeSettings(options, dataDir);
    // One array, shared by Services and the worker's start-up data, edited in place by `roots`.
    const fileRoots = await FileRoots.initialRoots(troveStore, options.fileRoots ?? []);
    const allowPrivateSources = options.allowPrivateSources ?? false;
    const uploadTtlMs = options.uploadTtlMs ?? UPLOAD_URL_TTL_MS;
    const dense = new DenseSearcher(dbFile, { vectorMemoryBytes: settings.vectorMemory.bytes });
    const worker: WorkerHandle =
      options.indexer === false
        ? idleWorker()
        : startWorker({ embedding: settings.embedding, dbFile, writeGate: writeGate.buffer, blobsDir: blobs.dir, fileRoots, allowPrivateSources, uploadTtlMs, ...INDEXING_LIMITS }, writeGate, log);

    let generator: Generator | undefined;
    let research: ResearchRunner | undefined;
    let webhooks: WebhookDispatcher | undefined;
    let publicBaseUrl = 'http://127.0.0.1';
    let ready = false;
    const shutdown = new AbortController();
    // Files added in the same turn (a group commit answers several requests at once) wake the
    // worker with one message, not one each: the worker claims everything queued when it wakes.
    let wakeQueued = false;
    const wakeWorker = () => {
      if (wakeQueued) return;
      wakeQueued = true;
      queueMicrotask(() => {
        wakeQueued = false;
        worker.post({ type: 'wake' });
      });
    };
    const services: Services = {
      store: troveStore,
      dataDir,
      blobs,
      cursorSecret: store.cursorSecret,
      urlSecret: store.urlSecret,
      fileRoots,
      allowPrivateSources,
      uploadTtlMs,
      // Loaded on the first semantic query, not at start-up (start-up must stay fast).
      embedding: lazyEmbedding(settings.embedding),
      denseSearch: (query) => dense.search(query),
      generation: settings.generation,
      generator: async () => (generator ??= createGenerator(settings.generation)),
      research: { wake: () => research?.wake(), abort: (rid) => research?.abort(rid) },
      webhooks: settings.webhooks,
      wakeWebhookDispatcher: () => webhooks?.wake(),
      notifyWork: wakeWorker,
      notifyCancel: (jobId) => worker.post({ type: 'cancel', jobId }),
      publicBaseUrl: () => publicBaseUrl,
      ready: () => ready,
      shutdown: shutdown.signal,
      indexerAlive: () => worker.alive(),
    };
    const roots = await FileRoots.open(troveStore, options.fileRoots ?? [], fileRoots, (list) => worker.post({ type: 'roots', fileRoots: list }));
    // MCP's Streamable HTTP transport at /mcp sits in front of the API it calls (src/mcp/http.ts).
    const app = withMcp(createApp(services, log), { version: packageVersion(), listeningUrl: () => publicBaseUrl, settings: settings.mcp });
    if (options.researchRunner !== false) research = startResearchRunner(services, log);
    if (settings.webhooks.allowInsecure) log.warn('--allow-insecure-webhooks: webhooks may deliver over http:// to loopback addresses');
    if (options.webhookDispatcher !== false) webhooks = startWebhookDispatcher(services, { log });
    const stopSweeping = startSweeper(services, log);
    ready = true;
    worker.post({ type: 'wake' });
    return {
      app,
      services,
      db,
      write: (change) => writer.write(change),
      dataDir,
      clusterKeyFile: store.clusterKeyFile,
      roots,
      startedAt,
      writeGate,
      setPublicBaseUrl: (url) => {
        publicBaseUrl = url;
      },
      stopServing: () => {
        ready = false;
      },
      abandonRequests: () => {
        ready = false;
        shutdown.abort();
      },
      close: async () => {
        ready = false;
        shutdown.abort();
        stopSweeping();
        // The research runner stops before the store closes: a run it was executing stays
        // `running` and is re-queued by the next start (never marked failed for a shutdown).
        await research?.stop();
        await webhooks?.stop();
        // Query images are read by OCR on this thread's own engine; it must stop too.
        await Promise.all([worker.stop(), dense.close(), shutdownOcr()]);
        // Writes already queued commit (or fail) before the store closes; none is cut off half-way.
        await writer.drained();
        db.close();
        releaseLock();
        if (options.ephemeral) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    store?.db.close();
    releaseLock();
    throw err;
  }
}

/** The data dir, made if missing (private: 0700); an ephemeral one is a new temporary folder. */
function createDataDir(options: RuntimeOptions): string {
  let dataDir: string;
  try {
    dataDir = options.ephemeral ? mkdtempSync(join(tmpdir(), 'trove-')) : resolve(options.dataDir ?? defaultDataDir());
  } catch (err) {
    throw new UserError(`Cannot create an ephemeral data dir in ${tmpdir()} (the system's temporary folder; TMPDIR sets it): ${(err as Error).message}`, 1, { cause: err });
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new UserError(`Cannot create the data dir ${dataDir}: ${(err as Error).message}`, 1, { cause: err });
  }
  return dataDir;
}

/** Makes the (locked) data dir private and its blob store ready. */
async function prepareDataDir(dataDir: string, log: RuntimeLog): Promise<FsBlobStore> {
  // mkdirSync's mode applies only to a folder it creates: an existing data dir (an older version's,
  // or one made by hand) may be open to other users, and so may what is in it.
  const tightened = tightenDataDir(dataDir);
  if (tightened.changed.length > 0) {
    log.warn('the data dir was readable by other users: removed their permissions (folders 0700, files 0600)', {
      data_dir: dataDir,
      paths: tightened.changed.length,
      examples: tightened.changed.slice(0, 5),
    });
  }
  for (const failed of tightened.failed) log.warn('could not make a path of the data dir private', { data_dir: dataDir, path: failed.path, reason: failed.reason });
  const blobs = openFsBlobStore(join(dataDir, 'blobs'));
  // Safe only now that the lock is held: no other daemon on this data dir can be receiving one.
  const unfinished = await blobs.removeUnfinishedUploads();
  if (unfinished > 0) log.info('removed uploads left half-written by the last shutdown', { files: unfinished });
  return blobs;
}

interface OpenedDatabase {
  db: SqliteDb;
  dbFile: string;
  clusterKeyFile: string;
  cursorSecret: Buffer;
  urlSecret: Buffer;
}

/** The cluster key exists, and its file holds its secret when one was minted or supplied. */
async function ensureClusterKeyFile(store: Store, clusterKeyFile: string, supplied: string | undefined): Promise<void> {
  // A lost key file means a lost cluster key: mint a new one rather than lock the user out.
  const secret = await store.write((tx) => ensureClusterKey(tx, supplied, !existsSync(clusterKeyFile)));
  if (secret) {
    writeFileSync(clusterKeyFile, secret + '\n', { mode: 0o600 });
    chmodSync(clusterKeyFile, 0o600);
  }
}

/**
 * Opens and migrates the database, re-queues what the last shutdown interrupted, and makes sure of
 * the cursor and URL secrets.
 */
function openStore(dataDir: string, log: RuntimeLog): OpenedDatabase {
  const dbFile = join(dataDir, 'trove.db');
  const db = openDatabase(dbFile, { migrate: true });
  try {
    const clusterKeyFile = join(dataDir, 'cluster-key');
    const recovered = db.transaction(() => requeueInterruptedWork(db, nowIso())).immediate();
    if (recovered.jobs > 0) log.info('re-queued jobs interrupted by the last shutdown', { jobs: recovered.jobs, files: recovered.files });
    const { cursorSecret, urlSecret } = db.transaction(() => ({ cursorSecret: getOrCreateSecret(db, 'cursor_secret'), urlSecret: getOrCreateSecret(db, 'url_secret') })).immediate();
    return { db, dbFile, clusterKeyFile, cursorSecret, urlSecret };
  } catch (err) {
    db.close();
    throw err;
  }
}

interface RuntimeSettings extends FileSettings {
  webhooks: WebhookConfig;
  mcp: McpSettings;
}

/**
 * The settings the runtime was given. `trove daemon start` resolves every one before it opens the
 * runtime (daemon/config.ts); an in-process caller may leave some out, and gets them the same way,
 * from the environment and the data dir's config.json.
 */
function runtimeSettings(options: RuntimeOptions, dataDir: string): RuntimeSettings {
  let fromFile: FileSettings | undefined;
  let file: ConfigFile | undefined;
  const configFile = () => (file ??= readConfigFile(configFilePath(dataDir)));
  const fileSettings = () => (fromFile ??= resolveFileSettings(process.env, configFile()));
  return {
    embedding: options.embedding ?? fileSettings().embedding,
    generation: options.generation ?? fileSettings().generation,
    vectorMemory: options.vectorMemory ?? fileSettings().vectorMemory,
    webhooks: { ...resolveWebhookConfig({}, process.env), ...options.webhooks },
    mcp: { ...(options.mcp === undefined ? resolveMcpSettings({}, process.env, configFile()) : DEFAULT_MCP_SETTINGS), ...options.mcp },
  };
}

/**
 * Sweeps now and then hourly: the event log keeps 30 days (decisions.md §6); deleted namespaces and
 * collections are purged after their recovery window (decisions.md §5). Returns the stop.
 */
function startSweeper(services: Services, log: RuntimeLog): () => void {
  const sweep = async () => {
    try {
      await sweepEvents(services);
      const purged = await purgeExpired(services);
      if (purged.collections + purged.namespaces > 0) log.info('purged deleted data past its recovery window', purged);
    } catch (err) {
      log.error('the sweep of old events and deleted data failed', { cause: String((err as Error)?.stack ?? err) });
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Stands in for the worker when a runtime opens without one: nothing runs, nothing breaks. */
function idleWorker(): WorkerHandle {
  return { post: () => undefined, alive: () => false, stop: async () => undefined };
}

interface WorkerHandle {
  post(msg: ToWorker): void;
  alive(): boolean;
  stop(): Promise<void>;
}

/** The indexing worker thread; restarted if it dies, stopped cleanly on close. */
function startWorker(init: WorkerInit, gate: WriteGate, log: RuntimeLog): WorkerHandle {
  let worker: Worker;
  let running = false;
  let stopping = false;
  let stopped: (() => void) | null = null;
  let respawn: NodeJS.Timeout | null = null;
  // Deaths since the worker last finished a job, and whether the last one was the machine's fault.
  let deaths = 0;
  let machineFault = false;
  const spawn = (afterDeath: WorkerInit['afterDeath']) => {
    respawn = null;
    machineFault = false;
    worker = new Worker(entryFile('ingest-worker'), { workerData: { ...init, afterDeath } satisfies WorkerInit, execArgv: workerExecArgv() });
    running = true;
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'progress') deaths = 0;
      if (msg.type === 'error') {
        machineFault = msg.machine === true;
        log.error('indexing worker failed', { cause: msg.message });
      }
      if (msg.type === 'warning') log.warn(msg.message, msg.fields);
      if (msg.type === 'recovered' && msg.requeued + msg.failed > 0) log.warn('re-queued the jobs the indexing worker held when it stopped', { jobs: msg.requeued, failed: msg.failed });
    });
    worker.on('error', (err) => log.error('indexing worker crashed', { cause: String(err.stack ?? err) }));
    worker.on('exit', () => {
      running = false;
      // A worker that died mid-write had its transaction rolled back with its connection; its token must not outlive it.
      if (gate.releaseAbandoned('worker')) log.warn('the indexing worker stopped while writing; its unfinished transaction was rolled back');
      if (stopping) stopped?.();
      else {
        deaths++;
        // Waits longer after each death in a row (0.5 s, 1 s, 2 s … 30 s): a disk that is full stays full for a while.
        const delay = Math.min(30_000, 500 * 2 ** (deaths - 1));
        log.warn('indexing worker exited; restarting it', { in_ms: delay });
        const afterDeath = { countDeath: !machineFault };
        respawn = setTimeout(() => spawn(afterDeath), delay);
        respawn.unref();
      }
    });
  };
  spawn(undefined);
  return {
    post: (msg) => {
      if (running) worker.postMessage(msg);
    },
    alive: () => running,
    stop: () =>
      new Promise<void>((resolveStop) => {
        stopping = true;
        if (respawn) clearTimeout(respawn);
        // A worker already down (crashed, waiting to respawn) has nothing to stop.
        if (!running) return resolveStop();
        stopped = resolveStop;
        worker.postMessage({ type: 'stop' } satisfies ToWorker);
        // A job stuck in a long fetch must not hold shutdown forever; its job is re-queued at next start.
        setTimeout(() => void worker.terminate(), 10_000).unref();
      }),
  };
}
