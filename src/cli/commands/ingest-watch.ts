// `trove ingest <folder> --watch`: mirror the folder once (which also reconciles whatever changed
// while nothing watched), then keep the collection in step with the folder until SIGINT/SIGTERM.
// The batching, debounce and retry decisions live in src/cli/watch-plan.ts; this file does the I/O.
import { readFileSync, statSync, type Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import ignore from 'ignore';
import type { Collection, TroveFile } from '../../client/index.js';
import { ApiClient, CliApiError, CliError, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { decideRemovals, planIngest } from '../ingest-plan.js';
import { excludeMatcher, exclusionOf, isIgnored, walkFolder, type ExcludeMatcher, type IgnoreLayer, type SkippedEntry, type WalkOptions } from '../walk.js';
import { partitionReadable, unreadableSummary, type UnreadableFile } from '../readable-plan.js';
import {
  realTimers,
  recordEvent,
  scopeSync,
  SyncScheduler,
  type ChangeBatch,
  type SyncOutcome,
  type WatchEventName,
} from '../watch-plan.js';
import { errOut, out } from '../io.js';
import {
  applyPlan,
  checkName,
  collectionOcr,
  CONCURRENCY,
  ensureCollection,
  hashFile,
  listRemote,
  mapLimit,
  markStuckUploads,
  waitForIndexing,
  type FileFailure,
  type IngestOptions,
  type Local,
  type ProgressMode,
  excludedSummary,
  removalNotes,
} from './ingest.js';

const MAX_DEBOUNCE_MS = 600_000;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 10_000;
/** A folder that never falls quiet (a log written every few ms) still syncs at least this often. */
const MIN_MAX_WAIT_MS = 5_000;
const WATCH_EVENTS = new Set<string>(['add', 'change', 'unlink', 'addDir', 'unlinkDir']);

/** Errors no retry can fix: the key is refused, or the command itself is wrong. */
function isFatal(err: unknown): boolean {
  if (err instanceof CliApiError) return err.code === 'unauthenticated' || err.code === 'forbidden';
  return err instanceof CliError && err.exitCode === 2;
}

export function parseDebounce(raw: string | undefined): number {
  const value = raw ?? '300';
  if (!/^\d+$/.test(value) || Number(value) > MAX_DEBOUNCE_MS) {
    throw new CliError(`--debounce takes milliseconds from 0 to ${MAX_DEBOUNCE_MS}, got '${value}'.`, 2);
  }
  return Number(value);
}

export async function runIngestWatch(folder: string, globalOpts: GlobalOptions, opts: IngestOptions): Promise<number> {
  const json = Boolean(opts.json);
  let session: WatchSession;
  try {
    if (opts.dryRun) throw new CliError('--watch and --dry-run do not go together: a dry run changes nothing, so there is nothing to keep in step.', 2);
    const namespace = checkName(opts.namespace, 'namespace');
    const collection = checkName(opts.collection, 'collection');
    const debounceMs = parseDebounce(opts.debounce);
    const folderStat = await stat(folder).catch(() => null);
    if (!folderStat?.isDirectory()) throw new CliError(`${folder} is not a folder.`, 2);
    const conn = await resolveConnection(globalOpts);
    session = new WatchSession({
      root: await realpath(folder),
      namespace,
      collection,
      client: new HaltableClient(conn.url, conn.key, conn.keySource),
      json,
      quiet: Boolean(globalOpts.quiet),
      wait: opts.wait !== false,
      debounceMs,
      folder,
      prune: Boolean(opts.prune),
      yes: Boolean(opts.yes),
      allowEmpty: Boolean(opts.allowEmpty),
      walk: { hidden: Boolean(opts.hidden), secrets: Boolean(opts.includeSecrets), exclude: opts.exclude ?? [] },
      includeUnsupported: Boolean(opts.includeUnsupported),
    });
  } catch (err) {
    return reportError(err, json);
  }
  return session.run();
}

/** An ApiClient that can refuse every new request, so that a sync in progress ends soon after a stop. */
class HaltableClient extends ApiClient {
  private halted = false;

  halt(): void {
    this.halted = true;
  }

  // An upload already accepted by the daemon still gets its bytes (upload is not overridden): a file
  // added without them would wait, pending, for the next run to notice.
  override request<T = unknown>(method: string, path: string, body?: unknown, options?: { auth?: boolean }): Promise<T> {
    if (this.halted) return Promise.reject(new CliError('The watcher is stopping.', 1, 'stopping'));
    return super.request<T>(method, path, body, options);
  }
}

/**
 * Answers chokidar's `ignored` question the way walkFolder decides what to skip: .git anywhere, and
 * the .gitignore files of the path's folders (nearest first). Rules are read once per folder, and
 * again after reset().
 */
class GitignoreMatcher {
  private readonly layers = new Map<string, IgnoreLayer | null>();
  private readonly excluded: ExcludeMatcher;

  constructor(
    private readonly root: string,
    /** Hidden, secret-looking and --exclude'd paths are left out as walkFolder leaves them out (walk.ts). */
    private readonly policy: Pick<WalkOptions, 'hidden' | 'secrets' | 'exclude'> = {},
  ) {
    this.excluded = excludeMatcher(policy.exclude);
  }

  reset(): void {
    this.layers.clear();
  }

  ignores(absPath: string, stats?: Stats): boolean {
    const rel = relativePath(this.root, absPath);
    if (rel === null || rel === '') return false;
    const parts = rel.split('/');
    if (parts.includes('.git')) return true;
    for (let depth = 0; depth < parts.length - 1; depth++) {
      if (exclusionOf(parts[depth]!, true, this.policy) || this.excluded(parts.slice(0, depth + 1).join('/'), true)) return true;
    }
    if (parts[parts.length - 1] !== '.gitignore' && this.excluded(rel, stats ? stats.isDirectory() : isDirectory(absPath))) return true;
    // The .gitignore files stay watched (below): they are rules, not documents.
    const last = parts[parts.length - 1]!;
    if (last !== '.gitignore' && exclusionOf(last, stats ? stats.isDirectory() : isDirectory(absPath), this.policy)) return true;
    const layers: IgnoreLayer[] = [];
    for (let depth = 0; depth < parts.length; depth++) {
      const layer = this.layerOf(parts.slice(0, depth).join('/'));
      if (layer) layers.push(layer);
      const entry = parts.slice(0, depth + 1).join('/');
      if (depth < parts.length - 1) {
        // Git never looks inside an ignored folder, so nothing below it can be let back in.
        if (isIgnored(layers, entry, true)) return true;
      } else {
        // The rules themselves are always watched: a change to them changes what is ignored.
        if (parts[depth] === '.gitignore') return false;
        return isIgnored(layers, entry, stats ? stats.isDirectory() : isDirectory(absPath));
      }
    }
    return false;
  }

  private layerOf(dir: string): IgnoreLayer | null {
    const cached = this.layers.get(dir);
    if (cached !== undefined) return cached;
    let layer: IgnoreLayer | null = null;
    try {
      layer = { base: dir, rules: ignore({ ignorecase: false }).add(readFileSync(join(this.root, dir, '.gitignore'), 'utf8')) };
    } catch {
      layer = null;
    }
    this.layers.set(dir, layer);
    return layer;
  }
}

function isDirectory(absPath: string): boolean {
  try {
    return statSync(absPath).isDirectory();
  } catch {
    return false;
  }
}

/** The path relative to root with forward slashes, or null when it lies outside root. */
function relativePath(root: string, absPath: string): string | null {
  const rel = relative(root, isAbsolute(absPath) ? absPath : join(root, absPath));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return sep === '/' ? rel : rel.split(sep).join('/');
}

interface SyncResult {
  full: boolean;
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: number;
  unsupported: UnreadableFile[];
  uploaded: { add: number; update: number };
  failures: FileFailure[];
  counts: Collection['file_counts'];
  failedFiles: FileFailure[];
  skipped: SkippedEntry[];
}

interface SessionOptions {
  root: string;
  namespace: string;
  collection: string;
  client: HaltableClient;
  json: boolean;
  /** --quiet: only errors, warnings and failed files. */
  quiet: boolean;
  wait: boolean;
  debounceMs: number;
  /** As the user named it, for messages. */
  folder: string;
  /** The mirror-safety flags (ingest-plan.ts): watch mode never asks, so only these confirm deletions. */
  prune: boolean;
  yes: boolean;
  allowEmpty: boolean;
  walk: Pick<WalkOptions, 'hidden' | 'secrets' | 'exclude'>;
  /** Send files the collection cannot index too (readable-plan.ts). */
  includeUnsupported: boolean;
}

class WatchSession {
  private readonly matcher: GitignoreMatcher;
  private readonly scheduler: SyncScheduler;
  private readonly colPath: string;
  private watcher: FSWatcher | null = null;
  private syncs = 0;
  private stopping = false;
  private exitCode = 0;
  private finish: (code: number) => void = () => undefined;
  private readonly noted = new Set<string>();
  private lastError: unknown = null;

  constructor(private readonly options: SessionOptions) {
    this.matcher = new GitignoreMatcher(options.root, options.walk);
    this.colPath = collectionPath(options.namespace, options.collection);
    this.scheduler = new SyncScheduler({
      debounceMs: options.debounceMs,
      maxWaitMs: Math.max(MIN_MAX_WAIT_MS, options.debounceMs * 10),
      retryBaseMs: RETRY_BASE_MS,
      retryMaxMs: RETRY_MAX_MS,
      timers: realTimers,
      sync: (batch) => this.sync(batch),
      onRetryScheduled: (delayMs, failures) => this.reportRetry(delayMs, failures),
      onStopped: () => void this.stop(this.exitCode),
    });
  }

  async run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.finish = resolve));
    const onSignal = () => {
      if (this.stopping) {
        // A second signal while the last requests drain: the user wants out now.
        process.exit(130);
      }
      void this.stop(0);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      // Watching starts before the first walk, so nothing that changes during that walk is missed.
      this.watcher = await this.startWatcher();
      this.note(`watching ${this.options.root} → ${this.options.namespace}/${this.options.collection} (Ctrl-C stops)`);
      this.scheduler.record((batch) => (batch.full = true));
      this.scheduler.flush();
      return await done;
    } catch (err) {
      await this.closeWatcher();
      return reportError(err, this.options.json);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }

  private async stop(code: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.options.client.halt();
    await this.scheduler.stop();
    await this.closeWatcher();
    this.finish(code);
  }

  private async closeWatcher(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = null;
    await watcher?.close();
  }

  private async startWatcher(): Promise<FSWatcher> {
    const watcher = watch(this.options.root, {
      ignoreInitial: true,
      ignored: (path: string, stats?: Stats) => this.matcher.ignores(path, stats),
    });
    watcher.on('all', (event: string, path: string) => {
      if (!WATCH_EVENTS.has(event)) return;
      const rel = relativePath(this.options.root, path);
      if (rel !== null) this.scheduler.record((batch) => recordEvent(batch, event as WatchEventName, rel));
    });
    watcher.on('error', (err: unknown) => {
      // The watcher may have missed events (e.g. too many folders for inotify): compare everything next time.
      this.warn('watcher_error', `the file watcher reported: ${err instanceof Error ? err.message : String(err)}; the next sync compares every file`);
      this.scheduler.record((batch) => (batch.full = true));
    });
    await new Promise<void>((resolve, reject) => {
      watcher.once('ready', resolve);
      watcher.once('error', reject);
    });
    return watcher;
  }

  /**
   * chokidar does not look again inside folders it was told to ignore, so after a .gitignore change a
   * new watcher takes over; the old one keeps reporting until the new one is ready, leaving no gap.
   */
  private async reloadRules(): Promise<void> {
    this.matcher.reset();
    const next = await this.startWatcher();
    const previous = this.watcher;
    this.watcher = next;
    await previous?.close();
    if (this.stopping) await this.closeWatcher();
  }

  private async sync(batch: ChangeBatch): Promise<SyncOutcome> {
    const startedAt = Date.now();
    const retried = this.scheduler.consecutiveFailures;
    try {
      if (batch.rulesChanged) await this.reloadRules();
      const result = await this.syncOnce(batch);
      this.syncs++;
      if (retried > 0) this.note(`the daemon answers again: synced ${result.full ? 'every file' : 'the changes'}`);
      this.report(result, Date.now() - startedAt, retried);
      return 'ok';
    } catch (err) {
      if (this.stopping) return 'ok';
      if (this.syncs === 0 || isFatal(err)) {
        // The first sync is the plain mirror run: a wrong URL, key or name should end the command, not retry forever.
        this.exitCode = reportError(err, this.options.json);
        return 'stop';
      }
      this.lastError = err;
      return 'retry';
    }
  }

  /** Says what failed and when the next try is (the scheduler calls it before waiting to retry). */
  private reportRetry(delayMs: number, failures: number): void {
    const err = this.lastError;
    const { code, message } =
      err instanceof CliApiError || err instanceof CliError
        ? { code: err.code, message: err.message }
        : { code: 'sync_failed', message: err instanceof Error ? err.message : String(err) };
    if (this.options.json) {
      errOut().write(JSON.stringify({ error: { code, message }, retry_in_ms: delayMs, failures }) + '\n');
    } else {
      errOut().write(`error: ${message.replace(/\.$/, '')} (still watching; retrying in ${formatSeconds(delayMs)}, attempt ${failures + 1})\n`);
    }
  }

  private async syncOnce(batch: ChangeBatch): Promise<SyncResult> {
    const { client } = this.options;
    const walked = await walkFolder(this.options.root, this.options.walk);
    await ensureCollection(client, this.options.namespace, this.options.collection);
    // Read each sync: a PATCH may have turned OCR on or off meanwhile.
    const { readable, unreadable } = partitionReadable(walked.files, {
      ocr: await collectionOcr(client, this.colPath),
      includeUnsupported: this.options.includeUnsupported,
    });
    if (unreadable.length > 0) this.noteOnce(unreadableSummary(unreadable));
    const remote = await listRemote(client, this.colPath, false);
    const { hash, compare } = scopeSync(readable, remote, batch);

    const skipped: SkippedEntry[] = [...walked.skipped];
    const hashed = await mapLimit(hash, CONCURRENCY, async (file): Promise<Local | null> => {
      try {
        return { ...file, ...(await hashFile(file.absPath)) };
      } catch (err) {
        skipped.push({ path: file.path, reason: `cannot be read: ${(err as Error).message}` });
        return null;
      }
    });
    const local = hashed.filter((file): file is Local => file !== null);
    for (const entry of skipped) this.noteOnce(`skipped ${entry.path}: ${entry.reason}`);
    if (walked.excluded.length > 0) this.noteOnce(excludedSummary(walked.excluded));
    // What could not be read this time (a file, or a whole folder) is left alone rather than deleted.
    const skippedPaths = new Set(skipped.map((entry) => entry.path));
    const wasSkipped = (path: string) => {
      for (let prefix = path; prefix !== ''; prefix = prefix.slice(0, prefix.lastIndexOf('/'))) if (skippedPaths.has(prefix)) return true;
      return false;
    };
    const localPaths = new Set(local.map((file) => file.path));
    await markStuckUploads(client, this.colPath, compare.filter((file) => localPaths.has(file.path)));
    const fullPlan = planIngest(local, compare.filter((file) => !wasSkipped(file.path)));
    // The same rules as a one-shot run, minus the question (a watcher runs unattended): a deletion
    // the watcher saw happen is the user's own act; anything else found missing (at the first sync,
    // or after the daemon was away) waits for --yes / --prune, and an empty folder empties nothing.
    // A .gitignore edit is an act of the user's too: what it newly ignores goes.
    const removal = decideRemovals(fullPlan.remove, this.options.root, {
      prune: this.options.prune,
      confirmed: this.options.yes || batch.rulesChanged,
      allowEmpty: this.options.allowEmpty,
      localCount: readable.length,
      seenDeleted: batch.paths,
    });
    const plan = { ...fullPlan, remove: removal.remove };
    if (removal.emptyFolder) {
      this.warn('empty_folder', `${this.options.folder} has no files now: nothing was removed from ${this.options.namespace}/${this.options.collection} (--allow-empty lets an empty folder empty it)`);
    } else {
      for (const line of removalNotes(removal, this.options.namespace, this.options.collection, this.options.folder, false)) {
        this.noteOnce(line.replace('stdin is not a terminal, so trove did not ask', 'a watcher does not ask'));
      }
    }

    // The first sync may be a whole folder: a progress bar helps there, and would only flicker later.
    const progress: ProgressMode = this.syncs === 0 && !this.options.json && !this.options.quiet ? (errOut().isTTY ? 'bar' : 'lines') : 'none';
    const { uploaded, failures } = await applyPlan(client, this.colPath, plan, progress, (line) => this.note(line), this.options.root);
    let counts: Collection['file_counts'];
    let failedFiles: FileFailure[] = [];
    if (this.options.wait) {
      counts = await waitForIndexing(client, this.colPath, progress);
      failedFiles = (await client.listAll<TroveFile>(`${this.colPath}/files`, { status: 'failed' })).map((file) => ({
        path: file.path,
        code: file.error?.code ?? 'unknown',
        message: file.error?.message ?? '',
      }));
    } else {
      counts = (await client.request<Collection>('GET', this.colPath)).file_counts;
    }
    const failedUploads = new Set(failures.map((failure) => failure.path));
    return {
      full: batch.full,
      added: plan.add.map((file) => file.path).filter((path) => !failedUploads.has(path)),
      updated: plan.update.map(({ local }) => local.path).filter((path) => !failedUploads.has(path)),
      removed: plan.remove.map((file) => file.path),
      unchanged: plan.unchanged.length,
      unsupported: unreadable,
      uploaded,
      failures,
      counts,
      failedFiles,
      skipped,
    };
  }

  private report(result: SyncResult, durationMs: number, retried: number): void {
    const { counts } = result;
    const pending = counts.pending + counts.indexing;
    if (this.options.json) {
      out().write(
        JSON.stringify({
          event: 'sync',
          namespace: this.options.namespace,
          collection: this.options.collection,
          full: result.full,
          added: result.uploaded.add,
          updated: result.uploaded.update,
          removed: result.removed.length,
          unchanged: result.unchanged,
          waited: this.options.wait,
          ready: counts.ready,
          failed: counts.failed,
          pending,
          paths: { added: result.added, updated: result.updated, removed: result.removed },
          failed_files: result.failedFiles,
          upload_failures: result.failures,
          skipped: result.skipped,
          unsupported: result.unsupported,
          retried_after_failures: retried,
          duration_ms: durationMs,
        }) + '\n',
      );
      return;
    }
    const tail = this.options.wait ? '' : `, pending ${pending}`;
    // Each file by name, as a one-shot ingest prints its plan, then the counts: a log of syncs should
    // say which file changed, not only that one did.
    const named = [...result.added.map((p) => `+ ${p}`), ...result.updated.map((p) => `~ ${p}`), ...result.removed.map((p) => `- ${p}`)];
    if (!this.options.quiet) {
      out().write(
        named.map((line) => line + '\n').join('') +
          `+${result.uploaded.add} ~${result.uploaded.update} -${result.removed.length} (ready ${counts.ready}, failed ${counts.failed}${tail})\n`,
      );
    }
    const touched = new Set([...result.added, ...result.updated]);
    // Said even with --quiet: a failed file is an error.
    for (const failure of result.failedFiles) if (touched.has(failure.path)) errOut().write(`failed ${failure.path}: ${failure.code}: ${failure.message}\n`);
  }

  private noteOnce(line: string): void {
    if (!this.noted.has(line)) this.note(line);
    this.noted.add(line);
  }

  private note(line: string): void {
    if (!this.options.json && !this.options.quiet) errOut().write(line + '\n');
  }

  private warn(code: string, message: string): void {
    if (this.options.json) errOut().write(JSON.stringify({ warning: { code, message } }) + '\n');
    else errOut().write(`warning: ${message}\n`);
  }
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}
