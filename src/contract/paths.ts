// File path rules from retrieval-api.md "Conventions": leading '/', no trailing '/', at most 1,024
// UTF-8 bytes, no empty, '.', '..' or control-character segments.
export const MAX_PATH_BYTES = 1024;

export function filePathProblem(path: string): string | null {
  if (typeof path !== 'string' || path.length === 0) return 'must be a non-empty string';
  if (!path.startsWith('/')) return "must start with '/'";
  if (path.length > 1 && path.endsWith('/')) return "must not end with '/'";
  if (path === '/') return 'must name a file, not the root';
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} UTF-8 bytes`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) return 'must not contain control characters';
  if (path.isWellFormed && !path.isWellFormed()) return 'must be valid Unicode';
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return 'must not contain empty segments';
    if (segment === '.' || segment === '..') return "must not contain '.' or '..' segments";
  }
  return null;
}

/** Folder prefixes of access rules start and end with '/'; '/' is the whole collection. */
export function folderPathProblem(folder: string): string | null {
  if (folder === '/') return null;
  if (!folder.startsWith('/') || !folder.endsWith('/')) return "must start and end with '/'";
  return filePathProblem(folder.slice(0, -1));
}

/** API routes of a namespace and a collection, by name or ID (each segment percent-encoded). */
export const namespacePath = (namespace: string) => `/namespaces/${encodeURIComponent(namespace)}`;
export const collectionPath = (namespace: string, collection: string) => `${namespacePath(namespace)}/collections/${encodeURIComponent(collection)}`;
