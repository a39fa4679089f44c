// `trove daemon stop|status|logs`, `trove config …` and `trove roots …`: commands served by the
// operator channel of the data dir (--data-dir / TROVE_DATA_DIR / default), which needs no API key.
import type { Command } from 'commander';
import type { GlobalOptions } from '../connection.js';
import { exitOnCommanderError, setExitCode } from '../io.js';

/** Wrong flags or arguments are usage errors: exit 2, as every other usage error of the CLI. */
function usageErrorsExit2(command: Command): Command {
  return command.exitOverride(exitOnCommanderError);
}

export function registerOperatorCommands(program: Command, daemon: Command): void {
  const globals = () => program.opts<GlobalOptions>();

  usageErrorsExit2(daemon.command('status'))
    .description('Show the daemon serving the data dir: pid, uptime, URL, indexer, jobs, counts, file roots (exit 9 when none runs)')
    .option('--json', 'print the status as JSON')
    .action(async (opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/daemon-status.js')).runDaemonStatus(globals(), opts));
    });
  usageErrorsExit2(daemon.command('stop'))
    .description('Stop the daemon serving the data dir (as SIGTERM does) and wait until it has exited')
    .option('--timeout <seconds>', 'how long to wait for it to exit', '30')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean; timeout?: string }) => {
      setExitCode(await (await import('../commands/daemon-stop.js')).runDaemonStop(globals(), opts));
    });
  usageErrorsExit2(daemon.command('logs'))
    .description("Print the end of the daemon's log file (<data-dir>/logs/daemon.log)")
    .option('-n, --lines <n>', 'how many lines', '50')
    .option('-f, --follow', 'keep printing lines as they are written (Ctrl-C stops)')
    .option('--json', 'print JSON ({"file","lines"}; with --follow one {"line"} per line)')
    .action(async (opts: { lines?: string; follow?: boolean; json?: boolean }) => {
      setExitCode(await (await import('../commands/daemon-logs.js')).runDaemonLogs(globals(), opts));
    });

  const config = usageErrorsExit2(program.command('config')).description("The daemon's config.json (embedding and generation settings; applied at restart)");
  config
    .command('get')
    .description('Show every setting, or one, with what the daemon uses now')
    .argument('[key]', 'a key such as embedding.model')
    .option('--json', 'print JSON')
    .action(async (key: string | undefined, opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/config.js')).runConfigGet(key, globals(), opts));
    });
  config
    .command('set')
    .description('Set one setting (validated); restart the daemon to apply it')
    .argument('<key>', 'a key such as embedding.model (see `trove config get`)')
    .argument('<value>', 'its value')
    .option('--json', 'print JSON')
    .action(async (key: string, value: string, opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/config.js')).runConfigSet(key, value, globals(), opts));
    });
  config
    .command('unset')
    .description('Remove one setting, back to its default; restart the daemon to apply it')
    .argument('<key>', 'a key such as embedding.model')
    .option('--json', 'print JSON')
    .action(async (key: string, opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/config.js')).runConfigUnset(key, globals(), opts));
    });

  const roots = usageErrorsExit2(program.command('roots')).description('Directories file:// sources may read, changed while the daemon runs');
  roots
    .command('list')
    .description('List the allowed roots (start-up flags and granted ones)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/roots.js')).runRootsList(globals(), opts));
    });
  roots
    .command('add')
    .description('Allow file:// sources under a directory (kept across restarts)')
    .argument('<dir>', 'an existing directory')
    .option('--json', 'print JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/roots.js')).runRootsAdd(dir, globals(), opts));
    });
  roots
    .command('rm')
    .description('Refuse file:// sources under a granted directory again')
    .argument('<dir>', 'a granted directory')
    .option('--json', 'print JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      setExitCode(await (await import('../commands/roots.js')).runRootsRemove(dir, globals(), opts));
    });
}
