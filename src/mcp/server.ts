// One MCP server over the public API, for whichever transport carries it (stdio in `trove mcp`,
// Streamable HTTP at /mcp on the daemon). The key's own scope, read once from GET /info when the
// session starts, decides which tools are offered: `add_file` only to a key with `write`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DEFAULT_REPLY_BUDGET_TOKENS } from '../domain/mcp-settings.js';
import type { ApiCaller } from './caller.js';
import { registerTools, type KeyInfo } from './tools.js';

export const SERVER_NAME = 'trove';

const INSTRUCTIONS =
  'trove is a local retrieval service: files in collections, grouped in namespaces. ' +
  'Start with list_collections to see what this key can reach (or status for the service and a collection\'s state). ' +
  'Use search to find files and passages (results carry path, file_id, score and evidence with char/page locations), ' +
  'then get to read around a hit (start_char/end_char from the evidence, or line ranges). ' +
  'Use answer for a generated answer with [[SRC:n]] citations. Collections with access_control "enforced" need principals on search and answer. ' +
  'Errors come back as tool errors with the API\'s code (forbidden: the key lacks the action; not_found: outside the key\'s scope or absent).';

export function createMcpServer(options: { call: ApiCaller; key: KeyInfo; version: string; replyBudgetTokens?: number }): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: options.version }, { instructions: INSTRUCTIONS, capabilities: { tools: {} } });
  registerTools(server, { call: options.call, key: options.key, replyBudgetTokens: options.replyBudgetTokens ?? DEFAULT_REPLY_BUDGET_TOKENS });
  return server;
}
