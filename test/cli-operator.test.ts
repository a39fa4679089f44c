// End to end: the operator commands (trove daemon status|stop|logs, config, roots, ns restore) of
// the built CLI against a real daemon process with its own data dir, over the operator socket.
// Commands run in-process (runCliInProcess); one status runs through the real entry, and
// `logs --follow` in a process of its own (SIGTERM ends it).
import t from 'tap';
import { waitFor } from './helpers/wait.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DaemonLogFile, daemonLogPath, MAX_LOG_BYTES } from '../src/cli/commands/daemon-logs.js';
import { NO_DAEMON_EXIT_CODE } from '../src/rpc/client.js';
import { BIN, cleanEnv, newClusterKey, parseJson, ROOT, runCli, runCliInProcess, startDaemonProcess, type CliRun } from './helpers/cli.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const KEY = newClusterKey();

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startWithDataDir(t: TestContext, extra: string[] = []) {
  const dataDir = tempDir(t, 'trove-cliop-');
  const daemon = await startDaemonProcess({ key: KEY, args: ['--data-dir', dataDir, ...extra] });
  t.teardown(() => daemon.kill());
  const http = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(daemon.url + route, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const trove = (args: string[], options: { cwd?: string } = {}) => runCliInProcess(['--data-dir', dataDir, ...args], options);
  return { daemon, dataDir, http, trove };
}

function errorOf(run: CliRun): { code: string; message: string } {
  try {
    return (JSON.parse(run.stderr) as { error: { code: string; message: string } }).error;
  } catch {
    throw new Error(`expected a JSON error envelope on stderr, got: ${run.stderr}\nstdout: ${run.stdout}`);
  }
}


t.test('daemon status, config, roots and ns restore against a running daemon; then stop', async (t) => {
  const { daemon, dataDir, http, trove } = await startWithDataDir(t);

  // status
  const [status, human, bogus] = await Promise.all([
    trove(['daemon', 'status', '--json']),
    // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
    runCli(['daemon', 'status', '--data-dir', dataDir]),
    runCliInProcess(['daemon', 'status', '--bogus', '--data-dir', dataDir]),
  ]);
  t.equal(status.code, 0, status.stderr);
  const s = parseJson<Record<string, any>>(status);
  t.match(s, { running: true, pid: daemon.child.pid, data_dir: dataDir, http_url: daemon.url, operator_socket: path.join(dataDir, 'operator.sock'), indexer: { alive: true } });
  t.equal(human.code, 0);
  t.equal(human.stderr, '');
  t.match(human.stdout, new RegExp(`trove daemon running \\(pid ${daemon.child.pid}`));
  t.match(human.stdout, `data dir:     ${dataDir}`, '--data-dir after the subcommand works too');
  t.equal(bogus.code, 2, 'an unknown flag is a usage error');
  t.match(bogus.stderr, /unknown option '--bogus'/);

  // config
  const set = await trove(['config', 'set', 'embedding.model', 'nomic-embed-text', '--json']);
  t.equal(set.code, 0, set.stderr);
  t.match(parseJson(set), { key: 'embedding.model', value: 'nomic-embed-text', changed: true, restart_required: true });
  t.same(JSON.parse(readFileSync(path.join(dataDir, 'config.json'), 'utf8')), { embedding: { model: 'nomic-embed-text' } }, 'the file holds it');
  const setHuman = await trove(['config', 'set', 'generation.vision', 'true']);
  t.equal(setHuman.code, 0);
  t.match(setHuman.stdout, /generation\.vision = true \(was \(unset\)\).*\n.*Restart the daemon/);
  const [get, all, badKey, badValue, secret, noValue, unknownSub] = await Promise.all([
    trove(['config', 'get', 'embedding.model', '--json']),
    trove(['config', 'get']),
    trove(['config', 'set', 'embedding.colour', 'blue', '--json']),
    trove(['config', 'set', 'embedding.dimensions', 'many']),
    trove(['config', 'set', 'generation.apiKey', 'sk-live-abc', '--json']),
    trove(['config', 'set', 'embedding.model']),
    trove(['roots', 'frobnicate']),
  ]);
  t.match(parseJson(get), { entries: [{ key: 'embedding.model', value: 'nomic-embed-text' }], running: { 'embedding.model': 'builtin:glove-sg-100d-sif' } }, 'the file value, and what the daemon still uses');
  t.equal(all.code, 0);
  t.match(all.stdout, /embedding\.model\s+nomic-embed-text\s+\(in use: builtin:glove-sg-100d-sif\)/);
  t.equal(badKey.code, 2, 'an unknown key is a usage error');
  t.match(errorOf(badKey), { code: 'invalid_request', message: /Unknown config key 'embedding.colour'/ });
  t.equal(badValue.code, 2);
  t.match(badValue.stderr, /error invalid_request: embedding\.dimensions must be a whole number from 1 to 65536 \(got /);
  t.equal(secret.code, 2);
  t.match(errorOf(secret).message, /never stores API keys/);
  t.notMatch(readFileSync(path.join(dataDir, 'config.json'), 'utf8'), /sk-live-abc|colour|many/, 'nothing refused was written');
  t.equal(noValue.code, 2, 'a missing value is a usage error');
  t.equal(unknownSub.code, 2, 'so is an unknown subcommand');
  const unset = await trove(['config', 'unset', 'generation.vision', '--json']);
  t.match(parseJson(unset), { key: 'generation.vision', value: null, previous: true, changed: true });

  // roots
  const work = tempDir(t, 'trove-cliop-root-');
  writeFileSync(path.join(work, 'tides.md'), '# Tides\n\nSpring tides follow the full moon.\n');
  writeFileSync(path.join(work, 'neap.md'), 'Neap tides are gentle.\n');
  await http('POST', '/namespaces', { name: 'ops' });
  await http('POST', '/namespaces/ops/collections', { name: 'docs' });
  const addFile = (name: string) => http('POST', '/namespaces/ops/collections/docs/files', { path: `/${name}`, source: { type: 'uri', uri: `file://${path.join(work, name)}` } });
  t.equal((await addFile('tides.md')).status, 400, 'refused before the root is granted');
  const added = await trove(['roots', 'add', path.basename(work), '--json'], { cwd: path.dirname(work) });
  t.equal(added.code, 0, added.stderr);
  t.match(parseJson(added), { added: true, root: { path: work, source: 'operator' } }, 'a relative dir is taken from the working directory');
  t.equal((await addFile('tides.md')).status, 202, 'accepted once granted');
  const ready = await waitFor('the file to be indexed', async () => {
    const col = await http('GET', '/namespaces/ops/collections/docs');
    return col.body.file_counts.pending + col.body.file_counts.indexing === 0 ? col.body : undefined;
  });
  t.equal(ready.file_counts.ready, 1, 'and indexed by the worker');
  const [list, listHuman, again, missing] = await Promise.all([
    trove(['roots', 'list', '--json']),
    trove(['roots', 'list']),
    trove(['roots', 'add', work]),
    trove(['roots', 'add', path.join(work, 'nope'), '--json']),
  ]);
  t.match(parseJson(list), { roots: [{ path: work, source: 'operator', exists: true }] });
  t.match(listHuman.stdout, new RegExp(`${work}  granted `));
  t.match(again.stdout, /already allowed/);
  t.equal(missing.code, 2);
  t.match(errorOf(missing), { code: 'invalid_request', message: /No directory/ });
  const removed = await trove(['roots', 'rm', work]);
  t.equal(removed.code, 0, removed.stderr);
  t.match(removed.stdout, /refused from now on/);
  t.equal((await addFile('neap.md')).status, 400, 'refused again after rm');
  const removedAgain = await trove(['roots', 'rm', work, '--json']);
  t.equal(removedAgain.code, 5, 'not a root any more: not_found');
  t.equal(errorOf(removedAgain).code, 'not_found');

  // ns restore
  await http('POST', '/namespaces', { name: 'keep' });
  await http('POST', '/namespaces/keep/collections', { name: 'notes' });
  await http('POST', '/namespaces/keep/collections/notes/files', { path: '/a.md', source: { type: 'inline', text: 'restorable lighthouse notes' } });
  await waitFor('notes to settle', async () => ((await http('GET', '/namespaces/keep/collections/notes')).body.status === 'ready' ? true : undefined));
  const nsId = (await http('GET', '/namespaces/keep')).body.id;
  t.equal((await http('DELETE', '/namespaces/keep', { force: true })).status, 202);
  t.equal((await http('GET', '/namespaces/keep')).status, 404, 'deleted');
  const restored = await trove(['ns', 'restore', 'keep', '--json']);
  t.equal(restored.code, 0, restored.stderr);
  t.match(parseJson(restored), { id: nsId, name: 'keep', usage: { collections: 1, files: 1 } });
  t.equal((await http('GET', '/namespaces/keep/collections/notes')).body.status, 'ready', 'its collection is back, indexed');
  const hit = await http('POST', '/namespaces/keep/collections/notes:search', { query: 'lighthouse', mode: 'keyword' });
  t.equal(hit.body.results[0]?.path, '/a.md');
  const noMore = await trove(['ns', 'restore', 'keep']);
  t.equal(noMore.code, 5, 'nothing left to restore');
  t.match(noMore.stderr, /error not_found: No deleted workspace 'keep'/);

  // logs: what the operator did is in the daemon's log file
  const [logs, two, badLines] = await Promise.all([trove(['daemon', 'logs', '-n', '100', '--json']), trove(['daemon', 'logs', '-n', '2']), trove(['daemon', 'logs', '-n', 'lots'])]);
  t.equal(logs.code, 0, logs.stderr);
  const { file, lines } = parseJson<{ file: string; lines: string[] }>(logs);
  t.equal(file, path.join(dataDir, 'logs', 'daemon.log'));
  t.ok(lines.some((l) => /listening on http:\/\/127\.0\.0\.1:\d+/.test(l)), 'the start');
  t.ok(lines.some((l) => l.includes('operator granted a file root') && l.includes(work)));
  t.ok(lines.some((l) => l.includes('operator restored a workspace')));
  t.ok(lines.every((l) => /^\d{4}-\d\d-\d\dT[\d:.]+Z \[trove\]/.test(l)), 'every line is stamped');
  t.notOk(lines.some((l) => l.includes(KEY)), 'no secret in the log');
  t.equal(two.stdout.trimEnd().split('\n').length, 2, '-n limits the lines');
  t.equal(badLines.code, 2, 'a bad -n is a usage error');
  t.equal(statSync(file).mode & 0o777, 0o600, 'the log file is private');

  // stop: replies, waits until the process is gone
  const stop = await trove(['daemon', 'stop', '--json']);
  t.equal(stop.code, 0, stop.stderr);
  t.match(parseJson(stop), { stopped: true, pid: daemon.child.pid, data_dir: dataDir });
  t.not(daemon.child.exitCode ?? daemon.child.signalCode, null, 'the daemon process had exited when stop returned');
  t.same(await daemon.exited, { code: 0, signal: null }, 'a clean exit, as on SIGTERM');
  t.match(daemon.stderr(), /trove daemon stop: finishing in-flight requests and stopping/);
  t.notOk(existsSync(path.join(dataDir, 'operator.sock')), 'its socket is gone');
  t.notOk(existsSync(path.join(dataDir, 'daemon.lock')), 'its lock is released');
  const after = await trove(['daemon', 'logs', '-n', '3']);
  t.equal(after.code, 0, 'logs still read with no daemon');
  t.match(after.stdout, /\[trove\] stopped\n$/);

  // …and now every operator command says no daemon runs, with exit 8.
  const commands = [['daemon', 'status'], ['daemon', 'stop'], ['config', 'get'], ['config', 'set', 'embedding.model', 'x'], ['roots', 'list'], ['roots', 'add', work], ['ns', 'restore', 'keep']];
  const runs = await Promise.all(commands.map((args) => trove([...args, '--json'])));
  for (const [i, args] of commands.entries()) {
    const run = runs[i]!;
    t.equal(run.code, NO_DAEMON_EXIT_CODE, `${args.join(' ')}: exit ${NO_DAEMON_EXIT_CODE}`);
    t.match(errorOf(run), { code: 'daemon_not_running', message: `No daemon is running for data dir ${dataDir}` });
    t.equal(run.stdout, '', 'nothing on stdout');
  }
  const plain = await trove(['daemon', 'status']);
  t.equal(plain.code, NO_DAEMON_EXIT_CODE);
  t.match(plain.stderr, /^error: No daemon is running for data dir .*trove daemon start/);
});

t.test('daemon logs --follow prints lines as the daemon writes them', async (t) => {
  const { dataDir, trove } = await startWithDataDir(t);
  const follower = spawn(process.execPath, [BIN, '--data-dir', dataDir, 'daemon', 'logs', '-n', '1', '--follow'], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (follower.exitCode === null) follower.kill('SIGKILL');
  });
  const seen: string[] = [];
  createInterface({ input: follower.stdout! }).on('line', (line) => seen.push(line));
  await waitFor('the last line', () => (seen.length >= 1 ? true : undefined));
  t.match(seen[0], /listening on/, 'starts with the tail');
  const granted = tempDir(t, 'trove-cliop-follow-');
  t.equal((await trove(['roots', 'add', granted])).code, 0);
  await waitFor('the new line', () => (seen.some((l) => l.includes('operator granted a file root')) ? true : undefined));
  t.pass('a line written after the follow began arrived');
  const exited = new Promise<number | null>((resolve) => follower.once('exit', (code) => resolve(code)));
  follower.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM ends the follow cleanly');
});

t.test('no daemon and no log: clear errors', async (t) => {
  const dataDir = tempDir(t, 'trove-cliop-none-');
  const [status, viaEnv, logs, restore] = await Promise.all([
    runCliInProcess(['daemon', 'status', '--data-dir', dataDir]),
    runCliInProcess(['daemon', 'status', '--json'], { env: { TROVE_DATA_DIR: dataDir } }),
    runCliInProcess(['daemon', 'logs', '--data-dir', dataDir, '--json']),
    runCliInProcess(['ns', 'restore', 'x', '--data-dir', dataDir]),
  ]);
  t.equal(status.code, NO_DAEMON_EXIT_CODE);
  t.match(status.stderr, `No daemon is running for data dir ${dataDir}`);
  t.equal(viaEnv.code, NO_DAEMON_EXIT_CODE, 'TROVE_DATA_DIR names the data dir too');
  t.match(errorOf(viaEnv).message, dataDir);
  t.equal(logs.code, NO_DAEMON_EXIT_CODE, 'no daemon has run there: exit 9');
  t.match(errorOf(logs), { code: 'no_daemon_log', message: /No daemon log at .*daemon\.log/ });
  t.equal(restore.code, NO_DAEMON_EXIT_CODE);
});

t.test('the log file keeps the last ~5 MB: it rotates to daemon.log.1', async (t) => {
  const dataDir = tempDir(t, 'trove-cliop-rotate-');
  const log = new DaemonLogFile();
  log.write('[trove] before the data dir was known');
  log.open(dataDir);
  const file = daemonLogPath(dataDir);
  t.match(readFileSync(file, 'utf8'), /\[trove\] before the data dir was known\n$/, 'early lines are kept and written once the dir is known');
  const line = '[trove] ' + 'x'.repeat(1000);
  const count = Math.ceil(MAX_LOG_BYTES / 1000) + 50;
  for (let i = 0; i < count; i++) log.write(`${line} ${i}`);
  t.ok(existsSync(`${file}.1`), 'rotated');
  t.ok(statSync(file).size <= MAX_LOG_BYTES && statSync(`${file}.1`).size <= MAX_LOG_BYTES, 'neither file outgrows the limit');
  t.match(readFileSync(file, 'utf8'), new RegExp(`x ${count - 1}\\n$`), 'the newest line is in daemon.log');
  const tail = await runCliInProcess(['daemon', 'logs', '--data-dir', dataDir, '-n', String(count), '--json']);
  const { lines } = parseJson<{ lines: string[] }>(tail);
  t.equal(lines.length, count, 'the tail reaches into the rotated file');
  t.match(lines.at(-1), new RegExp(`x ${count - 1}$`));
  t.match(lines[0], /x{1000} 0$/, 'the oldest line kept comes first');

  // A data dir that goes away (an ephemeral one) never makes logging throw.
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir);
  t.doesNotThrow(() => log.write('[trove] after the dir vanished'));
});
