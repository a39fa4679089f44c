// `trove tui` as a user runs it: in a real terminal (tmux) against a real daemon, and refusing to
// start where there is no terminal.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BIN, cleanEnv, newClusterKey, runCli, startDaemonProcess, type DaemonProcess } from './helpers/cli.js';
import { PATIENCE_MS } from './helpers/wait.js';

const KEY = newClusterKey();
const ANSI = /\u001B\[[0-9;?]*[A-Za-z]/g;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: () => string, timeoutMs = PATIENCE_MS): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what()}`);
    await delay(100);
  }
}

async function seed(daemon: DaemonProcess) {
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(daemon.url + route, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as any;
  };
  const counts = async () => (await api('GET', '/namespaces/demo/collections/notes')).file_counts as { ready: number; pending: number; indexing: number };
  const settled = () => waitFor(async () => ((c) => c.pending + c.indexing === 0 && c)(await counts()), () => 'notes to settle');
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'notes' });
  await api('POST', '/namespaces/demo/collections/notes/files', {
    path: '/cats.md',
    source: { type: 'inline', content_type: 'text/markdown', text: '# Cats\n\nCats purr when they are content.' },
  });
  await settled();
  return { api, settled };
}

/**
 * A user's terminal: without the CI markers and the colour switches (tap turns colours off for its
 * tests) of the test's own environment, which Ink and chalk would read.
 */
function terminalEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cleanEnv(extra);
  const ours = (name: string) => ['CI', 'CONTINUOUS_INTEGRATION', 'FORCE_COLOR', 'NO_COLOR', 'COLOR'].includes(name) || name.startsWith('CI_');
  for (const name of Object.keys(env)) if (ours(name)) delete env[name];
  return env;
}

const tmuxVersion = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
const hasTmux = tmuxVersion.status === 0;

t.test('in a real terminal: collections, search, a live count, q', { skip: hasTmux ? false : 'tmux is not installed (CI installs it)' }, async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-tuit-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const daemon = await startDaemonProcess({ key: KEY, args: ['--data-dir', dataDir] });
  t.teardown(() => daemon.kill());
  const { api, settled } = await seed(daemon);

  const socket = `trove-tui-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: terminalEnv({ TERM: 'xterm-256color' }) });
  t.teardown(() => void tmux('kill-server'));
  const exitFile = path.join(dataDir, 'tui-exit-code');
  const command = `'${process.execPath}' '${BIN}' --url '${daemon.url}' --key '${KEY}' --data-dir '${dataDir}' tui; echo $? > '${exitFile}'`;
  const started = tmux('new-session', '-d', '-s', 'trove', '-x', '100', '-y', '30', command);
  t.equal(started.status, 0, `tmux started (${started.stderr})`);

  let screen = '';
  const capture = (escapes = false) => {
    const out = tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'trove');
    if (!escapes) screen = out.stdout;
    return out.stdout;
  };
  const until = (pattern: RegExp) => waitFor(() => pattern.test(capture()), () => `${pattern} on screen:\n${screen}`);
  const keys = (...k: string[]) => tmux('send-keys', '-t', 'trove', ...k);

  await until(/notes\s+ready\s+1\s+0\s+0\s+0/);
  await until(/live: operator socket/);
  t.match(screen, /trove · http:\/\/127\.0\.0\.1:\d+\s+live: operator socket/, 'live events over the operator socket');
  t.match(screen, /Enter search .* q quit/, 'the key help line at the bottom');

  keys('Enter');
  await until(/Search demo\/notes/);
  keys('-l', 'purr');
  await until(/Query › purr/);
  keys('Enter');
  await until(/1\.\s+\/cats\.md/);
  t.match(screen, /1 result for “purr” \(semantic, file\)/);
  t.match(capture(true), /\u001B\[[0-9;]*m(\u001B\[[0-9;]*m)*purr\u001B\[/, 'the term is drawn with its own attributes');

  // Keys arriving in one read, as a paste does: back to the query, Ctrl-U, a new query and Enter.
  keys('/');
  await until(/Query ›/);
  keys('-l', '\u0015cats purr\r');
  await until(/1 result for “cats purr” \(semantic, file\)/);
  t.match(screen, /Query › cats purr\s/, 'the old query cleared, the new one typed, then submitted');

  keys('Enter');
  await until(/type text\/markdown · status ready/);
  keys('Escape');
  await until(/1 result for/);
  keys('Escape');
  await until(/COLLECTION\s+STATUS/);

  // A file added over HTTP shows up in the counts without any key pressed.
  await api('POST', '/namespaces/demo/collections/notes/files', { path: '/dogs.md', source: { type: 'inline', text: 'Dogs bark at the mail carrier.' } });
  await settled();
  await until(/notes\s+ready\s+2\s+0\s+0\s+0/);

  // Ctrl-C inside a longer read still quits (q quitting is covered in tui.test.tsx).
  keys('-l', 'x\u0003');
  await waitFor(() => tmux('has-session', '-t', 'trove').status !== 0, () => `the pane to close:\n${screen}`);
  t.equal((await readFile(exitFile, 'utf8')).trim(), '0', 'trove tui exited 0');
});

t.test('without a terminal', async (t) => {
  const daemon = await startDaemonProcess({ key: KEY });
  t.teardown(() => daemon.kill());
  await seed(daemon);
  const conn = ['--url', daemon.url, '--key', KEY];

  await t.test('it refuses to start, naming the flag', async (t) => {
    const run = await runCli([...conn, 'tui']);
    t.equal(run.code, 2);
    t.match(run.stderr, /stdout is not a terminal.*--force-tty/);
    t.equal(run.stdout, '', 'nothing drawn');

    const json = await runCli([...conn, 'tui', '--json']);
    t.equal(json.code, 2);
    t.match(JSON.parse(json.stderr), { error: { code: 'usage_error', message: /not a terminal/ } });

    const unknown = await runCli([...conn, 'tui', '--bogus']);
    t.equal(unknown.code, 2, 'an unknown flag is a usage error');
    t.match(unknown.stderr, /unknown option '--bogus'/);
  });

  /** Runs `trove tui --force-tty` on pipes; returns its output so far and a way to type. */
  const forced = (args: string[]) => {
    // A pipe has no colours unless asked for; the red status line is part of what is checked.
    const env = cleanEnv({ FORCE_COLOR: '1' });
    delete env.NO_COLOR;
    const child = spawn(process.execPath, [BIN, ...args, 'tui', '--force-tty'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    return { child, exited, screen: () => stdout.replace(ANSI, ''), raw: () => stdout, stderr: () => stderr };
  };

  await t.test('--force-tty draws on a pipe and reads keys from one', async (t) => {
    const tui = forced(conn);
    await waitFor(() => /notes\s+ready\s+1/.test(tui.screen()), () => `the collections view:\n${tui.screen()}\n${tui.stderr()}`);
    t.match(tui.screen(), /live: SSE \/events \(no operator socket in/, 'an ephemeral daemon elsewhere: events over SSE, saying why');
    tui.child.stdin.write('q');
    t.equal(await tui.exited, 0, 'q exits 0');
  });

  await t.test('a refused key shows in the red status line and the UI keeps running', async (t) => {
    const tui = forced(['--url', daemon.url, '--key', 'trove_not_a_key']);
    await waitFor(() => /unauthenticated: .*Check --key/.test(tui.screen()), () => `the error line:\n${tui.screen()}\n${tui.stderr()}`);
    t.match(tui.raw(), /\u001B\[31m✗ (live events: )?unauthenticated/, 'in red');
    await waitFor(() => /live: SSE \/events stopped/.test(tui.screen()), () => `the stream to stop:\n${tui.screen()}`);
    await delay(300);
    t.equal(tui.child.exitCode, null, 'still running');
    tui.child.stdin.write('q');
    t.equal(await tui.exited, 0);
  });
});
