// `trove tui`: the Ink terminal UI.
import type { Command } from 'commander';
import type { GlobalOptions } from '../connection.js';
import { exitOnCommanderError, setExitCode } from '../io.js';

export function registerTuiCommand(program: Command): void {
  program
    .command('tui')
    .description('Browse collections live, search them and watch research runs in a terminal UI')
    .option('--force-tty', 'draw even when stdout or stdin is not a terminal (for tests)')
    .option('--no-operator', 'take live events from GET /events even when the local operator socket is reachable')
    .option('--json', 'report start-up errors as JSON on stderr')
    // Usage errors exit 2, as everywhere in the CLI.
    .exitOverride(exitOnCommanderError)
    .action(async (opts: { forceTty?: boolean; operator?: boolean; json?: boolean }) => {
      setExitCode(await (await import('../commands/tui.js')).runTui(program.opts() as GlobalOptions, opts));
    });
}
