// `trove init` and the folder workflows beyond a one-shot ingest (`trove ingest --watch`, wired in
// main.ts with the rest of `ingest`). Commander wiring only; the work is in src/cli/commands/.
import type { Command } from 'commander';
import type { InitOptions } from '../commands/init.js';
import type { GlobalOptions } from '../connection.js';
import { exitOnCommanderError, setExitCode } from '../io.js';

export function registerWorkflowCommands(program: Command): void {
  program
    .command('init')
    .description(
      'First run: choose a namespace, a collection and a folder (asked on a terminal, or given as flags), create what is missing, ' +
        'save them as the CLI defaults (~/.config/trove/cli.json, or $TROVE_CONFIG_HOME/cli.json) and ingest the folder',
    )
    // Usage errors exit 2, as every prompt-replacing flag error does.
    .exitOverride(exitOnCommanderError)
    .option('-n, --namespace <name>', 'namespace (default: "default")')
    .option('-c, --collection <name>', "collection (default: the folder's name)")
    .option('--folder <dir>', 'folder to ingest (default: the current directory)')
    .option('--semantic', 'enable semantic search on the collection (the default)')
    .option('--no-semantic', 'keyword search only')
    .option('--watch', 'keep running after the first ingest and sync changes as they happen')
    .option('--no-watch', 'stop after the first ingest (the default)')
    .option('--debounce <ms>', 'with --watch: wait this long after the last change before syncing')
    .option('--exclude <glob>', 'leave out what this .gitignore-style pattern matches, in this and every later `trove ingest` (repeatable; saved in the CLI config)', (v: string, prev: string[] = []) => [...prev, v])
    .option('-y, --yes', 'take the default of every value not given as a flag, without asking')
    .option('--json', 'print JSON lines: the set-up, then the ingest summary (or, with --watch, one line per sync)')
    .action(async (opts: InitOptions) => {
      setExitCode(await (await import('../commands/init.js')).runInit(program.opts<GlobalOptions>(), opts));
    });
}
