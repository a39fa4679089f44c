// The MCP tools: each one is a few requests to the public HTTP API through an ApiCaller (caller.ts),
// with the caller's own key, so that permissions and access rules are exactly the HTTP routes'
// (retrieval-api.md "Authentication", "Principals"). A tool adds only what an agent needs on top:
// a compact text rendering, the response as structuredContent, and hints for the next call.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { collectionPath, namespacePath } from '../contract/paths.js';
import { suggestForNotFound } from '../contract/suggest.js';
import type * as S from '../contract/schemas.js';
import type { ApiCaller, ApiResult } from './caller.js';
import { errorResult, failureOf, ToolFailure } from './errors.js';
import { extractedText } from './extracted-text.js';
import { clipToBudget, continuationCursor, cutNote, fits, largestFitting, readContinuation } from './reply-budget.js';

export type Action = S.Action;

type Info = z.infer<typeof S.InfoResponse>;

/** The key a session runs with, as GET /info's `key` shows it (decisions.md §3). */
export type KeyInfo = Pick<Info['key'], 'id' | 'name' | 'prefix' | 'scope'>;

export interface ToolContext {
  call: ApiCaller;
  key: KeyInfo;
  /** The most one reply may cost, in tokens (reply-budget.ts; src/domain/mcp-settings.ts). */
  replyBudgetTokens: number;
}

/** "write includes read; search and query are independent" (retrieval-api.md, Key). */
export function keyCan(key: KeyInfo, action: Action): boolean {
  if (key.scope.kind === 'cluster') return true;
  const { actions } = key.scope;
  return actions.includes(action) || (action === 'read' && actions.includes('write'));
}

// ------------------------------------------------------------------------------------------ helpers

const enc = encodeURIComponent;

/** One API request; a non-2xx answer becomes the contract's error, a not_found naming the nearest names the key can see. */
async function api<T = Record<string, unknown>>(ctx: ToolContext, method: string, path: string, body?: unknown): Promise<T> {
  const res = await ctx.call(method, path, body);
  if (res.status >= 200 && res.status <= 299) return res.body as T;
  const failure = failureOf(res);
  if (failure.error.code === 'not_found') {
    const names = async (list: string) => (await listAll<{ name: string }>(ctx, list)).items.map((item) => item.name);
    const suggestion = await suggestForNotFound(path, names);
    if (suggestion) throw new ToolFailure({ ...failure.error, message: suggestion });
  }
  throw failure;
}

/** Every item of a list route, following next_cursor up to `max` items (a bound, so one call stays small). */
async function listAll<T>(ctx: ToolContext, path: string, max = 1000): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const page: { items: T[]; next_cursor: string | null } = await api(ctx, 'GET', `${path}?${q}`);
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return { items, complete: cursor === null };
}

function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** Runs a tool body; whatever fails comes back as a tool error (errors.ts), never as a thrown error; no reply passes the budget. */
function guarded<A>(ctx: ToolContext, fn: (args: A) => Promise<CallToolResult>): (args: A) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return clipToBudget(await fn(args), ctx.replyBudgetTokens);
    } catch (err) {
      return clipToBudget(errorResult(err), ctx.replyBudgetTokens);
    }
  };
}

/** Leaves out undefined fields: the API rejects unknown ones and needs nothing for defaults. */
function defined(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

type Evidence = z.infer<typeof S.EvidenceSchema>;

/** Where a piece of evidence is, in the words `get` takes; read field by field, so a location a newer daemon adds still prints. */
function locationText(loc: Readonly<Record<string, unknown>> | null | undefined): string {
  if (!loc) return '';
  const chars = typeof loc.char_start === 'number' ? `chars ${loc.char_start}-${String(loc.char_end)}` : '';
  if (typeof loc.page === 'number') return chars ? `page ${loc.page}, ${chars}` : `page ${loc.page}`;
  if (chars) return chars;
  if (typeof loc.json_path === 'string') return `json ${loc.json_path}`;
  if (typeof loc.start_ms === 'number') return `${loc.start_ms}-${String(loc.end_ms)} ms`;
  return JSON.stringify(loc);
}

function evidenceLines(evidence: Evidence[], max = 3): string[] {
  const lines = evidence.slice(0, max).map((e) => {
    const where = locationText(e.location);
    return `   ${where ? `[${where}] ` : ''}${clip(e.text, 300)}`;
  });
  if (evidence.length > max) lines.push(`   (+${evidence.length - max} more evidence in structuredContent)`);
  return lines;
}

// ------------------------------------------------------------------------------------------ schemas

const Namespace = z.string().min(1).describe('Namespace name or ns_ ID (list_collections shows the ones this key can see).');
const Collection = z.string().min(1).describe('Collection name or col_ ID within the namespace.');
const Filter = z
  .record(z.string(), z.unknown())
  .describe(
    'Filter clause (selects data, never grants access). Exactly one of {field, op, value}, {and: [clause, ...]}, {or: [clause, ...]}, {not: clause}. ' +
      'field: path, content_type, bytes, created_at, updated_at, status or metadata.<key>; op: eq, neq, gt, gte, lt, lte, prefix, in. ' +
      'Example: {"field": "path", "op": "prefix", "value": "/docs/"}.',
  );
const Principals = z
  .array(z.string())
  .describe('The end user\'s principals (user or group IDs). Required when the collection has access_control "enforced", not allowed when it is "off"; results are limited to files whose access rules list one of them.');

// ------------------------------------------------------------------------------------------ tools

export type ToolName = 'search' | 'answer' | 'get' | 'list_collections' | 'status' | 'add_file';

/** The action each tool needs; list_collections and status serve any key (they show less without read). */
const TOOL_ACTION: Record<ToolName, Action | null> = { status: null, search: 'search', answer: 'query', get: 'read', list_collections: null, add_file: 'write' };

/** The tools a key can run: the only ones offered to it, so an agent is never shown a tool that can only answer forbidden. */
export function toolsFor(key: KeyInfo): ToolName[] {
  return (Object.keys(TOOL_ACTION) as ToolName[]).filter((tool) => TOOL_ACTION[tool] === null || keyCan(key, TOOL_ACTION[tool]));
}

const REGISTER: Record<ToolName, (server: McpServer, ctx: ToolContext) => void> = {
  status: registerStatus,
  search: registerSearch,
  answer: registerAnswer,
  get: registerGet,
  list_collections: registerListCollections,
  add_file: registerAddFile,
};

/** Registers the tools this key can run (toolsFor). */
export function registerTools(server: McpServer, ctx: ToolContext): void {
  for (const tool of toolsFor(ctx.key)) REGISTER[tool](server, ctx);
}

function registerSearch(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'search',
    {
      title: 'Search a trove collection',
      description:
        'Search one collection for files or passages that match a query; it returns ranked results with source evidence and never generates text. ' +
        'Use it first to find where something is written. Each result has the file path, file_id, score and evidence: quoted text with its location ' +
        '(chars start-end in the extracted text, a page, a JSON path or a time span). To read around a hit, call `get` with the path and ' +
        'start_char/end_char (or start_line/end_line). mode "semantic" (the API default, when the collection has it) matches meaning, "keyword" matches words; ' +
        'result_unit "passage" returns one result per passage instead of per file. More results: pass next_cursor back as cursor with the same arguments. ' +
        'Needs a key with the search action.',
      inputSchema: {
        namespace: Namespace,
        collection: Collection,
        query: z.string().min(1).max(32000).describe('What to look for: words, a phrase or a question (1-32,000 characters).'),
        mode: z.enum(['keyword', 'semantic']).optional().describe('Retrieval mode; default semantic. The collection must have it enabled (see status).'),
        interpretation: z.enum(['literal', 'natural_language']).optional().describe('natural_language derives search text and filters from a sentence; default literal.'),
        result_unit: z.enum(['file', 'passage']).optional().describe('file (default) groups evidence by file; passage returns each passage as a result.'),
        limit: z.number().int().min(1).max(100).optional().describe('Results per page, 1-100; default 10.'),
        filter: Filter.optional(),
        principals: Principals.optional(),
        sort: z
          .array(z.object({ field: z.enum(['score', 'path', 'content_type', 'bytes', 'created_at', 'updated_at']), order: z.enum(['asc', 'desc']) }))
          .max(4)
          .optional()
          .describe('Order within the page only; the relevance rank is unchanged.'),
        cursor: z.string().optional().describe('next_cursor of a previous search with the same arguments: the rest of a reply cut to the size budget, or the next page.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(ctx, async ({ namespace, collection, cursor, ...rest }) => {
      // A cursor of a reply cut to the budget resumes inside the API page it came from.
      const resume = cursor === undefined ? null : readContinuation(cursor);
      const pageCursor = resume ? resume.page : cursor;
      const res = await api<SearchResponse>(ctx, 'POST', `${collectionPath(namespace, collection)}:search`, defined({ ...rest, cursor: pageCursor ?? undefined }));
      if (resume && resume.generation !== res.index_generation) {
        throw new ToolFailure({
          code: 'invalid_cursor',
          message: 'The collection changed since this cursor was given, so the rest of that page would be another ranking: search again without a cursor.',
          request_id: null,
          retryable: false,
          details: {},
        });
      }
      const results = resume ? res.results.slice(resume.skip) : res.results;
      const reply = (shown: number): CallToolResult => {
        if (shown >= results.length) return ok(renderSearch(namespace, collection, rest.query, { ...res, results }), { ...res, results } as unknown as Record<string, unknown>);
        const next = continuationCursor({ page: pageCursor ?? null, skip: (resume?.skip ?? 0) + shown, generation: res.index_generation });
        const cut = { ...res, results: results.slice(0, shown), next_cursor: next, cut: cutNote(ctx.replyBudgetTokens, shown, results.length - shown) };
        const text = renderSearch(namespace, collection, rest.query, cut);
        return ok(`${text}\nCut to fit the reply budget of ${ctx.replyBudgetTokens} tokens: ${shown} of this page's ${results.length} results shown.`, cut as unknown as Record<string, unknown>);
      };
      const whole = reply(results.length);
      if (fits(whole, ctx.replyBudgetTokens)) return whole;
      // At least one result, so that continuing always moves on; one that alone passes the budget is clipped by guarded.
      return reply(Math.max(1, largestFitting(results.length - 1, (n) => fits(reply(n), ctx.replyBudgetTokens))));
    }),
  );
}

type SearchResponse = z.infer<typeof S.SearchResponse>;

function renderSearch(ns: string, col: string, query: string, res: SearchResponse): string {
  const out: string[] = [];
  const mode = res.execution?.mode ? ` (${res.execution.mode})` : '';
  out.push(res.results.length === 0 ? `No results for ${JSON.stringify(query)} in ${ns}/${col}${mode}.` : `${res.results.length} result(s) for ${JSON.stringify(query)} in ${ns}/${col}${mode}:`);
  for (const r of res.results) {
    out.push(`${r.rank}. ${r.path}  score ${r.score.toFixed(4)}  ${r.file_id}  ${r.content_type}  matched by ${r.matched_by.join('+')}`);
    out.push(...evidenceLines(r.evidence));
  }
  for (const w of res.warnings) out.push(`warning ${w.code}: ${w.message}`);
  if (res.next_cursor) out.push(`More results: call search again with the same arguments and cursor "${res.next_cursor}".`);
  if (res.results.length > 0) out.push('Read around a hit: get {namespace, collection, file: <path or file_id>, start_char, end_char} (or start_line/end_line).');
  return out.join('\n');
}

function registerAnswer(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'answer',
    {
      title: 'Answer a question from a trove collection',
      description:
        'Answer a question from the files of one collection: generated text with citation markers such as [[SRC:0001]], and a sources map whose keys ' +
        '(SRC:0001) give each cited file\'s path, file_id, score and the evidence used. Use it when you want a synthesized answer; use `search` when you ' +
        'want to find and read the files yourself. To check a claim, call `get` on a source\'s path around its evidence location. Needs a key with the query action.',
      inputSchema: {
        namespace: Namespace,
        collection: Collection,
        query: z.string().min(1).max(32000).describe('The question.'),
        mode: z.enum(['standard', 'ultra']).optional().describe('standard (default) or ultra (reads more, slower).'),
        history: z
          .array(z.object({ role: z.enum(['user', 'assistant']), content: z.string().max(32000) }))
          .max(32)
          .optional()
          .describe('Earlier turns of the conversation, oldest first (the service stores none).'),
        filter: Filter.optional(),
        principals: Principals.optional(),
        return_sources: z.boolean().optional().describe('Default true; false leaves out the sources map.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(ctx, async ({ namespace, collection, ...rest }) => {
      const res = await api<AnswerResponse>(ctx, 'POST', `${collectionPath(namespace, collection)}:answer`, defined(rest));
      const sources = Object.entries(res.sources ?? {});
      // An answer is not generated twice alike, so a cut answer has no cursor: the sources left out
      // are named, with where their evidence is, for `get` to read.
      const reply = (shown: number): CallToolResult => {
        if (shown >= sources.length) return ok(renderAnswer(res), res as unknown as Record<string, unknown>);
        const omitted = sources.slice(shown).map(([marker, source]) => ({ marker, path: source.path, file_id: source.file_id, locations: source.evidence.map((e) => e.location ?? null) }));
        const cut = { ...res, sources: Object.fromEntries(sources.slice(0, shown)), cut: { ...cutNote(ctx.replyBudgetTokens, shown, omitted.length), omitted_sources: omitted } };
        const named = omitted.map((o) => `${o.marker} ${o.path} (${o.locations.map((l) => locationText(l)).filter(Boolean).join('; ')})`).join(', ');
        return ok(`${renderAnswer(cut)}\n\nCut to fit the reply budget of ${ctx.replyBudgetTokens} tokens: ${omitted.length} of ${sources.length} sources left out; read them with get: ${named}.`, cut as unknown as Record<string, unknown>);
      };
      const whole = reply(sources.length);
      if (fits(whole, ctx.replyBudgetTokens)) return whole;
      return reply(largestFitting(sources.length - 1, (n) => fits(reply(n), ctx.replyBudgetTokens)));
    }),
  );
}

type AnswerResponse = z.infer<typeof S.AnswerResponse>;

function renderAnswer(res: AnswerResponse): string {
  const out = [res.answer];
  const sources = Object.entries(res.sources ?? {});
  if (sources.length > 0) {
    out.push('', 'Sources (marker [[SRC:n]] in the answer = key SRC:n):');
    for (const [marker, s] of sources) {
      out.push(`${marker}${s.is_cited ? '' : ' (not cited)'}: ${s.path}  ${s.file_id}  score ${s.score.toFixed(4)}`);
      out.push(...evidenceLines(s.evidence, 2));
    }
  }
  return out.join('\n');
}

export const GET_DEFAULT_MAX_CHARS = 20_000;
const GET_MAX_CHARS = 200_000;

function registerGet(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'get',
    {
      title: 'Read a file of a trove collection',
      description:
        'Read a file\'s text, whole or a range, by its path (e.g. "/docs/intro.md") or file_id (fil_...): the text trove extracted and indexed ' +
        '(HTML without tags, Markdown without link URLs, the text of PDF pages and Office documents), which evidence offsets count in. Use it after `search` or `answer` to read around ' +
        'a hit: start_char/end_char take the char offsets of evidence locations directly (a page location carries them too); start_line/end_line take 1-based line numbers (inclusive). ' +
        'The result says which lines and chars it returned and the file\'s total length; output is capped at max_chars ' +
        `(default ${GET_DEFAULT_MAX_CHARS}), and when more is left the result says the exact arguments to read on. Needs a key with the read action.`,
      inputSchema: {
        namespace: Namespace,
        collection: Collection,
        file: z.string().min(1).describe('The file\'s path (starting with /) or its fil_ ID, as search results give them.'),
        start_line: z.number().int().min(1).optional().describe('First line to return, 1-based.'),
        end_line: z.number().int().min(1).optional().describe('Last line to return, inclusive.'),
        start_char: z.number().int().min(0).optional().describe('First character to return, 0-based (an evidence char_start).'),
        end_char: z.number().int().min(0).optional().describe('End of the range, exclusive (an evidence char_end).'),
        max_chars: z.number().int().min(1).max(GET_MAX_CHARS).optional().describe(`Cap on the text returned; default ${GET_DEFAULT_MAX_CHARS}.`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(ctx, async (args) => {
      const byLines = args.start_line !== undefined || args.end_line !== undefined;
      const byChars = args.start_char !== undefined || args.end_char !== undefined;
      if (byLines && byChars) throw ToolFailure.invalid('Give a range of lines (start_line/end_line) or of chars (start_char/end_char), not both.');
      if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) throw ToolFailure.invalid('end_line is before start_line.');
      if (args.start_char !== undefined && args.end_char !== undefined && args.end_char < args.start_char) throw ToolFailure.invalid('end_char is before start_char.');
      if (!args.file.startsWith('/') && !args.file.startsWith('fil_')) throw ToolFailure.invalid(`'${args.file}' is neither a path (starting with /) nor a fil_ ID.`);

      const base = `${collectionPath(args.namespace, args.collection)}/files/${enc(args.file)}`;
      const file = await api<FileResource>(ctx, 'GET', base);
      if (file.status === 'failed') {
        throw ToolFailure.invalid(`${file.path} has no text to read: indexing it failed${file.error ? ` (${file.error.code}: ${file.error.message})` : ''}.`, { status: file.status });
      }
      const collection = await api<CollectionResource>(ctx, 'GET', collectionPath(args.namespace, args.collection));
      // The content route gives a short-lived signed URL (retrieval-api.md, File content response);
      // it is fetched through the same caller, relative to the API's base, so a TROVE_URL behind a
      // proxy or a daemon on another interface works as every other call does.
      const content = await api<z.infer<typeof S.FileContentResponse>>(ctx, 'GET', `${base}/content`);
      const signed = new URL(content.url);
      const download: ApiResult = await ctx.call('GET', signed.pathname + signed.search, undefined, { raw: true });
      if (download.status !== 200) throw failureOf(download);
      const bytes = download.body as Buffer;
      const text = await extractedText(bytes, file.source.content_type, collection.processing.ocr ?? true);
      const requested = args.max_chars ?? GET_DEFAULT_MAX_CHARS;
      const reply = (max: number, byBudget: boolean) => ok(...renderRange(file, text, { ...args, max_chars: max, ...(byBudget ? { budgetTokens: ctx.replyBudgetTokens } : {}) }));
      const whole = reply(requested, false);
      if (fits(whole, ctx.replyBudgetTokens)) return whole;
      return reply(Math.max(1, largestFitting(requested - 1, (max) => fits(reply(max, true), ctx.replyBudgetTokens))), true);
    }),
  );
}

interface RangeArgs {
  start_line?: number | undefined;
  end_line?: number | undefined;
  start_char?: number | undefined;
  end_char?: number | undefined;
  max_chars?: number | undefined;
  /** Set when max_chars was lowered to fit the reply budget of this many tokens: the cut says so. */
  budgetTokens?: number | undefined;
}

/** Offsets at which each line starts (line n, 1-based, starts at starts[n-1]). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

export function renderRange(file: { id: string; path: string; source: { content_type: string } }, text: string, args: RangeArgs): [string, Record<string, unknown>] {
  const max = args.max_chars ?? GET_DEFAULT_MAX_CHARS;
  const starts = lineStarts(text);
  const totalLines = text.length === 0 ? 0 : starts.length;
  const byLines = args.start_line !== undefined || args.end_line !== undefined;
  let from: number;
  let to: number;
  if (byLines) {
    const first = args.start_line ?? 1;
    if (first > Math.max(totalLines, 1)) throw ToolFailure.invalid(`start_line ${first} is past the end: ${file.path} has ${totalLines} line(s).`, { total_lines: totalLines });
    const last = Math.min(args.end_line ?? totalLines, totalLines);
    from = starts[first - 1] ?? 0;
    to = last >= totalLines ? text.length : starts[last]!;
  } else {
    from = Math.min(args.start_char ?? 0, text.length);
    to = Math.min(args.end_char ?? text.length, text.length);
    if (args.start_char !== undefined && args.start_char > text.length) throw ToolFailure.invalid(`start_char ${args.start_char} is past the end: ${file.path} has ${text.length} chars.`, { total_chars: text.length });
  }
  const rangeEnd = to;
  let truncated = false;
  if (to - from > max) {
    truncated = true;
    let cut = from + max;
    // A line range is cut at a line end, when one is in reach, so that the next call starts on a whole line.
    if (byLines) {
      const nl = text.lastIndexOf('\n', cut - 1);
      if (nl >= from) cut = nl + 1;
    }
    to = cut;
  }
  const slice = text.slice(from, to);
  const firstLine = totalLines === 0 ? 0 : lineAt(starts, from);
  const lastLine = totalLines === 0 ? 0 : lineAt(starts, Math.max(from, to - 1));
  const whole = from === 0 && to === text.length;
  const range = { start_line: firstLine, end_line: lastLine, start_char: from, end_char: to };
  const next = truncated ? (byLines ? { start_line: lastLine + 1, ...(args.end_line !== undefined ? { end_line: args.end_line } : {}) } : { start_char: to, ...(args.end_char !== undefined ? { end_char: args.end_char } : {}) }) : null;
  const head = whole
    ? `${file.path} (${file.id}, ${file.source.content_type}): the whole file, ${totalLines} line(s), ${text.length} chars.`
    : `${file.path} (${file.id}, ${file.source.content_type}): lines ${firstLine}-${lastLine} (chars ${from}-${to}) of ${totalLines} line(s), ${text.length} chars.`;
  const lines = [head, '', slice];
  if (truncated && args.budgetTokens !== undefined) lines.push('', `[Cut to fit the reply budget of ${args.budgetTokens} tokens. To read on, call get with the same file and ${JSON.stringify(next)}.]`);
  else if (truncated) lines.push('', `[Cut at max_chars=${max}. To read on, call get with the same file and ${JSON.stringify(next)}${max < GET_MAX_CHARS ? `, or a larger max_chars (up to ${GET_MAX_CHARS})` : ''}.]`);
  const structured = {
    file_id: file.id,
    path: file.path,
    content_type: file.source.content_type,
    text: slice,
    range,
    total_chars: text.length,
    total_lines: totalLines,
    truncated,
    next,
    ...(truncated && args.budgetTokens !== undefined ? { cut: cutNote(args.budgetTokens, to - from, rangeEnd - to) } : {}),
  };
  return [lines.join('\n'), structured];
}

type NamespaceResource = z.infer<typeof S.NamespaceSchema>;
type CollectionResource = z.infer<typeof S.CollectionSchema>;
type FileResource = z.infer<typeof S.FileSchema>;

function registerListCollections(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_collections',
    {
      title: 'List the namespaces and collections this key can see',
      description:
        'List the namespaces and collections this key can reach, with each collection\'s status, file counts, access_control (when "enforced", search and ' +
        'answer need principals) and which search modes it has. Use it first when you do not know which namespace/collection to search. ' +
        'Listing collections needs the read action; without it, the collections named in the key\'s own scope are shown.',
      inputSchema: { namespace: Namespace.optional().describe('Only this namespace (name or ns_ ID).') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(ctx, async ({ namespace }) => {
      const namespaces = namespace ? [await api<NamespaceResource>(ctx, 'GET', namespacePath(namespace))] : (await listAll<NamespaceResource>(ctx, '/namespaces')).items;
      const out: string[] = [];
      const structured: { namespaces: { name: string; id: string; collections: unknown[]; note?: string }[] } = { namespaces: [] };
      for (const ns of namespaces) {
        const entry: { name: string; id: string; collections: unknown[]; note?: string } = { name: ns.name, id: ns.id, collections: [] };
        structured.namespaces.push(entry);
        out.push(`${ns.name} (${ns.id})`);
        if (keyCan(ctx.key, 'read')) {
          const { items, complete } = await listAll<CollectionResource>(ctx, `${namespacePath(ns.id)}/collections`);
          for (const c of items) {
            const modes = (['keyword', 'semantic'] as const).filter((m) => c.processing[m] !== false);
            const n = c.file_counts;
            entry.collections.push({ name: c.name, id: c.id, status: c.status, access_control: c.access_control, search_modes: modes, file_counts: n });
            out.push(
              `  ${c.name} (${c.id})  ${c.status}  files: ${n.ready} ready, ${n.pending + n.indexing} indexing, ${n.failed} failed  modes: ${modes.join(', ')}${c.access_control === 'enforced' ? '  access rules enforced: pass principals' : ''}`,
            );
          }
          if (items.length === 0) out.push('  (no collections)');
          if (!complete) out.push('  (more collections than shown)');
        } else {
          // Without read the collection list is 403; a collection key still knows its own collections.
          const named = ctx.key.scope.kind === 'collection' ? ctx.key.scope.collections : [];
          entry.collections = named.map((name) => ({ name }));
          entry.note = 'This key lacks the read action: details are not available.';
          out.push(named.length > 0 ? `  ${named.join(', ')}  (this key lacks read: no details)` : '  (this key lacks read and cannot list collections; ask which collection to use)');
        }
      }
      if (namespaces.length === 0) out.push('This key can see no namespace.');
      return ok(out.join('\n'), structured);
    }),
  );
}

function registerStatus(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'status',
    {
      title: 'Service and collection status',
      description:
        'Check that trove is up and what this key may do: the API version, search modes, embedding and generation models, the key\'s scope and actions, ' +
        'and which tools they allow. With namespace and collection, also that collection\'s status (empty, indexing, ready, degraded, failed), file counts ' +
        'by status and settings. Use it when a search returns nothing unexpectedly or fails with collection_not_ready.',
      inputSchema: {
        namespace: Namespace.optional(),
        collection: Collection.optional().describe('With namespace: report this collection (needs the read action).'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(ctx, async ({ namespace, collection }) => {
      if ((namespace === undefined) !== (collection === undefined)) throw ToolFailure.invalid('Give both namespace and collection, or neither.');
      const health = await ctx.call('GET', '/health');
      const info = await api<Info>(ctx, 'GET', '/info');
      const key = info.key ?? ctx.key;
      const actions = key.scope.kind === 'cluster' ? ['read', 'write', 'search', 'query'] : key.scope.actions;
      const tools = toolsFor(key).map((tool) => (tool === 'list_collections' && keyCan(key, 'read') ? 'list_collections (with details)' : tool));
      const scope = key.scope.kind === 'cluster' ? 'cluster (everything)' : key.scope.kind === 'namespace' ? `namespace ${key.scope.namespace}` : `collections ${key.scope.collections.join(', ')} of namespace ${key.scope.namespace}`;
      const out = [
        `trove is ${health.status === 200 ? 'up' : `answering health with HTTP ${health.status}`}; API version ${info.api_version}; search modes ${info.search_modes.join(', ')}.`,
        `Embedding model: ${info.embedding?.model ?? 'none'}; generation: ${info.generation ? `${info.generation.provider}/${info.generation.model}` : 'none'}.`,
        `Key ${key.name} (${key.prefix}): ${scope}; actions ${actions.join(', ')}. Tools it can use: ${tools.join(', ')}.`,
      ];
      const structured: Record<string, unknown> = { healthy: health.status === 200, info };
      if (namespace !== undefined && collection !== undefined) {
        const c = await api<CollectionResource>(ctx, 'GET', collectionPath(namespace, collection));
        const n = c.file_counts;
        out.push(
          `Collection ${c.namespace}/${c.name} (${c.id}): ${c.status}; files ${n.ready} ready, ${n.pending} pending, ${n.indexing} indexing, ${n.failed} failed; ` +
            `access_control ${c.access_control}; processing ${JSON.stringify(c.processing)}.`,
        );
        structured.collection = c;
      }
      return ok(out.join('\n'), structured);
    }),
  );
}

/** How long add_file waits for indexing before it answers with the job to follow. */
const ADD_WAIT_MS = 60_000;
const TERMINAL_JOB = new Set(['succeeded', 'failed', 'canceled']);

function registerAddFile(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'add_file',
    {
      title: 'Add a file to a trove collection',
      description:
        'Add a file to a collection, or replace the file at that path, from inline text or from a URI (file://, http://, https://; the daemon fetches it, ' +
        'and file:// only under folders its operator allowed). By default it waits until the file is indexed (up to 60 s) and says whether it became ' +
        'ready or failed and why; with wait false it returns at once with the job to check later (status tool, or search once the file is ready). ' +
        'Only offered to keys with the write action.',
      inputSchema: {
        namespace: Namespace,
        collection: Collection,
        path: z.string().min(1).describe('The file\'s path in the collection, starting with / (e.g. "/notes/meeting.md"). An existing file there is replaced.'),
        text: z.string().optional().describe('The file\'s content as text. Give text or uri, not both.'),
        uri: z.string().optional().describe('Where the daemon fetches the bytes: file://, http:// or https://.'),
        content_type: z.string().optional().describe('MIME type, e.g. text/markdown; default text/plain for text, detected for a URI.'),
        metadata: z.record(z.string(), z.unknown()).optional().describe('JSON metadata, filterable in search as metadata.<key>.'),
        wait: z.boolean().optional().describe('Wait for indexing to finish (default true).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(ctx, async (args) => {
      if ((args.text === undefined) === (args.uri === undefined)) throw ToolFailure.invalid('Give exactly one of text (inline content) and uri.');
      const source = args.text !== undefined ? defined({ type: 'inline', text: args.text, content_type: args.content_type }) : defined({ type: 'uri', uri: args.uri, content_type: args.content_type });
      const base = collectionPath(args.namespace, args.collection);
      const added = await api<{ file: FileResource; job: z.infer<typeof S.JobSchema> }>(ctx, 'POST', `${base}/files`, defined({ path: args.path, source, metadata: args.metadata }));
      let job = added.job;
      if (args.wait !== false) {
        const deadline = Date.now() + ADD_WAIT_MS;
        let delay = 50;
        while (!TERMINAL_JOB.has(job.status) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(delay * 2, 1000);
          job = await api(ctx, 'GET', `/jobs/${enc(job.id)}`);
        }
      }
      const file = args.wait === false ? added.file : await api<FileResource>(ctx, 'GET', `${base}/files/${enc(added.file.id)}`);
      const lines = [`${file.path} (${file.id}) added to ${args.namespace}/${args.collection}: file ${file.status}, job ${job.id} ${job.status}.`];
      const { error } = file;
      if (error) lines.push(`Indexing failed: ${error.code}: ${error.message}`);
      else if (file.status === 'ready') lines.push('It is searchable now.');
      else lines.push('Indexing is still running: check with status, or search in a moment.');
      return ok(lines.join('\n'), { file, job });
    }),
  );
}
