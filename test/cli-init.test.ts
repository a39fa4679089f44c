// `trove init`: the prompts scripted in-process (order, defaults, validation, flags that replace
// them, Ctrl-C), then the built CLI without a terminal: every flag given, or one missing (exit 2).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { collectionNameFor, runInit, type InitOptions, type InitPrompts } from '../src/cli/commands/init.js';
import { BIN, cleanEnv, freePort, newClusterKey, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';
import { captured } from './helpers/capture.js';
import { PATIENCE_MS } from './helpers/wait.js';

// Daemons, restarts and a dozen CLI processes: well past tap's default on a busy two-core machine.

interface Asked {
  kind: 'input' | 'confirm';
  message: string;
  default: string | boolean | undefined;
}

/**
 * Prompts that answer from a script. `undefined` takes the prompt's default; an input answer its
 * validate refuses is recorded and the next answer is tried, as inquirer asks again.
 */
function scripted(answers: (string | boolean | undefined | Error)[]) {
  const asked: Asked[] = [];
  const refused: { message: string; value: string; reason: string }[] = [];
  const next = () => {
    if (answers.length === 0) throw new Error(`no scripted answer left (asked so far: ${asked.map((a) => a.message).join(' | ')})`);
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const prompts: InitPrompts = {
    async input(config) {
      for (;;) {
        asked.push({ kind: 'input', message: config.message, default: config.default });
        const answer = next();
        const value = answer === undefined ? (config.default ?? '') : String(answer);
        const verdict = config.validate ? await config.validate(value) : true;
        if (verdict === true) return value;
        refused.push({ message: config.message, value, reason: String(verdict) });
      }
    },
    async confirm(config) {
      asked.push({ kind: 'confirm', message: config.message, default: config.default });
      const answer = next();
      return answer === undefined ? Boolean(config.default) : Boolean(answer);
    },
  };
  return { prompts, asked, refused, left: answers };
}

const never: InitPrompts = {
  input: async (config) => {
    throw new Error(`unexpected prompt: ${config.message}`);
  },
  confirm: async (config) => {
    throw new Error(`unexpected prompt: ${config.message}`);
  },
};


interface CollectionBody {
  name: string;
  processing: { semantic: boolean; keyword: boolean };
  file_counts: { ready: number; failed: number };
}

t.test('collectionNameFor makes a valid name from a folder name', async (t) => {
  t.equal(collectionNameFor('/home/ana/My Notes'), 'my-notes');
  t.equal(collectionNameFor('/srv/Project_X.v2/'), 'project_x-v2');
  t.equal(collectionNameFor('/'), 'docs', 'nothing usable: docs');
  t.equal(collectionNameFor('/tmp/---'), 'docs');
  t.equal(collectionNameFor(`/x/${'a'.repeat(80)}`), 'a'.repeat(63), 'cut to 63 characters');
});

t.test('trove init in-process, against a real daemon', async (t) => {
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-init-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const configHome = path.join(work, 'config');
  const cwd = path.join(work, 'My Notes');
  await mkdir(path.join(cwd, 'sub'), { recursive: true });
  await writeFile(path.join(cwd, 'top.md'), 'The orchard keeper pruned the pear trees.\n');
  await writeFile(path.join(cwd, 'sub', 'deep.md'), 'A kingfisher dived into the millpond.\n');

  const key = newClusterKey();
  const daemon = await startDaemonProcess({ key });
  t.teardown(() => daemon.kill());
  const globalOpts = { url: daemon.url, key };
  const env = { TROVE_CONFIG_HOME: configHome };
  const api = async <T>(p: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${daemon.url}${p}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const filePaths = async (ns: string, col: string) =>
    (await api<{ items: { path: string; status: string }[] }>(`/namespaces/${ns}/collections/${col}/files?limit=100`)).body.items.map((f) => `${f.path}:${f.status}`).sort();
  const readConfig = async () => JSON.parse(await readFile(path.join(configHome, 'cli.json'), 'utf8')) as Record<string, unknown>;
  const init = (opts: InitOptions, prompts: InitPrompts, extra: { interactive?: boolean; url?: string } = {}) =>
    captured(() => runInit({ ...globalOpts, ...(extra.url ? { url: extra.url } : {}) }, opts, { prompts, interactive: extra.interactive ?? true, env, cwd }));

  await t.test('asks every question in order, with defaults, re-asking after a refused answer', async (t) => {
    const script = scripted(['Bad Name', 'team', undefined, path.join(work, 'missing'), undefined, false, false]);
    const { value: code, stdout, stderr } = await init({}, script.prompts);
    t.equal(code, 0, `exit 0 (${stderr})`);
    t.same(
      script.asked.map((a) => [a.kind, a.message, a.default]),
      [
        ['input', 'Namespace', 'default'],
        ['input', 'Namespace', 'default'],
        ['input', 'Collection', 'my-notes'],
        ['input', 'Folder to ingest', cwd],
        ['input', 'Folder to ingest', cwd],
        ['confirm', 'Enable semantic search (meaning, not only keywords)?', true],
        ['confirm', 'Keep watching the folder for changes after the first ingest?', false],
      ],
      'namespace, collection, folder, semantic search, watch',
    );
    t.same(
      script.refused.map((r) => [r.message, r.value]),
      [
        ['Namespace', 'Bad Name'],
        ['Folder to ingest', path.join(work, 'missing')],
      ],
    );
    t.match(script.refused[0]!.reason, /lowercase/);
    t.match(script.refused[1]!.reason, /not a folder/);
    t.same(script.left, [], 'every scripted answer was used');

    const col = await api<CollectionBody>('/namespaces/team/collections/my-notes');
    t.equal(col.status, 200, 'the collection was created');
    t.equal(col.body.processing.semantic, false, 'with semantic search off, as answered');
    t.same(await filePaths('team', 'my-notes'), ['/sub/deep.md:ready', '/top.md:ready'], 'the folder was ingested');
    t.same(await readConfig(), { namespace: 'team', collection: 'my-notes', folder: cwd, url: daemon.url }, 'the defaults were saved, with the daemon they belong to');
    t.match(stdout, /namespace team: created\ncollection team\/my-notes: created \(semantic search off\)\n/);
    t.match(stdout, /team\/my-notes: 2 added/);
  });

  await t.test('flags replace their questions; the config keeps keys it does not know', async (t) => {
    await writeFile(path.join(configHome, 'cli.json'), JSON.stringify({ ...(await readConfig()), editor: 'vim' }));
    const script = scripted(['sub', undefined]);
    const { value: code, stderr } = await init({ namespace: 'team', collection: 'second', semantic: true }, script.prompts);
    t.equal(code, 0, `exit 0 (${stderr})`);
    t.same(
      script.asked.map((a) => a.message),
      ['Folder to ingest', 'Keep watching the folder for changes after the first ingest?'],
      'only the questions no flag answered',
    );
    t.equal((await api<CollectionBody>('/namespaces/team/collections/second')).body.processing.semantic, true);
    t.same(await filePaths('team', 'second'), ['/deep.md:ready'], 'a relative folder answer is read from the current directory');
    t.same(await readConfig(), { namespace: 'team', collection: 'second', folder: path.join(cwd, 'sub'), editor: 'vim', url: daemon.url });
  });

  await t.test('with every flag it never prompts, and an existing collection gets the semantic choice', async (t) => {
    const { value: code, stdout, stderr } = await init({ namespace: 'team', collection: 'my-notes', folder: cwd, semantic: true, watch: false }, never);
    t.equal(code, 0, `exit 0 (${stderr})`);
    t.match(stdout, /namespace team: already there/);
    t.match(stdout, /collection team\/my-notes: already there; semantic search turned on/);
    const col = await api<CollectionBody>('/namespaces/team/collections/my-notes');
    t.equal(col.body.processing.semantic, true, 'semantic search is on now');
    t.equal(col.body.processing.keyword, true, 'the rest of the processing profile was kept');
    t.match(stdout, /0 added, 0 updated, 0 removed, 2 unchanged/, 'nothing re-uploaded');
  });

  await t.test('--yes takes the defaults without asking', async (t) => {
    const { value: code, stdout, stderr } = await init({ yes: true, json: true }, never);
    t.equal(code, 0, `exit 0 (${stderr})`);
    const [setup, summary] = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    t.match(setup, { event: 'init', namespace: 'default', collection: 'my-notes', folder: cwd, semantic: true, watch: false, created_namespace: true, created_collection: true });
    t.match(summary, { namespace: 'default', collection: 'my-notes', added: 2, ready: 2 });
    t.equal((await api<CollectionBody>('/namespaces/default/collections/my-notes')).body.processing.semantic, true);
  });

  await t.test('without a terminal, a missing value is refused with exit 2 naming its flag', async (t) => {
    const before = await readConfig();
    const { value: code, stderr } = await init({ namespace: 'quiet', folder: cwd, semantic: false }, never, { interactive: false });
    t.equal(code, 2);
    t.match(stderr, /pass --collection <name>, --watch or --no-watch \(or --yes/);
    t.notMatch(stderr, /--namespace|--folder|--semantic/, 'flags that were given are not asked for');
    t.equal((await api('/namespaces/quiet')).status, 404, 'nothing was created');
    t.same(await readConfig(), before, 'the config was not touched');
  });

  await t.test('Ctrl-C at a question cancels with nothing created', async (t) => {
    const ctrlC = Object.assign(new Error('User force closed the prompt with SIGINT'), { name: 'ExitPromptError' });
    const script = scripted(['gone', ctrlC]);
    const { value: code, stderr } = await init({ json: true }, script.prompts);
    t.equal(code, 1);
    t.match(stderr, /"code":"canceled"/);
    t.equal((await api('/namespaces/gone')).status, 404);
  });

  await t.test('no daemon: says how to start one, exit 9, before asking anything', async (t) => {
    const port = await freePort();
    const { value: code, stderr } = await init({}, never, { url: `http://127.0.0.1:${port}` });
    t.equal(code, 9);
    t.match(stderr, /No trove daemon answers at http:\/\/127\.0\.0\.1:\d+\. Start it with `trove daemon start`/);
  });

  await t.test('bad flags are usage errors', async (t) => {
    const badName = await init({ namespace: 'Not OK' }, never);
    t.equal(badName.value, 2);
    t.match(badName.stderr, /namespace name 'Not OK' is invalid/);
    const badCollection = await init({ collection: 'ns_0123456789abcdef0123' }, never);
    t.equal(badCollection.value, 2, 'a name shaped like an ID is refused too');
    const badFolder = await init({ folder: path.join(work, 'nowhere') }, never);
    t.equal(badFolder.value, 2);
    t.match(badFolder.stderr, /--folder: .*nowhere is not a folder/);
  });
});

t.test('trove init from the built CLI, without a terminal', async (t) => {
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-init-e2e-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const folder = path.join(work, 'docs');
  await mkdir(folder);
  await writeFile(path.join(folder, 'one.md'), 'The ferry leaves the harbour at dawn.\n');
  const configHome = path.join(work, 'config');
  const key = newClusterKey();
  const daemon = await startDaemonProcess({ key });
  t.teardown(() => daemon.kill());
  const conn = ['--url', daemon.url, '--key', key];
  const env = { TROVE_CONFIG_HOME: configHome };

  await t.test('every flag given: no prompt, set-up and ingest done', async (t) => {
    // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
    const run = await runCli([...conn, 'init', '--namespace', 'e2e', '--collection', 'docs', '--folder', folder, '--no-semantic', '--no-watch', '--json'], { env });
    t.equal(run.code, 0, `exit 0 (${run.stderr})`);
    t.equal(run.stderr, '');
    const [setup, summary] = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    t.match(setup, { event: 'init', namespace: 'e2e', collection: 'docs', folder, semantic: false, watch: false, config_file: path.join(configHome, 'cli.json') });
    t.match(summary, { added: 1, ready: 1, failed: 0 });
    const res = await fetch(`${daemon.url}/namespaces/e2e/collections/docs`, { headers: { authorization: `Bearer ${key}` } });
    const col = (await res.json()) as CollectionBody;
    t.equal(col.processing.semantic, false);
    t.equal(col.file_counts.ready, 1);
    t.same(JSON.parse(await readFile(path.join(configHome, 'cli.json'), 'utf8')), { namespace: 'e2e', collection: 'docs', folder, url: daemon.url });
  });

  await t.test('a needed flag missing: exit 2, naming it', async (t) => {
    const run = await runCliInProcess([...conn, 'init', '--namespace', 'e2e2', '--folder', folder, '--no-semantic', '--no-watch'], { env });
    t.equal(run.code, 2);
    t.match(run.stderr, /stdin is not a terminal.*pass --collection <name> \(or --yes/);
    const res = await fetch(`${daemon.url}/namespaces/e2e2`, { headers: { authorization: `Bearer ${key}` } });
    t.equal(res.status, 404, 'nothing was created');
    const unknown = await runCliInProcess([...conn, 'init', '--colection', 'x'], { env });
    t.equal(unknown.code, 2, 'a misspelt flag is a usage error too');
  });

  await t.test('--yes --watch: set up, then keep watching until SIGTERM', async (t) => {
    const child = spawn(process.execPath, [BIN, ...conn, 'init', '--yes', '--watch', '--namespace', 'e2e', '--collection', 'watched', '--debounce', '100', '--json'], {
      cwd: folder,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const deadline = Date.now() + PATIENCE_MS;
    while (lines.length < 2 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
    t.match(lines[0], { event: 'init', collection: 'watched', watch: true, folder });
    t.match(lines[1], { event: 'sync', full: true, added: 1, ready: 1 }, `the first sync (${stderr})`);
    await writeFile(path.join(folder, 'two.md'), 'The lock keeper opened the sluice.\n');
    while (lines.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.match(lines[2], { event: 'sync', full: false, added: 1, ready: 2 }, 'a new file is synced');
    child.kill('SIGTERM');
    t.equal(await exited, 0, 'SIGTERM ends it with exit 0');
  });
});
