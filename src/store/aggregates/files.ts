// Files and their versions: a file's source, status and indexing outcome, and each version of its
// bytes (inline text, a blob, or an upload still awaited).
import type { FileErrorCode } from '../../contract/errors.js';

export type FileStatus = 'pending' | 'indexing' | 'ready' | 'failed' | 'deleting';
export type SourceType = 'inline' | 'uri' | 'upload';

/** A file: `metadata` and `notes` parsed once, in the store. */
export interface FileRow {
  rid: number;
  id: string;
  collection_rid: number;
  path: string;
  status: FileStatus;
  source_type: SourceType;
  declared_content_type: string | null;
  content_type: string;
  bytes: number | null;
  checksum: string | null;
  uri: string | null;
  metadata: Record<string, unknown>;
  error_code: FileErrorCode | null;
  error_message: string | null;
  version_id: string;
  indexed_version_id: string | null;
  /** The access rule that governs the file (src/contract/governing-rule.ts); null: none. */
  governing_rule_rid: number | null;
  /** The apply_access_rule job that holds the file hidden until it finishes. */
  access_job_rid: number | null;
  /** What the last indexing noticed (src/domain/ingest/pipeline.ts); null: nothing. */
  notes: string[] | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/**
 * `rejected`: the signed PUT's bytes contradicted the declared size or checksum (the URL is used up);
 * null: the version's bytes never come by upload.
 */
export type UploadState = 'waiting' | 'received' | 'expired' | 'rejected';

export interface FileVersionRow {
  id: string;
  file_rid: number;
  inline_text: string | null;
  blob_sha256: string | null;
  upload_state: UploadState | null;
  created_at: string;
}

/** A new file: pending, never indexed; `governing_rule_rid` is the rule over its path, so its first event shows it. */
export type NewFile = Omit<FileRow, 'rid' | 'deleted_at' | 'indexed_version_id' | 'error_code' | 'error_message' | 'governing_rule_rid' | 'access_job_rid' | 'notes'> & {
  governing_rule_rid?: number | null;
};

/** Where a version's bytes come from and what they were declared to be. */
export type SourceFields = Pick<FileRow, 'source_type' | 'declared_content_type' | 'content_type' | 'bytes' | 'checksum' | 'uri' | 'version_id'>;

/** Whether work on a version still applies: the file's current version, status and deletion. */
export type FileVersionState = Pick<FileRow, 'rid' | 'collection_rid' | 'status' | 'version_id' | 'deleted_at'>;

/** What indexing a version found out about the file. */
export interface IndexedVersion {
  versionId: string;
  contentType: string;
  /** Warnings of the extraction; none when absent. */
  notes?: string[];
}

/** What a search result shows of its file and may sort by. */
export type FileCard = Pick<FileRow, 'rid' | 'id' | 'path' | 'content_type' | 'bytes' | 'created_at' | 'updated_at'>;

/** A file's current version, as a walk over a collection's files meets it. */
export interface FileAtVersion {
  rid: number;
  version_id: string;
}

/** A version whose upload never arrived, and its file. */
export interface WaitingUpload {
  version_id: string;
  file_rid: number;
}

export interface FileListing {
  collectionRid: number;
  afterRid: number;
  limit: number;
  /** Only the file at this path. */
  path?: string | undefined;
  /** Only files whose path starts with this text. */
  prefix?: string | undefined;
  status?: FileStatus | undefined;
}

export interface FileReads {
  /** Deleted ones included. */
  byRid(rid: number): Promise<FileRow | undefined>;
  findLiveByPath(collectionRid: number, path: string): Promise<FileRow | undefined>;
  findLiveById(collectionRid: number, id: string): Promise<FileRow | undefined>;
  /** The few columns the indexing worker checks around each job (a whole row costs more to read). */
  versionState(rid: number): Promise<FileVersionState | undefined>;
  /** Living files in creation order after `afterRid`. */
  list(opts: FileListing): Promise<FileRow[]>;
  version(id: string): Promise<FileVersionRow | undefined>;
  /** Living files that finished indexing (ready or failed), in creation order after `afterRid`: what a reindex walks. */
  settled(collectionRid: number, afterRid: number, limit: number): Promise<FileAtVersion[]>;
  /** Only a search result's columns, in no particular order; unknown rids are left out. */
  cards(rids: readonly number[]): Promise<FileCard[]>;
  /** Versions of living files still waiting for an upload made before `createdBefore`. */
  expiredWaitingUploads(createdBefore: string): Promise<WaitingUpload[]>;
}

/**
 * Every change of a file's status or deletion moves its collection's file counters and is
 * reported (file.updated and the status's own events; collection.updated when the collection starts
 * or stops being busy). The writes that name a file by `rid` need one that exists, except where said.
 */
export interface FileWrites {
  insert(row: NewFile): Promise<FileRow>;
  /** A new version of the bytes: back to pending, the old error and notes cleared; `metadata` null keeps it. */
  replaceSource(rid: number, source: SourceFields, metadata: Record<string, unknown> | null, now: string): Promise<FileRow>;
  /** Not reported: only the file's own status is. */
  updateMetadata(rid: number, metadata: Record<string, unknown>, now: string): Promise<FileRow>;
  /** Sets (or, with no error, clears) the file's error with its status; an unknown rid is no change. */
  setStatus(rid: number, status: FileStatus, now: string, error?: { code: FileErrorCode; message: string } | null): Promise<void>;
  /** Ready at this version, with what indexing found; an unknown rid is no change. */
  markIndexed(rid: number, indexed: IndexedVersion, now: string): Promise<void>;
  /** A failed file's passages are gone: it has no indexed version to fall back to any more. */
  clearIndexedVersion(rid: number): Promise<void>;
  /** `deleting`, no longer living; an unknown rid is no change. */
  markDeleted(rid: number, now: string): Promise<void>;
  /** Living files a dead daemon left mid-indexing go back to pending; how many. */
  resetInterrupted(now: string): Promise<number>;
  /** One collection's living files mid-indexing back to pending; how many. */
  resetIndexing(collectionRid: number, now: string): Promise<number>;
  insertVersion(row: FileVersionRow): Promise<void>;
  markUploadReceived(versionId: string, blobSha256: string): Promise<void>;
  /** Closes a version still waiting for its bytes; false when it was no longer waiting (another PUT won). */
  closeWaitingUpload(versionId: string, state: 'expired' | 'rejected'): Promise<boolean>;
}
