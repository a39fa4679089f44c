import type { FileErrorCode } from '../../contract/errors.js';
import { moveFileCount } from './collections.js';
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { rowsByRid, stmt } from './statements.js';

export type FileStatus = 'pending' | 'indexing' | 'ready' | 'failed' | 'deleting';

export interface FileRow {
  rid: number;
  id: string;
  collection_rid: number;
  path: string;
  status: FileStatus;
  source_type: 'inline' | 'uri' | 'upload';
  declared_content_type: string | null;
  content_type: string;
  bytes: number | null;
  checksum: string | null;
  uri: string | null;
  metadata: string;
  /** A TEXT column: its one writer, setFileStatus, takes a FileErrorCode. */
  error_code: FileErrorCode | null;
  error_message: string | null;
  version_id: string;
  indexed_version_id: string | null;
  /** The access rule that governs the file (src/contract/governing-rule.ts); null: none. */
  governing_rule_rid: number | null;
  /** The apply_access_rule job that holds the file hidden until it finishes. */
  access_job_rid: number | null;
  /** JSON array of notes from the last indexing (src/domain/ingest/pipeline.ts), or null. */
  notes: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface FileVersionRow {
  id: string;
  file_rid: number;
  inline_text: string | null;
  blob_sha256: string | null;
  /** `rejected`: the signed PUT's bytes contradicted the declared size or checksum (the URL is used up). */
  upload_state: 'waiting' | 'received' | 'expired' | 'rejected' | null;
  created_at: string;
}

export type NewFile = Omit<FileRow, 'rid' | 'deleted_at' | 'indexed_version_id' | 'error_code' | 'error_message' | 'governing_rule_rid' | 'access_job_rid' | 'notes'>;

/** What a status change is about: a file's status and whether it is living (deleted_at null). */
type FileState = Pick<FileRow, 'rid' | 'collection_rid' | 'status' | 'deleted_at'>;

const BUSY: ReadonlySet<string> = new Set(['pending', 'indexing']);

function fileState(db: Db, rid: number): FileState | undefined {
  return stmt(db, 'SELECT rid, collection_rid, status, deleted_at FROM files WHERE rid = ?').get(rid) as FileState | undefined;
}

/**
 * Every write of a file's status or deleted_at ends here, in its transaction: the collection's
 * counters move (src/store/sqlite/collections.ts moveFileCount), and the change is reported in the order
 * the v6 triggers reported it: the collection first when it starts indexing (its first busy file)
 * or settles (its last busy file ends), then file.updated and the status's own events.
 * `before` is null for a new file.
 */
function fileChanged(db: Db, before: FileState | null, after: FileState): void {
  const from = before !== null && before.deleted_at === null ? before.status : null;
  const to = after.deleted_at === null ? after.status : null;
  if (before !== null && from === to && before.status === after.status) return;
  const busy = moveFileCount(db, after.collection_rid, from, to);
  if (before !== null && before.status === after.status) return;
  const busyOthers = busy - (to !== null && BUSY.has(to) ? 1 : 0);
  if (before === null) {
    if (busyOthers === 0) appendEvent(db, 'collection.updated', after.collection_rid);
    appendEvent(db, 'file.updated', after.rid);
    return;
  }
  const rebusy = after.status === 'pending' && !BUSY.has(before.status) && busyOthers === 0;
  const settled = !BUSY.has(after.status) && BUSY.has(before.status) && busy === 0;
  if (rebusy || settled) appendEvent(db, 'collection.updated', after.collection_rid);
  appendEvent(db, 'file.updated', after.rid);
  if (after.status === 'ready') {
    appendEvent(db, 'file.ready', after.rid);
    appendEvent(db, 'object.indexed', after.rid);
  } else if (after.status === 'failed') {
    appendEvent(db, 'file.failed', after.rid);
    appendEvent(db, 'object.indexing_failed', after.rid);
  } else if (after.status === 'deleting') {
    appendEvent(db, 'file.deleted', after.rid);
  }
}

/** `governing_rule_rid`: the rule that governs the new file's path, set with the row so its first event shows it. */
export function insertFile(db: Db, row: NewFile & { governing_rule_rid?: number | null }): FileRow {
  const file = stmt(
    db,
    `INSERT INTO files (id, collection_rid, path, status, source_type, declared_content_type, content_type, bytes, checksum, uri, metadata, version_id, governing_rule_rid, created_at, updated_at)
     VALUES (@id, @collection_rid, @path, @status, @source_type, @declared_content_type, @content_type, @bytes, @checksum, @uri, @metadata, @version_id, @governing_rule_rid, @created_at, @updated_at)
     RETURNING *`,
  ).get({ ...row, governing_rule_rid: row.governing_rule_rid ?? null }) as FileRow;
  fileChanged(db, null, file);
  return file;
}

export type SourceFields = Pick<FileRow, 'source_type' | 'declared_content_type' | 'content_type' | 'bytes' | 'checksum' | 'uri' | 'version_id'>;

/** A new version of the bytes: back to pending, the old error cleared. */
export function replaceFileSource(db: Db, rid: number, source: SourceFields, metadata: string | null, now: string): FileRow {
  const before = fileState(db, rid);
  const file = stmt(
    db,
    `UPDATE files SET status = 'pending', source_type = @source_type, declared_content_type = @declared_content_type, content_type = @content_type,
       bytes = @bytes, checksum = @checksum, uri = @uri, version_id = @version_id, metadata = coalesce(@metadata, metadata),
       error_code = NULL, error_message = NULL, notes = NULL, updated_at = @now
     WHERE rid = @rid RETURNING *`,
  ).get({ ...source, metadata, now, rid }) as FileRow;
  if (before) fileChanged(db, before, file);
  return file;
}

export function insertFileVersion(db: Db, row: FileVersionRow): void {
  stmt(db, 'INSERT INTO file_versions (id, file_rid, inline_text, blob_sha256, upload_state, created_at) VALUES (@id, @file_rid, @inline_text, @blob_sha256, @upload_state, @created_at)').run(row);
}

export function getFileVersion(db: Db, id: string): FileVersionRow | undefined {
  return stmt(db, 'SELECT * FROM file_versions WHERE id = ?').get(id) as FileVersionRow | undefined;
}

export function markUploadReceived(db: Db, versionId: string, blobSha256: string): void {
  stmt(db, "UPDATE file_versions SET upload_state = 'received', blob_sha256 = ? WHERE id = ?").run(blobSha256, versionId);
}

export function findLiveFileByPath(db: Db, collectionRid: number, path: string): FileRow | undefined {
  return stmt(db, 'SELECT * FROM files WHERE collection_rid = ? AND path = ? AND deleted_at IS NULL').get(collectionRid, path) as FileRow | undefined;
}

export function findLiveFileById(db: Db, collectionRid: number, id: string): FileRow | undefined {
  return stmt(db, 'SELECT * FROM files WHERE collection_rid = ? AND id = ? AND deleted_at IS NULL').get(collectionRid, id) as FileRow | undefined;
}

/**
 * Whether work on a version still applies: the file's current version, status and deletion, for
 * the indexing worker's checks around each job (a whole row, with its metadata and notes, cost
 * a fifth of the worker's reads of a SciFact ingest).
 */
export function fileVersionState(db: Db, rid: number): Pick<FileRow, 'rid' | 'collection_rid' | 'status' | 'version_id' | 'deleted_at'> | undefined {
  return stmt(db, 'SELECT rid, collection_rid, status, version_id, deleted_at FROM files WHERE rid = ?').get(rid) as
    | Pick<FileRow, 'rid' | 'collection_rid' | 'status' | 'version_id' | 'deleted_at'>
    | undefined;
}

export function getFileByRid(db: Db, rid: number): FileRow | undefined {
  return stmt(db, 'SELECT * FROM files WHERE rid = ?').get(rid) as FileRow | undefined;
}

export function listFiles(
  db: Db,
  opts: { collectionRid: number; afterRid: number; limit: number; path?: string | undefined; prefix?: string | undefined; status?: string | undefined },
): FileRow[] {
  return stmt(
    db,
    `SELECT * FROM files WHERE collection_rid = @c AND deleted_at IS NULL AND rid > @after
       AND (@path IS NULL OR path = @path)
       AND (@prefix IS NULL OR substr(path, 1, length(@prefix)) = @prefix)
       AND (@status IS NULL OR status = @status)
     ORDER BY rid LIMIT @limit`,
  ).all({ c: opts.collectionRid, after: opts.afterRid, limit: opts.limit, path: opts.path ?? null, prefix: opts.prefix ?? null, status: opts.status ?? null }) as FileRow[];
}

export function updateFileMetadata(db: Db, rid: number, metadata: string, now: string): FileRow {
  return stmt(db, 'UPDATE files SET metadata = ?, updated_at = ? WHERE rid = ? RETURNING *').get(metadata, now, rid) as FileRow;
}

export function setFileStatus(db: Db, rid: number, status: FileStatus, now: string, error: { code: FileErrorCode; message: string } | null = null): void {
  const before = fileState(db, rid);
  if (!before) return;
  stmt(db, 'UPDATE files SET status = ?, error_code = ?, error_message = ?, updated_at = ? WHERE rid = ?').run(status, error?.code ?? null, error?.message ?? null, now, rid);
  fileChanged(db, before, { ...before, status });
}

/** What indexing a version found out about the file. */
export interface IndexedVersion {
  versionId: string;
  contentType: string;
  /** The file's notes (warnings of the extraction), none when absent. */
  notes?: string[];
}

/**
 * A failed file's passages are gone, so it has no indexed version any more: a canceled later job
 * must not bring it back to `ready` with nothing to find (src/domain/jobs.ts cancelJob).
 */
export function clearIndexedVersion(db: Db, rid: number): void {
  stmt(db, 'UPDATE files SET indexed_version_id = NULL WHERE rid = ?').run(rid);
}

export function markFileIndexed(db: Db, rid: number, { versionId, contentType, notes = [] }: IndexedVersion, now: string): void {
  const before = fileState(db, rid);
  if (!before) return;
  stmt(db, "UPDATE files SET status = 'ready', indexed_version_id = ?, content_type = ?, notes = ?, error_code = NULL, error_message = NULL, updated_at = ? WHERE rid = ?").run(
    versionId,
    contentType,
    notes.length > 0 ? JSON.stringify(notes) : null,
    now,
    rid,
  );
  fileChanged(db, before, { ...before, status: 'ready' });
}

export function markFileDeleted(db: Db, rid: number, now: string): void {
  const before = fileState(db, rid);
  if (!before) return;
  stmt(db, "UPDATE files SET status = 'deleting', deleted_at = ?, updated_at = ? WHERE rid = ?").run(now, now, rid);
  fileChanged(db, before, { ...before, status: 'deleting', deleted_at: now });
}

export function liveFileRids(db: Db, collectionRid: number, afterRid: number, limit: number): { rid: number; version_id: string }[] {
  return stmt(db, "SELECT rid, version_id FROM files WHERE collection_rid = ? AND deleted_at IS NULL AND rid > ? AND status IN ('ready','failed') ORDER BY rid LIMIT ?").all(
    collectionRid,
    afterRid,
    limit,
  ) as { rid: number; version_id: string }[];
}

/** Files a dead daemon left mid-indexing go back to pending; their jobs are re-queued alongside. */
export function resetInterruptedFiles(db: Db, now: string): number {
  return resetIndexingFiles(db, null, now);
}

/** Living files mid-indexing, of one collection (or all: null), back to pending; how many. */
export function resetIndexingFiles(db: Db, collectionRid: number | null, now: string): number {
  const rows = (
    collectionRid === null
      ? stmt(db, "UPDATE files SET status = 'pending', updated_at = ? WHERE status = 'indexing' AND deleted_at IS NULL RETURNING rid, collection_rid").all(now)
      : stmt(db, "UPDATE files SET status = 'pending', updated_at = ? WHERE collection_rid = ? AND deleted_at IS NULL AND status = 'indexing' RETURNING rid, collection_rid").all(now, collectionRid)
  ) as { rid: number; collection_rid: number }[];
  for (const r of rows) fileChanged(db, { ...r, status: 'indexing', deleted_at: null }, { ...r, status: 'pending', deleted_at: null });
  return rows.length;
}

/** What a search result shows of its file and may sort by. */
export type FileCard = Pick<FileRow, 'rid' | 'id' | 'path' | 'content_type' | 'bytes' | 'created_at' | 'updated_at'>;

/** Only a result's columns: whole rows (metadata, notes, …) cost more to read than the lookups (issue 15). */
export function getFileCardsByRid(db: Db, rids: number[]): FileCard[] {
  return rowsByRid<FileCard>(db, 'files', rids, 'rid, id, path, content_type, bytes, created_at, updated_at');
}

/** Versions whose signed upload URL expired before the bytes arrived. */
export function expiredWaitingUploads(db: Db, createdBefore: string): { version_id: string; file_rid: number }[] {
  return stmt(
    db,
    `SELECT v.id AS version_id, f.rid AS file_rid FROM file_versions v JOIN files f ON f.rid = v.file_rid AND f.version_id = v.id
     WHERE v.upload_state = 'waiting' AND v.created_at < ? AND f.deleted_at IS NULL`,
  ).all(createdBefore) as { version_id: string; file_rid: number }[];
}

/** Closes a version still waiting for its bytes; false when it was no longer waiting (another PUT won). */
export function closeWaitingUpload(db: Db, versionId: string, state: 'expired' | 'rejected'): boolean {
  return stmt(db, "UPDATE file_versions SET upload_state = ? WHERE id = ? AND upload_state = 'waiting'").run(state, versionId).changes === 1;
}
