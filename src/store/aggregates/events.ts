// The outbox: one event per change of a job, file, collection or research run, written by the
// engine in the change's own transaction, read in commit order.

export type EventType =
  | 'job.updated'
  | 'file.updated'
  | 'file.ready'
  | 'file.failed'
  | 'file.deleted'
  | 'object.indexed'
  | 'object.indexing_failed'
  | 'collection.updated'
  | 'research.updated'
  | 'research.progress';

export interface EventRow {
  rid: number;
  id: string;
  type: string;
  namespace_rid: number | null;
  collection_rid: number | null;
  /** The key that created the research run a research event reports; null for other events. */
  owner_key_id: string | null;
  /** The collection's immutable ID (joined), for webhooks' bucket lists. */
  collection_id: string | null;
  data: string;
  created_at: string;
}

/**
 * Which events a reader may see, as plain data the domain decides (src/domain/event-audience.ts)
 * and every reader of the outbox applies in SQL: the event page and stream, webhook fan-out and the
 * delivery log. Filtering here, not after the read, keeps pages full and limits honest.
 */
export interface EventAudience {
  /** One namespace's events, or null for every namespace's. */
  namespaceRid: number | null;
  /** Only these collections' events (namespace-level events excluded), or null for all of them. */
  collectionRids: readonly number[] | null;
  /** Job, file, object and collection events (the reader holds `read`). */
  resources: boolean;
  /** Research events: all of them, those of runs one key created, or none. */
  research: 'all' | 'none' | { ownerKeyId: string };
}

export interface EventReads {
  /** The rid of an event by ID, if it is still kept. */
  findRid(id: string): Promise<number | undefined>;
  /** Events after `afterRid` (up to `uptoRid`), oldest first, that the audience may see. */
  after(opts: { afterRid: number; uptoRid?: number | undefined; limit: number; audience: EventAudience }): Promise<EventRow[]>;
  /** The newest event's rid, 0 when there is none. */
  lastRid(): Promise<number>;
}

export interface EventWrites {
  /** Retention: events older than the cutoff go; how many went. */
  deleteBefore(cutoff: string): Promise<number>;
}
