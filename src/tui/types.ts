// The shapes the TUI reads from the daemon: the parts of the API resources (src/contract/schemas.ts)
// that the views show. Kept structural so tests can build them by hand.

export interface FileCounts {
  pending: number;
  indexing: number;
  ready: number;
  failed: number;
}

export interface NamespaceItem {
  id: string;
  name: string;
}

export interface CollectionItem {
  id: string;
  /** The namespace's name. */
  namespace: string;
  name: string;
  status: string;
  file_counts: FileCounts;
}

export interface JobItem {
  id: string;
  type: string;
  status: string;
  namespace?: string | null;
  collection?: string | null;
  file_id?: string | null;
}

/** A collection named the way the API paths take it: by namespace and collection name. */
export interface CollectionRef {
  namespace: string;
  collection: string;
}

export const refKey = (ref: CollectionRef): string => `${ref.namespace}/${ref.collection}`;

export type EvidenceLocation =
  | { start_ms: number; end_ms: number }
  | { page: number; bbox?: number[] | null }
  | { json_path: string }
  | { char_start: number; char_end: number };

export interface Evidence {
  kind: string;
  text: string;
  location?: EvidenceLocation | null;
}

export interface SearchResult {
  file_id: string;
  path: string;
  content_type?: string;
  rank: number;
  score: number;
  evidence: Evidence[];
}

export interface SearchResponse {
  request_id?: string;
  /** The mode the API used: the one asked for, or its default when none was. */
  execution?: { mode?: string };
  results: SearchResult[];
  warnings: { code: string; message: string }[];
  timing_ms?: { total: number };
  next_cursor?: string | null;
}

export type SearchMode = 'keyword' | 'semantic';
export type ResultUnit = 'file' | 'passage';

export interface SearchRequest {
  query: string;
  /** Absent: the API's default (semantic when the collection has it), as in the CLI. */
  mode?: SearchMode | undefined;
  unit: ResultUnit;
  limit: number;
}

export interface FileItem {
  id: string;
  path: string;
  status: string;
  source: { type: string; content_type: string; bytes?: number | null; uri?: string | null };
  metadata: Record<string, unknown>;
  error?: { code: string; message: string } | null;
  notes?: string[];
  created_at?: string;
  updated_at?: string;
}

export type ResearchMode = 'standard' | 'ultra' | 'recall';

export interface SourceEntry {
  file_id: string;
  path: string;
  score: number;
  is_cited: boolean;
  evidence: Evidence[];
}

export interface ResearchRun {
  id: string;
  namespace: string;
  collection: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  mode: ResearchMode;
  progress: { stage: string; label: string; step: number; total_steps: number } | null;
  answer: string | null;
  sources: Record<string, SourceEntry> | null;
  error: { code: string; message: string; retryable?: boolean } | null;
  created_at: string;
  updated_at: string;
}

/** One record of the event log, as GET /events and the operator channel show it. */
export interface TroveEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

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
