// `trove collections create|list|get|update|delete|reindex`: collections of a namespace.
import type { z } from 'zod';
import type { Collection, CreateCollectionInput, Job } from '../../client/index.js';
import type { UpdateCollectionRequest } from '../../contract/schemas.js';
import { CliError, collectionPath, namespacePath } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { keyValues, write, writeJson } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import {
  collectionTarget,
  connect,
  fetchList,
  jobExitCode,
  jobText,
  namespaceTarget,
  parseIntegerFlag,
  printList,
  runCommand,
  waitForJob,
  type CollectionFlags,
  type JsonOption,
  type ListOptions,
} from './resource-common.js';
import { parseTarget } from '../defaults.js';

type FileCounts = Collection['file_counts'];
/** The processing fields a create or update sends: only those whose flag was given. */
type ProcessingInput = NonNullable<CreateCollectionInput['processing']>;

/** The processing flags; commander leaves each undefined unless it was given. */
export interface ProcessingFlags {
  keyword?: boolean;
  semantic?: boolean;
  ocr?: boolean;
  chunkTokens?: string;
  chunkOverlap?: string;
}

export interface CollectionCreateOptions extends JsonOption, ProcessingFlags {
  namespace?: string;
  displayName?: string;
  existOk?: boolean;
  accessControl?: string;
}

export interface CollectionUpdateOptions extends CollectionFlags, JsonOption, ProcessingFlags {
  namespace?: string;
  displayName?: string;
  accessControl?: string;
}

export interface CollectionDeleteOptions extends CollectionFlags, JsonOption {
  namespace?: string;
  yes?: boolean;
}

export interface CollectionReindexOptions extends CollectionFlags, JsonOption {
  namespace?: string;
  wait?: boolean;
}

const counts = (c: FileCounts) => `${c.ready} ready, ${c.pending + c.indexing} pending, ${c.failed} failed`;

const processingText = (p: Collection['processing']) =>
  [
    p.keyword ? 'keyword' : null,
    p.semantic ? 'semantic' : null,
    p.ocr ? 'ocr' : 'no ocr',
    p.chunk_tokens !== undefined ? `chunk ${p.chunk_tokens} tokens` : null,
    p.chunk_overlap !== undefined ? `overlap ${p.chunk_overlap}` : null,
  ]
    .filter(Boolean)
    .join(', ');

export const collectionText = (c: Collection) =>
  keyValues([
    ['id', c.id],
    ['name', `${c.namespace}/${c.name}`],
    ['display name', c.display_name],
    ['status', c.status],
    ['files', counts(c.file_counts)],
    ['processing', processingText(c.processing)],
    ['access control', c.access_control],
    ['index generation', c.index_generation],
    ['created', c.created_at],
    ['updated', c.updated_at],
  ]);

/** Only the flags that were given: the rest is left to the daemon's defaults (create) or the current profile (update). */
function processingChanges(opts: ProcessingFlags): ProcessingInput {
  const changes: ProcessingInput = {};
  if (opts.keyword !== undefined) changes.keyword = opts.keyword;
  if (opts.semantic !== undefined) changes.semantic = opts.semantic;
  if (opts.ocr !== undefined) changes.ocr = opts.ocr;
  if (opts.chunkTokens !== undefined) changes.chunk_tokens = parseIntegerFlag(opts.chunkTokens, '--chunk-tokens', 64, 2048);
  if (opts.chunkOverlap !== undefined) changes.chunk_overlap = parseIntegerFlag(opts.chunkOverlap, '--chunk-overlap', 0, 1024);
  return changes;
}

function accessControl(value: string | undefined): Collection['access_control'] | undefined {
  if (value === undefined || value === 'off' || value === 'enforced') return value;
  throw new CliError(`--access-control is 'off' or 'enforced', got '${value}'.`, 2);
}

export function runCollectionCreate(ref: string, globalOpts: GlobalOptions, opts: CollectionCreateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = parseTarget(ref, opts.namespace);
    const body: CreateCollectionInput = { name: target.collection, exist_ok: Boolean(opts.existOk) };
    if (opts.displayName !== undefined) body.display_name = opts.displayName;
    const access = accessControl(opts.accessControl);
    if (access !== undefined) body.access_control = access;
    const processing = processingChanges(opts);
    if (Object.keys(processing).length > 0) body.processing = processing;
    const { client } = await connect(globalOpts);
    const created = await client.request<Collection>('POST', `${namespacePath(target.namespace)}/collections`, body);
    if (json) writeJson(created);
    else write(collectionText(created));
  });
}

export function runCollectionList(globalOpts: GlobalOptions, opts: ListOptions & { namespace?: string }): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client } = await connect(globalOpts);
    const result = await fetchList<Collection>(client, `${namespacePath(await namespaceTarget(opts.namespace))}/collections`, opts);
    printList(
      json,
      result,
      ['id', 'name', 'status', 'ready', 'pending', 'failed', 'access'],
      (c) => [c.id, c.name, c.status, c.file_counts.ready, c.file_counts.pending + c.file_counts.indexing, c.file_counts.failed, c.access_control],
      'No collections.',
    );
  });
}

export function runCollectionGet(ref: string | undefined, globalOpts: GlobalOptions, opts: JsonOption & CollectionFlags): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = await collectionTarget([ref], [], opts, 'trove collections get <collection>');
    const { client } = await connect(globalOpts);
    const collection = await client.request<Collection>('GET', collectionPath(target.namespace, target.collection));
    if (json) writeJson(collection);
    else write(collectionText(collection));
  });
}

export function runCollectionUpdate(ref: string | undefined, globalOpts: GlobalOptions, opts: CollectionUpdateOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = await collectionTarget([ref], [], opts, 'trove collections update <collection>');
    const body: z.input<typeof UpdateCollectionRequest> = {};
    // An empty display name clears the label.
    if (opts.displayName !== undefined) body.display_name = opts.displayName === '' ? null : opts.displayName;
    const access = accessControl(opts.accessControl);
    if (access !== undefined) body.access_control = access;
    const changes = processingChanges(opts);
    if (Object.keys(body).length === 0 && Object.keys(changes).length === 0) {
      throw new CliError('Nothing to update: pass --display-name, --access-control or a processing flag (see --help).', 2);
    }
    const { client } = await connect(globalOpts);
    const path = collectionPath(target.namespace, target.collection);
    if (Object.keys(changes).length > 0) {
      // PATCH replaces the whole processing profile: start from the current one so unnamed flags keep their values.
      const current = await client.request<Collection>('GET', path);
      body.processing = { ...current.processing, ...changes };
    }
    const res = await client.request<Collection | { collection: Collection; job: Job }>('PATCH', path, body);
    if (json) writeJson(res);
    else if ('job' in res) write(`${collectionText(res.collection)}the change needs reindexing:\n${jobText(res.job)}`);
    else write(collectionText(res));
  });
}

export function runCollectionDelete(ref: string | undefined, globalOpts: GlobalOptions, opts: CollectionDeleteOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = await collectionTarget([ref], [], opts, 'trove collections delete <collection>');
    const { client } = await connect(globalOpts);
    const path = collectionPath(target.namespace, target.collection);
    // Read first, so that a wrong name fails before anyone is asked to confirm it.
    const collection = await client.request<Collection>('GET', path);
    const files = collection.file_counts.pending + collection.file_counts.indexing + collection.file_counts.ready + collection.file_counts.failed;
    await confirmOrRefuse(`Delete collection ${collection.namespace}/${collection.name} (${collection.id}) and its ${files} file(s)?`, { yes: opts.yes });
    const res = await client.request<{ job: Job }>('DELETE', collectionPath(target.namespace, collection.id));
    if (json) writeJson(res);
    else write(`deleting collection ${collection.namespace}/${collection.name} (${collection.id})\n${jobText(res.job)}`);
  });
}

export function runCollectionReindex(ref: string | undefined, globalOpts: GlobalOptions, opts: CollectionReindexOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = await collectionTarget([ref], [], opts, 'trove collections reindex <collection>');
    const { client } = await connect(globalOpts);
    const res = await client.request<{ job: Job }>('POST', `${collectionPath(target.namespace, target.collection)}:reindex`);
    if (!opts.wait) {
      if (json) writeJson(res);
      else write(jobText(res.job));
      return 0;
    }
    if (!json) write(`${jobText(res.job)}waiting for it to finish…\n`);
    const job = await waitForJob(client, res.job.id);
    if (json) writeJson({ job });
    else write(jobText(job));
    return jobExitCode(job);
  });
}
