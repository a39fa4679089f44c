// `trove search [collection] <query>`: one POST :search, printed for a human or as the raw response.
import type { SearchResponseBody, SearchResult } from '../../client/index.js';
import { readCliConfig } from '../cli-config.js';
import { ApiClient, CliError, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { paint, stdoutColour } from '../colour.js';
import { resolveTarget, splitQueryArgs } from '../defaults.js';
import { searchWithDefaultMode, type SearchBody } from '../search-request.js';
import { SNIPPET_CHARS, snippetLine } from '../snippet.js';
import { formatScore as shortNumber } from '../../tui/format.js';
import { out } from '../io.js';

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
  /** --explain: ask the API for each result's score components and print them. */
  explain?: boolean;
  /** --cursor: the next page of an earlier search (its footer prints the flag to pass). */
  cursor?: string;
}

type Evidence = SearchResult['evidence'][number];

/** The `explain` object a result carries when the request asked for it (docs/ranking.md). */
export type Explanation = NonNullable<SearchResult['explain']>;

export const SEARCH_USAGE = 'trove search "<query>" (after `trove init`), or trove search <collection> "<query>"';

export async function runSearch(first: string | undefined, second: string | undefined, globalOpts: GlobalOptions, opts: SearchOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const args = splitQueryArgs(first, second, 'query', SEARCH_USAGE);
    const target = resolveTarget({ collection: args.collection, namespaceFlag: opts.namespace, collectionFlag: opts.collection }, await readCliConfig(), SEARCH_USAGE);
    const body: SearchBody = {
      query: args.query,
      limit: parseLimit(opts.limit),
      result_unit: opts.unit ?? 'file',
    };
    // No mode unless one was chosen: the API's default applies (src/cli/search-request.ts).
    if (opts.mode !== undefined) body.mode = opts.mode;
    if (opts.filter !== undefined) body.filter = parseFilter(opts.filter);
    // retrieval-api.md, search body: `principals` (collections with access rules).
    if (opts.principal !== undefined) body.principals = opts.principal;
    if (opts.explain) body.explain = true;
    // retrieval-api.md: sent with the same query and request values as the page it came from.
    if (opts.cursor !== undefined) body.cursor = opts.cursor;

    const client = ApiClient.of(await resolveConnection(globalOpts));
    const response = await searchWithDefaultMode(client, collectionPath(target.namespace, target.collection), body);
    if (json) out().write(JSON.stringify(response) + '\n');
    else out().write(formatResults(response, { query: args.query, colour: stdoutColour() }));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
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

export interface FormatOptions {
  /** The query, whose words are marked in the snippets. */
  query?: string;
  /** Bold/colour for the matched words and paths (see src/cli/colour.ts for when). */
  colour?: boolean;
}

export function formatResults(response: Pick<SearchResponseBody, 'execution' | 'results' | 'next_cursor' | 'warnings'>, { query = '', colour = false }: FormatOptions = {}): string {
  const lines: string[] = [];
  const mode = response.execution?.mode;
  if (response.results.length === 0) lines.push(mode ? `No results (${mode} search).` : 'No results.');
  else if (mode) lines.push(`${response.results.length} result${response.results.length === 1 ? '' : 's'} (${mode} search)`);
  for (const result of response.results) {
    lines.push(`${String(result.rank).padStart(3)}. ${paint(result.path, ['bold'], colour)}  (score ${formatScore(result.score)})`);
    if (result.explain) lines.push(`       ${paint(formatExplanation(result.explain), ['dim'], colour)}`);
    const located = result.evidence.map((e) => ({ where: formatLocation(e), text: snippetLine(e.text, query, colour) }));
    const width = Math.max(0, ...located.map((e) => e.where.length));
    for (const e of located) lines.push(`       ${e.where.padEnd(width)}  ${e.text}`);
  }
  if (response.next_cursor) lines.push(`(more results: run the same search with --cursor ${response.next_cursor})`);
  for (const warning of response.warnings) lines.push(`warning ${warning.code}: ${warning.message}`);
  return lines.join('\n') + '\n';
}

/**
 * One line saying how a result's score was made: in keyword mode it is BM25 alone; in semantic
 * (hybrid) mode `minmax(BM25) + w · minmax(cosine)`, each part shown raw and scaled.
 */
export function formatExplanation(e: Explanation): string {
  // BM25 on a small collection is tiny (1e-6): the short form keeps its digits readable.
  const n = (x: number | null) => (x === null ? 'none' : shortNumber(x));
  if (e.fusion === 'keyword') return `explain: bm25 ${n(e.bm25)} = score ${n(e.score)}`;
  const bm25 = e.bm25 === null ? 'bm25 none (not a keyword hit) → 0' : `bm25 ${n(e.bm25)} → ${n(e.bm25_scaled)}`;
  const cosine = e.cosine === null ? 'cosine none → 0' : `cosine ${n(e.cosine)} → ${n(e.cosine_scaled)} × ${e.semantic_weight} = ${n(e.semantic_part)}`;
  const collection = e.collection_cosine === null ? '' : `  +  collection ${n(e.collection_cosine)} → ${n(e.collection_cosine_scaled)} × ${e.collection_weight} = ${n(e.collection_part)}`;
  return `explain: ${bm25}  +  ${cosine}${collection}  =  score ${n(e.score)}`;
}

function formatScore(score: number): string {
  return Math.abs(score) >= 100 ? score.toFixed(1) : score.toPrecision(3);
}

export function formatLocation(evidence: Evidence): string {
  const location = evidence.location;
  if (!location) return evidence.kind;
  if ('json_path' in location) return location.json_path;
  if ('page' in location) return `page ${location.page}`;
  if ('char_start' in location) return `chars ${location.char_start}-${location.char_end}`;
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
