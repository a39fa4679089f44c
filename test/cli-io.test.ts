// The CLI's I/O seam (src/cli/io.ts): a command reaches stdout, stderr, stdin, the environment, the
// working directory and its exit status only through the invocation it runs in, so the tests can run
// it in-process (runCliInProcess) and get what a process of its own gives (runCli).
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CLI_EXIT_CODES, ERROR_TABLE } from '../src/contract/errors.js';
import { Readable } from 'node:stream';
import { main } from '../src/cli/main.js';
import { cleanEnv, freePort, ROOT, runCli, runCliInProcess, TextSink, type CliRun } from './helpers/cli.js';

/** Where a command would reach past its invocation, in code (comments aside). */
const PROCESS_IO = /\bprocess\.(stdout|stderr|stdin|env|exitCode|cwd\(|exit\()|\bconsole\./;

/**
 * The files that may, and why: the entry hands the process's own I/O over; the seam falls back to
 * it outside an invocation; and what cannot run in another process's place stays there.
 */
const ALLOWED: Record<string, { pattern: RegExp; why: string }> = {
  'run.ts': { pattern: PROCESS_IO, why: "the process entry: main gets the process's own I/O and sets its exit code" },
  'io.ts': { pattern: /\bprocess\.(stdout|stderr|stdin|env|cwd\()/, why: "the seam itself: the process's own I/O" },
  'commands/tui.ts': { pattern: PROCESS_IO, why: "Ink draws on the process's terminal and reads its keys" },
  'commands/mcp.ts': { pattern: /\bconsole\./, why: 'silences console.log process-wide, to keep the JSON-RPC stream on stdout clean' },
  'commands/daemon-start.ts': { pattern: /\bprocess\.exit\(/, why: 'a foreground daemon exits on its signals' },
  'commands/ingest-watch.ts': { pattern: /\bprocess\.exit\(/, why: 'a second Ctrl-C ends the watch at once' },
};

const CLI = path.join(ROOT, 'src', 'cli');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sources(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []));

const code = (line: string): string => line.replace(/\/\*.*?\*\//g, '').replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');

t.test('no command reaches the process I/O past its invocation', async (t) => {
  const files = sources(CLI);
  t.ok(files.length > 40, `${files.length} files read`);
  const found: string[] = [];
  for (const file of files) {
    const name = path.relative(CLI, file);
    const allowed = ALLOWED[name]?.pattern;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const m = PROCESS_IO.exec(code(line));
        if (m && !(allowed && allowed.test(m[0]))) found.push(`src/cli/${name}:${i + 1}: ${line.trim()}`);
      });
  }
  t.same(found, [], 'use out(), errOut(), cliStdin(), cliEnv(), cliCwd() and setExitCode() of src/cli/io.ts');
});

t.test('in-process runs give what a process of its own gives', async (t) => {
  const deadUrl = `http://127.0.0.1:${await freePort()}`;
  const cases = [
    ['--version'],
    ['--help'],
    ['ns'],
    ['files', 'add', '--help'],
    ['status', '--bogus'],
    ['ingest', '.', '--bogus'],
    ['frobnicate'],
    ['completion', 'tcsh'],
    ['--url', deadUrl, '--key', 'k', 'ns', 'list'],
    ['--url', deadUrl, '--key', 'k', 'ns', 'list', '--json'],
  ];
  const runs = await Promise.all(cases.map(async (args) => ({ args, real: await runCli(args), inProcess: await runCliInProcess(args) })));
  for (const { args, real, inProcess } of runs) t.same(inProcess, real, `trove ${args.join(' ')}`);
  const byArgs = (args: string[]): CliRun => runs.find((r) => r.args.join(' ') === args.join(' '))!.inProcess;
  t.equal(byArgs(['status', '--bogus']).code, 2, 'a usage error exits 2');
  t.equal(byArgs(['--help']).code, 0);
  t.equal(byArgs(['--url', deadUrl, '--key', 'k', 'ns', 'list']).code, CLI_EXIT_CODES.daemon_not_running);
  t.equal(process.exitCode, undefined, "no run set this process's exit code");
});

t.test("the test runner's TROVE_* settings do not reach an in-process run", async (t) => {
  const dir = t.testdir({ saved: { 'cli.json': JSON.stringify({ namespace: 'leak', collection: 'leak' }) }, data: { trove: {} }, leakedData: { 'cluster-key': 'trove_leaked_key' } });
  const saved = { ...process.env };
  t.teardown(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });
  process.env.TROVE_CONFIG_HOME = path.join(dir, 'saved');
  process.env.TROVE_DATA_DIR = path.join(dir, 'leakedData');
  process.env.TROVE_URL = 'http://127.0.0.1:1';
  const env = { XDG_CONFIG_HOME: path.join(dir, 'empty-config'), XDG_DATA_HOME: path.join(dir, 'data') };

  const search = await runCliInProcess(['search', 'a query'], { env });
  t.equal(search.code, 2, search.stderr);
  t.match(search.stderr, /No collection given and no default saved/, "the runner's TROVE_CONFIG_HOME is not read");

  const keys = await runCliInProcess(['keys', 'list'], { env });
  t.equal(keys.code, ERROR_TABLE.unauthenticated.exitCode, keys.stderr);
  t.match(keys.stderr, `there is no cluster key file at ${path.join(dir, 'data', 'trove', 'cluster-key')}`, "the runner's TROVE_DATA_DIR does not pick the default data dir");
});

t.test("one run's environment, exit status and working directory do not reach another", async (t) => {
  const dir = t.testdir({ saved: { 'cli.json': JSON.stringify({ namespace: 'kept', collection: 'kept' }) }, work: { 'rules.yaml': 'operations: [' } });
  const url = `http://127.0.0.1:${await freePort()}`;
  const withSaved = { TROVE_CONFIG_HOME: path.join(dir, 'saved') };
  const withoutSaved = { TROVE_CONFIG_HOME: path.join(dir, 'none') };
  // At once: each run reads its own settings while the others run.
  const [a, b, c, d] = await Promise.all([
    runCliInProcess(['--url', url, '--key', 'k', 'search', 'a query'], { env: withSaved }),
    runCliInProcess(['--url', url, '--key', 'k', 'search', 'a query'], { env: withoutSaved }),
    runCliInProcess(['--url', url, '--key', 'k', 'rules', 'batch', 'c', 'rules.yaml'], { cwd: path.join(dir, 'work') }),
    runCliInProcess(['--url', url, '--key', 'k', 'rules', 'batch', 'c', '-'], { input: '[]' }),
  ]);
  t.equal(a.code, CLI_EXIT_CODES.daemon_not_running, 'the saved collection was used, so the daemon was asked');
  t.equal(b.code, 2, "the other run's saved collection is not this one's");
  t.match(b.stderr, /No collection given and no default saved/);
  t.equal(c.code, 2);
  t.match(c.stderr, /^error: rules\.yaml is neither JSON nor YAML/, 'a relative path is read from the run’s cwd');
  t.equal(d.code, 2);
  t.match(d.stderr, /^error: stdin must hold a non-empty list of operations/, 'stdin is the run’s input');
  const after = await runCliInProcess(['--version']);
  t.equal(after.code, 0, 'a failed run leaves no exit status behind');
});

t.test('a relative --data-dir is relative to the run’s cwd', async (t) => {
  const dir = t.testdir({});
  await mkdir(path.join(dir, 'here', 'data'), { recursive: true });
  await writeFile(path.join(dir, 'here', 'data', 'cluster-key'), '');
  const run = await runCliInProcess(['--data-dir', 'data', 'keys', 'list'], { cwd: path.join(dir, 'here') });
  t.equal(run.code, ERROR_TABLE.unauthenticated.exitCode);
  t.match(run.stderr, `The cluster key file ${path.join(dir, 'here', 'data', 'cluster-key')} is empty`);
});

t.test("help is wrapped to the invocation's terminal, and to 80 columns on a pipe", async (t) => {
  const helpOn = async (terminal: { isTTY: boolean; columns: number } | null) => {
    const stdout = Object.assign(new TextSink({ decodeStrings: false }), terminal ?? {});
    const code = await main([process.execPath, 'trove', 'files', 'add', '--help'], { stdout, stderr: new TextSink(), stdin: Readable.from([]), env: cleanEnv(), cwd: ROOT });
    t.equal(code, 0);
    return stdout.text.split('\n');
  };
  const longest = (lines: string[]) => Math.max(...lines.map((line) => line.length));
  const [narrow, wide, piped] = await Promise.all([helpOn({ isTTY: true, columns: 60 }), helpOn({ isTTY: true, columns: 200 }), helpOn(null)]);
  t.notSame(narrow, piped, '60 columns: wrapped otherwise than on a pipe');
  t.ok(longest(wide) > 80, `200 columns: the longest line has ${longest(wide)}`);
  t.equal(longest(piped), 80, 'a pipe: 80 columns');
});
