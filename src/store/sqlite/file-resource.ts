// A file as the contract shows it (retrieval-api.md, File), built from its row. The one serializer
// of a file: the file routes (src/domain/present.ts) and the outbox's file.* events (events.ts,
// which the event page, its stream and webhooks pass on as stored) all call fileResource, so an
// event's data is what GET of the same file in the same state answers. Valueless optional fields
// are left out.
import type { FileResource } from '../../contract/schemas.js';
import type { AccessRuleRow } from './access-rules.js';
import type { Db } from './db.js';
import type { FileRow } from './files.js';
import { stmt } from './statements.js';

export type GoverningRule = Pick<AccessRuleRow, 'id' | 'folder' | 'file'>;

/** `rule`: the rule governing the file, passed only when its collection enforces access rules. */
export function fileResource(file: FileRow, rule?: GoverningRule): FileResource {
  const source: FileResource['source'] = { type: file.source_type, content_type: file.content_type };
  if (file.bytes !== null) source.bytes = file.bytes;
  if (file.checksum !== null) source.checksum = file.checksum;
  if (file.uri !== null) source.uri = file.uri;
  const out: FileResource = {
    id: file.id,
    path: file.path,
    status: file.status,
    source,
    metadata: JSON.parse(file.metadata) as Record<string, unknown>,
    created_at: file.created_at,
    updated_at: file.updated_at,
  };
  if (file.error_code) out.error = { code: file.error_code, message: file.error_message ?? '' };
  if (file.notes) out.notes = JSON.parse(file.notes) as string[];
  if (rule) out.governing_rule = rule.folder !== null ? { id: rule.id, folder: rule.folder } : { id: rule.id, file: rule.file };
  return out;
}

/** The file `rid` as its GET shows it now, with its collection's namespace (for the outbox). */
export function fileResourceByRid(db: Db, rid: number): { resource: FileResource; namespaceRid: number; collectionRid: number } | undefined {
  const file = stmt(db, 'SELECT * FROM files WHERE rid = ?').get(rid) as FileRow | undefined;
  if (!file) return undefined;
  const col = stmt(db, 'SELECT namespace_rid, access_control FROM collections WHERE rid = ?').get(file.collection_rid) as
    | { namespace_rid: number; access_control: string }
    | undefined;
  if (!col) return undefined;
  const rule =
    col.access_control === 'enforced' && file.governing_rule_rid !== null
      ? (stmt(db, 'SELECT id, folder, file FROM access_rules WHERE rid = ?').get(file.governing_rule_rid) as GoverningRule | undefined)
      : undefined;
  return { resource: fileResource(file, rule), namespaceRid: col.namespace_rid, collectionRid: file.collection_rid };
}
