// `trove mcp`: commander wiring only; the work is in src/cli/commands/mcp.ts.
import type { Command } from 'commander';
import type { GlobalOptions } from '../connection.js';
import { setExitCode } from '../io.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Serve MCP (Model Context Protocol) on stdio for an agent: search, answer, get, list_collections, status, and add_file for keys with write')
    .option('--reply-budget <tokens>', 'most tokens (UTF-8 bytes / 4) one tool reply may take, text and structured forms together (env TROVE_MCP_REPLY_BUDGET_TOKENS; default 25000)')
    .action(async (opts: { replyBudget?: string }) => {
      // Loaded only here: the MCP SDK is not needed by any other command.
      const { runMcp } = await import('../commands/mcp.js');
      setExitCode(await runMcp(program.opts<GlobalOptions>(), opts));
    });
}
