// What `trove daemon start` prints when it cannot start (issue 17, item 9): a user's mistake
// (UserError: a bad flag, config file or TLS file, a port or data dir another daemon holds) is
// its message alone, with its exit code; anything else is its message, with the stack kept in the
// data dir's log (on stderr when there is no log to write).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { UserError } from '../daemon/user-error.js';
import { reportStartFailure } from '../src/cli/commands/daemon-start.js';
import { daemonLogPath } from '../src/cli/commands/daemon-logs.js';
import { captured } from './helpers/capture.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(path.join(tmpdir(), 'trove-start-errors-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

t.test('an unexpected error: its message, and its stack in the log', async (t) => {
  const dataDir = path.join(work, 'broken-db');
  // Private already, so the start warns of nothing before it fails.
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(path.join(dataDir, 'trove.db'), 'not a database, but long enough to be read as one '.repeat(200), { mode: 0o600 });
  const run = await runCli(['daemon', 'start', '--data-dir', dataDir, '--port', '0']);
  t.equal(run.code, 1);
  t.equal(run.stderr.trim().split('\n').length, 1, `one line: ${run.stderr}`);
  t.match(run.stderr, /^trove: file is not a database \(stack trace in .*daemon\.log\)$/m);
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace on the terminal');
  const logged = readFileSync(daemonLogPath(dataDir), 'utf8');
  t.match(logged, /\[trove\] error: the daemon did not start \{"cause":"SqliteError: file is not a database\\n\s+at /, 'the stack is in the log');
});

t.test('a user error: its message alone, its exit code, nothing logged', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const dataDir = path.join(work, 'port-taken');
  const run = await runCli(['daemon', 'start', '--data-dir', dataDir, '--port', String(port)]);
  t.equal(run.code, 6, 'a port in use is a conflict: exit 6');
  t.equal(run.stderr, `trove: Port ${port} on 127.0.0.1 is in use: is another daemon running? Use --port to pick another (0 picks a free one).\n`);
  t.notOk(existsSync(daemonLogPath(dataDir)), 'no log written for it');

  const badFlag = await runCli(['daemon', 'start', '--ephemeral', '--port', 'many']);
  t.equal(badFlag.code, 1);
  t.equal(badFlag.stderr, "trove: --port must be an integer from 0 to 65535, got 'many'.\n");
});

t.test('reportStartFailure, in process', async (t) => {
  const dataDir = path.join(work, 'in-process');
  const user = await captured(async () => reportStartFailure(new UserError('Bad setting.', 6), dataDir));
  t.same([user.value, user.stderr], [6, 'trove: Bad setting.\n'], 'a user error: the message and its exit code');
  t.notOk(existsSync(daemonLogPath(dataDir)), 'and no log');

  const noLog = await captured(async () => reportStartFailure(new Error('boom'), undefined));
  t.equal(noLog.value, 1);
  t.match(noLog.stderr, /^trove: boom\nError: boom\n\s+at /, 'without a log to write (ephemeral), the stack follows the message');

  const logged = await captured(async () => reportStartFailure(new Error('bang'), dataDir));
  t.equal(logged.stderr, `trove: bang (stack trace in ${daemonLogPath(dataDir)})\n`);
  t.match(readFileSync(daemonLogPath(dataDir), 'utf8'), /error: the daemon did not start \{"cause":"Error: bang\\n\s+at /);
});
