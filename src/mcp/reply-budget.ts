// What one tool reply may cost an agent. A reply carries its result twice, as text and as
// structuredContent (the MCP specification recommends both), and common MCP clients refuse or cut
// a tool output past 25,000 tokens; a token is counted as 4 UTF-8 bytes, over both forms together.
// A tool whose reply would pass the budget cuts it where it can continue (search results, a file's
// text), says so in both forms, and gives the cursor or arguments that return the rest.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { issuesSentence } from '../contract/issues.js';
import { DEFAULT_REPLY_BUDGET_TOKENS, ReplyBudgetTokens } from '../domain/mcp-settings.js';
import { ToolFailure } from './errors.js';

export const BYTES_PER_TOKEN = 4;

/** A budget as a flag or variable gives it (`field` names which, for the message); the default when unset. */
export function replyBudgetTokensOf(raw: string | undefined, field: string): number {
  if (raw === undefined) return DEFAULT_REPLY_BUDGET_TOKENS;
  const parsed = ReplyBudgetTokens.safeParse(raw);
  if (!parsed.success) throw new Error(issuesSentence(parsed.error.issues, { schema: ReplyBudgetTokens, input: raw, field }));
  return parsed.data;
}

/** The reply's size as the budget counts it: its text content and its structured content's JSON. */
export function replyBytes(reply: CallToolResult): number {
  let bytes = 0;
  for (const item of reply.content) if (item.type === 'text') bytes += Buffer.byteLength(item.text, 'utf8');
  if (reply.structuredContent !== undefined) bytes += Buffer.byteLength(JSON.stringify(reply.structuredContent), 'utf8');
  return bytes;
}

export function fits(reply: CallToolResult, budgetTokens: number): boolean {
  return replyBytes(reply) <= budgetTokens * BYTES_PER_TOKEN;
}

/** The largest n in [0, max] for which `ok(n)` holds, `ok` holding for every n below a bound (binary search). */
export function largestFitting(max: number, ok: (n: number) => boolean): number {
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** What a reply cut to its budget says about it, in its structured form. */
export function cutNote(budgetTokens: number, shown: number, omitted: number): { reason: 'reply_budget'; budget_tokens: number; shown: number; omitted: number } {
  return { reason: 'reply_budget', budget_tokens: budgetTokens, shown, omitted };
}

// A continuation cursor: opaque to the agent ("pass it back"), readable only here. It names the
// API page the cut reply came from (the API's own cursor, or none for the first page), how many of
// that page's results were shown, and the page's index generation, so that a continuation that
// would serve another ranking is refused rather than silently different.
const PREFIX = 'mcp1.';

export interface SearchContinuation {
  /** The API cursor of the page that was cut; null for the first page. */
  page: string | null;
  /** Results of that page already returned. */
  skip: number;
  generation: string | null;
}

export function continuationCursor(c: SearchContinuation): string {
  return PREFIX + Buffer.from(JSON.stringify([c.page, c.skip, c.generation]), 'utf8').toString('base64url');
}

/** A cursor this module made, read back; null for any other cursor (the API's own, passed through). */
export function readContinuation(cursor: string): SearchContinuation | null {
  if (!cursor.startsWith(PREFIX)) return null;
  try {
    const [page, skip, generation] = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8')) as unknown[];
    if ((page === null || typeof page === 'string') && Number.isInteger(skip) && (skip as number) >= 0 && (generation === null || typeof generation === 'string')) {
      return { page: page as string | null, skip: skip as number, generation: generation as string | null };
    }
  } catch {
    // not one of ours after all
  }
  throw new ToolFailure({ code: 'invalid_cursor', message: 'This cursor is damaged: pass next_cursor back exactly as a reply gave it, or search again without one.', request_id: null, retryable: false, details: {} });
}

/**
 * The last guard, for a reply no tool cut (a status or add_file reply carrying a very large
 * metadata object, say): the text form cut to half the budget and the structured form replaced by
 * a note, so the agent still learns what happened and how to see it all (the HTTP API).
 */
export function clipToBudget(reply: CallToolResult, budgetTokens: number): CallToolResult {
  if (fits(reply, budgetTokens)) return reply;
  const text = reply.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
  const note = `\n[Cut: this reply was larger than the reply budget of ${budgetTokens} tokens; the structured form is left out. The HTTP API returns it whole.]`;
  const room = Math.max(0, Math.floor((budgetTokens * BYTES_PER_TOKEN) / 2) - Buffer.byteLength(note, 'utf8'));
  const head = Buffer.from(text, 'utf8').subarray(0, room).toString('utf8').replace(/\uFFFD$/, '');
  return { ...(reply.isError ? { isError: true } : {}), content: [{ type: 'text', text: head + note }], structuredContent: { cut: { reason: 'reply_budget', budget_tokens: budgetTokens, structured_content_omitted: true } } };
}
