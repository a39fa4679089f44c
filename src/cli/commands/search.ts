// `trove search [collection] <query>`: one POST :search, printed for a human or as the raw response.
import { readCliConfig } from '../cli-config.js';
import { ApiClient, CliError, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { resolveTarget, splitQueryArgs } from '../defaults.js';
import { searchWithDefaultMode } from '../search-request.js';

export interface SearchOptions {
  namespace?: string;
  collection?: string;
  /** Only when the user chose one: otherwise the API's default applies (retrieval-api.md, search: `semantic`). */
  mode?: string;
  principal?: string[];
  unit?: string;
  limit?: string;
  filter?: string;
  json?: boolean;
}

const DEFAULT_NAMESPACE = 'default';
const SNIPPET_CHARS = 200;

type EvidenceLocation =
  | { start_ms: number; end_ms: number }
  | { page: number; bbox?: number[] | null }
  | { json_path: string }
  | { char_start: number; char_end: number };

interface Evidence {
  kind: string;
  text: string;
  location?: EvidenceLocation | null;
}

interface SearchResult {
  file_id: string;
  path: string;
  rank: number;
  score: number;
  evidence: Evidence[];
}

interface SearchResponse {
  request_id: string;
  execution?: { mode?: string };
  results: SearchResult[];
  warnings: { code: string; message: string }[];
  next_cursor: string | null;
}

export const SEARCH_USAGE = 'trove search "<query>" (after `trove init`), or trove search <collection> "<query>"';

export async function runSearch(first: string | undefined, second: string | undefined, globalOpts: GlobalOptions, opts: SearchOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const args = splitQueryArgs(first, second, 'query', SEARCH_USAGE);
    const target = resolveTarget({ collection: args.collection, namespaceFlag: opts.namespace, collectionFlag: opts.collection }, await readCliConfig(), SEARCH_USAGE);
    const body: Record<string, unknown> = {
      query: args.query,
      limit: parseLimit(opts.limit),
      result_unit: opts.unit ?? 'file',
    };
    // No mode unless one was chosen: the API's default applies (src/cli/search-request.ts).
    if (opts.mode !== undefined) body.mode = opts.mode;
    if (opts.filter !== undefined) body.filter = parseFilter(opts.filter);
    // retrieval-api.md, search body: `principals` (collections with access rules).
    if (opts.principal !== undefined) body.principals = opts.principal;

    const client = ApiClient.of(await resolveConnection(globalOpts));
    const response = await searchWithDefaultMode<SearchResponse>(client, collectionPath(target.namespace, target.collection), body);
    if (json) process.stdout.write(JSON.stringify(response) + '\n');
    else process.stdout.write(formatResults(response));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** `ns/col` names both; a bare name uses --namespace or "default". */
export function parseTarget(collection: string, namespaceOption: string | undefined): { namespace: string; collection: string } {
  const slash = collection.indexOf('/');
  if (slash < 0) return { namespace: namespaceOption ?? DEFAULT_NAMESPACE, collection };
  const namespace = collection.slice(0, slash);
  const name = collection.slice(slash + 1);
  if (!namespace || !name || name.includes('/')) throw new CliError(`'${collection}' is not a collection: use <collection> or <namespace>/<collection>.`, 2);
  if (namespaceOption !== undefined && namespaceOption !== namespace) {
    throw new CliError(`'${collection}' names namespace '${namespace}' but --namespace says '${namespaceOption}': give one of them.`, 2);
  }
  return { namespace, collection: name };
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 10;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError(`--limit must be an integer from 1 to 100, got '${value}'.`, 2);
  return limit;
}

export function parseFilter(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `--filter is not valid JSON (${(err as Error).message}). Example: --filter '{"field":"path","op":"prefix","value":"/docs/"}'`,
      2,
    );
  }
}

export function formatResults(response: SearchResponse): string {
  const lines: string[] = [];
  const mode = response.execution?.mode;
  if (response.results.length === 0) lines.push(mode ? `No results (${mode} search).` : 'No results.');
  else if (mode) lines.push(`${response.results.length} result${response.results.length === 1 ? '' : 's'} (${mode} search)`);
  for (const result of response.results) {
    lines.push(`${String(result.rank).padStart(3)}. ${result.path}  (score ${formatScore(result.score)})`);
    const located = result.evidence.map((e) => ({ where: formatLocation(e), text: oneLine(e.text) }));
    const width = Math.max(0, ...located.map((e) => e.where.length));
    for (const e of located) lines.push(`       ${e.where.padEnd(width)}  ${e.text}`);
  }
  if (response.next_cursor) lines.push(`(more results: raise --limit, or page with the API's next_cursor)`);
  for (const warning of response.warnings) lines.push(`warning ${warning.code}: ${warning.message}`);
  return lines.join('\n') + '\n';
}

function formatScore(score: number): string {
  return Math.abs(score) >= 100 ? score.toFixed(1) : score.toPrecision(3);
}

export function formatLocation(evidence: Evidence): string {
  const location = evidence.location;
  if (!location) return evidence.kind;
  if ('char_start' in location) return `chars ${location.char_start}-${location.char_end}`;
  if ('json_path' in location) return location.json_path;
  if ('page' in location) return `page ${location.page}`;
  return `${seconds(location.start_ms)}-${seconds(location.end_ms)}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** Evidence collapsed to one line and cut to about SNIPPET_CHARS characters. */
export function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const cut = flat.slice(0, SNIPPET_CHARS);
  const lastSpace = cut.lastIndexOf(' ');
  return (lastSpace > SNIPPET_CHARS * 0.7 ? cut.slice(0, lastSpace) : cut) + '…';
}
