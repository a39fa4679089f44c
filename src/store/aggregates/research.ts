// Research runs: asynchronous question answering, queued and run by the daemon's research runner.

export type ResearchStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

export interface ResearchRow {
  rid: number;
  id: string;
  namespace_rid: number;
  collection_rid: number;
  namespace: string;
  collection: string;
  key_id: string;
  idempotency_key: string | null;
  body_hash: string;
  request: string;
  status: ResearchStatus;
  mode: string;
  progress: string | null;
  answer: string | null;
  sources: string | null;
  image_description: string | null;
  image_text: string | null;
  usage: string | null;
  error: string | null;
  deadline_at: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export type NewResearch = Pick<
  ResearchRow,
  'id' | 'namespace_rid' | 'collection_rid' | 'namespace' | 'collection' | 'key_id' | 'idempotency_key' | 'body_hash' | 'request' | 'mode' | 'image_description' | 'image_text' | 'deadline_at' | 'created_at'
>;

export interface ResearchReads {
  /** A run an idempotency key of this key named, while the key is kept. */
  findByIdempotency(keyId: string, idempotencyKey: string): Promise<ResearchRow | undefined>;
  find(collectionRid: number, id: string): Promise<ResearchRow | undefined>;
  byRid(rid: number): Promise<ResearchRow | undefined>;
  /** Newest first; `keyId` narrows to one key's runs. */
  list(opts: { collectionRid: number; beforeRid: number | null; limit: number; keyId?: string | undefined }): Promise<ResearchRow[]>;
}

export interface ResearchWrites {
  /** Queued, and reported (research.updated). */
  insert(row: NewResearch): Promise<ResearchRow>;
  /** Idempotency keys of runs created before the cutoff are forgotten. */
  expireIdempotencyKeys(createdBefore: string): Promise<void>;
  /** The next queued run, marked running; undefined when none waits. */
  claim(now: string): Promise<ResearchRow | undefined>;
  /** False when the run is no longer running; a new stage is reported (research.progress). */
  setProgress(rid: number, progress: string, now: string): Promise<boolean>;
  /** Ends a run still unfinished; false when it had ended already (canceled meanwhile). */
  finish(
    rid: number,
    fields: { status: 'succeeded' | 'failed' | 'canceled'; answer?: string | null; sources?: string | null; usage?: string | null; error?: string | null; now: string },
  ): Promise<boolean>;
  /** After a restart: runs left running start over; how many. */
  requeueInterrupted(now: string): Promise<number>;
}
