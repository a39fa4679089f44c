// Which rule governs a path (retrieval-api.md, Access rule): the highest sealed ancestor folder
// rule if there is one, otherwise the most specific rule (a file rule over the deepest folder rule).
// Pure, so the HTTP thread, the worker's apply_access_rule job and the tests' reference model agree.

export interface RuleShape {
  folder: string | null;
  file: string | null;
  sealed: boolean;
}

/** The folders that contain `path`, shallowest first: '/a/b.txt' → ['/', '/a/']. */
export function ancestorFolders(path: string): string[] {
  const out = ['/'];
  let at = path.indexOf('/', 1);
  while (at > 0) {
    out.push(path.slice(0, at + 1));
    at = path.indexOf('/', at + 1);
  }
  return out;
}

/** One string per rule target, so one unique index keeps one rule per folder or file. */
export const targetKey = (t: { folder: string; file?: undefined } | { file: string; folder?: undefined }): string => (t.folder !== undefined ? `d${t.folder}` : `f${t.file}`);

/** The rule targets that can govern `path`, as targetKey writes them. */
export function candidateTargets(path: string): string[] {
  return [...ancestorFolders(path).map((f) => `d${f}`), `f${path}`];
}

/** Rules looked up by target, built once for many paths. */
export interface RuleIndex<R extends RuleShape> {
  folders: Map<string, R>;
  files: Map<string, R>;
}

export function indexRules<R extends RuleShape>(rules: readonly R[]): RuleIndex<R> {
  const index: RuleIndex<R> = { folders: new Map(), files: new Map() };
  for (const r of rules) {
    if (r.file !== null) index.files.set(r.file, r);
    else if (r.folder !== null) index.folders.set(r.folder, r);
  }
  return index;
}

export function governingRule<R extends RuleShape>(rules: readonly R[] | RuleIndex<R>, path: string): R | null {
  const { folders, files } = Array.isArray(rules) ? indexRules(rules as readonly R[]) : (rules as RuleIndex<R>);
  const fileRule = files.get(path) ?? null;
  const ancestors = ancestorFolders(path);
  for (const folder of ancestors) {
    const r = folders.get(folder);
    if (r?.sealed) return r;
  }
  if (fileRule) return fileRule;
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const r = folders.get(ancestors[i]!);
    if (r) return r;
  }
  return null;
}
