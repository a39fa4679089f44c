import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import { newId, nowIso } from '../contract/ids.js';
import type { AddFileRequest, FileResource, SourceRequest, UpdateFileRequest } from '../contract/schemas.js';
import type { CollectionRow, FileRow, FileStatus, JobRow, NamespaceRow, SourceFields, StoreReads, StoreTx } from '../store/interface.js';
import type { Services } from './context.js';
import { readCursor, requestBinding } from './cursors.js';
import { fileUriToAllowedPath } from './ingest/fetch.js';
import { createChecksummer, parseChecksum } from './ingest/checksum.js';
import { failWaitingUpload } from './ingest/pipeline.js';
import { contentTypeFromPath } from '../contract/content-types.js';
import { normalizeContentType } from './ingest/detect.js';
import { enqueue } from './jobs.js';
import type { AuthenticatedKey } from './keys.js';
import { pageOf } from './paging.js';
import { presentFile, presentFiles } from './present.js';
import { governingRuleRidFor } from './access/rules.js';
import { DOWNLOAD_URL_TTL_MS, signTarget, verifyTarget } from './signed-urls.js';

/** Largest upload accepted through a signed URL. */
export const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;
const URI_SCHEMES = ['file:', 'http:', 'https:'];

export interface UploadInstructions {
  url: string;
  method: 'PUT';
  headers: { 'content-type': string };
  expires_at: string;
}

interface PreparedSource {
  fields: Omit<SourceFields, 'version_id'>;
  inlineText: string | null;
}


/** Checks a source at add time; the bytes are fetched later by the indexing worker. */
function prepareSource(s: Services, source: SourceRequest, path: string): PreparedSource {
  switch (source.type) {
    case 'inline': {
      const ct = normalizeContentType(source.content_type);
      return {
        fields: { source_type: 'inline', declared_content_type: ct, content_type: ct, bytes: Buffer.byteLength(source.text, 'utf8'), checksum: null, uri: null },
        inlineText: source.text,
      };
    }
    case 'uri': {
      let url: URL;
      try {
        url = new URL(source.uri);
      } catch {
        throw new TroveError('invalid_request', `source.uri is not a valid URI: '${source.uri.slice(0, 200)}'.`);
      }
      if (!URI_SCHEMES.includes(url.protocol)) throw new TroveError('invalid_request', `source.uri scheme '${url.protocol.replace(':', '')}' is not supported; use file, http or https.`);
      if (url.protocol === 'file:') fileUriToAllowedPath(source.uri, s.fileRoots);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && (url.username || url.password)) {
        throw new TroveError('invalid_request', 'source.uri must not carry user information.');
      }
      const declared = source.content_type ? normalizeContentType(source.content_type) : null;
      return {
        fields: {
          source_type: 'uri',
          declared_content_type: declared,
          content_type: declared ?? contentTypeFromPath(url.pathname || path) ?? contentTypeFromPath(path) ?? 'application/octet-stream',
          bytes: source.bytes ?? null,
          checksum: source.checksum ?? null,
          uri: source.uri,
        },
        inlineText: null,
      };
    }
    case 'upload': {
      const ct = normalizeContentType(source.content_type);
      return {
        fields: { source_type: 'upload', declared_content_type: ct, content_type: ct, bytes: source.bytes ?? null, checksum: source.checksum ?? null, uri: null },
        inlineText: null,
      };
    }
  }
}

function uploadInstructions(s: Services, versionId: string, contentType: string): UploadInstructions {
  const expiresAt = Date.now() + s.uploadTtlMs;
  const token = signTarget(s.urlSecret, { action: 'upload', versionId, expiresAt });
  return { url: `${s.publicBaseUrl()}/uploads/${token}`, method: 'PUT', headers: { 'content-type': contentType }, expires_at: new Date(expiresAt).toISOString() };
}

/** Writes a new version of a file's bytes and queues its indexing (not runnable until an upload lands). */
async function newVersion(tx: StoreTx, ns: NamespaceRow, col: CollectionRow, file: FileRow, prepared: PreparedSource): Promise<JobRow> {
  await tx.files.insertVersion({
    id: file.version_id,
    file_rid: file.rid,
    inline_text: prepared.inlineText,
    blob_sha256: null,
    upload_state: prepared.fields.source_type === 'upload' ? 'waiting' : null,
    created_at: file.updated_at,
  });
  return enqueue(tx.jobs, {
    type: 'index_file',
    namespace_rid: ns.rid,
    collection_rid: col.rid,
    namespace: ns.name,
    collection: col.name,
    file_rid: file.rid,
    file_id: file.id,
    version_id: file.version_id,
    runnable: prepared.fields.source_type === 'upload' ? 0 : 1,
  });
}

/**
 * A write that had to wait for the write token (the indexing worker was committing) runs after
 * other requests' writes: the file its route found may have been deleted meanwhile. Checked inside
 * the change, so the answer is the 404 a later request would get, not a change to a deleted file.
 */
async function stillLive(tx: StoreReads, file: FileRow): Promise<void> {
  const now = await tx.files.byRid(file.rid);
  if (!now || now.deleted_at) throw new TroveError('not_found', `File '${file.id}' not found.`);
}

/**
 * Adds a file, or a new version of the living file at that path (docs/decisions.md: adding to a
 * taken path replaces its source and metadata, keeping the file ID).
 */
export async function addFile(
  s: Services,
  ns: NamespaceRow,
  col: CollectionRow,
  body: z.output<typeof AddFileRequest>,
): Promise<{ file: FileResource; job: JobRow; upload?: UploadInstructions }> {
  const prepared = prepareSource(s, body.source, body.path);
  const result = await s.store.write(async (tx) => {
    const live = await tx.collections.byRid(col.rid);
    if (!live || live.deleted_at) throw new TroveError('not_found', `Collection '${col.name}' not found.`);
    const now = nowIso();
    const versionId = newId('ver');
    const existing = await tx.files.findLiveByPath(col.rid, body.path);
    let file: FileRow;
    if (existing) {
      await tx.jobs.cancelQueuedFileJobs(existing.rid, now, 'A newer version of the file was added.');
      file = await tx.files.replaceSource(existing.rid, { ...prepared.fields, version_id: versionId }, body.metadata, now);
    } else {
      file = await tx.files.insert({
        id: newId('fil'),
        collection_rid: col.rid,
        path: body.path,
        status: 'pending',
        ...prepared.fields,
        metadata: body.metadata,
        version_id: versionId,
        // A rule may exist before its file: the file starts under the rule that governs its path.
        governing_rule_rid: await governingRuleRidFor(tx, col.rid, body.path),
        created_at: now,
        updated_at: now,
      });
    }
    const job = await newVersion(tx, ns, col, file, prepared);
    return { file, job, live };
  });
  if (result.job.runnable) s.notifyWork();
  // The collection as this write found it: a second read per added file was 2% of the HTTP thread's
  // time in a SciFact ingest.
  const out: { file: FileResource; job: JobRow; upload?: UploadInstructions } = { file: await presentFile(s.store, result.file, [result.live]), job: result.job };
  if (prepared.fields.source_type === 'upload') out.upload = uploadInstructions(s, result.file.version_id, prepared.fields.content_type);
  return out;
}

export async function listCollectionFiles(
  s: Services,
  key: AuthenticatedKey,
  col: CollectionRow,
  query: { path?: string | undefined; prefix?: string | undefined; status?: FileStatus | undefined; cursor?: string | undefined; limit: number },
) {
  if (query.path !== undefined && query.prefix !== undefined) throw new TroveError('invalid_request', 'Send at most one of path and prefix.');
  const binding = requestBinding([key.id, 'files', col.id, query.path ?? null, query.prefix ?? null, query.status ?? null]);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  const rows = await s.store.files.list({ collectionRid: col.rid, afterRid: after, limit: query.limit + 1, path: query.path, prefix: query.prefix, status: query.status });
  const page = await pageOf(s, rows, query.limit, binding, (f) => f);
  return { items: await presentFiles(s.store, page.items), next_cursor: page.next_cursor };
}

export async function patchFile(
  s: Services,
  ns: NamespaceRow,
  col: CollectionRow,
  file: FileRow,
  body: z.output<typeof UpdateFileRequest>,
): Promise<{ file: FileResource; job: JobRow | null; upload?: UploadInstructions }> {
  if (!body.source) {
    const updated = await s.store.write(async (tx) => {
      await stillLive(tx, file);
      return tx.files.updateMetadata(file.rid, body.metadata ?? {}, nowIso());
    });
    return { file: await presentFile(s.store, updated), job: null };
  }
  const prepared = prepareSource(s, body.source, file.path);
  const result = await s.store.write(async (tx) => {
    await stillLive(tx, file);
    const now = nowIso();
    await tx.jobs.cancelQueuedFileJobs(file.rid, now, 'A newer version of the file was added.');
    const updated = await tx.files.replaceSource(file.rid, { ...prepared.fields, version_id: newId('ver') }, body.metadata ?? null, now);
    return { file: updated, job: await newVersion(tx, ns, col, updated, prepared) };
  });
  if (result.job.runnable) s.notifyWork();
  const out: { file: FileResource; job: JobRow; upload?: UploadInstructions } = { file: await presentFile(s.store, result.file), job: result.job };
  if (prepared.fields.source_type === 'upload') out.upload = uploadInstructions(s, result.file.version_id, prepared.fields.content_type);
  return out;
}

export async function deleteFile(s: Services, ns: NamespaceRow, col: CollectionRow, file: FileRow): Promise<JobRow> {
  const job = await s.store.write(async (tx) => {
    await stillLive(tx, file);
    const now = nowIso();
    await tx.jobs.cancelQueuedFileJobs(file.rid, now, 'The file was deleted.');
    await tx.files.markDeleted(file.rid, now);
    return enqueue(tx.jobs, {
      type: 'delete_file',
      namespace_rid: ns.rid,
      collection_rid: col.rid,
      namespace: ns.name,
      collection: col.name,
      file_rid: file.rid,
      file_id: file.id,
      version_id: file.version_id,
    });
  });
  s.notifyWork();
  return job;
}

/** retrieval-api.md, GET .../content: a signed URL; 409 for external sources and pending uploads. */
export async function fileContentUrl(s: Services, file: FileRow): Promise<{ url: string; expires_at: string }> {
  if (file.source_type === 'uri') throw new TroveError('external_source', 'This file comes from an external URI; read it from its source.', { uri: file.uri });
  const version = await s.store.files.version(file.version_id);
  // An upload refused or expired will never arrive: that is no operation in progress, and a client
  // trusting `retryable` would wait forever (found by a contract audit). It has no content: 404.
  if (version && file.source_type === 'upload' && (version.upload_state === 'rejected' || version.upload_state === 'expired')) {
    const why = version.upload_state === 'rejected' ? 'was refused (its size or checksum did not match)' : 'expired before its bytes arrived';
    throw new TroveError('not_found', `This file has no content: its upload ${why}. Add the file again with a new upload.`, { upload_state: version.upload_state });
  }
  if (!version || (file.source_type === 'upload' && version.upload_state !== 'received')) {
    throw new TroveError('operation_in_progress', 'The file\'s bytes have not been uploaded yet.');
  }
  const expiresAt = Date.now() + DOWNLOAD_URL_TTL_MS;
  const token = signTarget(s.urlSecret, { action: 'download', versionId: version.id, expiresAt });
  return { url: `${s.publicBaseUrl()}/downloads/${token}`, expires_at: new Date(expiresAt).toISOString() };
}

export async function openDownload(s: Services, token: string): Promise<{ bytes: Buffer; contentType: string; path: string }> {
  const target = verifyTarget(s.urlSecret, token, 'download');
  const version = await s.store.files.version(target.versionId);
  const file = version ? await s.store.files.byRid(version.file_rid) : undefined;
  if (!version || !file || file.deleted_at) throw new TroveError('not_found', 'This signed URL is invalid or has expired.');
  if (version.inline_text !== null) return { bytes: Buffer.from(version.inline_text, 'utf8'), contentType: file.content_type, path: file.path };
  if (version.blob_sha256) return { bytes: await s.blobs.read(version.blob_sha256, { maxBytes: MAX_UPLOAD_BYTES }), contentType: file.content_type, path: file.path };
  throw new TroveError('operation_in_progress', 'The file\'s bytes have not been uploaded yet.');
}

/**
 * The signed PUT (decisions.md §2): single use; size and checksum are verified against what was
 * declared. A body that contradicts them fails the file with `source_mismatch` (retrieval-api.md,
 * File.source.checksum: "A mismatch fails processing"), and its job with it, and is answered 400.
 * The URL is used up by that attempt, as by a successful one: the bytes are not kept (a mismatch
 * never reaches the blob store), and the way to send them again is a new version of the file, by
 * adding its path again or PATCHing its source, which returns a new upload URL. Keeping the URL
 * open instead would leave the file `pending`, and its collection `indexing`, with nothing to say
 * why, until the URL expired.
 */
export async function receiveUpload(s: Services, token: string, body: Readable, contentLength: number | null): Promise<FileResource> {
  const target = verifyTarget(s.urlSecret, token, 'upload');
  const version = await s.store.files.version(target.versionId);
  const file = version ? await s.store.files.byRid(version.file_rid) : undefined;
  if (!version || !file || file.deleted_at || file.version_id !== version.id) throw new TroveError('not_found', 'This upload URL is no longer valid: the file was deleted or replaced.');
  if (version.upload_state === 'expired') throw new TroveError('not_found', 'This signed URL is invalid or has expired.');
  if (version.upload_state === 'rejected') throw usedByMismatch(file);
  if (version.upload_state !== 'waiting') throw new TroveError('invalid_request', 'This upload URL has already been used.');
  if (contentLength !== null && file.bytes !== null && contentLength !== file.bytes) {
    throw await rejectUpload(s, file, version.id, `The upload is ${contentLength} bytes; the file declared ${file.bytes}.`);
  }
  if (contentLength !== null && contentLength > MAX_UPLOAD_BYTES) {
    throw new TroveError('request_too_large', `The upload is ${contentLength} bytes; the limit is ${MAX_UPLOAD_BYTES}.`, { limit_bytes: MAX_UPLOAD_BYTES });
  }
  const declared = file.checksum ? parseChecksum(file.checksum) : null;
  const checksummer = declared && declared.algorithm !== 'sha256' ? createChecksummer([declared.algorithm]) : null;
  // Reading stops one byte past the declared size: that is enough to know the body does not match.
  const pastDeclared = file.bytes !== null && file.bytes < MAX_UPLOAD_BYTES;
  const limit = pastDeclared ? file.bytes! : MAX_UPLOAD_BYTES;
  const blob = await s.blobs.receive(body, { maxBytes: limit, ...(checksummer ? { onChunk: (c: Buffer) => checksummer.update(c) } : {}) }).catch(async (err: unknown) => {
    if (err instanceof TroveError && err.code === 'request_too_large' && pastDeclared) {
      throw await rejectUpload(s, file, version.id, `The upload is larger than the ${file.bytes} bytes the file declared.`);
    }
    throw err;
  });
  let mismatch: string | null = null;
  if (file.bytes !== null && blob.bytes !== file.bytes) mismatch = `The upload is ${blob.bytes} bytes; the file declared ${file.bytes}.`;
  else if (declared) {
    const actual = declared.algorithm === 'sha256' ? blob.sha256 : checksummer!.digest()[declared.algorithm];
    if (actual !== declared.hex) mismatch = `The upload's ${declared.algorithm} is ${actual}; the file declared ${declared.hex}.`;
  }
  if (mismatch !== null) {
    await s.blobs.discard(blob);
    throw await rejectUpload(s, file, version.id, mismatch);
  }
  let updated: FileRow;
  try {
    updated = await s.store.write(async (tx) => {
      const current = await tx.files.version(version.id);
      if (current?.upload_state !== 'waiting') throw new TroveError('invalid_request', 'This upload URL has already been used.');
      // The blob is put in place in the change that refers to it: an upload of the same bytes whose
      // row failed to commit (a full disk) may remove it, never one another upload's row refers to.
      await s.blobs.commit(blob);
      await tx.files.markUploadReceived(version.id, blob.sha256);
      await tx.jobs.makeRunnable(version.id, nowIso());
      return (await tx.files.byRid(file.rid))!;
    });
  } catch (err) {
    await s.blobs.discard(blob);
    // Nothing refers to the blob if the row was not written: a full disk gets its space back, and
    // the upload URL stays usable (the version still waits for its bytes).
    if (!(await s.store.retention.blobInUse(blob.sha256))) await s.blobs.remove(blob.sha256);
    throw err;
  }
  s.notifyWork();
  return presentFile(s.store, updated);
}

/** How to send the bytes again once a mismatch used the URL up (see receiveUpload). */
const RETRY_HINT = 'add the file again (or PATCH its source) to get a new upload URL';

/**
 * Fails the waiting version with `source_mismatch` (unless another PUT settled it first) and
 * returns the 400 that answers the PUT; its details name the file and the error it now carries.
 */
async function rejectUpload(s: Services, file: FileRow, versionId: string, mismatch: string): Promise<TroveError> {
  const error = { code: 'source_mismatch' as const, message: `${mismatch} The upload was rejected; ${RETRY_HINT}.` };
  const failed = await s.store.write((tx) => failWaitingUpload(tx, versionId, file.rid, 'rejected', error, nowIso()));
  if (!failed) return new TroveError('invalid_request', 'This upload URL has already been used.');
  return new TroveError('invalid_request', error.message, { file_id: file.id, file_status: 'failed', file_error: error });
}

function usedByMismatch(file: FileRow): TroveError {
  return new TroveError('invalid_request', `This upload URL was used by bytes that did not match what the file declared, and the file failed with source_mismatch; ${RETRY_HINT}.`, {
    file_id: file.id,
  });
}
