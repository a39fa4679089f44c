// Fetching http(s) sources beside the indexing, not in its way. The worker indexed a batch's files
// one after another, and a source fetch waits on another machine for up to its whole time limit
// (60 s): one host that accepts the connection and never answers held every namespace's files
// `pending` behind it, N such sources for N minutes (found by a bad-input attack).
//
// So such a job stays queued while this lane fetches its source; the worker's claim skips it until
// its bytes (or its failure) are in (src/store/sqlite/jobs.ts claimJobs), and indexVersion then reads them
// from here. A job waiting here is not `running`: a worker death is not counted against it, and a
// cancel, a deleted collection or a changed file ends its fetch. The lane holds a bounded number of
// jobs, taken in turn from each namespace, so neither memory nor one tenant's slow hosts grow
// without limit.
import type { JobRow } from '../../store/interface.js';
import { fetchSourceUri, type FetchedSource, type FetchOptions } from './fetch.js';

/** Fetches running at once. */
export const FETCH_AHEAD_CONCURRENCY = 8;
/** Jobs the lane holds at most, fetching, waiting for a slot, or fetched and not yet claimed. */
export const FETCH_AHEAD_CAPACITY = 16;
/** Of which one namespace holds at most: half the fetch slots, so another always finds one. */
export const FETCH_AHEAD_PER_NAMESPACE = 4;

interface Held {
  job: JobRow;
  uri: string;
  controller: AbortController;
  /** Set once the fetch has started. */
  result: Promise<FetchedSource> | null;
  settled: boolean;
}

export class FetchAhead {
  private readonly held = new Map<number, Held>();

  /**
   * @param options what each fetch is allowed (read when it starts, so new settings count)
   * @param onSettled called when a fetch ends, to wake the worker
   */
  constructor(
    private readonly options: () => Omit<FetchOptions, 'signal'>,
    private readonly onSettled: () => void,
  ) {}

  get size(): number {
    return this.held.size;
  }

  /**
   * Takes queued jobs (oldest first, with their sources) while there is room: one job of each
   * namespace in turn, so a namespace with many slow sources does not fill the lane alone.
   */
  intake(queued: readonly (JobRow & { uri: string })[]): void {
    const byNamespace = new Map<number | null, (JobRow & { uri: string })[]>();
    for (const job of queued) {
      if (this.held.has(job.rid)) continue;
      const list = byNamespace.get(job.namespace_rid) ?? [];
      list.push(job);
      byNamespace.set(job.namespace_rid, list);
    }
    const heldBy = new Map<number | null, number>();
    for (const h of this.held.values()) heldBy.set(h.job.namespace_rid, (heldBy.get(h.job.namespace_rid) ?? 0) + 1);
    const lists = [...byNamespace.values()];
    for (let turn = 0; this.held.size < FETCH_AHEAD_CAPACITY; turn++) {
      let took = false;
      for (const list of lists) {
        const job = list[turn];
        if (!job || this.held.size >= FETCH_AHEAD_CAPACITY || (heldBy.get(job.namespace_rid) ?? 0) >= FETCH_AHEAD_PER_NAMESPACE) continue;
        this.held.set(job.rid, { job, uri: job.uri, controller: new AbortController(), result: null, settled: false });
        heldBy.set(job.namespace_rid, (heldBy.get(job.namespace_rid) ?? 0) + 1);
        took = true;
      }
      if (!took) break;
    }
    this.startWaiting();
  }

  /** The rids of jobs whose fetch has ended: the claim may take them now. */
  fetchedRids(): number[] {
    return [...this.held.values()].filter((h) => h.settled).map((h) => h.job.rid);
  }

  hasFetched(): boolean {
    for (const h of this.held.values()) if (h.settled) return true;
    return false;
  }

  /** A version's fetched source, once its fetch has ended (bytes or failure); else undefined. */
  fetched(versionId: string): Promise<FetchedSource> | undefined {
    for (const h of this.held.values()) if (h.settled && h.job.version_id === versionId && !h.controller.signal.aborted) return h.result!;
    return undefined;
  }

  /** Forgets jobs the worker has claimed (and indexed) or that need no fetch any more, ending their fetches. */
  drop(rids: Iterable<number>): void {
    for (const rid of rids) {
      const h = this.held.get(rid);
      if (!h) continue;
      h.controller.abort();
      this.held.delete(rid);
    }
    this.startWaiting();
  }

  /** The jobs held, for the worker to check which still need their fetch. */
  jobs(): JobRow[] {
    return [...this.held.values()].map((h) => h.job);
  }

  abortAll(): void {
    this.drop([...this.held.keys()]);
  }

  private startWaiting(): void {
    let running = 0;
    for (const h of this.held.values()) if (h.result && !h.settled) running++;
    for (const h of this.held.values()) {
      if (running >= FETCH_AHEAD_CONCURRENCY) return;
      if (h.result) continue;
      running++;
      h.result = fetchSourceUri(h.uri, { ...this.options(), signal: h.controller.signal });
      h.result
        .catch(() => undefined)
        .finally(() => {
          h.settled = true;
          if (this.held.get(h.job.rid) !== h) return; // dropped meanwhile
          this.startWaiting();
          this.onSettled();
        });
    }
  }
}
