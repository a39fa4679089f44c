// `trove tui`: the Ink terminal UI.
import type { Command, CommanderError } from 'commander';
import type { GlobalOptions } from '../connection.js';

export function registerTuiCommand(program: Command): void {
  program
    .command('tui')
    .description('Browse collections live, search them and watch research runs in a terminal UI')
    .option('--force-tty', 'draw even when stdout or stdin is not a terminal (for tests)')
    .option('--no-operator', 'take live events from GET /events even when the local operator socket is reachable')
    .option('--json', 'report start-up errors as JSON on stderr')
    // Usage errors exit 2, as everywhere in the CLI.
    .exitOverride((err: CommanderError) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: { forceTty?: boolean; operator?: boolean; json?: boolean }) => {
      process.exitCode = await (await import('../commands/tui.js')).runTui(program.opts() as GlobalOptions, opts);
    });
}
