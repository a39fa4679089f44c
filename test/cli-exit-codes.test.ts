// Exit codes as docs/tour.md lists them, in every command: each command that talks to a daemon,
// pointed at a URL (and a data dir) where nothing listens, exits 9. The command list is the
// commander tree itself, so a new command is covered (or must be listed as local) by construction.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { CLI_EXIT_CODES } from '../src/contract/errors.js';
import { freePort, runCli, runCliInProcess } from './helpers/cli.js';


/** Commands that never talk to a daemon, and why. */
const LOCAL = new Map<string, string>([
  ['daemon start', 'starts one'],
  ['completion', 'prints a script'],
  ['mcp', 'serves MCP over stdio; it reaches the daemon per call'],
]);

/** Arguments the placeholder 'x' would fail to validate before any request is sent. */
const ARGS: Record<string, (dir: string) => string[]> = {
  ingest: (dir) => [dir, '-n', 'x', '-c', 'x'],
  init: (dir) => ['--namespace', 'x', '--collection', 'x', '--folder', dir, '--no-watch', '--yes'],
  'files add': (dir) => ['x', path.join(dir, 'a.md')],
  'rules batch': (dir) => ['x', path.join(dir, 'rules.json')],
  'rules set': () => ['x', '/team/', '--reader', 'ana'],
  'rules explain': () => ['x', '/a.md'],
  'webhooks create': () => ['hook', 'https://example.com/hook'],
  'webhooks update': () => ['x', '--name', 'y'],
  'webhooks replay': () => ['x', '--event', 'evt_x'],
  'collections update': () => ['x', '--display-name', 'y'],
  'keys create': () => ['x', '--cluster'],
  'research start': () => ['x', 'a question'],
  // `[collection] <query>`: both arguments are optional to commander (one argument is the query).
  search: () => ['x/y', 'a query'],
  answer: () => ['x/y', 'a question'],
  'config get': () => [],
  tui: () => ['--force-tty'],
};

function leaves(command: Command, prefix: string[] = []): { name: string; command: Command }[] {
  if (command.commands.length === 0) return [{ name: prefix.join(' '), command }];
  return command.commands.flatMap((sub) => leaves(sub, [...prefix, sub.name()]));
}

/** Placeholder arguments: 'x' for each required argument and option, and --yes where it is offered. */
function argsFor(name: string, command: Command, dir: string): string[] {
  const special = ARGS[name];
  const args = special ? special(dir) : command.registeredArguments.filter((a) => a.required).map(() => 'x');
  // `[collection] <id>`-style commands take the collection from -c or the saved default: name one,
  // so the command gets as far as the daemon.
  if (!special && command.options.some((o) => o.long === '--collection')) args.push('--collection', 'x');
  if (!special && command.registeredArguments.every((a) => !a.required) && command.registeredArguments.length > 1) args.push('x');
  if (!special) for (const option of command.options) if (option.mandatory) args.push(option.long!, 'x');
  if (!special && command.options.some((o) => o.long === '--yes')) args.push('--yes');
  return args;
}

t.test('every command that talks to the daemon exits 9 when none answers', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-exit9-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'a.md'), 'a file\n');
  await writeFile(path.join(dir, 'rules.json'), JSON.stringify([{ op: 'delete', folder: '/old/' }]));
  const down = `http://127.0.0.1:${await freePort()}`;
  const globals = ['--url', down, '--key', 'trove_some_key', '--data-dir', path.join(dir, 'no-daemon-here')];

  const commands = leaves(buildProgram()).filter(({ name }) => ![...LOCAL.keys()].some((local) => name === local || name.startsWith(`${local} `)));
  t.ok(commands.length > 40, `the tree has the commands (${commands.length})`);
  for (const { name, command } of commands) {
    const argv = [...globals, ...name.split(' '), ...argsFor(name, command, dir)];
    const { code, stderr } = await runCliInProcess(argv);
    t.equal(code, CLI_EXIT_CODES.daemon_not_running, `trove ${argv.slice(globals.length).join(' ')} → 9 (${stderr.trim().split('\n').pop()})`);
  }
});

t.test('the built CLI: no daemon is exit 9, a held data dir is exit 6', async (t) => {
  const down = `http://127.0.0.1:${await freePort()}`;
  const [search, ns] = await Promise.all([runCli(['--url', down, '--key', 'k', 'search', 'x', 'q']), runCli(['--url', down, '--key', 'k', 'ns', 'list', '--json'])]);
  t.equal(search.code, 9, search.stderr);
  t.match(search.stderr, `No daemon at ${down}: start one with \`trove daemon start\``);
  t.equal(ns.code, 9, ns.stderr);
  t.match(JSON.parse(ns.stderr), { error: { code: 'daemon_unreachable' } });
});

t.test('a data dir that cannot be made is the message alone, exit 1, no stack', async (t) => {
  // Found by a packed-install test: TMPDIR missing (and an unwritable data dir, which root cannot
  // meet here) printed the fs error with its stack.
  const r = await runCli(['daemon', 'start', '--ephemeral', '--port', '0'], { env: { TMPDIR: '/nonexistent-trove-tmp' } });
  t.equal(r.code, 1);
  t.match(r.stderr, /Cannot create an ephemeral data dir in \/nonexistent-trove-tmp/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('--ephemeral with --data-dir is refused, not half obeyed', async (t) => {
  const r = await runCli(['daemon', 'start', '--ephemeral', '--data-dir', '/tmp/trove-not-used', '--port', '0']);
  t.equal(r.code, 2);
  t.match(r.stderr, /--ephemeral and --data-dir do not go together/);
});
