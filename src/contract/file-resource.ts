// A file as the contract shows it (retrieval-api.md, File). The one serializer of a file: the file
// routes (src/domain/present.ts) and the outbox's file.* events (written by the store, which the
// event page, its stream and webhooks pass on as stored) both call it, so an event's data is what
// GET of the same file in the same state answers. It lives in the contract because both layers use
// it and the store may not import the domain. Valueless optional fields are left out.
import type { FileResource } from './schemas.js';

/** What the serializer reads of a file row (src/store/aggregates/files.ts FileRow). */
export interface FileShape {
  id: string;
  path: string;
  status: FileResource['status'];
  source_type: FileResource['source']['type'];
  content_type: string;
  bytes: number | null;
  checksum: string | null;
  uri: string | null;
  metadata: Record<string, unknown>;
  error_code: string | null;
  error_message: string | null;
  notes: readonly string[] | null;
  created_at: string;
  updated_at: string;
}

/** The rule governing a file, as its resource names it. */
export interface GoverningRule {
  id: string;
  folder: string | null;
  file: string | null;
}

/** `rule`: the rule governing the file, passed only when its collection enforces access rules. */
export function fileResource(file: FileShape, rule?: GoverningRule): FileResource {
  const source: FileResource['source'] = { type: file.source_type, content_type: file.content_type };
  if (file.bytes !== null) source.bytes = file.bytes;
  if (file.checksum !== null) source.checksum = file.checksum;
  if (file.uri !== null) source.uri = file.uri;
  const out: FileResource = {
    id: file.id,
    path: file.path,
    status: file.status,
    source,
    metadata: file.metadata,
    created_at: file.created_at,
    updated_at: file.updated_at,
  };
  if (file.error_code) out.error = { code: file.error_code, message: file.error_message ?? '' };
  if (file.notes) out.notes = [...file.notes];
  if (rule) out.governing_rule = rule.folder !== null ? { id: rule.id, folder: rule.folder } : { id: rule.id, file: rule.file };
  return out;
}
