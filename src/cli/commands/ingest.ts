// `trove ingest <folder> -n NS -c COL`: make a collection mirror a folder. Walk and hash locally, list
// the collection, plan, upload what is new or changed, delete what is gone, then wait for indexing.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { AddedFile, AddFileInput, Collection, CreateCollectionInput, CreateNamespaceInput, TroveFile } from '../../client/index.js';
import { CLI_EXIT_CODES, ERROR_TABLE } from '../../contract/errors.js';
import { looksLikeId } from '../../contract/ids.js';
import { ResourceName } from '../../contract/schemas.js';
import { ApiClient, CliApiError, CliError, collectionPath, namespacePath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { decideRemovals, INGEST_ROOT_KEY, planIngest, sha256Checksum, type IngestPlan, type LocalFile, type RemoteFile, type RemovalDecision } from '../ingest-plan.js';
import { isInteractive } from '../prompt.js';
import { partitionReadable, unreadableSummary } from '../readable-plan.js';
import { walkFolder, type ExcludedEntry, type SkippedEntry, type WalkedFile } from '../walk.js';
import { errOut, out, promptContext } from '../io.js';

export interface IngestOptions {
  namespace?: string;
  collection?: string;
  dryRun?: boolean;
  /** Commander's `--no-wait` sets this to false. */
  wait?: boolean;
  json?: boolean;
  /** Keep running and sync changes as they happen (src/cli/commands/ingest-watch.ts). */
  watch?: boolean;
  /** With watch: milliseconds of quiet before a sync (commander passes the string). */
  debounce?: string;
  /** Delete every collection file the folder lacks, whoever added it, without asking (ingest-plan.ts "mirror safety"). */
  prune?: boolean;
  /** Delete the files this folder ingested earlier and no longer has, without asking. */
  yes?: boolean;
  /** Let an empty folder empty the collection. */
  allowEmpty?: boolean;
  /** Take dotfiles and dot-folders (walk.ts). */
  hidden?: boolean;
  /** Take files whose names usually hold secrets (walk.ts SECRET_FILE_PATTERNS). */
  includeSecrets?: boolean;
  /** Leave out what these patterns match (.gitignore syntax; `--exclude`, plus the saved defaults'). */
  exclude?: string[];
  /** Send files the collection cannot index too (readable-plan.ts), for the daemon to refuse one by one. */
  includeUnsupported?: boolean;
}

/** Exit status when every request succeeded but some files could not be uploaded or indexed. */
export const EXIT_FILES_FAILED = CLI_EXIT_CODES.files_failed;

export const CONCURRENCY = 8;
const LINE_PROGRESS_INTERVAL_MS = 5000;

/** API errors that concern one file only; any other error stops the run. */
const PER_FILE_ERROR_CODES = new Set(['invalid_request', 'request_too_large', 'limit_exceeded']);

export type Local = WalkedFile & LocalFile;

export interface Remote extends RemoteFile {
  sourceType: TroveFile['source']['type'];
  /** The folder `trove ingest` recorded this file as coming from (INGEST_ROOT_KEY), if any. */
  ingestRoot?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface FileFailure {
  path: string;
  code: string;
  message: string;
}

export async function runIngest(folder: string, globalOpts: GlobalOptions, opts: IngestOptions): Promise<number> {
  if (opts.watch) {
    // Imported here, not at the top: the watcher imports this module, and only watch mode needs chokidar.
    const { runIngestWatch } = await import('./ingest-watch.js');
    return runIngestWatch(folder, globalOpts, opts);
  }
  const json = Boolean(opts.json);
  // --quiet: errors, failed files and what held deletions back (they explain the exit status); no
  // plan, progress, notes or counts.
  const quiet = Boolean(globalOpts.quiet);
  const note = (line: string) => {
    if (!json && !quiet) errOut().write(line + '\n');
  };
  const warn = (line: string) => {
    if (!json) errOut().write(line + '\n');
  };
  const mode = quiet ? 'none' : progressMode(json);
  try {
    const namespace = checkName(opts.namespace, 'namespace');
    const collection = checkName(opts.collection, 'collection');
    const folderStat = await stat(folder).catch(() => null);
    if (!folderStat?.isDirectory()) throw new CliError(`${folder} is not a folder.`, 2);
    const client = ApiClient.of(await resolveConnection(globalOpts));
    const colPath = collectionPath(namespace, collection);

    // The real path: the same folder reached through a symlink or a relative path is the same owner.
    const root = await realpath(resolve(folder));
    const walked = await walkFolder(folder, { hidden: Boolean(opts.hidden), secrets: Boolean(opts.includeSecrets), exclude: opts.exclude ?? [] });
    if (!opts.dryRun) await ensureCollection(client, namespace, collection);
    // Decided before hashing and sending: a file the collection cannot index would only fail there.
    const { readable, unreadable } = partitionReadable(walked.files, {
      ocr: await collectionOcr(client, colPath),
      includeUnsupported: Boolean(opts.includeUnsupported),
    });
    const skipped: SkippedEntry[] = [...walked.skipped];
    const hashed = await mapLimit(readable, CONCURRENCY, async (file): Promise<Local | null> => {
      try {
        return { ...file, ...(await hashFile(file.absPath)) };
      } catch (err) {
        skipped.push({ path: file.path, reason: `cannot be read: ${(err as Error).message}` });
        return null;
      }
    });
    const local = hashed.filter((file): file is Local => file !== null);
    for (const entry of skipped) note(`skipped ${entry.path}: ${entry.reason}`);
    if (opts.dryRun) for (const line of excludedLines(walked.excluded)) note(line);
    else if (walked.excluded.length > 0) note(excludedSummary(walked.excluded));
    if (unreadable.length > 0) note(unreadableSummary(unreadable));

    const remote = await listRemote(client, colPath, Boolean(opts.dryRun));
    // What we could not read this time (a file, or a whole folder) is left alone rather than deleted.
    const skippedPaths = new Set(skipped.map((entry) => entry.path));
    const wasSkipped = (path: string) => {
      for (let prefix = path; prefix !== ''; prefix = prefix.slice(0, prefix.lastIndexOf('/'))) if (skippedPaths.has(prefix)) return true;
      return false;
    };
    const localPaths = new Set(local.map((file) => file.path));
    await markStuckUploads(client, colPath, remote.filter((file) => localPaths.has(file.path)));
    const fullPlan = planIngest(local, remote.filter((file) => !wasSkipped(file.path)));
    const policy = { prune: Boolean(opts.prune), confirmed: Boolean(opts.yes), allowEmpty: Boolean(opts.allowEmpty), localCount: local.length };
    let removal = decideRemovals(fullPlan.remove, root, policy);
    let declined = false;
    if (!opts.dryRun && removal.unconfirmed.length > 0 && !removal.emptyFolder && isInteractive()) {
      // Asked before anything is sent, so a "no" still lets the adds and updates go ahead.
      const { confirm } = await import('@inquirer/prompts');
      const yes = await confirm({ message: `Remove ${count(removal.unconfirmed.length)} from ${namespace}/${collection} that ${removal.unconfirmed.length === 1 ? 'is' : 'are'} no longer in ${folder}?`, default: false }, promptContext()).catch(
        () => false,
      );
      if (yes) removal = decideRemovals(fullPlan.remove, root, { ...policy, confirmed: true });
      else declined = true;
    }
    const plan: IngestPlan<Local, Remote> = { ...fullPlan, remove: removal.remove };
    if (removal.emptyFolder && !opts.dryRun) {
      throw new CliError(
        `${folder} has no files to ingest${walked.excluded.length > 0 ? ` (${excludedSummary(walked.excluded, false)})` : ''}, so mirroring it would remove all ` +
          `${count(removal.unconfirmed.length + removal.foreign.length)} of ${namespace}/${collection}. Nothing was changed; ` +
          'check the folder, or pass --allow-empty (with --prune or --yes) to empty the collection.',
        2,
        'empty_folder',
      );
    }

    if (opts.dryRun) {
      if (json) out().write(JSON.stringify({ ...planJson(namespace, collection, plan, skipped, removal, walked.excluded), unsupported: unreadable }) + '\n');
      else out().write(planLines(plan) + keptLines(removal) + `dry run: ${planCounts(plan)}; nothing was changed.\n`);
      for (const line of removalNotes(removal, namespace, collection, folder, false)) warn(line);
      return 0;
    }
    if (!json && !quiet && plan.add.length + plan.update.length + plan.remove.length > 0) out().write(planLines(plan));

    const { uploaded, failures } = await applyPlan(client, colPath, plan, mode, note, root);
    let counts: Collection['file_counts'];
    let failedFiles: FileFailure[] = [];
    const wait = opts.wait !== false;
    if (wait) {
      counts = await waitForIndexing(client, colPath, mode);
      failedFiles = (await client.listAll<TroveFile>(`${colPath}/files`, { status: 'failed' })).map((file) => ({
        path: file.path,
        code: file.error?.code ?? 'unknown',
        message: file.error?.message ?? '',
      }));
    } else {
      counts = (await client.request<Collection>('GET', colPath)).file_counts;
    }

    const summary = {
      namespace,
      collection,
      added: uploaded.add,
      updated: uploaded.update,
      removed: plan.remove.length,
      unchanged: plan.unchanged.length,
      waited: wait,
      ready: counts.ready,
      failed: counts.failed,
      pending: counts.pending + counts.indexing,
      failed_files: failedFiles,
      upload_failures: failures,
      skipped,
      excluded: walked.excluded,
      unsupported: unreadable,
      not_removed: { unconfirmed: removal.unconfirmed.map((f) => f.path), foreign: removal.foreign.map((f) => f.path) },
    };
    if (json) {
      out().write(JSON.stringify(summary) + '\n');
    } else {
      const lines = quiet
        ? []
        : [
            `${namespace}/${collection}: ${summary.added} added, ${summary.updated} updated, ${summary.removed} removed, ${summary.unchanged} unchanged`,
            wait
              ? `indexed: ${counts.ready} ready, ${counts.failed} failed`
              : `not waiting for indexing: ${counts.ready} ready, ${summary.pending} pending, ${counts.failed} failed (see \`trove status\`)`,
          ];
      for (const failure of failures) lines.push(`upload failed ${failure.path}: ${failure.code}: ${failure.message}`);
      for (const failure of failedFiles) lines.push(`failed ${failure.path}: ${failure.code}: ${failure.message}`);
      if (lines.length > 0) out().write(lines.join('\n') + '\n');
    }
    for (const line of removalNotes(removal, namespace, collection, folder, declined)) warn(line);
    if (failures.length > 0 || (wait && counts.failed > 0)) return EXIT_FILES_FAILED;
    // Deletions held back for want of a terminal are a missing answer, as prompt.ts treats every
    // other one: exit 2 naming the flag (after the adds and updates, which needed no answer).
    return removal.unconfirmed.length > 0 && !declined ? CLI_EXIT_CODES_USAGE : 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export function checkName(value: string | undefined, what: 'namespace' | 'collection'): string {
  if (!value) throw new CliError(`Name the ${what} with --${what} <name>.`, 2);
  const parsed = ResourceName.safeParse(value);
  if (!parsed.success && !looksLikeId(value)) {
    throw new CliError(`The ${what} name '${value}' is invalid: ${parsed.error.issues[0]?.message ?? 'bad name'}.`, 2);
  }
  return value;
}

export async function hashFile(absPath: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(absPath)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Looked up before created, so that keys allowed to write but not to create (scoped keys) still work. */
export async function ensureCollection(client: ApiClient, namespace: string, collection: string): Promise<void> {
  if (!(await exists(client, namespacePath(namespace)))) {
    await client.request('POST', '/namespaces', { name: namespace, exist_ok: true } satisfies CreateNamespaceInput);
  }
  if (!(await exists(client, collectionPath(namespace, collection)))) {
    await client.request('POST', `${namespacePath(namespace)}/collections`, { name: collection, exist_ok: true } satisfies CreateCollectionInput);
  }
}

async function exists(client: ApiClient, path: string): Promise<boolean> {
  try {
    // Missing is an answer here (it is created next), not a typo to suggest a name for.
    await client.request('GET', path, undefined, { suggest: false });
    return true;
  } catch (err) {
    if (err instanceof CliApiError && err.code === 'not_found') return false;
    throw err;
  }
}

/** The collection's `processing.ocr`, or undefined when it does not exist yet (a dry run creates nothing). */
export async function collectionOcr(client: ApiClient, colPath: string): Promise<boolean | undefined> {
  try {
    return (await client.request<Collection>('GET', colPath, undefined, { suggest: false })).processing.ocr;
  } catch (err) {
    if (err instanceof CliApiError && err.code === 'not_found') return undefined;
    throw err;
  }
}

export async function listRemote(client: ApiClient, colPath: string, collectionMayBeMissing: boolean): Promise<Remote[]> {
  try {
    const files = await client.listAll<TroveFile>(`${colPath}/files`, {}, { suggest: !collectionMayBeMissing });
    return files.map((file) => {
      const recorded = file.metadata?.[INGEST_ROOT_KEY];
      return {
        id: file.id,
        path: file.path,
        checksum: file.source.checksum,
        status: file.status,
        sourceType: file.source.type,
        ingestRoot: typeof recorded === 'string' ? recorded : undefined,
        metadata: file.metadata,
      };
    });
  } catch (err) {
    // A dry run creates nothing, so a collection that does not exist yet is simply empty.
    if (collectionMayBeMissing && err instanceof CliApiError && err.code === 'not_found') return [];
    throw err;
  }
}

/** A pending upload whose bytes never arrived (an interrupted run) must be uploaded again, or it stays pending forever. */
export async function markStuckUploads(client: ApiClient, colPath: string, remote: Remote[]): Promise<void> {
  const candidates = remote.filter((file) => file.status === 'pending' && file.sourceType === 'upload');
  await mapLimit(candidates, CONCURRENCY, async (file) => {
    try {
      await client.request('GET', `${colPath}/files/${encodeURIComponent(file.id)}/content`);
    } catch (err) {
      if (err instanceof CliApiError && err.code === 'operation_in_progress') file.awaitingUpload = true;
      else if (!(err instanceof CliApiError && err.code === 'not_found')) throw err;
    }
  });
}

export async function applyPlan(
  client: ApiClient,
  colPath: string,
  plan: IngestPlan<Local, Remote>,
  mode: ProgressMode,
  note: (line: string) => void,
  /** The folder's real path, recorded on every upload so a later run knows the file is this folder's (ingest-plan.ts). */
  root?: string,
): Promise<{ uploaded: { add: number; update: number }; failures: FileFailure[] }> {
  const work = [
    ...plan.add.map((file) => ({ file, kind: 'add' as const, metadata: undefined as Record<string, unknown> | undefined })),
    // An update keeps the metadata the file had (set through the API, say), plus the record of its folder.
    ...plan.update.map(({ local, remote }) => ({ file: local, kind: 'update' as const, metadata: remote.metadata })),
  ];
  const uploaded = { add: 0, update: 0 };
  const failures: FileFailure[] = [];
  const progress = createProgress('uploading', mode);
  let done = 0;
  if (work.length > 0) progress.update(0, work.length);
  try {
    await mapLimit(work, CONCURRENCY, async ({ file, kind, metadata }) => {
      try {
        await uploadFile(client, colPath, file, root === undefined ? metadata : { ...metadata, [INGEST_ROOT_KEY]: root });
        uploaded[kind]++;
      } catch (err) {
        if (err instanceof CliApiError && PER_FILE_ERROR_CODES.has(err.code)) failures.push({ path: file.path, code: err.code, message: err.message });
        else if (err instanceof CliError || err instanceof CliApiError) throw err;
        else failures.push({ path: file.path, code: 'local_read_failed', message: (err as Error).message });
      }
      progress.update(++done, work.length);
    });
  } finally {
    progress.stop();
  }
  for (const failure of failures) note(`upload failed ${failure.path}: ${failure.code}: ${failure.message}`);

  await mapLimit(plan.remove, CONCURRENCY, async (file) => {
    try {
      await client.request('DELETE', `${colPath}/files/${encodeURIComponent(file.id)}`);
    } catch (err) {
      if (!(err instanceof CliApiError && err.code === 'not_found')) throw err;
    }
  });
  return { uploaded, failures };
}

/** Adds the file as an upload source and PUTs its bytes; returns the file as the upload left it, and the add's job. */
export async function uploadFile(client: ApiClient, colPath: string, file: Local, metadata?: Record<string, unknown>): Promise<AddedFile> {
  const added = await client.request<AddedFile>('POST', `${colPath}/files`, {
    path: file.path,
    source: { type: 'upload', content_type: file.contentType, bytes: file.size, checksum: sha256Checksum(file.sha256) },
    ...(metadata === undefined ? {} : { metadata }),
  } satisfies AddFileInput);
  if (!added.upload) throw new CliError(`The daemon accepted ${file.path} without an upload URL.`);
  try {
    const received = (await client.upload(added.upload.url, added.upload.headers, createReadStream(file.absPath))) as Pick<AddedFile, 'file'>;
    return { file: received.file, job: added.job };
  } catch (err) {
    // Without its bytes the file would stay pending forever; the next run adds it again.
    await client.request('DELETE', `${colPath}/files/${encodeURIComponent(added.file.id)}`).catch(() => undefined);
    throw err;
  }
}

export async function waitForIndexing(client: ApiClient, colPath: string, mode: ProgressMode): Promise<Collection['file_counts']> {
  const progress = createProgress('indexing', mode);
  let delay = 200;
  try {
    for (;;) {
      const { file_counts: counts } = await client.request<Collection>('GET', colPath);
      const total = counts.pending + counts.indexing + counts.ready + counts.failed;
      progress.update(counts.ready + counts.failed, total, counts.failed > 0 ? `(${counts.failed} failed)` : '');
      if (counts.pending + counts.indexing === 0) return counts;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 1.5, 1000);
    }
  } finally {
    progress.stop();
  }
}

// ---------------------------------------------------------------- output

function planLines(plan: IngestPlan<Local, Remote>): string {
  const lines = [...plan.add.map((f) => `+ ${f.path}`), ...plan.update.map((u) => `~ ${u.local.path}`), ...plan.remove.map((f) => `- ${f.path}`)];
  return lines.length > 0 ? lines.join('\n') + '\n' : '';
}

function planCounts(plan: IngestPlan<Local, Remote>): string {
  return `${plan.add.length} to add, ${plan.update.length} to update, ${plan.remove.length} to remove, ${plan.unchanged.length} unchanged`;
}

const CLI_EXIT_CODES_USAGE = ERROR_TABLE.invalid_request.exitCode;

const count = (n: number) => `${n} file${n === 1 ? '' : 's'}`;

/** "left out 2 hidden and 1 secret-looking files or folders (--hidden / --include-secrets take them; --dry-run lists them)". */
export function excludedSummary(excluded: readonly ExcludedEntry[], hint = true): string {
  const hidden = excluded.filter((e) => e.kind === 'hidden').length;
  const secret = excluded.filter((e) => e.kind === 'secret').length;
  const pattern = excluded.filter((e) => e.kind === 'pattern').length;
  const parts = [hidden > 0 ? `${hidden} hidden` : '', secret > 0 ? `${secret} secret-looking` : ''].filter(Boolean).join(' and ');
  const flags = [hidden > 0 ? '--hidden' : '', secret > 0 ? '--include-secrets' : ''].filter(Boolean);
  const plural = (n: number) => `file${n === 1 ? '' : 's'} or folder${n === 1 ? '' : 's'}`;
  const byPolicy =
    hidden + secret > 0
      ? `${parts} ${plural(hidden + secret)}${hint ? ` (${flags.join(' / ')} take${flags.length > 1 ? '' : 's'} them; --dry-run lists them)` : ''}`
      : '';
  const byPattern = pattern > 0 ? `${pattern} ${plural(pattern)} matching --exclude` : '';
  return `left out ${[byPolicy, byPattern].filter(Boolean).join(', and ')}`;
}

export function excludedLines(excluded: readonly ExcludedEntry[]): string[] {
  return excluded.map((e) =>
    e.kind === 'secret'
      ? `left out ${e.path}: may hold secrets (--include-secrets takes it)`
      : e.kind === 'pattern'
        ? `left out ${e.path}${e.folder ? '/' : ''}: matches --exclude`
        : `left out ${e.path}${e.folder ? '/' : ''}: hidden (--hidden takes it)`,
  );
}

/** What stays in the collection although the folder lacks it, and why (stderr lines). */
export function removalNotes(removal: RemovalDecision<Remote>, namespace: string, collection: string, folder: string, declined: boolean): string[] {
  const lines: string[] = [];
  const where = `${namespace}/${collection}`;
  if (removal.emptyFolder) {
    lines.push(`${folder} has no files: all ${count(removal.unconfirmed.length + removal.foreign.length)} of ${where} would stay (an empty folder needs --allow-empty to empty a collection).`);
    return lines;
  }
  if (removal.unconfirmed.length > 0) {
    lines.push(
      declined
        ? `kept ${count(removal.unconfirmed.length)} of ${where} that ${removal.unconfirmed.length === 1 ? 'is' : 'are'} no longer in ${folder} (you answered no).`
        : `${count(removal.unconfirmed.length)} of ${where} ${removal.unconfirmed.length === 1 ? 'is' : 'are'} no longer in ${folder} and would be removed: ` +
            'stdin is not a terminal, so trove did not ask; pass --yes (or --prune) to remove them.',
    );
  }
  if (removal.foreign.length > 0) {
    lines.push(
      `${count(removal.foreign.length)} of ${where} ${removal.foreign.length === 1 ? 'was' : 'were'} not ingested from ${folder} (added through the API, by \`trove files add\` or from another folder) ` +
        'and left alone; --prune removes every file the folder lacks.',
    );
  }
  return lines;
}

function keptLines(removal: RemovalDecision<Remote>): string {
  const lines = [...removal.unconfirmed.map((f) => `? ${f.path} (would be removed after confirmation: a terminal, --yes or --prune)`), ...removal.foreign.map((f) => `= ${f.path} (not from this folder: kept unless --prune)`)];
  return lines.length > 0 ? lines.join('\n') + '\n' : '';
}

function planJson(namespace: string, collection: string, plan: IngestPlan<Local, Remote>, skipped: SkippedEntry[], removal: RemovalDecision<Remote>, excluded: ExcludedEntry[]) {
  return {
    dry_run: true,
    namespace,
    collection,
    add: plan.add.map((f) => ({ path: f.path, bytes: f.size, content_type: f.contentType })),
    update: plan.update.map(({ local, remote }) => ({ path: local.path, bytes: local.size, content_type: local.contentType, file_id: remote.id })),
    remove: plan.remove.map((f) => ({ path: f.path, file_id: f.id })),
    unchanged: plan.unchanged.map(({ local }) => local.path),
    counts: { add: plan.add.length, update: plan.update.length, remove: plan.remove.length, unchanged: plan.unchanged.length },
    skipped,
    excluded,
    not_removed: { unconfirmed: removal.unconfirmed.map((f) => f.path), foreign: removal.foreign.map((f) => f.path), empty_folder: removal.emptyFolder },
  };
}

export type ProgressMode = 'bar' | 'lines' | 'none';

function progressMode(json: boolean): ProgressMode {
  if (json) return 'none';
  return errOut().isTTY ? 'bar' : 'lines';
}

interface Progress {
  update(done: number, total: number, suffix?: string): void;
  stop(): void;
}

/** A bar on a terminal, an occasional plain line in logs, nothing for --json. */
function createProgress(label: string, mode: ProgressMode): Progress {
  if (mode === 'none') return { update() {}, stop() {} };
  if (mode === 'bar') {
    const bar = new cliProgress.SingleBar(
      { stream: errOut(), format: `${label.padEnd(9)} |{bar}| {value}/{total} {suffix}`, hideCursor: false, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total, suffix = '') {
        if (!started) {
          bar.start(total, done, { suffix });
          started = true;
        } else {
          bar.setTotal(total);
          bar.update(done, { suffix });
        }
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  let last: { done: number; total: number; suffix: string } | null = null;
  let printedAt = 0;
  let printed = '';
  const print = () => {
    if (!last) return;
    const line = `${label}: ${last.done}/${last.total} ${last.suffix}`.trimEnd();
    if (line !== printed) errOut().write(line + '\n');
    printed = line;
    printedAt = Date.now();
  };
  return {
    update(done, total, suffix = '') {
      last = { done, total, suffix };
      if (Date.now() - printedAt >= LINE_PROGRESS_INTERVAL_MS) print();
    },
    stop: print,
  };
}

/** Runs fn over items with at most `limit` at once; after a failure no new item starts, and the first error is thrown. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (failure === null && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return results;
}
