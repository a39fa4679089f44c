// The settings of the daemon's MCP endpoint (`/mcp`, src/mcp/http.ts) and of `trove mcp`: which web
// origins and host names may reach it, and how large one tool reply may be. Here, below the
// transports, so that config.json's schema (config-file.ts) and the daemon's flags share one rule.
import { z } from 'zod';

export interface McpSettings {
  /** Origins a browser page may call `/mcp` from, besides the daemon's own (normal form: `https://app.example.com`). */
  allowedOrigins: string[];
  /** Host names (`name`, any port; or `name:port`) a request may address the daemon by, besides its bound addresses. */
  allowedHosts: string[];
  /** The most a tool reply may cost an agent, in tokens counted as UTF-8 bytes ÷ 4 over its text and structured forms together. */
  replyBudgetTokens: number;
}

/** 25,000 tokens: the cap common MCP clients put on a tool's output (Claude Code's MAX_MCP_OUTPUT_TOKENS default). */
export const DEFAULT_REPLY_BUDGET_TOKENS = 25_000;
/** Below this a reply could not hold one search result with its evidence. */
export const MIN_REPLY_BUDGET_TOKENS = 1_000;

export const DEFAULT_MCP_SETTINGS: McpSettings = { allowedOrigins: [], allowedHosts: [], replyBudgetTokens: DEFAULT_REPLY_BUDGET_TOKENS };

/** A Host header (or an allowed-host entry) as its lower-case name and the port it writes (null: none). Null when it does not parse. */
export function parseHostHeader(value: string): { name: string; port: string | null } | null {
  try {
    const url = new URL(`http://${value}`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || `${url.host}` === '') return null;
    // URL drops a port 80 it would default to: whether one was written is read from the text.
    const written = /:(\d+)$/.exec(value);
    return { name: url.hostname.toLowerCase(), port: written ? String(Number(written[1])) : null };
  } catch {
    return null;
  }
}

/** An Origin header's normal form (`scheme://host[:port]`, lower case, default port dropped); null for `null` or what does not parse. */
export function normalOrigin(value: string): string | null {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? null : origin.toLowerCase();
  } catch {
    return null;
  }
}

/** One allowed origin: scheme, host and optional port, nothing else. */
function allowedOrigin(value: string, ctx: z.RefinementCtx): string {
  const trimmed = value.trim();
  const origin = /^https?:\/\/[^/?#]+\/?$/i.test(trimmed) ? normalOrigin(trimmed) : null;
  if (origin === null) ctx.addIssue({ code: 'custom', message: `'${value}' is not an origin: write a scheme, host and optional port, such as https://app.example.com` });
  return origin ?? trimmed;
}

/** One allowed host: `name` (any port) or `name:port`. */
function allowedHost(value: string, ctx: z.RefinementCtx): string {
  const parsed = parseHostHeader(value.trim());
  if (parsed === null) {
    ctx.addIssue({ code: 'custom', message: `'${value}' is not a host: write a name or address with an optional port, such as trove.example.com or 10.0.0.5:7410` });
    return value;
  }
  return parsed.port === null ? parsed.name : `${parsed.name}:${parsed.port}`;
}

/** A list as JSON writes it, or as one comma-separated text (a variable, `trove config set`). */
const list = <T extends z.ZodType<string>>(item: T) =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
    z.array(item, { error: 'must be a list (a JSON array, or one text with commas between entries)' }),
  );

export const AllowedOrigins = list(z.string().transform(allowedOrigin));
export const AllowedHosts = list(z.string().transform(allowedHost));
export const ReplyBudgetTokens = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z
    .number({ error: `must be a whole number of tokens, at least ${MIN_REPLY_BUDGET_TOKENS}` })
    .int(`must be a whole number of tokens, at least ${MIN_REPLY_BUDGET_TOKENS}`)
    .min(MIN_REPLY_BUDGET_TOKENS, `must be a whole number of tokens, at least ${MIN_REPLY_BUDGET_TOKENS}`),
);
