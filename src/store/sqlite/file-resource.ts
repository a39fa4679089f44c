// The outbox's view of a file: its resource as GET shows it now (src/contract/file-resource.ts, the
// one serializer), with where the event belongs.
import { fileResource, type GoverningRule } from '../../contract/file-resource.js';
import type { FileResource } from '../../contract/schemas.js';
import type { Db } from './db.js';
import { getFileByRid } from './files.js';
import { stmt } from './statements.js';

/** The file `rid` as its GET shows it now, with its collection's namespace (for the outbox). */
export function fileResourceByRid(db: Db, rid: number): { resource: FileResource; namespaceRid: number; collectionRid: number } | undefined {
  const file = getFileByRid(db, rid);
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
