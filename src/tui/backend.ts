// What the TUI needs from a daemon, behind one interface so the views can be tested without a daemon.
// The real one talks HTTP through the CLI's ApiClient and takes live events from the operator
// socket, or from the public SSE stream when the socket is out of reach.
import { randomUUID } from 'node:crypto';
import type { AnswerInput, Collection, Job, Namespace, ResearchRun as Run, TroveFile } from '../client/index.js';
import { ApiClient, CliApiError, collectionPath, namespacePath } from '../cli/client.js';
import type { Connection } from '../cli/connection.js';
import { searchWithDefaultMode } from '../cli/search-request.js';
import { isPermanent } from './errors.js';
import { connectOperatorEvents } from './operator-events.js';
import { openEventStream } from './sse.js';
import type {
  ChannelState,
  CollectionItem,
  CollectionRef,
  EventChannel,
  FileItem,
  JobItem,
  NamespaceItem,
  ResearchMode,
  ResearchRun,
  SearchRequest,
  SearchResponse,
  TroveEvent,
} from './types.js';

export interface TuiBackend {
  /** The daemon's URL, for the header line. */
  readonly url: string;
  listNamespaces(): Promise<NamespaceItem[]>;
  listCollections(namespace: string): Promise<CollectionItem[]>;
  /** Jobs still queued or running in a namespace. */
  listActiveJobs(namespace: string): Promise<JobItem[]>;
  /** One collection with its file counts; null when it does not exist (any more). */
  getCollection(ref: CollectionRef): Promise<CollectionItem | null>;
  search(ref: CollectionRef, request: SearchRequest): Promise<SearchResponse>;
  getFile(ref: CollectionRef, fileId: string): Promise<FileItem>;
  startResearch(ref: CollectionRef, question: string, mode: ResearchMode): Promise<ResearchRun>;
  getResearch(ref: CollectionRef, runId: string): Promise<ResearchRun>;
  /**
   * Live events until the returned function is called. `onError` reports a stream failure (the
   * stream retries by itself unless the failure is permanent); `onChannel` says which channel
   * carries the events and whether it is connected.
   */
  subscribe(onEvent: (event: TroveEvent) => void, onError: (err: unknown) => void, onChannel?: (state: ChannelState) => void): () => void;
}

/** One live connection of a channel. */
export interface EventStreamHandlers {
  /** Connected (again); repeated calls while connected are ignored. */
  onOpen(): void;
  onEvent(event: TroveEvent): void;
  /** The connection dropped and the source is reconnecting by itself. */
  onInterrupted(err: unknown): void;
  /**
   * The stream ended (with the error, if it failed); it is opened again unless the failure is
   * permanent. `lostPlace`: the daemon no longer knows the last event, so resume from now.
   */
  onEnd(err?: unknown, lostPlace?: boolean): void;
}

export interface EventSource {
  channel: EventChannel;
  note?: string;
  open(lastEventId: string | undefined, handlers: EventStreamHandlers): { close(): void };
  /** Releases what the source holds (the operator socket). */
  dispose(): void;
}

export interface BackendOptions {
  /** false: use the SSE stream even when the operator socket is there. */
  operator?: boolean;
  /** Waits between reconnection attempts, the last one repeating. */
  retryDelaysMs?: number[];
}

const DEFAULT_RETRY_DELAYS_MS = [500, 1000, 2000, 5000, 10_000];

export function createBackend(conn: Connection, dataDir: string, options: BackendOptions = {}): TuiBackend {
  const api = ApiClient.of(conn);
  const colPath = (ref: CollectionRef) => collectionPath(ref.namespace, ref.collection);

  const sseSource = (note?: string): EventSource => ({
    channel: 'sse',
    ...(note ? { note } : {}),
    open(lastEventId, handlers) {
      const stream = openEventStream({ url: api.baseUrl, key: conn.key }, lastEventId, { onOpen: handlers.onOpen, onEvent: handlers.onEvent });
      stream.done.then(
        () => handlers.onEnd(),
        // After an event an ephemeral daemon (restarted) never had: 400 invalid_request.
        (err: unknown) => handlers.onEnd(err, err instanceof CliApiError && err.code === 'invalid_request'),
      );
      return stream;
    },
    dispose() {},
  });

  const chooseSource = async (): Promise<EventSource> => {
    if (options.operator === false) return sseSource('operator channel not used (--no-operator)');
    const operator = await connectOperatorEvents(dataDir, api.baseUrl);
    return 'source' in operator ? operator.source : sseSource(operator.reason);
  };

  return {
    url: api.baseUrl,
    // The contract's whole resources, each assigned to the part the TUI keeps: the compiler checks they fit.
    listNamespaces: () => api.listAll<Namespace>('/namespaces'),
    listCollections: (namespace) => api.listAll<Collection>(`${namespacePath(namespace)}/collections`),
    async listActiveJobs(namespace) {
      const path = `${namespacePath(namespace)}/jobs`;
      try {
        const [running, queued] = await Promise.all([api.listAll<Job>(path, { status: 'running' }), api.listAll<Job>(path, { status: 'queued' })]);
        return [...running, ...queued];
      } catch (err) {
        // A key that may list collections but not jobs still gets its collections; the jobs
        // column then fills from job events alone.
        if (err instanceof CliApiError && err.status === 403) return [];
        throw err;
      }
    },
    async getCollection(ref) {
      try {
        return await api.request<Collection>('GET', colPath(ref));
      } catch (err) {
        if (err instanceof CliApiError && err.status === 404) return null;
        throw err;
      }
    },
    search: (ref, request) =>
      searchWithDefaultMode(api, colPath(ref), { query: request.query, ...(request.mode ? { mode: request.mode } : {}), result_unit: request.unit, limit: request.limit }),
    getFile: (ref, fileId) => api.request<TroveFile>('GET', `${colPath(ref)}/files/${encodeURIComponent(fileId)}`),
    startResearch: (ref, question, mode) =>
      // A fresh Idempotency-Key per run the user starts: the TUI never retries a start by itself.
      api.request<Run>('POST', `${colPath(ref)}/research`, { query: question, mode } satisfies AnswerInput, { headers: { 'idempotency-key': randomUUID() } }),
    getResearch: (ref, runId) => api.request<Run>('GET', `${colPath(ref)}/research/${encodeURIComponent(runId)}`),
    subscribe(onEvent, onError, onChannel) {
      return followEvents(chooseSource, { onEvent, onError, onChannel: onChannel ?? (() => {}) }, options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS);
    },
  };
}

/**
 * Keeps one source's stream open: resumes after the last event seen when it breaks, waiting a
 * little longer each time, and gives up only on a permanent failure (a refused key).
 */
export function followEvents(
  chooseSource: () => Promise<EventSource>,
  callbacks: { onEvent(event: TroveEvent): void; onError(err: unknown): void; onChannel(state: ChannelState): void },
  retryDelaysMs: number[],
): () => void {
  let closed = false;
  let source: EventSource | undefined;
  let current: { close(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastEventId: string | undefined;
  let failures = 0;

  const state = (connected: boolean): ChannelState => ({ channel: source!.channel, connected, ...(source!.note ? { note: source!.note } : {}) });

  const connect = () => {
    if (closed || !source) return;
    let ended = false;
    let open = false;
    current = source.open(lastEventId, {
      onOpen() {
        if (closed || ended || open) return;
        open = true;
        failures = 0;
        callbacks.onChannel(state(true));
      },
      onEvent(event) {
        if (closed || ended) return;
        lastEventId = event.id;
        callbacks.onEvent(event);
      },
      onInterrupted(err) {
        if (closed || ended) return;
        if (open) callbacks.onChannel(state(false));
        open = false;
        callbacks.onError(err);
      },
      onEnd(err, lostPlace) {
        if (closed || ended) return;
        ended = true;
        const permanent = isPermanent(err);
        callbacks.onChannel(permanent ? { ...state(false), stopped: true } : state(false));
        if (err !== undefined) callbacks.onError(err);
        if (permanent) return;
        // The view reloads on reconnection, so starting from now loses nothing it shows.
        if (lostPlace) lastEventId = undefined;
        const delay = retryDelaysMs[Math.min(failures, retryDelaysMs.length - 1)] ?? 1000;
        failures++;
        timer = setTimeout(connect, delay);
      },
    });
  };

  void chooseSource().then(
    (chosen) => {
      if (closed) {
        chosen.dispose();
        return;
      }
      source = chosen;
      connect();
    },
    (err: unknown) => callbacks.onError(err),
  );

  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    current?.close();
    source?.dispose();
  };
}
