// `trove mcp`: an MCP server on stdio for agents, over the daemon's HTTP API with the key every
// other command uses (--url/TROVE_URL, --key/TROVE_KEY, else the local daemon and its cluster key
// file: connection.ts). stdout carries the protocol and nothing else; messages go to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { httpCaller } from '../../mcp/caller.js';
import { createMcpServer } from '../../mcp/server.js';
import type { KeyInfo } from '../../mcp/tools.js';
import { packageVersion } from '../../contract/version.js';
import { ApiClient, CliError, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { cliEnv, cliStdin, errOut, out } from '../io.js';
import { replyBudgetTokensOf } from '../../mcp/reply-budget.js';

export async function runMcp(globalOpts: GlobalOptions, opts: { replyBudget?: string | undefined } = {}): Promise<number> {
  // A stray console.log anywhere in the process would corrupt the JSON-RPC stream on stdout (so
  // `trove mcp` runs in a process of its own, never in-process).
  console.log = console.info = console.debug = console.error;
  let key: KeyInfo;
  let url: string;
  try {
    const replyBudgetTokens = replyBudgetOf(opts.replyBudget, cliEnv());
    const connection = await resolveConnection(globalOpts);
    url = connection.url;
    // Checked once at start, with the CLI's own client so that a daemon that is down or a refused
    // key is reported (and exits) exactly as for every other command. GET /info names the key,
    // whose actions decide the tools offered (decisions.md §3).
    const info = await new ApiClient(url, connection.key).request<{ key?: KeyInfo }>('GET', '/info');
    if (!info.key) throw new CliError(`The daemon at ${url} does not name the calling key in GET /info: it is older than this CLI; update trove.`);
    key = info.key;
    const server = createMcpServer({ call: httpCaller(url, connection.key), key, version: packageVersion(), replyBudgetTokens });
    const transport = new StdioServerTransport(cliStdin(), out());
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await server.connect(transport);
    errOut().write(`trove mcp: serving ${url} over stdio as key ${key.name} (${key.prefix})\n`);
    // The host ends the session by closing stdin.
    cliStdin().once('end', () => void server.close());
    await closed;
    return 0;
  } catch (err) {
    return reportError(err, false);
  }
}

/** --reply-budget, else TROVE_MCP_REPLY_BUDGET_TOKENS (the daemon's variable for /mcp), else the default. */
function replyBudgetOf(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): number {
  const fromEnv = env.TROVE_MCP_REPLY_BUDGET_TOKENS === '' ? undefined : env.TROVE_MCP_REPLY_BUDGET_TOKENS;
  try {
    return replyBudgetTokensOf(flag ?? fromEnv, flag !== undefined ? '--reply-budget' : 'TROVE_MCP_REPLY_BUDGET_TOKENS');
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
}
