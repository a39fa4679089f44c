// Fetching http(s) sources beside the indexing, not in its way. The worker indexes a batch's files
// one after another, and a source fetch waits on another machine for up to its whole time limit
// (60 s): one host that accepts the connection and never answers held every namespace's files
// `pending` behind it, N such sources for N minutes (found by a bad-input attack). So the worker
// hands those jobs here when it claims them, goes on with the rest, and takes each back once its
// bytes (or its failure) are in; indexVersion then reads them from here instead of fetching.
import type { JobRow } from '../../store/jobs.js';
import { fetchSourceUri, type FetchedSource, type FetchOptions } from './fetch.js';
import { IngestFailure } from './types.js';

/** Fetches running at once; more wait their turn here, still without holding up other jobs. */
export const FETCH_AHEAD_CONCURRENCY = 8;

interface Held {
  job: JobRow;
  uri: string;
  controller: AbortController;
  /** Set once the fetch has started. */
  result: Promise<FetchedSource> | null;
  settled: boolean;
}

/** True for a source this lane fetches: http and https (file:// reads are local and quick). */
export function fetchesAhead(uri: string | null): uri is string {
  return uri !== null && /^https?:/i.test(uri);
}

export class FetchAhead {
  private readonly held = new Map<string, Held>();

  /**
   * @param options what each fetch is allowed (read when it starts, so new settings count)
   * @param onSettled called when a fetch ends, to wake the worker
   */
  constructor(
    private readonly options: () => Omit<FetchOptions, 'signal'>,
    private readonly onSettled: () => void,
  ) {}

  /** Jobs held here, fetched or not. */
  get size(): number {
    return this.held.size;
  }

  /** Takes an index job whose file comes from `uri` and starts its fetch when a slot is free. */
  hold(job: JobRow, uri: string): void {
    if (this.held.has(job.id)) return;
    this.held.set(job.id, { job, uri, controller: new AbortController(), result: null, settled: false });
    this.startWaiting();
  }

  /** The fetch for a version held here (the worker's indexVersion reads it instead of fetching). */
  fetched(versionId: string): Promise<FetchedSource> | undefined {
    for (const h of this.held.values()) if (h.job.version_id === versionId && h.result) return h.result;
    return undefined;
  }

  /** The jobs whose fetch has ended, handed back to be indexed; they stay readable until `release`. */
  settledJobs(): JobRow[] {
    return [...this.held.values()].filter((h) => h.settled).map((h) => h.job);
  }

  /** Forgets jobs once indexed. */
  release(jobs: readonly JobRow[]): void {
    for (const job of jobs) this.held.delete(job.id);
    this.startWaiting();
  }

  /** Stops the fetches of jobs that no longer need them; they settle as failures and are handed back. */
  abortWhere(unwanted: (job: JobRow) => boolean): void {
    for (const h of this.held.values()) {
      if (h.settled || !unwanted(h.job)) continue;
      h.controller.abort();
      // One not started yet has nothing to stop: it is handed back at once.
      if (!h.result) {
        h.result = Promise.reject(new IngestFailure('fetch_failed', "The source was not fetched: the file's job was canceled or the file changed."));
        h.result.catch(() => undefined);
        h.settled = true;
        this.onSettled();
      }
    }
  }

  abortAll(): void {
    this.abortWhere(() => true);
  }

  private startWaiting(): void {
    let running = [...this.held.values()].filter((h) => h.result && !h.settled).length;
    for (const h of this.held.values()) {
      if (running >= FETCH_AHEAD_CONCURRENCY) return;
      if (h.result) continue;
      running++;
      h.result = fetchSourceUri(h.uri, { ...this.options(), signal: h.controller.signal });
      h.result
        .catch(() => undefined)
        .finally(() => {
          h.settled = true;
          this.startWaiting();
          this.onSettled();
        });
    }
  }
}
