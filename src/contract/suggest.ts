// "Did you mean": when the API answers not_found for a path that names a namespace or a collection,
// a client lists the names the key can see and suggests the closest. Pure matching over names the
// caller lists, so the CLI (ApiClient, for every request) and the MCP tools share it.
import { looksLikeId } from './ids.js';

/** Levenshtein distance (insert, delete, substitute: 1 each). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The closest name, if it is close enough to be a typo (a third of the name's length, at least 2 edits). */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

const MAX_LISTED = 10;

/** "No collection 'notse' in namespace 'demo'. Did you mean 'notes'? Collections this key can see there: notes, todo." */
export function notFoundMessage(kind: 'namespace' | 'collection', name: string, candidates: readonly string[], namespace?: string): string {
  const what = kind === 'namespace' ? `No namespace '${name}'.` : `No collection '${name}' in namespace '${namespace}'.`;
  const guess = closest(name, candidates);
  const listed = candidates.slice(0, MAX_LISTED).map((c) => `'${c}'`).join(', ') + (candidates.length > MAX_LISTED ? `, … (${candidates.length} in all)` : '');
  const seen = candidates.length === 0 ? `This key sees no ${kind}s${kind === 'collection' ? ' there' : ''}.` : `${kind === 'namespace' ? 'Namespaces' : 'Collections'} this key can see${kind === 'collection' ? ' there' : ''}: ${listed}.`;
  return [what, guess ? `Did you mean '${guess}'?` : '', seen].filter(Boolean).join(' ');
}

/** The namespace and collection a request path names (by name, not ID), if any. */
export function namesInPath(path: string): { namespace: string; collection?: string | undefined } | null {
  const match = /^\/namespaces\/([^/?:]+)(?:\/collections\/([^/?:]+))?/.exec(path);
  if (!match) return null;
  const namespace = decodeURIComponent(match[1]!);
  const collection = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
  return { namespace, collection };
}

/**
 * The better message for a not_found on `path`, or null when the path names nothing by name, the
 * names exist (the missing thing is further down, a file say), or the lists cannot be read.
 * `list(path)` returns every item's name under a list path.
 */
export async function suggestForNotFound(path: string, list: (path: string) => Promise<string[]>): Promise<string | null> {
  const names = namesInPath(path);
  if (!names) return null;
  try {
    if (!looksLikeId(names.namespace)) {
      const namespaces = await list('/namespaces');
      if (!namespaces.includes(names.namespace)) return notFoundMessage('namespace', names.namespace, namespaces);
    }
    if (names.collection !== undefined && !looksLikeId(names.collection)) {
      const collections = await list(`/namespaces/${encodeURIComponent(names.namespace)}/collections`);
      if (!collections.includes(names.collection)) return notFoundMessage('collection', names.collection, collections, names.namespace);
    }
  } catch {
    // A key that may not list keeps the API's own message.
  }
  return null;
}
