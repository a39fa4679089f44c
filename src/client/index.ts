// `import { createClient } from 'trove'`: a small typed client of the HTTP API (retrieval-api.md).
// Request and response types are the contract's own zod schemas (src/contract/schemas.ts): a request
// is `z.input` (defaults may be left out, as on the wire), a response `z.infer`. It uses the global
// fetch of Node 20+ and no other dependency, and imports nothing but src/contract, so the package's
// declarations stay free of server internals. Responses are not re-validated: the daemon already
// answers through these schemas, and a newer daemon may add fields (retrieval-api.md "Versioning").
import type { z } from 'zod';
import type {
  AddFileRequest,
  AnswerRequest,
  AnswerResponse,
  CollectionSchema,
  CreateCollectionRequest,
  CreateKeyRequest,
  CreateNamespaceRequest,
  FileSchema,
  HealthResponse,
  InfoResponse,
  JobSchema,
  KeySchema,
  ListFilesQuery,
  ListJobsQuery,
  ListQuery,
  NamespaceSchema,
  ResearchRunSchema,
  SearchRequest,
  SearchResponse,
  UploadInstructions,
} from '../contract/schemas.js';
import { collectionPath, namespacePath } from '../contract/paths.js';

export type Namespace = z.infer<typeof NamespaceSchema>;
export type Collection = z.infer<typeof CollectionSchema>;
export type TroveFile = z.infer<typeof FileSchema>;
export type Job = z.infer<typeof JobSchema>;
export type Key = z.infer<typeof KeySchema>;
export type ResearchRun = z.infer<typeof ResearchRunSchema>;
export type Info = z.infer<typeof InfoResponse>;
export type Health = z.infer<typeof HealthResponse>;
export type SearchResponseBody = z.infer<typeof SearchResponse>;
export type SearchResult = SearchResponseBody['results'][number];
export type AnswerResponseBody = z.infer<typeof AnswerResponse>;
export type Upload = z.infer<typeof UploadInstructions>;

export type CreateNamespaceInput = z.input<typeof CreateNamespaceRequest>;
export type CreateCollectionInput = z.input<typeof CreateCollectionRequest>;
export type AddFileInput = z.input<typeof AddFileRequest>;
export type SearchInput = z.input<typeof SearchRequest>;
export type AnswerInput = z.input<typeof AnswerRequest>;
export type CreateKeyInput = z.input<typeof CreateKeyRequest>;
// Query strings: the schemas coerce `limit` from text (so its z.input is unknown); callers pass a number.
type QueryInput<T extends { limit: number }> = Partial<Omit<T, 'limit'>> & { limit?: number };
export type ListInput = QueryInput<z.infer<typeof ListQuery>>;
export type ListFilesInput = QueryInput<z.infer<typeof ListFilesQuery>>;
export type ListJobsInput = QueryInput<z.infer<typeof ListJobsQuery>>;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** POST .../files answers 202 with the file, its indexing job, and for `upload` sources where to PUT the bytes. */
export interface AddedFile {
  file: TroveFile;
  job: Job;
  upload?: Upload;
}

export interface ClientOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:7410` (what `startTrove()` returns as `url`). */
  url: string;
  /** An API key (cluster or scoped), sent as `Authorization: Bearer`. */
  key?: string;
  /** Per-request time limit in milliseconds (default 60 000). */
  timeoutMs?: number;
}

/**
 * Every failure of a client call. For an error envelope (retrieval-api.md "Errors") `code`, `message`,
 * `status` and `request_id` are the daemon's; when no envelope came back (the daemon is unreachable,
 * timed out, or something else answered) `code` is `unreachable` or `bad_response` and `status` is 0
 * or the HTTP status.
 */
export class TroveApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly request_id: string | null;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(init: { code: string; message: string; status: number; request_id?: string | null; retryable?: boolean; details?: Record<string, unknown>; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'TroveApiError';
    this.code = init.code;
    this.status = init.status;
    this.request_id = init.request_id ?? null;
    this.retryable = init.retryable ?? false;
    this.details = init.details ?? {};
  }
}

const DEFAULT_TIMEOUT_MS = 60_000;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type QueryValue = string | number | boolean | null | undefined;
type Query = { [name: string]: QueryValue } | object;

const seg = encodeURIComponent;
const filePath = (namespace: string, collection: string, file: string) => `${collectionPath(namespace, collection)}/files/${seg(file)}`;

export interface TroveClient {
  readonly url: string;
  /** GET /health (no key needed). */
  health(): Promise<Health>;
  /** GET /info: API version, search modes, embedding model, limits. */
  info(): Promise<Info>;

  namespaces: {
    create(body: CreateNamespaceInput): Promise<Namespace>;
    list(query?: ListInput): Promise<Page<Namespace>>;
    get(namespace: string): Promise<Namespace>;
    /** Deleting is asynchronous: the job says when it is done. */
    delete(namespace: string, options?: { force?: boolean }): Promise<{ job: Job }>;
  };

  collections: {
    create(namespace: string, body: CreateCollectionInput): Promise<Collection>;
    list(namespace: string, query?: ListInput): Promise<Page<Collection>>;
    get(namespace: string, collection: string): Promise<Collection>;
    delete(namespace: string, collection: string): Promise<{ job: Job }>;
  };

  files: {
    /** Adds (or replaces) a file; indexing runs in the background: wait on `job` (see `jobs.wait`). */
    add(namespace: string, collection: string, body: AddFileInput): Promise<AddedFile>;
    list(namespace: string, collection: string, query?: ListFilesInput): Promise<Page<TroveFile>>;
    /** `file` is a file ID or its path. */
    get(namespace: string, collection: string, file: string): Promise<TroveFile>;
    delete(namespace: string, collection: string, file: string): Promise<{ job: Job }>;
  };

  search(namespace: string, collection: string, body: SearchInput): Promise<SearchResponseBody>;
  answer(namespace: string, collection: string, body: AnswerInput): Promise<AnswerResponseBody>;
  research: {
    start(namespace: string, collection: string, body: AnswerInput, options?: { idempotencyKey?: string }): Promise<ResearchRun>;
    get(namespace: string, collection: string, runId: string): Promise<ResearchRun>;
  };

  keys: {
    /** The answer carries `secret` this one time. */
    create(body: CreateKeyInput): Promise<Key>;
    list(query?: ListInput): Promise<Page<Key>>;
    revoke(keyId: string): Promise<Key>;
  };

  jobs: {
    get(jobId: string): Promise<Job>;
    list(namespace: string, query?: ListJobsInput): Promise<Page<Job>>;
    /**
     * Polls until the job has finished (succeeded, failed or canceled) and returns it; rejects with
     * code `timeout` after `timeoutMs` (default 60 s).
     */
    wait(jobId: string, options?: { timeoutMs?: number; intervalMs?: number }): Promise<Job>;
  };

  /** Any other route of the API, e.g. `request('GET', '/events')`. */
  request<T = unknown>(method: Method, path: string, body?: unknown, query?: Record<string, QueryValue>): Promise<T>;
}

const FINISHED: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);

export function createClient(options: ClientOptions): TroveClient {
  if (typeof options?.url !== 'string' || !/^https?:\/\//i.test(options.url)) {
    throw new TypeError(`createClient needs { url } as an http(s) URL, e.g. http://127.0.0.1:7410; got ${JSON.stringify(options?.url)}.`);
  }
  const base = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function request<T>(method: Method, path: string, body?: unknown, query?: Query, headers: Record<string, string> = {}): Promise<T> {
    const url = new URL(base + path);
    for (const [name, value] of Object.entries((query ?? {}) as Record<string, QueryValue>)) if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    const sent: Record<string, string> = { accept: 'application/json', ...headers };
    if (options.key) sent.authorization = `Bearer ${options.key}`;
    if (body !== undefined) sent['content-type'] = 'application/json';
    let response: Awaited<ReturnType<typeof fetch>>;
    try {
      response = await fetch(url, {
        method,
        headers: sent,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new TroveApiError({
        code: 'unreachable',
        status: 0,
        message: timedOut ? `${method} ${path}: trove at ${base} did not answer within ${timeoutMs} ms.` : `${method} ${path}: cannot reach trove at ${base} (${causeOf(err)}).`,
        cause: err,
      });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) {
      if (text !== '' && parsed === undefined) {
        throw new TroveApiError({ code: 'bad_response', status: response.status, message: `${method} ${path} answered HTTP ${response.status} with a body that is not JSON: is ${base} a trove daemon?` });
      }
      return parsed as T;
    }
    const envelope = (parsed as { error?: Record<string, unknown> } | undefined)?.error;
    if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
      throw new TroveApiError({
        code: envelope.code,
        message: envelope.message,
        status: response.status,
        request_id: typeof envelope.request_id === 'string' ? envelope.request_id : response.headers.get('x-request-id'),
        retryable: envelope.retryable === true,
        details: typeof envelope.details === 'object' && envelope.details !== null ? (envelope.details as Record<string, unknown>) : {},
      });
    }
    throw new TroveApiError({ code: 'bad_response', status: response.status, message: `${method} ${path} failed with HTTP ${response.status} and no error envelope: is ${base} a trove daemon?` });
  }

  const client: TroveClient = {
    url: base,
    health: () => request('GET', '/health'),
    info: () => request('GET', '/info'),
    namespaces: {
      create: (body) => request('POST', '/namespaces', body),
      list: (query) => request('GET', '/namespaces', undefined, query),
      get: (namespace) => request('GET', namespacePath(namespace)),
      delete: (namespace, opts) => request('DELETE', namespacePath(namespace), opts?.force === undefined ? undefined : { force: opts.force }),
    },
    collections: {
      create: (namespace, body) => request('POST', `${namespacePath(namespace)}/collections`, body),
      list: (namespace, query) => request('GET', `${namespacePath(namespace)}/collections`, undefined, query),
      get: (namespace, collection) => request('GET', collectionPath(namespace, collection)),
      delete: (namespace, collection) => request('DELETE', collectionPath(namespace, collection)),
    },
    files: {
      add: (namespace, collection, body) => request('POST', `${collectionPath(namespace, collection)}/files`, body),
      list: (namespace, collection, query) => request('GET', `${collectionPath(namespace, collection)}/files`, undefined, query),
      get: (namespace, collection, file) => request('GET', filePath(namespace, collection, file)),
      delete: (namespace, collection, file) => request('DELETE', filePath(namespace, collection, file)),
    },
    search: (namespace, collection, body) => request('POST', `${collectionPath(namespace, collection)}:search`, body),
    answer: (namespace, collection, body) => request('POST', `${collectionPath(namespace, collection)}:answer`, body),
    research: {
      start: (namespace, collection, body, opts) =>
        request('POST', `${collectionPath(namespace, collection)}/research`, body, undefined, opts?.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
      get: (namespace, collection, runId) => request('GET', `${collectionPath(namespace, collection)}/research/${seg(runId)}`),
    },
    keys: {
      create: (body) => request('POST', '/keys', body),
      list: (query) => request('GET', '/keys', undefined, query),
      revoke: (keyId) => request('POST', `/keys/${seg(keyId)}:revoke`),
    },
    jobs: {
      get: (jobId) => request('GET', `/jobs/${seg(jobId)}`),
      list: (namespace, query) => request('GET', `${namespacePath(namespace)}/jobs`, undefined, query),
      async wait(jobId, opts = {}) {
        const limit = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
        const deadline = Date.now() + limit;
        let interval = opts.intervalMs ?? 25;
        for (;;) {
          const job = await client.jobs.get(jobId);
          if (FINISHED.has(job.status)) return job;
          if (Date.now() >= deadline) {
            throw new TroveApiError({ code: 'timeout', status: 0, message: `Job ${jobId} is still ${job.status} after ${limit} ms.` });
          }
          await new Promise((resolve) => setTimeout(resolve, interval));
          // Indexing a small file takes milliseconds; back off for long jobs without hammering the daemon.
          interval = Math.min(interval * 2, 500);
        }
      },
    },
    request: (method, path, body, query) => request(method, path, body, query),
  };
  return client;
}

function causeOf(err: unknown): string {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    const next = (current as { cause?: unknown }).cause;
    if (next === undefined) return current instanceof Error ? current.message : String(current);
    current = next;
  }
  return String(err);
}
