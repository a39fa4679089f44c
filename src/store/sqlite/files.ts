import type { FileErrorCode } from '../../contract/errors.js';
import type {
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
  WaitingUpload,
} from '../aggregates/files.js';
import { moveFileCount } from './collections.js';
import type { Db } from './db.js';
import { appendEvent } from './events.js';
import { rowsByRid, stmt } from './statements.js';

export type { FileCard, FileRow, FileStatus, FileVersionRow, FileVersionState, IndexedVersion, NewFile, SourceFields } from '../aggregates/files.js';

export function sqliteFiles(db: Db): FileReads & FileWrites {
  return {
    byRid: async (rid) => getFileByRid(db, rid),
    findLiveByPath: async (collectionRid, path) => findLiveFileByPath(db, collectionRid, path),
    findLiveById: async (collectionRid, id) => findLiveFileById(db, collectionRid, id),
    versionState: async (rid) => fileVersionState(db, rid),
    list: async (opts) => listFiles(db, opts),
    version: async (id) => getFileVersion(db, id),
    settled: async (collectionRid, afterRid, limit) => liveFileRids(db, collectionRid, afterRid, limit),
    cards: async (rids) => getFileCardsByRid(db, rids),
    expiredWaitingUploads: async (createdBefore) => expiredWaitingUploads(db, createdBefore),
    insert: async (row) => insertFile(db, row),
    replaceSource: async (rid, source, metadata, now) => replaceFileSource(db, rid, source, metadata, now),
    updateMetadata: async (rid, metadata, now) => updateFileMetadata(db, rid, metadata, now),
    setStatus: async (rid, status, now, error) => setFileStatus(db, rid, status, now, error),
    markIndexed: async (rid, indexed, now) => markFileIndexed(db, rid, indexed, now),
    clearIndexedVersion: async (rid) => clearIndexedVersion(db, rid),
    markDeleted: async (rid, now) => markFileDeleted(db, rid, now),
    resetInterrupted: async (now) => resetInterruptedFiles(db, now),
    resetIndexing: async (collectionRid, now) => resetIndexingFiles(db, collectionRid, now),
    insertVersion: async (row) => insertFileVersion(db, row),
    markUploadReceived: async (versionId, blobSha256) => markUploadReceived(db, versionId, blobSha256),
    closeWaitingUpload: async (versionId, state) => closeWaitingUpload(db, versionId, state),
  };
}

/** The row as stored: `metadata` JSON text, `notes` a JSON array or null. */
type StoredFile = Omit<FileRow, 'metadata' | 'notes'> & { metadata: string; notes: string | null };

function fileOf(stored: StoredFile): FileRow;
function fileOf(stored: StoredFile | undefined): FileRow | undefined;
function fileOf(stored: StoredFile | undefined): FileRow | undefined {
  return stored && { ...stored, metadata: JSON.parse(stored.metadata) as Record<string, unknown>, notes: stored.notes === null ? null : (JSON.parse(stored.notes) as string[]) };
}

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
export function insertFile(db: Db, row: NewFile): FileRow {
  const file = fileOf(stmt(
    db,
    `INSERT INTO files (id, collection_rid, path, status, source_type, declared_content_type, content_type, bytes, checksum, uri, metadata, version_id, governing_rule_rid, created_at, updated_at)
     VALUES (@id, @collection_rid, @path, @status, @source_type, @declared_content_type, @content_type, @bytes, @checksum, @uri, @metadata, @version_id, @governing_rule_rid, @created_at, @updated_at)
     RETURNING *`,
  ).get({ ...row, metadata: JSON.stringify(row.metadata), governing_rule_rid: row.governing_rule_rid ?? null }) as StoredFile);
  fileChanged(db, null, file);
  return file;
}

/** A new version of the bytes: back to pending, the old error cleared. */
export function replaceFileSource(db: Db, rid: number, source: SourceFields, metadata: Record<string, unknown> | null, now: string): FileRow {
  const before = fileState(db, rid);
  const file = fileOf(stmt(
    db,
    `UPDATE files SET status = 'pending', source_type = @source_type, declared_content_type = @declared_content_type, content_type = @content_type,
       bytes = @bytes, checksum = @checksum, uri = @uri, version_id = @version_id, metadata = coalesce(@metadata, metadata),
       error_code = NULL, error_message = NULL, notes = NULL, updated_at = @now
     WHERE rid = @rid RETURNING *`,
  ).get({ ...source, metadata: metadata === null ? null : JSON.stringify(metadata), now, rid }) as StoredFile);
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
  return fileOf(stmt(db, 'SELECT * FROM files WHERE collection_rid = ? AND path = ? AND deleted_at IS NULL').get(collectionRid, path) as StoredFile | undefined);
}

export function findLiveFileById(db: Db, collectionRid: number, id: string): FileRow | undefined {
  return fileOf(stmt(db, 'SELECT * FROM files WHERE collection_rid = ? AND id = ? AND deleted_at IS NULL').get(collectionRid, id) as StoredFile | undefined);
}

/**
 * Whether work on a version still applies: the file's current version, status and deletion, for
 * the indexing worker's checks around each job (a whole row, with its metadata and notes, cost
 * a fifth of the worker's reads of a SciFact ingest).
 */
export function fileVersionState(db: Db, rid: number): FileVersionState | undefined {
  return stmt(db, 'SELECT rid, collection_rid, status, version_id, deleted_at FROM files WHERE rid = ?').get(rid) as FileVersionState | undefined;
}

export function getFileByRid(db: Db, rid: number): FileRow | undefined {
  return fileOf(stmt(db, 'SELECT * FROM files WHERE rid = ?').get(rid) as StoredFile | undefined);
}

export function listFiles(db: Db, opts: FileListing): FileRow[] {
  return (stmt(
    db,
    `SELECT * FROM files WHERE collection_rid = @c AND deleted_at IS NULL AND rid > @after
       AND (@path IS NULL OR path = @path)
       AND (@prefix IS NULL OR substr(path, 1, length(@prefix)) = @prefix)
       AND (@status IS NULL OR status = @status)
     ORDER BY rid LIMIT @limit`,
  ).all({ c: opts.collectionRid, after: opts.afterRid, limit: opts.limit, path: opts.path ?? null, prefix: opts.prefix ?? null, status: opts.status ?? null }) as StoredFile[]).map((f) => fileOf(f));
}

export function updateFileMetadata(db: Db, rid: number, metadata: Record<string, unknown>, now: string): FileRow {
  return fileOf(stmt(db, 'UPDATE files SET metadata = ?, updated_at = ? WHERE rid = ? RETURNING *').get(JSON.stringify(metadata), now, rid) as StoredFile);
}

export function setFileStatus(db: Db, rid: number, status: FileStatus, now: string, error: { code: FileErrorCode; message: string } | null = null): void {
  const before = fileState(db, rid);
  if (!before) return;
  stmt(db, 'UPDATE files SET status = ?, error_code = ?, error_message = ?, updated_at = ? WHERE rid = ?').run(status, error?.code ?? null, error?.message ?? null, now, rid);
  fileChanged(db, before, { ...before, status });
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

/** Living files that finished indexing (ready or failed): what a reindex walks. */
export function liveFileRids(db: Db, collectionRid: number, afterRid: number, limit: number): FileAtVersion[] {
  return stmt(db, "SELECT rid, version_id FROM files WHERE collection_rid = ? AND deleted_at IS NULL AND rid > ? AND status IN ('ready','failed') ORDER BY rid LIMIT ?").all(
    collectionRid,
    afterRid,
    limit,
  ) as FileAtVersion[];
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

/** Only a result's columns: whole rows (metadata, notes, …) cost more to read than the lookups (issue 15). */
export function getFileCardsByRid(db: Db, rids: readonly number[]): FileCard[] {
  return rowsByRid<FileCard>(db, 'files', rids, 'rid, id, path, content_type, bytes, created_at, updated_at');
}

/** Versions whose signed upload URL expired before the bytes arrived. */
export function expiredWaitingUploads(db: Db, createdBefore: string): WaitingUpload[] {
  return stmt(
    db,
    `SELECT v.id AS version_id, f.rid AS file_rid FROM file_versions v JOIN files f ON f.rid = v.file_rid AND f.version_id = v.id
     WHERE v.upload_state = 'waiting' AND v.created_at < ? AND f.deleted_at IS NULL`,
  ).all(createdBefore) as WaitingUpload[];
}

/** Closes a version still waiting for its bytes; false when it was no longer waiting (another PUT won). */
export function closeWaitingUpload(db: Db, versionId: string, state: 'expired' | 'rejected'): boolean {
  return stmt(db, "UPDATE file_versions SET upload_state = ? WHERE id = ? AND upload_state = 'waiting'").run(state, versionId).changes === 1;
}
