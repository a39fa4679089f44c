// The store's one interface: what the layers above may ask of any storage engine. The domain reads
// through a `Store` and writes only inside `store.write(async (tx) => …)`, one transaction whose
// promise resolves after COMMIT. Rows come back typed; rules and filters go in as data, never as
// SQL. Each engine lives in a folder of its own (src/store/sqlite/ today) and is picked by the
// composition root (daemon/); nothing above the store imports an engine.
import type { AccessRuleReads, AccessRuleWrites } from './aggregates/access-rules.js';
import type { CollectionModelReads, CollectionModelWrites } from './aggregates/collection-models.js';
import type { CollectionReads, CollectionWrites } from './aggregates/collections.js';
import type { EventReads, EventWrites } from './aggregates/events.js';
import type { FileReads, FileWrites } from './aggregates/files.js';
import type { JobReads, JobWrites } from './aggregates/jobs.js';
import type { KeyReads, KeyWrites } from './aggregates/keys.js';
import type { KeywordIndexReads } from './aggregates/keyword-index.js';
import type { NamespaceReads, NamespaceWrites } from './aggregates/namespaces.js';
import type { OperatorReads, OperatorWrites } from './aggregates/operator.js';
import type { PassageReads, PassageWrites } from './aggregates/passages.js';
import type { ResearchReads, ResearchWrites } from './aggregates/research.js';
import type { RetentionReads, RetentionWrites } from './aggregates/retention.js';
import type { RetrievableFileReads } from './aggregates/retrievable-files.js';
import type { SearchSnapshotReads, SearchSnapshotWrites } from './aggregates/search-snapshots.js';
import type { VectorReads, VectorWrites } from './aggregates/vectors.js';
import type { WebhookReads, WebhookWrites } from './aggregates/webhooks.js';

export type { AccessRuleReads, AccessRuleRow, AccessRuleWrites, GovernedFile, RuleTarget, VisibleFile } from './aggregates/access-rules.js';
export type { BlobStore, PendingBlob } from './blob-store.js';
export type { CollectionModelHeader, CollectionModelReads, CollectionModelWrites, StoredCollectionModel, TrainedModel } from './aggregates/collection-models.js';
export type { CollectionReads, CollectionRow, CollectionWrites, FileCounts } from './aggregates/collections.js';
export type { EventAudience, EventReads, EventRow, EventType, EventWrites } from './aggregates/events.js';
export type {
  FileAtVersion,
  FileCard,
  FileListing,
  FileReads,
  FileRow,
  FileStatus,
  FileVersionRow,
  FileVersionState,
  FileWrites,
  IndexedVersion,
  NewFile,
  SourceFields,
  SourceType,
  UploadState,
  WaitingUpload,
} from './aggregates/files.js';
export type { JobReads, JobRow, JobStatus, JobType, JobWrites, NewJob } from './aggregates/jobs.js';
export type { KeyReads, KeyRow, KeyWrites, NewKey, StoredScope } from './aggregates/keys.js';
export type { CountedPassages, KeywordIndexReads, KeywordPostings, KeywordText, PhrasePostings, PostingsRequest, PreparedKeywordText } from './aggregates/keyword-index.js';
export type { NamespaceReads, NamespaceRow, NamespaceUsage, NamespaceWrites } from './aggregates/namespaces.js';
export type { ClusterCounts, GrantedRoot, OperatorReads, OperatorWrites } from './aggregates/operator.js';
export type { FileSelection, RetrievableFileReads, SelectionRule } from './aggregates/retrievable-files.js';
export type { FilePassages, KeywordTextOfPassages, NewPassage, PassageReads, PassageRow, PassageSource, PassageWrites } from './aggregates/passages.js';
export type { NewResearch, ResearchReads, ResearchRow, ResearchStatus, ResearchWrites } from './aggregates/research.js';
export type { RetentionReads, RetentionWrites } from './aggregates/retention.js';
export type { SearchSnapshotReads, SearchSnapshotRow, SearchSnapshotWrites, SnapshotBounds } from './aggregates/search-snapshots.js';
export { VECTOR_SHARDS, type DenseHit, type NewVector, type VectorReads, type VectorShardReader, type VectorShardShape, type VectorWrites } from './aggregates/vectors.js';
export type { AttemptRow, DeliveryChanges, DeliveryRow, NewWebhook, WebhookChanges, WebhookReads, WebhookRow, WebhookWrites } from './aggregates/webhooks.js';

/** What may be read outside a transaction. */
export interface StoreReads {
  readonly accessRules: AccessRuleReads;
  readonly collectionModels: CollectionModelReads;
  readonly collections: CollectionReads;
  readonly events: EventReads;
  readonly files: FileReads;
  readonly jobs: JobReads;
  readonly keys: KeyReads;
  readonly keywordIndex: KeywordIndexReads;
  readonly namespaces: NamespaceReads;
  readonly operator: OperatorReads;
  readonly passages: PassageReads;
  readonly research: ResearchReads;
  readonly retention: RetentionReads;
  readonly retrievableFiles: RetrievableFileReads;
  readonly searchSnapshots: SearchSnapshotReads;
  readonly vectors: VectorReads;
  readonly webhooks: WebhookReads;
}

/** A write transaction: every read and write in it sees one state and commits together. */
export interface StoreTx {
  readonly accessRules: AccessRuleReads & AccessRuleWrites;
  readonly collectionModels: CollectionModelReads & CollectionModelWrites;
  readonly collections: CollectionReads & CollectionWrites;
  readonly events: EventReads & EventWrites;
  readonly files: FileReads & FileWrites;
  readonly jobs: JobReads & JobWrites;
  readonly keys: KeyReads & KeyWrites;
  readonly keywordIndex: KeywordIndexReads;
  readonly namespaces: NamespaceReads & NamespaceWrites;
  readonly operator: OperatorReads & OperatorWrites;
  readonly passages: PassageReads & PassageWrites;
  readonly research: ResearchReads & ResearchWrites;
  readonly retention: RetentionReads & RetentionWrites;
  readonly retrievableFiles: RetrievableFileReads;
  readonly searchSnapshots: SearchSnapshotReads & SearchSnapshotWrites;
  readonly vectors: VectorReads & VectorWrites;
  readonly webhooks: WebhookReads & WebhookWrites;
}

export interface Store extends StoreReads {
  /**
   * `compute()`'s value, reused for the same key until anything is written to the store, by this
   * process or another (a cache never serves what another writer has changed). For reads that are
   * costly and asked again and again between writes, such as which files a reader may read.
   */
  untilChanged<T>(key: string, compute: () => Promise<T>): Promise<T>;
  /**
   * Runs `change` in a write transaction and resolves with its result once committed; a change that
   * throws writes nothing. The change must do its reads and writes through `tx` (a nested `write`
   * waits for this one: it never finishes) and should not await anything else, since the engine may
   * hold other writers back meanwhile.
   */
  write<T>(change: (tx: StoreTx) => Promise<T>): Promise<T>;
}
