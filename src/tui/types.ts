// The shapes the TUI reads from the daemon: the parts of the API resources that the views show,
// picked from the contract's types (src/contract/schemas.ts, as src/client names them) so that
// every field keeps the contract's name and type. Parts, not wholes, so tests can build them by
// hand; the backend (backend.ts) returns the whole resources, which the compiler checks fit.
import type { z } from 'zod';
import type { Collection, Job, Namespace, ResearchRun as Run, SearchInput, SearchResponseBody, SearchResult as Result, TroveFile } from '../client/index.js';
import type { EventSchema, SourceEntry as SourceEntrySchema } from '../contract/schemas.js';

export type NamespaceItem = Pick<Namespace, 'id' | 'name'>;

export type CollectionItem = Pick<Collection, 'id' | 'namespace' | 'name' | 'status' | 'file_counts'>;

/** A job as GET .../jobs lists it or a job.updated event carries it: the event has null where GET leaves a field out. */
export type JobItem = Pick<Job, 'id' | 'type' | 'status'> & { [K in 'namespace' | 'collection' | 'file_id']?: Job[K] | null };

/** A collection named the way the API paths take it: by namespace and collection name. */
export interface CollectionRef {
  namespace: string;
  collection: string;
}

export const refKey = (ref: CollectionRef): string => `${ref.namespace}/${ref.collection}`;

export type Evidence = Result['evidence'][number];

export type SearchResult = Pick<Result, 'file_id' | 'path' | 'rank' | 'score' | 'evidence'>;

export type SearchResponse = Pick<SearchResponseBody, 'warnings'> & {
  results: SearchResult[];
  /** The mode the API used: the one asked for, or its default when none was. */
  execution?: Pick<SearchResponseBody['execution'], 'mode'>;
  timing_ms?: Pick<SearchResponseBody['timing_ms'], 'total'>;
};

export type SearchMode = NonNullable<SearchInput['mode']>;
export type ResultUnit = NonNullable<SearchInput['result_unit']>;

/** What the search view asks for; the backend turns it into the request body. */
export interface SearchRequest {
  query: string;
  /** Absent: the API's default (semantic when the collection has it), as in the CLI. */
  mode?: SearchMode | undefined;
  unit: ResultUnit;
  limit: number;
}

export type FileItem = Pick<TroveFile, 'id' | 'path' | 'status' | 'source' | 'metadata' | 'error' | 'notes'>;

export type ResearchMode = Run['mode'];

export type SourceEntry = z.infer<typeof SourceEntrySchema>;

export type ResearchRun = Pick<Run, 'id' | 'namespace' | 'collection' | 'status' | 'mode' | 'progress' | 'answer' | 'sources' | 'error' | 'created_at' | 'updated_at'>;

/** One record of the event log, as GET /events and the operator channel show it. */
export type TroveEvent = z.infer<typeof EventSchema>;

/** Where live events come from: the local operator socket, or the public SSE stream. */
export type EventChannel = 'operator' | 'sse';

export interface ChannelState {
  channel: EventChannel;
  connected: boolean;
  /** Disconnected for good (a refused key): no more attempts. */
  stopped?: boolean;
  /** Why this channel was chosen (e.g. why the operator socket was not used). */
  note?: string;
}
