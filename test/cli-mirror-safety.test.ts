// Mirror safety of `trove ingest` (src/cli/ingest-plan.ts "mirror safety", walk.ts): deletions need
// consent, an empty folder empties nothing, hidden and secret-looking files stay out, and files
// added by other means are left alone unless --prune. The pure rules first, then runIngest
// in-process against a real daemon, then one run of the built CLI (the two reports).
import t from 'tap';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decideRemovals, INGEST_ROOT_KEY } from '../src/cli/ingest-plan.js';
import { runIngest, type IngestOptions } from '../src/cli/commands/ingest.js';
import { isSecretFileName, walkFolder } from '../src/cli/walk.js';
import { apiOf, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';
import { captured } from './helpers/capture.js';


const remote = (p: string, ingestRoot?: string) => ({ id: `fil_${p.replace(/\W/g, '')}`, path: p, status: 'ready', ingestRoot });

t.test('decideRemovals: consent, ownership and the empty folder', async (t) => {
  const files = [remote('/own.md', '/src'), remote('/api.md'), remote('/other.md', '/elsewhere')];
  const base = { prune: false, confirmed: false, allowEmpty: false, localCount: 3 };
  const paths = (list: { path: string }[]) => list.map((f) => f.path);

  let d = decideRemovals(files, '/src', base);
  t.same(paths(d.remove), [], 'nothing is removed without consent');
  t.same(paths(d.unconfirmed), ['/own.md']);
  t.same(paths(d.foreign), ['/api.md', '/other.md'], 'files from the API or another folder are foreign');

  d = decideRemovals(files, '/src', { ...base, confirmed: true });
  t.same(paths(d.remove), ['/own.md'], '--yes removes only what this folder ingested');
  t.same(paths(d.foreign), ['/api.md', '/other.md']);

  d = decideRemovals(files, '/src', { ...base, prune: true });
  t.same(paths(d.remove), ['/own.md', '/api.md', '/other.md'], '--prune removes everything the folder lacks');

  d = decideRemovals(files, '/src', { ...base, seenDeleted: new Set(['/own.md', '/api.md']) });
  t.same(paths(d.remove), ['/own.md'], 'a deletion seen happening (watch) removes the own file only');

  for (const policy of [{ ...base, localCount: 0, prune: true }, { ...base, localCount: 0, confirmed: true }]) {
    d = decideRemovals(files, '/src', policy);
    t.ok(d.emptyFolder, 'an empty folder holds every deletion back');
    t.same(d.remove, []);
  }
  d = decideRemovals(files, '/src', { ...base, localCount: 0, prune: true, allowEmpty: true });
  t.same(paths(d.remove), ['/own.md', '/api.md', '/other.md'], '--allow-empty lets it through');
  t.notOk(decideRemovals([remote('/api.md')], '/src', { ...base, localCount: 0 }).emptyFolder, 'nothing would be removed: no refusal');
});

t.test('secret-looking names', async (t) => {
  for (const name of ['.env', '.env.local', 'server.pem', 'tls.key', 'id_rsa', 'id_ed25519.pub', '.npmrc', '.netrc', '_netrc', 'cert.p12', 'a.pfx', 'credentials', 'credentials.json', 'client_secret_123.json']) {
    t.ok(isSecretFileName(name), name);
  }
  for (const name of ['notes.md', 'environment.md', 'keys.md', 'id_card.txt', 'README']) t.notOk(isSecretFileName(name), name);
});

t.test('walkFolder leaves out dotfiles and secrets unless asked', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'trove-walk-hidden-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(path.join(root, '.github'));
  await mkdir(path.join(root, 'keys'));
  await writeFile(path.join(root, 'a.md'), 'a');
  await writeFile(path.join(root, '.env'), 'secret=1');
  await writeFile(path.join(root, '.prettierrc'), '{}');
  await writeFile(path.join(root, '.github', 'guide.md'), 'g');
  await writeFile(path.join(root, '.github', 'id_rsa'), 'k');
  await writeFile(path.join(root, 'keys', 'server.pem'), 'k');
  await writeFile(path.join(root, '.gitignore'), 'ignored.env\n');
  await writeFile(path.join(root, 'ignored.env'), 'x');

  const plain = await walkFolder(root);
  t.same(plain.files.map((f) => f.path), ['/a.md']);
  t.same(plain.excluded, [
    { path: '/.env', kind: 'secret', folder: false },
    { path: '/.github', kind: 'hidden', folder: true },
    { path: '/.prettierrc', kind: 'hidden', folder: false },
    { path: '/keys/server.pem', kind: 'secret', folder: false },
  ]);
  const hidden = await walkFolder(root, { hidden: true });
  t.same(hidden.files.map((f) => f.path), ['/.github/guide.md', '/.prettierrc', '/a.md'], '--hidden still leaves secrets out');
  const all = await walkFolder(root, { hidden: true, secrets: true });
  t.same(all.files.map((f) => f.path), ['/.env', '/.github/guide.md', '/.github/id_rsa', '/.prettierrc', '/a.md', '/keys/server.pem']);
});


t.test('runIngest against a real daemon', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const api = apiOf(daemon);
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-mirror-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const folder = path.join(work, 'src');
  await mkdir(folder);
  const write = (name: string, text: string) => writeFile(path.join(folder, name), text);
  const globals = { url: daemon.url, key: daemon.key };
  const ingest = (opts: IngestOptions = {}) => captured(() => runIngest(folder, globals, { namespace: 'm', collection: 'c', json: true, ...opts }));
  const listed = async () =>
    (await api<{ items: { path: string; metadata: Record<string, unknown> }[] }>('GET', '/namespaces/m/collections/c/files?limit=100')).body.items
      .map((f) => f.path)
      .sort();

  await write('a.md', 'Alpha: the first letter.\n');
  await write('b.md', 'Bravo: well done.\n');
  await write('.env', 'secret=1\n');
  let run = await ingest();
  t.equal(run.value, 0, run.stderr);
  t.same(await listed(), ['/a.md', '/b.md'], '.env is not ingested');
  const summary = JSON.parse(run.stdout) as { excluded: { path: string; kind: string }[] };
  t.same(summary.excluded, [{ path: '/.env', kind: 'secret', folder: false }]);
  const files = (await api<{ items: { path: string; metadata: Record<string, unknown> }[] }>('GET', '/namespaces/m/collections/c/files')).body.items;
  t.ok(files.every((f) => typeof f.metadata[INGEST_ROOT_KEY] === 'string'), 'each file records the folder it came from');

  // A file added through the API: not this folder's.
  t.equal((await api('POST', '/namespaces/m/collections/c/files', { path: '/api.md', source: { type: 'inline', content_type: 'text/markdown', text: 'from the API' } })).status, 202);

  await unlink(path.join(folder, 'b.md'));
  run = await ingest({ dryRun: true });
  t.equal(run.value, 0, run.stderr);
  const plan = JSON.parse(run.stdout) as { remove: unknown[]; not_removed: { unconfirmed: string[]; foreign: string[] }; excluded: unknown[] };
  t.same(plan.remove, [], 'the dry run shows nothing removed without consent');
  t.same(plan.not_removed, { unconfirmed: ['/b.md'], foreign: ['/api.md'], empty_folder: false });
  t.equal(plan.excluded.length, 1, 'and lists what is left out');

  run = await ingest({ json: false });
  t.equal(run.value, 2, 'without a terminal or a flag, held-back deletions exit 2');
  t.match(run.stderr, /1 file of m\/c is no longer in .* and would be removed: stdin is not a terminal, so trove did not ask; pass --yes \(or --prune\)/);
  t.match(run.stderr, /1 file of m\/c was not ingested from .* left alone; --prune removes/);
  t.match(run.stderr, /left out 1 secret-looking file or folder \(--include-secrets takes them/);
  t.same(await listed(), ['/a.md', '/api.md', '/b.md'], 'nothing was deleted');

  run = await ingest({ yes: true });
  t.equal(run.value, 0, run.stderr);
  t.same(await listed(), ['/a.md', '/api.md'], '--yes removes the own file, not the API one');

  await unlink(path.join(folder, 'a.md'));
  run = await ingest({ prune: true, json: false });
  t.equal(run.value, 2, 'an empty folder is refused even with --prune');
  t.match(run.stderr, /has no files to ingest \(left out 1 secret-looking file or folder\), so mirroring it would remove all 2 files of m\/c\. Nothing was changed/);
  t.same(await listed(), ['/a.md', '/api.md']);

  await write('c.md', 'Charlie.\n');
  run = await ingest({ prune: true });
  t.equal(run.value, 0, run.stderr);
  t.same(await listed(), ['/c.md'], '--prune removes the API file too');

  run = await ingest({ includeSecrets: true, hidden: true });
  t.equal(run.value, 0, run.stderr);
  t.same(await listed(), ['/.env', '/c.md'], '--include-secrets lets .env in');
});

t.test('the built CLI: an empty folder empties nothing, .env is not searchable', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-mirror-cli-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const full = path.join(work, 'full');
  const empty = path.join(work, 'empty');
  await mkdir(full);
  await mkdir(empty);
  await writeFile(path.join(full, 'note.md'), 'The heron waited by the weir.\n');
  await writeFile(path.join(full, '.env'), 'secret=1\n');
  const conn = ['--url', daemon.url, '--key', daemon.key];
  const first = await runCliInProcess([...conn, 'ingest', full, '-n', 'x', '-c', 'y']);
  t.equal(first.code, 0, first.stderr);
  const emptied = await runCliInProcess([...conn, 'ingest', empty, '-n', 'x', '-c', 'y', '--prune']);
  t.equal(emptied.code, 2, emptied.stderr);
  t.match(emptied.stderr, /has no files to ingest, so mirroring it would remove all 1 file of x\/y/);
  // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
  const search = await runCli([...conn, 'search', 'x/y', 'secret', '--mode', 'keyword', '--json']);
  t.equal(search.code, 0, search.stderr);
  t.equal(search.stderr, '');
  t.same((JSON.parse(search.stdout) as { results: unknown[] }).results, [], 'secret=1 is not searchable');
  const heron = await runCliInProcess([...conn, 'search', 'x/y', 'heron', '--mode', 'keyword', '--json']);
  t.equal((JSON.parse(heron.stdout) as { results: unknown[] }).results.length, 1, 'the collection was not emptied');
});
