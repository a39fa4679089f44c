// `trove --help` and every subcommand's help are complete: each command and option is described,
// every argument is named in the usage, and help renders without a daemon.
import t from 'tap';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { runCli, runCliInProcess } from './helpers/cli.js';

function walk(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [{ path, command }, ...command.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

const program = buildProgram();
const all = walk(program);

t.test('every command and option has a description', async (t) => {
  t.ok(all.length > 60, `the tree has ${all.length} commands`);
  for (const { path, command } of all) {
    const name = ['trove', ...path].join(' ');
    t.ok(command.description().trim().length > 10, `${name}: described`);
    for (const option of command.options) t.ok(option.description.trim().length > 5, `${name} ${option.flags}: described`);
    const help = command.helpInformation();
    t.match(help, /^Usage: /, `${name}: help renders`);
    for (const arg of command.registeredArguments) t.match(help, arg.name(), `${name}: usage names <${arg.name()}>`);
  }
});

t.test('groups list their subcommands, and --help exits 0 for a sample of commands', async (t) => {
  const groups = all.filter(({ command }) => command.commands.length > 0 && command !== program);
  for (const { path, command } of groups) {
    const help = command.helpInformation();
    for (const sub of command.commands) t.match(help, sub.name(), `trove ${path.join(' ')} lists ${sub.name()}`);
  }
  // The first through the real entry (exit code, stdout and stderr as a process of its own gives
  // them), the others in-process (runCliInProcess).
  for (const [i, args] of [['--help'], ['daemon', 'start', '--help'], ['files', 'add', '--help'], ['tui', '--help'], ['research', 'watch', '--help']].entries()) {
    const run = await (i === 0 ? runCli : runCliInProcess)(args);
    t.equal(run.code, 0, `trove ${args.join(' ')} exits 0`);
    t.match(run.stdout, /Usage: trove/);
    if (i === 0) t.equal(run.stderr, '');
  }
});

t.test('usage errors exit 2 in every group', async (t) => {
  for (const args of [['search'], ['keys', 'create'], ['rules', 'set', 'c'], ['ingest', '.', '--bogus'], ['collections', 'get'], ['daemon', 'logs', '--bogus']]) {
    const run = await runCliInProcess(args);
    t.equal(run.code, 2, `trove ${args.join(' ')} exits 2`);
    t.match(run.stderr, /error/i);
  }
});
