// Jobs: the daemon's background work as rows, claimed by the indexing worker.
import type { FileErrorCode } from '../../contract/errors.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export type JobType = 'index_file' | 'delete_file' | 'reindex_collection' | 'delete_collection' | 'delete_namespace' | 'apply_access_rule';

export interface JobRow {
  rid: number;
  id: string;
  type: JobType;
  status: JobStatus;
  namespace_rid: number | null;
  collection_rid: number | null;
  namespace: string | null;
  collection: string | null;
  file_rid: number | null;
  file_id: string | null;
  version_id: string | null;
  runnable: number;
  attempts: number;
  /** Times the indexing worker died holding this job (migration 17). */
  worker_deaths: number;
  /** A TEXT column: finishJob and failVersionJobs take a FileErrorCode, the cancel statements write 'superseded'. */
  error_code: FileErrorCode | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export type NewJob = Pick<JobRow, 'id' | 'type' | 'namespace_rid' | 'collection_rid' | 'namespace' | 'collection' | 'file_rid' | 'file_id' | 'version_id' | 'runnable' | 'created_at'>;

export interface JobReads {
  byId(id: string): Promise<JobRow | undefined>;
  status(rid: number): Promise<JobStatus | undefined>;
  /** A namespace's jobs in creation order after `afterRid`, narrowed by status, type or collections. */
  list(opts: { namespaceRid: number; afterRid: number; limit: number; status?: string | undefined; type?: string | undefined; collectionRids?: readonly number[] | undefined }): Promise<JobRow[]>;
  /** Queued, runnable index jobs whose file comes from an http(s) source, oldest first, with the source. */
  queuedSourceFetches(limit: number): Promise<(JobRow & { uri: string })[]>;
  /** True while the collection has index work queued that could run now. */
  hasQueuedIndexJobs(collectionRid: number): Promise<boolean>;
}

export interface JobWrites {
  /** Queued, and reported (job.updated). */
  insert(job: NewJob): Promise<JobRow>;
  /**
   * Claims up to `limit` runnable queued jobs, oldest first; a job claimed before and never finished
   * is claimed alone. Index jobs of http(s) sources wait until their rid is in `fetched`.
   */
  claim(limit: number, now: string, fetched?: readonly number[]): Promise<JobRow[]>;
  /** Only a job still queued or running finishes; false otherwise. */
  finish(rid: number, status: 'succeeded' | 'failed' | 'canceled', now: string, error?: { code: FileErrorCode; message: string } | null): Promise<boolean>;
  /** The queued jobs of a file version may run (its upload arrived). */
  makeRunnable(versionId: string, now: string): Promise<void>;
  /** Jobs claimed and not finished, each counted one more worker death. */
  countWorkerDeath(): Promise<JobRow[]>;
  /** What a runner that died left: its jobs back to the queue and their files back to pending. */
  requeueInterruptedWork(now: string): Promise<{ jobs: number; files: number }>;
  /** A newer version or a delete supersedes a file's unfinished index jobs. */
  cancelQueuedFileJobs(fileRid: number, now: string, message: string): Promise<void>;
  /** A deleted collection's unfinished jobs, but the one deleting it, end canceled. */
  cancelCollectionJobs(collectionRid: number, now: string, exceptRid: number): Promise<void>;
  failVersionJobs(versionId: string, now: string, error: { code: FileErrorCode; message: string }): Promise<void>;
  /** After a restore: the collection's pending files get an index job each; how many. */
  requeueCollectionFiles(collectionRid: number, now: string): Promise<number>;
}
