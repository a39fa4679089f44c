// `trove files list|get|add|delete|reindex`: the files of one collection.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import type { AddedFile, AddFileInput, Job, TroveFile } from '../../client/index.js';
import { contentTypeFromPath } from '../../contract/content-types.js';
import type { FileContentResponse } from '../../contract/schemas.js';
import { ApiClient, CliError, collectionPath } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { keyValues, write, writeJson, type Cell } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { sniffContentType } from '../walk.js';
import { fromCwd } from '../io.js';
import { EXIT_FILES_FAILED, hashFile, uploadFile } from './ingest.js';
import { collectionTarget, connect, fetchList, jobText, parseJsonObjectFlag, printList, runCommand, seg, sleep, type CollectionFlags, type JsonOption, type ListOptions } from './resource-common.js';

interface Scoped extends JsonOption, CollectionFlags {}

export interface FileListOptions extends ListOptions, Scoped {
  status?: string;
  prefix?: string;
}

export interface FileAddOptions extends Scoped {
  text?: string;
  uri?: string;
  path?: string;
  contentType?: string;
  metadata?: string;
  wait?: boolean;
}

export interface FileDeleteOptions extends Scoped {
  yes?: boolean;
}

export interface FileReindexOptions extends Scoped {
  wait?: boolean;
}

const FILE_STATUSES = ['pending', 'indexing', 'ready', 'failed'];
const METADATA_EXAMPLE = '{"team":"docs","year":2024}';

export const fileText = (f: TroveFile) => {
  const pairs: [string, Cell][] = [
    ['id', f.id],
    ['path', f.path],
    ['status', f.status],
    ['source', f.source.type],
    ['content type', f.source.content_type],
    ['bytes', f.source.bytes],
    ['uri', f.source.uri],
    ['checksum', f.source.checksum],
    ['metadata', Object.keys(f.metadata).length > 0 ? JSON.stringify(f.metadata) : undefined],
    ['error', f.error ? `${f.error.code}: ${f.error.message}` : undefined],
    ['governing rule', f.governing_rule ? `${f.governing_rule.id} (${f.governing_rule.folder ?? f.governing_rule.file})` : undefined],
    ['created', f.created_at],
    ['updated', f.updated_at],
  ];
  for (const note of f.notes ?? []) pairs.push(['note', note]);
  return keyValues(pairs);
};

/** A `fil_` ID, or a path as one encoded segment (each '/' as %2F), as the API takes either. */
const fileSegment = seg;

/** `[collection] <file>`: the collection may be left to -c or the saved default (resource-common.ts). */
async function scoped(
  args: readonly (string | undefined)[],
  trailing: readonly string[],
  example: string,
  globalOpts: GlobalOptions,
  opts: Scoped,
): Promise<{ client: ApiClient; base: string; rest: string[] }> {
  const target = await collectionTarget(args, trailing, opts, example);
  const { client } = await connect(globalOpts);
  return { client, base: collectionPath(target.namespace, target.collection), rest: target.rest };
}

export function runFileList(ref: string | undefined, globalOpts: GlobalOptions, opts: FileListOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    if (opts.status !== undefined && !FILE_STATUSES.includes(opts.status)) throw new CliError(`--status is one of ${FILE_STATUSES.join(', ')}, got '${opts.status}'.`, 2);
    const query: Record<string, string> = {};
    if (opts.status !== undefined) query.status = opts.status;
    if (opts.prefix !== undefined) query.prefix = opts.prefix;
    const { client, base } = await scoped([ref], [], 'trove files list <collection>', globalOpts, opts);
    const result = await fetchList<TroveFile>(client, `${base}/files`, opts, query);
    printList(
      json,
      result,
      ['id', 'path', 'status', 'source', 'bytes', 'error'],
      (f) => [f.id, f.path, f.status, f.source.type, f.source.bytes, f.error?.code],
      'No files.',
    );
  });
}

export function runFileGet(ref: string | undefined, fileArg: string | undefined, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, base, rest } = await scoped([ref, fileArg], ['file'], 'trove files get [collection] <file>', globalOpts, opts);
    const file = rest[0]!;
    const found = await client.request<TroveFile>('GET', `${base}/files/${fileSegment(file)}`);
    if (json) writeJson(found);
    else write(fileText(found));
  });
}

/** `--path`, or the last segment of where the bytes come from. */
function collectionPathFor(explicit: string | undefined, from: string | undefined, what: string): string {
  if (explicit !== undefined) {
    if (!explicit.startsWith('/')) throw new CliError(`--path must start with '/', got '${explicit}'.`, 2);
    return explicit;
  }
  const name = from ? path.posix.basename(from) : '';
  if (!name) throw new CliError(`Name the file in the collection with --path /<name> (it cannot be taken from ${what}).`, 2);
  return `/${name}`;
}

export function runFileAdd(ref: string | undefined, secondArg: string | undefined, globalOpts: GlobalOptions, opts: FileAddOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    // With --text or --uri a lone argument is the collection. Otherwise it is the local file (the
    // collection from -c or the saved default) when -c is given or it names a file here; else it is
    // the collection, and the missing source is said below.
    const byFlag = opts.text !== undefined || opts.uri !== undefined;
    const lone = secondArg === undefined ? ref : undefined;
    const loneIsFile = lone !== undefined && !byFlag && (opts.collection !== undefined || (await stat(fromCwd(lone)).then((s) => s.isFile(), () => false)));
    const target = await collectionTarget([ref, secondArg], loneIsFile ? ['local file'] : [], opts, 'trove files add [collection] <local-file>');
    const localFile = target.rest[0];
    const given = [localFile !== undefined ? 'a local file' : null, opts.text !== undefined ? '--text' : null, opts.uri !== undefined ? '--uri' : null].filter(Boolean);
    if (given.length !== 1) {
      throw new CliError(`Give exactly one source: a local file path, --text <text> --path <path>, or --uri <uri>${given.length > 1 ? ` (got ${given.join(' and ')})` : ''}.`, 2);
    }
    const metadata = opts.metadata === undefined ? undefined : parseJsonObjectFlag(opts.metadata, '--metadata', METADATA_EXAMPLE);
    const base = collectionPath(target.namespace, target.collection);

    let prepared: { path: string; body?: AddFileInput['source']; local?: { absPath: string; size: number } };
    if (opts.text !== undefined) {
      if (opts.path === undefined) throw new CliError('--text needs --path /<name> for the file in the collection.', 2);
      prepared = { path: collectionPathFor(opts.path, undefined, '--text'), body: { type: 'inline', text: opts.text, ...(opts.contentType ? { content_type: opts.contentType } : {}) } };
    } else if (opts.uri !== undefined) {
      let parsed: URL;
      try {
        parsed = new URL(opts.uri);
      } catch {
        throw new CliError(`--uri must be an absolute URI (https://…, file://…), got '${opts.uri}'.`, 2);
      }
      prepared = { path: collectionPathFor(opts.path, decodeURIComponent(parsed.pathname), opts.uri), body: { type: 'uri', uri: opts.uri, ...(opts.contentType ? { content_type: opts.contentType } : {}) } };
    } else {
      const absPath = fromCwd(localFile!);
      const info = await stat(absPath).catch(() => null);
      if (!info?.isFile()) throw new CliError(`${localFile} is not a file.`, 2);
      prepared = { path: collectionPathFor(opts.path, localFile!.replaceAll('\\', '/'), localFile!), local: { absPath, size: info.size } };
    }

    const { client } = await connect(globalOpts);
    let added: AddedFile;
    if (prepared.local) {
      const { absPath } = prepared.local;
      const { sha256, size } = await hashFile(absPath);
      const contentType = opts.contentType ?? contentTypeFromPath(absPath) ?? (await sniffContentType(absPath));
      added = await uploadFile(client, base, { absPath, path: prepared.path, size, sha256, contentType }, metadata);
    } else {
      added = await client.request<AddedFile>('POST', `${base}/files`, { path: prepared.path, source: prepared.body, ...(metadata === undefined ? {} : { metadata }) });
    }
    return finish(client, base, added, Boolean(opts.wait), json);
  });
}

/** Prints the added file and its job; with --wait, once the file is ready or failed. */
async function finish(client: ApiClient, base: string, added: AddedFile, wait: boolean, json: boolean): Promise<number> {
  if (!wait) {
    if (json) writeJson(added);
    else write(`${fileText(added.file)}\n${jobText(added.job)}`);
    return 0;
  }
  const file = await waitForFile(client, base, added.file.id);
  const job = await client.request<Job>('GET', `/jobs/${seg(added.job.id)}`);
  if (json) writeJson({ file, job });
  else write(`${fileText(file)}\n${jobText(job)}`);
  return file.status === 'ready' ? 0 : EXIT_FILES_FAILED;
}

async function waitForFile(client: ApiClient, base: string, id: string): Promise<TroveFile> {
  let delay = 100;
  for (;;) {
    const file = await client.request<TroveFile>('GET', `${base}/files/${seg(id)}`);
    if (file.status === 'ready' || file.status === 'failed') return file;
    await sleep(delay);
    delay = Math.min(delay * 1.5, 1000);
  }
}

export function runFileDelete(ref: string | undefined, fileArg: string | undefined, globalOpts: GlobalOptions, opts: FileDeleteOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, base, rest } = await scoped([ref, fileArg], ['file'], 'trove files delete [collection] <file>', globalOpts, opts);
    const file = rest[0]!;
    // Read first, so that a wrong ID fails before anyone is asked to confirm it.
    const found = await client.request<TroveFile>('GET', `${base}/files/${fileSegment(file)}`);
    await confirmOrRefuse(`Delete file ${found.path} (${found.id})?`, { yes: opts.yes });
    const res = await client.request<{ job: Job }>('DELETE', `${base}/files/${seg(found.id)}`);
    if (json) writeJson(res);
    else write(`deleting ${found.path} (${found.id})\n${jobText(res.job)}`);
  });
}

/**
 * The API has no per-file reindex: the file is added again at its path with the same source and
 * metadata (a new version, indexed again). Inline and uploaded bytes come back through the file's
 * signed content URL; a uri source is fetched again by the daemon.
 */
export function runFileReindex(ref: string | undefined, fileArg: string | undefined, globalOpts: GlobalOptions, opts: FileReindexOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, base, rest } = await scoped([ref, fileArg], ['file'], 'trove files reindex [collection] <file>', globalOpts, opts);
    const file = rest[0]!;
    const found = await client.request<TroveFile>('GET', `${base}/files/${fileSegment(file)}`);
    const { source } = found;
    let added: AddedFile;
    if (source.type === 'uri') {
      const uriSource = { type: 'uri', uri: source.uri, content_type: source.content_type, ...(source.bytes === undefined ? {} : { bytes: source.bytes }), ...(source.checksum ? { checksum: source.checksum } : {}) };
      added = await client.request<AddedFile>('POST', `${base}/files`, { path: found.path, source: uriSource, metadata: found.metadata });
    } else {
      const bytes = await downloadContent(client, base, found);
      if (source.type === 'inline') {
        added = await client.request<AddedFile>('POST', `${base}/files`, {
          path: found.path,
          source: { type: 'inline', text: bytes.toString('utf8'), content_type: source.content_type },
          metadata: found.metadata,
        } satisfies AddFileInput);
      } else {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-reindex-'));
        try {
          const absPath = path.join(dir, 'content');
          await writeFile(absPath, bytes);
          const sha256 = createHash('sha256').update(bytes).digest('hex');
          added = await uploadFile(client, base, { absPath, path: found.path, size: bytes.length, sha256, contentType: source.content_type }, found.metadata);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
    }
    return finish(client, base, added, Boolean(opts.wait), json);
  });
}

async function downloadContent(client: ApiClient, base: string, file: TroveFile): Promise<Buffer> {
  const { url } = await client.request<z.infer<typeof FileContentResponse>>('GET', `${base}/files/${seg(file.id)}/content`);
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new CliError(`Reading the bytes of ${file.path} failed: HTTP ${response.status}.`);
  return Buffer.from(await response.arrayBuffer());
}
