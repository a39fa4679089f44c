// What the resource commands (ns, collections, files, research, webhooks, events, rules batch)
// share: connecting, paging lists, parsing JSON and number flags, waiting for jobs.
import type { Job } from '../../client/index.js';
import { ApiClient, CliError, reportError, type Page } from '../client.js';
import { resolveConnection, type Connection, type GlobalOptions } from '../connection.js';
import { keyValues, moreHint, table, write, writeJson, type Cell } from '../output.js';
import { readCliConfig } from '../cli-config.js';
import { DEFAULT_NAMESPACE, resolveTarget, splitOptionalCollection, type Target, type Usage } from '../defaults.js';

export interface JsonOption {
  json?: boolean;
}

export interface ListOptions extends JsonOption {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

export interface Connected {
  client: ApiClient;
  conn: Connection;
}

export async function connect(globalOpts: GlobalOptions): Promise<Connected> {
  const conn = await resolveConnection(globalOpts);
  return { client: ApiClient.of(conn), conn };
}

/** -n and -c, as every command on one collection takes them. */
export interface CollectionFlags {
  namespace?: string;
  collection?: string;
}

/**
 * The collection a command works on and its other positional arguments: the collection argument
 * (`col` or `ns/col`) when given, else -c, else the default `trove init` saved; the namespace
 * likewise (defaults.ts has the precedence).
 */
export async function collectionTarget(
  args: readonly (string | undefined)[],
  trailing: readonly string[],
  opts: CollectionFlags,
  example: Usage,
): Promise<Target & { rest: string[] }> {
  const { collection, rest } = splitOptionalCollection(args, trailing, example);
  const target = resolveTarget({ collection, namespaceFlag: opts.namespace, collectionFlag: opts.collection }, await readCliConfig(), example);
  return { ...target, rest };
}

/** -n, else the saved namespace, else "default" (for commands on a namespace's collections). */
export async function namespaceTarget(namespaceFlag: string | undefined): Promise<string> {
  if (namespaceFlag !== undefined) return namespaceFlag;
  const saved = (await readCliConfig()).namespace;
  return typeof saved === 'string' && saved.trim() !== '' ? saved : DEFAULT_NAMESPACE;
}

/** Runs a command body and turns whatever it throws into the printed error and its exit code. */
export async function runCommand(opts: JsonOption, body: (json: boolean) => Promise<number | void>): Promise<number> {
  const json = Boolean(opts.json);
  try {
    return (await body(json)) ?? 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** One URL path segment: IDs, names and file paths (a path's '/' becomes %2F, as the API asks). */
export const seg = (value: string): string => encodeURIComponent(value);

export function parseJsonFlag(text: string, flag: string, example: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${flag} is not valid JSON (${(err as Error).message}). Example: ${flag} '${example}'`, 2);
  }
}

export function parseJsonObjectFlag(text: string, flag: string, example: string): Record<string, unknown> {
  const value = parseJsonFlag(text, flag, example);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CliError(`${flag} must be a JSON object. Example: ${flag} '${example}'`, 2);
  return value as Record<string, unknown>;
}

export function parseIntegerFlag(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new CliError(`${flag} must be an integer from ${min} to ${max}, got '${value}'.`, 2);
  }
  return n;
}

/**
 * A list as the flags ask for it: one page (--limit, --cursor), or with --all every item, following
 * next_cursor in pages of --limit (100 by default). `query` carries the list's own filters.
 */
export async function fetchList<T>(client: ApiClient, path: string, opts: ListOptions, query: Record<string, string> = {}): Promise<{ items: T[]; page: Page<T> | null }> {
  if (opts.all && opts.cursor !== undefined) throw new CliError('--all starts from the first page; it takes no --cursor.', 2);
  const limit = opts.limit === undefined ? undefined : parseIntegerFlag(opts.limit, '--limit', 1, 100);
  const fetchPage = (cursor: string | undefined, pageSize: number | undefined) => {
    const params = new URLSearchParams(query);
    if (pageSize !== undefined) params.set('limit', String(pageSize));
    if (cursor !== undefined) params.set('cursor', cursor);
    const qs = params.toString();
    return client.request<Page<T>>('GET', qs ? `${path}?${qs}` : path);
  };
  if (!opts.all) {
    const page = await fetchPage(opts.cursor, limit);
    return { items: page.items, page };
  }
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor, limit ?? 100);
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return { items, page: null };
}

/** Prints a list: --json gives the page object (or, with --all, the array of every item); else a table. */
export function printList<T>(
  json: boolean,
  result: { items: T[]; page: Page<T> | null },
  headers: readonly string[],
  row: (item: T) => readonly Cell[],
  empty: string,
): void {
  if (json) {
    writeJson(result.page ?? result.items);
    return;
  }
  write(result.items.length === 0 ? `${empty}\n` : table(headers, result.items.map(row)));
  write(moreHint(result.page?.next_cursor));
}

// ---------------------------------------------------------------- jobs

const TERMINAL_JOB = new Set(['succeeded', 'failed', 'canceled']);

/** Polls GET /jobs/{id} until the job ends (succeeded, failed or canceled). */
export async function waitForJob(client: ApiClient, jobId: string, onChange?: (job: Job) => void): Promise<Job> {
  let delay = 100;
  let last = '';
  for (;;) {
    const job = await client.request<Job>('GET', `/jobs/${seg(jobId)}`);
    if (job.status !== last) onChange?.(job);
    last = job.status;
    if (TERMINAL_JOB.has(job.status)) return job;
    await sleep(delay);
    delay = Math.min(delay * 1.5, 1000);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function jobText(job: Job): string {
  const pairs: [string, Cell][] = [
    ['job', job.id],
    ['type', job.type],
    ['status', job.status],
  ];
  if (job.namespace !== undefined) pairs.push(['namespace', job.namespace]);
  if (job.collection !== undefined) pairs.push(['collection', job.collection]);
  if (job.file_id !== undefined) pairs.push(['file', job.file_id]);
  if (job.error) pairs.push(['error', `${job.error.code}: ${job.error.message}`]);
  return keyValues(pairs);
}

/** Exit status of a command that waited for its job: 0 when it succeeded. */
export const jobExitCode = (job: Job): number => (job.status === 'succeeded' ? 0 : 1);
