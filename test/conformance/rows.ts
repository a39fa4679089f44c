// Rows the conformance suites write, built once: each part overrides only what its test is about.
import type { NamespaceRow, NewFile, NewJob } from '../../src/store/interface.js';

/** A second of 2025-01-01, as the ISO text the domain passes. */
export const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

/** A pending inline text file at `/<id>.txt`. */
export const newFile = (id: string, collectionRid: number, over: Partial<NewFile> = {}): NewFile => ({
  id,
  collection_rid: collectionRid,
  path: `/${id}.txt`,
  status: 'pending',
  source_type: 'inline',
  declared_content_type: 'text/plain',
  content_type: 'text/plain',
  bytes: 5,
  checksum: null,
  uri: null,
  metadata: {},
  version_id: `ver_${id}`,
  created_at: at(30),
  updated_at: at(30),
  ...over,
});

/** A runnable reindex job of a collection (or, with none, of the namespace). */
export const newJob = (id: string, ns: NamespaceRow, col: { rid: number; name: string } | null, over: Partial<NewJob> = {}): NewJob => ({
  id,
  type: 'reindex_collection',
  namespace_rid: ns.rid,
  collection_rid: col?.rid ?? null,
  namespace: ns.name,
  collection: col?.name ?? null,
  file_rid: null,
  file_id: null,
  version_id: null,
  runnable: 1,
  created_at: at(5),
  ...over,
});
