// The CLI's small rough edges: files, rules and collections take -c and the saved default
// collection; a malformed key is named by the prefix the daemon files it under; `keys create`
// suggests near names for a scope; `rules set` answers in the CLI's words; --quiet; watch lines name
// their files; search pages with --cursor; the TUI wraps long URIs and opens the saved collection
// only on the daemon it was saved for; `npm pack` leftovers are ignored by git.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import ignore from 'ignore';
import { keyHint } from '../src/cli/client.js';
import { formatResults } from '../src/cli/commands/search.js';
import { scopeFromFlags } from '../src/cli/commands/keys.js';
import { sameDaemonUrl, savedTarget, splitOptionalCollection } from '../src/cli/defaults.js';
import { prefixOf } from '../src/domain/keys.js';
import { detailLines } from '../src/tui/views/file-details.js';
import type { FileItem, SearchResult } from '../src/tui/types.js';
import { apiOf, BIN, cleanEnv, parseJson, ROOT, runCli, startDaemonProcess } from './helpers/cli.js';

t.setTimeout(900_000);

t.test('the collection argument may be left to -c or the saved default', async (t) => {
  t.same(splitOptionalCollection(['docs', '/a.md'], ['file'], 'x'), { collection: 'docs', rest: ['/a.md'] });
  t.same(splitOptionalCollection(['/a.md', undefined], ['file'], 'x'), { rest: ['/a.md'] });
  t.same(splitOptionalCollection([undefined], [], 'x'), { rest: [] });
  t.throws(() => splitOptionalCollection([undefined, undefined], ['file'], 'trove files get [collection] <file>'), /Missing the file: trove files get/);
});

t.test('a malformed key is named by the prefix the daemon files it under', async (t) => {
  for (const key of ['trove_abcdefgh_short', 'trove_abcdefgh_has spaces in it, twenty+', 'trove_ABCDEFGH_' + 'x'.repeat(43)]) {
    t.equal(keyHint(key), `prefix ${prefixOf(key)}`, key);
    t.notMatch(keyHint(key), /^trove_/);
  }
  const minted = `trove_ab12cd34_${'Q'.repeat(43)}`;
  t.equal(keyHint(minted), `trove_${prefixOf(minted)}_…`);
});

t.test('keys create suggests the action meant', async (t) => {
  t.throws(() => scopeFromFlags({ namespace: 'n', actions: 'read,serch' }), /Unknown action 'serch'\. Did you mean 'search'\? Actions are read, write, search, query\./);
  t.throws(() => scopeFromFlags({ namespace: 'n', actions: 'zzzzzzzz' }), { message: "Unknown action 'zzzzzzzz'. Actions are read, write, search, query." });
});

t.test('the search footer gives the flag that takes the cursor', async (t) => {
  const text = formatResults({ execution: { mode: 'keyword', interpretation: '', stages: ['keyword'] }, results: [], next_cursor: 'c_123', warnings: [] } as never);
  t.match(text, /--cursor c_123/);
  t.notMatch(text, /API's next_cursor/);
});

t.test('the TUI wraps a long URI instead of cutting it', async (t) => {
  const uri = `https://example.com/${'segment/'.repeat(20)}report.pdf?version=42`;
  const file = { id: 'fil_1', path: '/r.pdf', status: 'ready', source: { type: 'uri', uri, content_type: 'application/pdf', bytes: 10 }, metadata: {} } as unknown as FileItem;
  const result = { file_id: 'fil_1', path: '/r.pdf', rank: 1, score: 1, evidence: [] } as unknown as SearchResult;
  const lines = detailLines(result, file, 40, false).map((line) => line.text);
  t.ok(lines.every((line) => [...line].length <= 40), 'every line fits');
  t.match(lines.join(''), uri, 'the whole URI is there');
});

t.test('the saved collection belongs to the daemon it was saved for', async (t) => {
  const saved = { namespace: 'n', collection: 'c', url: 'http://127.0.0.1:7410' };
  t.same(savedTarget(saved, 'http://127.0.0.1:7410/'), { namespace: 'n', collection: 'c' });
  t.equal(savedTarget(saved, 'http://127.0.0.1:7411'), null, 'another daemon does not open it');
  t.same(savedTarget({ namespace: 'n', collection: 'c' }, 'http://127.0.0.1:7411'), { namespace: 'n', collection: 'c' }, 'a config saved before URLs were recorded still opens');
  t.ok(sameDaemonUrl('http://LOCALHOST:80/', 'http://localhost'));
});

t.test('npm pack leftovers are ignored by git', async (t) => {
  const rules = ignore().add(await readFile(path.join(ROOT, '.gitignore'), 'utf8'));
  t.ok(rules.ignores('trove-0.1.0.tgz'));
});

t.test('against a real daemon', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const api = apiOf(daemon);
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-rough-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const configHome = path.join(work, 'config');
  await mkdir(configHome);
  const env = { TROVE_CONFIG_HOME: configHome };
  const conn = ['--url', daemon.url, '--key', daemon.key];
  const cli = (args: string[]) => runCli([...conn, ...args], { env });

  const folder = path.join(work, 'docs');
  await mkdir(folder);
  for (const name of ['a', 'b', 'c']) await writeFile(path.join(folder, `${name}.md`), `# ${name}\n\nThe lighthouse keeper logs the ${name} storm.\n`);
  const ingest = await cli(['ingest', folder, '-n', 'r', '-c', 'docs', '--json']);
  t.equal(ingest.code, 0, ingest.stderr);
  t.equal((await api('POST', '/namespaces/r/collections', { name: 'enf', access_control: 'enforced' })).status, 201);
  await writeFile(path.join(configHome, 'cli.json'), JSON.stringify({ namespace: 'r', collection: 'docs' }));

  await t.test('files, collections and rules take -c and the saved default', async (t) => {
    const list = await cli(['files', 'list', '--json']);
    t.equal(list.code, 0, list.stderr);
    t.same(parseJson<{ items: { path: string }[] }>(list).items.map((f) => f.path).sort(), ['/a.md', '/b.md', '/c.md']);
    const get = await cli(['files', 'get', '/b.md', '--json']);
    t.equal(get.code, 0, get.stderr);
    t.equal(parseJson<{ path: string }>(get).path, '/b.md');
    const col = await cli(['collections', 'get', '--json']);
    t.equal(parseJson<{ name: string }>(col).name, 'docs');
    const cols = await cli(['collections', 'list', '--json']);
    t.same(parseJson<{ items: { name: string }[] }>(cols).items.map((c) => c.name).sort(), ['docs', 'enf'], 'the saved namespace');
    const set = await cli(['rules', 'set', '-c', 'enf', '/team/', '--reader', 'alice', '--json']);
    t.equal(set.code, 0, set.stderr);
    const rules = await cli(['rules', 'list', '-c', 'enf', '--json']);
    t.same(parseJson<{ folder: string }[]>(rules).map((r) => r.folder), ['/team/']);
    const added = await cli(['files', 'add', '-c', 'enf', '--text', 'hello', '--path', '/team/x.md', '--json']);
    t.equal(added.code, 0, added.stderr);
    const missing = await cli(['files', 'get', '-c', 'docs']);
    t.equal(missing.code, 2);
    t.match(missing.stderr, /Missing the file/);
  });

  await t.test('rules set answers in the CLI\'s words', async (t) => {
    const open = await cli(['rules', 'set', '/team/', '--reader', 'alice']);
    t.equal(open.code, 2);
    t.match(open.stderr, /r\/docs does not enforce access rules.*trove collections update r\/docs --access-control enforced/);
    t.notMatch(open.stderr, /PATCH/);
    const sealed = await cli(['rules', 'set', '-c', 'enf', '/team/plan.md', '--reader', 'bob', '--sealed']);
    t.equal(sealed.code, 2);
    t.match(sealed.stderr, /--sealed: only folder rules can be sealed/);
    const empty = await cli(['rules', 'set', '-c', 'enf', '/a//b/', '--reader', 'bob']);
    t.match(empty.stderr, /the path '\/a\/\/b\/': must not contain empty segments/);
  });

  await t.test('keys create suggests a namespace or collection meant', async (t) => {
    const ns = await cli(['keys', 'create', 'k1', '--namespace', 'rr', '--actions', 'search']);
    t.equal(ns.code, 5, ns.stderr);
    t.match(ns.stderr, /No namespace 'rr'\. Did you mean 'r'\?/);
    const col = await cli(['keys', 'create', 'k2', '--namespace', 'r', '--collection', 'doc', '--actions', 'search']);
    t.match(col.stderr, /No collection 'doc' in namespace 'r'\. Did you mean 'docs'\?/);
  });

  await t.test('a refused malformed key is named by its hash prefix', async (t) => {
    const run = await runCli(['--url', daemon.url, '--key', 'trove_abcdefgh_short', 'collections', 'list'], { env });
    t.equal(run.code, 3);
    t.match(run.stderr, `The CLI sent key prefix ${prefixOf('trove_abcdefgh_short')} from --key`);
  });

  await t.test('search pages with --cursor', async (t) => {
    const first = await cli(['search', 'lighthouse storm', '--mode', 'keyword', '--limit', '1']);
    t.equal(first.code, 0, first.stderr);
    const cursor = /--cursor (\S+)\)/.exec(first.stdout)?.[1];
    t.ok(cursor, first.stdout);
    const second = await cli(['search', 'lighthouse storm', '--mode', 'keyword', '--limit', '1', '--cursor', cursor!, '--json']);
    t.equal(second.code, 0, second.stderr);
    t.equal(parseJson<{ results: { rank: number }[] }>(second).results[0]?.rank, 2);
  });

  await t.test('--quiet prints nothing when all went well', async (t) => {
    await writeFile(path.join(folder, 'd.md'), '# d\n');
    const run = await cli(['--quiet', 'ingest', folder, '-n', 'r', '-c', 'docs']);
    t.equal(run.code, 0, run.stderr);
    t.equal(run.stdout, '');
    t.equal(run.stderr, '');
  });

  await t.test('ingest --watch lines name the file', async (t) => {
    const child = spawn(process.execPath, [BIN, ...conn, 'ingest', folder, '-n', 'r', '-c', 'docs', '--watch', '--debounce', '50'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    t.teardown(() => void child.kill('SIGKILL'));
    const lines: string[] = [];
    let waiter: (() => void) | null = null;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      waiter?.();
    });
    const until = async (test: () => boolean) => {
      while (!test()) await new Promise<void>((resolve) => (waiter = resolve));
    };
    await until(() => lines.some((line) => line.startsWith('+')));
    await writeFile(path.join(folder, 'e.md'), '# e\n');
    await until(() => lines.includes('+ /e.md'));
    t.ok(lines.includes('+ /e.md'), lines.join('\n'));
    child.kill('SIGTERM');
    await exited;
  });

  await t.test('init records the daemon the defaults belong to', async (t) => {
    const home = path.join(work, 'config2');
    const run = await runCli([...conn, 'init', '--yes', '-n', 'r3', '-c', 'c3', '--folder', folder, '--no-semantic', '--no-watch', '--json'], { env: { TROVE_CONFIG_HOME: home } });
    t.equal(run.code, 0, run.stderr);
    const saved = JSON.parse(await readFile(path.join(home, 'cli.json'), 'utf8')) as { url?: string };
    t.ok(saved.url !== undefined && sameDaemonUrl(saved.url, daemon.url), JSON.stringify(saved));
  });
});
