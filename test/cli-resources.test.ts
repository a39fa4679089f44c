// End to end: `trove ns`, `trove collections` and `trove files` against a real daemon process, each
// command's effect checked through the HTTP API; plus bad input, the no-TTY refusal of destructive
// commands, the TTY prompt itself, and the help of every resource command. Commands run in-process
// (runCliInProcess); one runs through the real entry, and the prompt needs a real terminal.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { registerResourceCommands } from '../src/cli/groups/resources.js';
import { apiOf, BIN, cleanEnv, humanError, newClusterKey, ok, parseJson, ROOT, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';


const KEY = newClusterKey();
const work = await mkdtemp(path.join(os.tmpdir(), 'trove-cli-resources-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const daemon = await startDaemonProcess({ key: KEY, args: ['--allow-file-root', work] });
t.teardown(() => daemon.kill());

const conn = ['--url', daemon.url, '--key', KEY];
const cli = (args: string[], options: { input?: string } = {}) => runCliInProcess([...conn, ...args], options);

const api = apiOf(daemon);


interface Namespace {
  id: string;
  name: string;
  display_name: string | null;
}
interface Collection {
  id: string;
  name: string;
  display_name: string | null;
  access_control: string;
  processing: { keyword: boolean; semantic: boolean; ocr: boolean; chunk_tokens?: number };
}
interface Job {
  id: string;
  type: string;
  status: string;
}
interface FileRes {
  id: string;
  path: string;
  status: string;
  metadata: Record<string, unknown>;
  source: { type: string; checksum?: string; uri?: string };
  updated_at: string;
}
interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

t.test('ns create, list, get and delete', async (t) => {
  const made = await cli(['ns', 'create', 'alpha', '--display-name', 'Alpha team', '--json']);
  t.equal(made.code, 0, ok(made));
  const alpha = parseJson<Namespace>(made);
  t.match(alpha, { id: /^ns_/, name: 'alpha', display_name: 'Alpha team' });
  t.match((await api<Namespace>('GET', '/namespaces/alpha')).body, { id: alpha.id, display_name: 'Alpha team' }, 'the API has it');

  const [again, existOk, badName] = await Promise.all([
    cli(['ns', 'create', 'alpha']),
    cli(['ns', 'create', 'alpha', '--exist-ok', '--json']),
    // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
    runCli([...conn, 'ns', 'create', 'Not A Name', '--json']),
  ]);
  t.equal(again.code, 6, 'a taken name exits with the already_exists code');
  t.match(again.stderr, humanError('already_exists'));
  t.equal(existOk.code, 0, ok(existOk));
  t.equal(parseJson<Namespace>(existOk).id, alpha.id, '--exist-ok returns the same namespace');
  t.equal(badName.code, 2, 'an invalid name is invalid_request (2)');
  t.match(JSON.parse(badName.stderr), { error: { code: 'invalid_request', request_id: /^req_/ } }, '--json errors are the envelope on stderr');
  t.equal(badName.stdout, '');

  t.equal((await api('POST', '/namespaces', { name: 'beta' })).status, 201);
  const [page, firstRun, allRun, human, badLimit, got, gotHuman, missing] = await Promise.all([
    cli(['ns', 'list', '--json']),
    cli(['ns', 'list', '--limit', '1', '--json']),
    cli(['ns', 'list', '--all', '--limit', '1', '--json']),
    cli(['ns', 'list']),
    cli(['ns', 'list', '--limit', '0']),
    cli(['ns', 'get', alpha.id, '--json']),
    cli(['ns', 'get', 'alpha']),
    cli(['ns', 'get', 'nope']),
  ]);
  t.equal(page.code, 0, ok(page));
  const listed = parseJson<Page<Namespace>>(page);
  t.same(listed.items.map((n) => n.name).sort(), (await api<Page<Namespace>>('GET', '/namespaces')).body.items.map((n) => n.name).sort(), 'the page is the API page');
  t.ok(listed.items.some((n) => n.id === alpha.id));
  const first = parseJson<Page<Namespace>>(firstRun);
  t.equal(first.items.length, 1);
  t.type(first.next_cursor, 'string', 'a cut page carries next_cursor');
  const second = parseJson<Page<Namespace>>(await cli(['ns', 'list', '--limit', '1', '--cursor', first.next_cursor!, '--json']));
  t.not(second.items[0]?.id, first.items[0]?.id, '--cursor continues');
  const all = parseJson<Namespace[]>(allRun);
  t.ok(Array.isArray(all) && all.length >= 2, '--all prints every item as one array');
  t.match(human.stdout, /^ID\s+NAME\s+COLLECTIONS\s+FILES\s+DISPLAY NAME$/m);
  t.match(human.stdout, new RegExp(`^${alpha.id}\\s+alpha\\s+0\\s+0\\s+Alpha team$`, 'm'), 'a table row with the ID');
  t.equal(badLimit.code, 2, '--limit 0 is refused');
  t.match(badLimit.stderr, /--limit must be an integer from 1 to 100/);
  t.equal(parseJson<Namespace>(got).name, 'alpha', 'get by ID');
  t.match(gotHuman.stdout, new RegExp(`^id:\\s+${alpha.id}$`, 'm'));
  t.match(gotHuman.stdout, /^display name:\s+Alpha team$/m);
  t.equal(missing.code, 5, 'an unknown namespace exits with the not_found code');
  t.match(missing.stderr, humanError('not_found'));

  t.equal((await api('POST', '/namespaces/alpha/collections', { name: 'inside' })).status, 201);
  const [refused, needsForce, unknownDelete] = await Promise.all([cli(['ns', 'delete', 'beta']), cli(['ns', 'delete', 'alpha', '--yes']), cli(['ns', 'delete', 'nope', '--yes'])]);
  t.equal(refused.code, 2, 'no --yes and no terminal: refused');
  t.match(refused.stderr, /--yes/, 'the message names --yes');
  t.equal((await api('GET', '/namespaces/beta')).status, 200, 'nothing was deleted');
  t.equal(unknownDelete.code, 5, 'deleting an unknown namespace is not_found');
  t.equal(needsForce.code, 2, 'a namespace with collections needs --force');
  t.match(needsForce.stderr, /--force/);
  t.equal((await api('GET', '/namespaces/alpha')).status, 200, 'still there');
  const [deleted, deletedHuman] = await Promise.all([cli(['ns', 'delete', 'alpha', '--yes', '--force', '--json']), cli(['ns', 'delete', 'beta', '-y'])]);
  t.equal(deleted.code, 0, ok(deleted));
  t.match(parseJson<{ job: Job }>(deleted), { job: { id: /^job_/, type: 'delete_namespace' } });
  t.equal((await api('GET', '/namespaces/alpha')).status, 404, 'the namespace is gone');
  t.equal(deletedHuman.code, 0, ok(deletedHuman));
  t.match(deletedHuman.stdout, /^job:\s+job_\w+$/m);
  t.equal((await api('GET', '/namespaces/beta')).status, 404);
});

t.test('ns restore brings a deleted namespace back (operator channel)', async (t) => {
  t.equal((await api('POST', '/namespaces', { name: 'gamma' })).status, 201);
  t.equal((await api('DELETE', '/namespaces/gamma', {})).status, 202);
  const restored = await runCliInProcess([...conn, '--data-dir', daemon.dataDir, 'ns', 'restore', 'gamma', '--json']);
  t.equal(restored.code, 0, ok(restored));
  t.equal((await api('GET', '/namespaces/gamma')).status, 200, 'the namespace is back');
});

/** Runs the CLI under `script`, so that stdin and stdout are a terminal, and answers the prompt. */
function runInTerminal(args: string[], answer: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, BIN, '--url', daemon.url, '--key', KEY, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (!answered && output.includes('(y/N)')) {
        answered = true;
        child.stdin.write(answer + '\r');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

t.test('on a terminal, a destructive command asks first', { skip: existsSync('/usr/bin/script') ? false : 'needs util-linux script for a pseudo-terminal' }, async (t) => {
  t.equal((await api('POST', '/namespaces', { name: 'asked' })).status, 201);
  const declined = await runInTerminal(['ns', 'delete', 'asked'], 'n');
  t.match(declined.output, /Delete namespace asked \(ns_\w+\)\?/, 'the question names the namespace and its ID');
  t.equal(declined.code, 1, '"no" exits 1');
  t.match(declined.output, /Canceled; nothing was changed/);
  t.equal((await api('GET', '/namespaces/asked')).status, 200, 'declined: nothing deleted');
  const accepted = await runInTerminal(['ns', 'delete', 'asked'], 'y');
  t.equal(accepted.code, 0, `"yes" deletes (${accepted.output})`);
  t.equal((await api('GET', '/namespaces/asked')).status, 404, 'accepted: deleted');
});

t.test('collections create, list, get, update, reindex and delete', async (t) => {
  t.equal((await api('POST', '/namespaces', { name: 'demo' })).status, 201);
  const made = await cli(['collections', 'create', 'demo/notes', '--no-semantic', '--chunk-tokens', '128', '--display-name', 'Notes', '--json']);
  t.equal(made.code, 0, ok(made));
  const notes = parseJson<Collection>(made);
  const stored = (await api<Collection>('GET', '/namespaces/demo/collections/notes')).body;
  t.match(stored, { id: notes.id, display_name: 'Notes', access_control: 'off', processing: { keyword: true, semantic: false, ocr: true, chunk_tokens: 128 } }, 'the processing flags reached the API');

  const enforced = await cli(['collections', 'create', 'hr', '-n', 'demo', '--access-control', 'enforced', '--no-ocr']);
  t.equal(enforced.code, 0, ok(enforced));
  t.match(enforced.stdout, /^id:\s+col_\w+$/m, 'human output shows the ID');
  t.match((await api<Collection>('GET', '/namespaces/demo/collections/hr')).body, { access_control: 'enforced', processing: { ocr: false, semantic: true } });

  const [conflict, tooSmall, badChoice, noNamespace, pageRun, allRun, table, got, missing, nothing] = await Promise.all([
    cli(['collections', 'create', 'demo/x', '-n', 'other']),
    cli(['collections', 'create', 'demo/tiny', '--chunk-tokens', '10']),
    cli(['collections', 'create', 'demo/tiny', '--access-control', 'sometimes']),
    cli(['collections', 'create', 'ghost/c']),
    cli(['collections', 'list', '-n', 'demo', '--json']),
    cli(['collections', 'list', '-n', 'demo', '--all', '--limit', '1', '--json']),
    cli(['collections', 'list', '-n', 'demo']),
    cli(['collections', 'get', 'demo/notes', '--json']),
    cli(['collections', 'get', 'demo/nope', '--json']),
    cli(['collections', 'update', 'demo/notes']),
  ]);
  t.equal(conflict.code, 2, 'namespace given twice, differently');
  t.equal(tooSmall.code, 2, '--chunk-tokens out of range');
  t.match(tooSmall.stderr, /--chunk-tokens must be an integer from 64 to 2048/);
  t.equal(badChoice.code, 2, 'a bad choice is a usage error (2)');
  t.equal((await api('GET', '/namespaces/demo/collections/tiny')).status, 404, 'nothing was created');
  t.equal(noNamespace.code, 5, 'an unknown namespace is not_found');
  t.same(parseJson<Page<Collection>>(pageRun).items.map((c) => c.name).sort(), ['hr', 'notes']);
  t.same(parseJson<Collection[]>(allRun).map((c) => c.name).sort(), ['hr', 'notes'], '--all follows the cursors');
  t.match(table.stdout, new RegExp(`^${notes.id}\\s+notes\\s+empty\\s+0\\s+0\\s+0\\s+off$`, 'm'));
  t.equal(parseJson<Collection>(got).id, notes.id);
  t.equal(missing.code, 5);
  t.match(JSON.parse(missing.stderr), { error: { code: 'not_found', request_id: /^req_/ } });
  t.equal(nothing.code, 2, 'update without a change');
  t.match(nothing.stderr, /Nothing to update/);
  const relabel = await cli(['collections', 'update', 'demo/notes', '--display-name', '', '--json']);
  t.equal(relabel.code, 0, ok(relabel));
  t.equal((await api<Collection>('GET', '/namespaces/demo/collections/notes')).body.display_name, null, 'an empty --display-name clears it');
  const semantic = await cli(['collections', 'update', 'demo/notes', '--semantic', '--json']);
  t.equal(semantic.code, 0, ok(semantic));
  t.match(parseJson(semantic), { collection: { id: notes.id }, job: { type: 'reindex_collection' } }, 'turning semantic on needs a reindex');
  t.match(
    (await api<Collection>('GET', '/namespaces/demo/collections/notes')).body.processing,
    { semantic: true, keyword: true, chunk_tokens: 128 },
    'flags not given keep their values (the profile is merged, not replaced)',
  );

  const [queued, waited, refused] = await Promise.all([
    cli(['collections', 'reindex', 'demo/notes', '--json']),
    cli(['collections', 'reindex', 'notes', '-n', 'demo', '--wait', '--json']),
    cli(['collections', 'delete', 'demo/hr']),
  ]);
  t.equal(queued.code, 0, ok(queued));
  t.match(parseJson<{ job: Job }>(queued), { job: { type: 'reindex_collection', id: /^job_/ } });
  t.equal(waited.code, 0, ok(waited));
  const job = parseJson<{ job: Job }>(waited).job;
  t.equal(job.status, 'succeeded', '--wait returns the finished job');
  t.equal((await api<Job>('GET', `/jobs/${job.id}`)).body.status, 'succeeded', 'the API agrees');

  t.equal(refused.code, 2);
  t.match(refused.stderr, /pass --yes/);
  t.equal((await api('GET', '/namespaces/demo/collections/hr')).status, 200, 'not deleted without --yes');
  const deleted = await cli(['collections', 'delete', 'demo/hr', '--yes', '--json']);
  t.equal(deleted.code, 0, ok(deleted));
  t.match(parseJson<{ job: Job }>(deleted), { job: { type: 'delete_collection' } });
  t.equal((await api('GET', '/namespaces/demo/collections/hr')).status, 404, 'deleted');
  t.equal((await cli(['collections', 'delete', 'demo/hr', '--yes'])).code, 5, 'deleting it again: not_found');
});

t.test('files add, list, get, reindex and delete', async (t) => {
  const base = '/namespaces/demo/collections/notes';
  const local = path.join(work, 'harbour.md');
  const localText = '# Harbour\n\nThe lighthouse keeper logged every ferry crossing in a green ledger.\n';
  await writeFile(local, localText);
  const remoteDoc = path.join(work, 'remote.txt');
  await writeFile(remoteDoc, 'Quartz crystals hum faintly in the cold cellar.\n');

  // Sequential: the list order below is the order they were added.
  const inline = await cli(['files', 'add', 'demo/notes', '--text', 'Cats purr when content; dogs wag their tails.', '--path', '/pets/cats.md', '--metadata', '{"team":"pets","year":2024}', '--wait', '--json']);
  t.equal(inline.code, 0, ok(inline));
  const cats = parseJson<{ file: FileRes; job: Job }>(inline);
  t.match(cats, { file: { path: '/pets/cats.md', status: 'ready', source: { type: 'inline' } }, job: { type: 'index_file', status: 'succeeded' } });
  t.same((await api<FileRes>('GET', `${base}/files/${encodeURIComponent('/pets/cats.md')}`)).body.metadata, { team: 'pets', year: 2024 }, 'metadata reached the API');

  const uploaded = await cli(['files', 'add', 'demo/notes', local, '--wait', '--json']);
  t.equal(uploaded.code, 0, ok(uploaded));
  const harbour = parseJson<{ file: FileRes }>(uploaded).file;
  t.match(harbour, { path: '/harbour.md', status: 'ready', source: { type: 'upload', checksum: `sha256:${createHash('sha256').update(localText).digest('hex')}` } });
  const search = await api<{ results: { path: string }[] }>('POST', `${base}:search`, { query: 'lighthouse ferry ledger', mode: 'keyword' });
  t.equal(search.body.results[0]?.path, '/harbour.md', 'the uploaded bytes were indexed');

  const renamed = await cli(['files', 'add', 'demo/notes', local, '--path', '/docs/renamed.md', '--metadata', '{"kind":"copy"}']);
  t.equal(renamed.code, 0, ok(renamed));
  t.match(renamed.stdout, /^path:\s+\/docs\/renamed\.md$/m, 'human output of add');
  t.match(renamed.stdout, /^job:\s+job_\w+$/m);
  t.match((await api<FileRes>('GET', `${base}/files/${encodeURIComponent('/docs/renamed.md')}`)).body, { metadata: { kind: 'copy' }, source: { type: 'upload' } });

  const byUri = await cli(['files', 'add', 'demo/notes', '--uri', pathToFileURL(remoteDoc).href, '--wait', '--json']);
  t.equal(byUri.code, 0, ok(byUri));
  t.match(parseJson<{ file: FileRes }>(byUri).file, { path: '/remote.txt', status: 'ready', source: { type: 'uri', uri: pathToFileURL(remoteDoc).href } });

  const countFiles = async () => (await api<Page<FileRes>>('GET', `${base}/files?limit=100`)).body.items.length;
  const before = await countFiles();
  const [badJson, notObject, noSource, twoSources, noPath, noFile, badPath, uriRefused] = await Promise.all([
    cli(['files', 'add', 'demo/notes', '--text', 'x', '--path', '/bad.md', '--metadata', '{team: pets}']),
    cli(['files', 'add', 'demo/notes', '--text', 'x', '--path', '/bad.md', '--metadata', '[1,2]']),
    cli(['files', 'add', 'demo/notes']),
    cli(['files', 'add', 'demo/notes', local, '--text', 'x', '--path', '/x.md']),
    cli(['files', 'add', 'demo/notes', '--text', 'x']),
    cli(['files', 'add', 'demo/notes', path.join(work, 'absent.md')]),
    cli(['files', 'add', 'demo/notes', '--text', 'x', '--path', '/a/../b.md']),
    cli(['files', 'add', 'demo/notes', '--uri', 'file:///etc/hostname']),
  ]);
  t.equal(badJson.code, 2, 'bad JSON in --metadata');
  t.match(badJson.stderr, /--metadata is not valid JSON/);
  t.equal(notObject.code, 2, '--metadata must be an object');
  t.equal(noSource.code, 2, 'no source');
  t.match(noSource.stderr, /exactly one source/);
  t.equal(twoSources.code, 2, 'two sources');
  t.equal(noPath.code, 2, '--text needs --path');
  t.match(noPath.stderr, /--path/);
  t.equal(noFile.code, 2, 'a missing local file');
  t.equal(badPath.code, 2, 'the API refuses a bad path (invalid_request)');
  t.match(badPath.stderr, humanError('invalid_request'));
  t.equal(uriRefused.code, 2, 'a file:// outside the allowed roots is refused');
  t.equal(await countFiles(), before, 'no bad input added a file');

  const [pageRun, cutRun, allRun, prefixedRun, readyRun, badStatus, human, byId, byPath, unknown] = await Promise.all([
    cli(['files', 'list', 'demo/notes', '--json']),
    cli(['files', 'list', 'demo/notes', '--limit', '2', '--json']),
    cli(['files', 'list', 'demo/notes', '--all', '--limit', '1', '--json']),
    cli(['files', 'list', 'demo/notes', '--prefix', '/docs/', '--json']),
    cli(['files', 'list', 'demo/notes', '--status', 'ready', '--json']),
    cli(['files', 'list', 'demo/notes', '--status', 'sleepy']),
    cli(['files', 'list', 'demo/notes']),
    cli(['files', 'get', 'demo/notes', cats.file.id, '--json']),
    cli(['files', 'get', 'demo/notes', '/pets/cats.md']),
    cli(['files', 'get', 'demo/notes', 'fil_doesnotexist']),
  ]);
  t.same(parseJson<Page<FileRes>>(pageRun).items.map((f) => f.path), ['/pets/cats.md', '/harbour.md', '/docs/renamed.md', '/remote.txt'], 'oldest first, as the API lists them');
  const cut = parseJson<Page<FileRes>>(cutRun);
  t.equal(cut.items.length, 2);
  const rest = parseJson<Page<FileRes>>(await cli(['files', 'list', 'demo/notes', '--limit', '2', '--cursor', cut.next_cursor!, '--json']));
  t.same(rest.items.map((f) => f.path), ['/docs/renamed.md', '/remote.txt'], '--cursor continues the list');
  t.equal(parseJson<FileRes[]>(allRun).length, 4, '--all follows every cursor');
  t.same(parseJson<Page<FileRes>>(prefixedRun).items.map((f) => f.path), ['/docs/renamed.md']);
  const ready = parseJson<Page<FileRes>>(readyRun);
  t.ok(ready.items.length >= 3 && ready.items.every((f) => f.status === 'ready'), '--status filters');
  t.equal(badStatus.code, 2);
  t.match(human.stdout, new RegExp(`^${cats.file.id}\\s+/pets/cats\\.md\\s+ready\\s+inline\\s+\\d+\\s+-$`, 'm'));
  t.equal(parseJson<FileRes>(byId).path, '/pets/cats.md', 'get by ID');
  t.match(byPath.stdout, new RegExp(`^id:\\s+${cats.file.id}$`, 'm'), 'get by path');
  t.match(byPath.stdout, /^metadata:\s+\{"team":"pets","year":2024\}$/m);
  t.equal(unknown.code, 5);
  t.match(unknown.stderr, humanError('not_found'));

  const reindexed = await cli(['files', 'reindex', 'demo/notes', '/pets/cats.md', '--wait', '--json']);
  t.equal(reindexed.code, 0, ok(reindexed));
  const again = parseJson<{ file: FileRes; job: Job }>(reindexed);
  t.match(again, { file: { id: cats.file.id, status: 'ready' }, job: { type: 'index_file', status: 'succeeded' } });
  t.not(again.job.id, cats.job.id, 'a new indexing job ran');
  t.same((await api<FileRes>('GET', `${base}/files/${cats.file.id}`)).body.metadata, { team: 'pets', year: 2024 }, 'metadata survives a reindex');
  const catSearch = await api<{ results: { path: string }[] }>('POST', `${base}:search`, { query: 'cats purr', mode: 'keyword' });
  t.equal(catSearch.body.results[0]?.path, '/pets/cats.md', 'the same text is searchable after the reindex');
  const [reUploadRun, reUriRun, refused, unknownDelete] = await Promise.all([
    cli(['files', 'reindex', 'demo/notes', harbour.id, '--wait', '--json']),
    cli(['files', 'reindex', 'demo/notes', '/remote.txt', '--wait', '--json']),
    cli(['files', 'delete', 'demo/notes', '/docs/renamed.md']),
    cli(['files', 'delete', 'demo/notes', 'fil_doesnotexist', '--yes']),
  ]);
  t.match(parseJson<{ file: FileRes; job: Job }>(reUploadRun), { file: { id: harbour.id, status: 'ready', source: { type: 'upload', checksum: harbour.source.checksum } }, job: { status: 'succeeded' } }, 'uploaded bytes come back through the content URL');
  t.match(parseJson<{ file: FileRes; job: Job }>(reUriRun), { file: { status: 'ready', source: { type: 'uri' } }, job: { status: 'succeeded' } });
  t.equal(unknownDelete.code, 5);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /--yes/);
  t.equal((await api('GET', `${base}/files/${encodeURIComponent('/docs/renamed.md')}`)).status, 200, 'not deleted without --yes');
  const deleted = await cli(['files', 'delete', 'demo/notes', '/docs/renamed.md', '--yes', '--json']);
  t.equal(deleted.code, 0, ok(deleted));
  t.match(parseJson<{ job: Job }>(deleted), { job: { type: 'delete_file' } });
  t.equal((await api('GET', `${base}/files/${encodeURIComponent('/docs/renamed.md')}`)).status, 404, 'deleted');
});

t.test('every resource command has a description, documented options and a --help that exits 0', async (t) => {
  const program = new Command('trove');
  const rules = program.command('rules');
  registerResourceCommands(program, rules);
  const groups = ['ns', 'collections', 'files', 'research', 'webhooks', 'events'];
  const commands = [...groups.flatMap((g) => program.commands.find((c) => c.name() === g)!.commands.map((c) => [g, c])), ...rules.commands.map((c) => ['rules', c])] as [string, Command][];
  t.same(
    commands.map(([g, c]) => `${g} ${c.name()}`).sort(),
    [
      'collections create', 'collections delete', 'collections get', 'collections list', 'collections reindex', 'collections update',
      'events tail',
      'files add', 'files delete', 'files get', 'files list', 'files reindex',
      'ns create', 'ns delete', 'ns get', 'ns list', 'ns restore',
      'research cancel', 'research get', 'research start', 'research watch',
      'rules batch',
      'webhooks create', 'webhooks deliveries', 'webhooks delete', 'webhooks get', 'webhooks list', 'webhooks replay', 'webhooks rotate', 'webhooks test', 'webhooks update',
    ].sort(),
  );
  for (const group of groups) t.ok(program.commands.find((c) => c.name() === group)!.description(), `${group} has a description`);
  for (const [group, command] of commands) {
    const name = `${group} ${command.name()}`;
    t.ok(command.description(), `${name} has a description`);
    for (const arg of command.registeredArguments) t.ok(arg.description, `${name} <${arg.name()}> is described`);
    for (const option of command.options) t.ok(option.description, `${name} ${option.flags} is described`);
    t.ok(command.options.some((o) => o.long === '--json'), `${name} takes --json`);
    const help = await runCliInProcess([group, command.name(), '--help']);
    t.equal(help.code, 0, `trove ${name} --help exits 0`);
    t.match(help.stdout, new RegExp(`^Usage: trove ${group} ${command.name()}`, 'm'));
  }
  const missingArg = await runCliInProcess(['files', 'get', 'demo/notes']);
  t.equal(missingArg.code, 2, 'a missing argument exits 2');
  // One argument is the file (the collection may come from -c or the saved default), so with neither it says so.
  t.match(missingArg.stderr, /No collection given and no default saved/);
  t.equal((await runCliInProcess(['ns', 'list', '--bogus'])).code, 2, 'an unknown option exits 2');
  t.equal((await runCliInProcess(['webhooks', 'create', 'hook'])).code, 2, 'a missing <url> exits 2');

  // The same through main's whole program, once per group.
  const spawned = await Promise.all([
    ...groups.map((group) => cli([group, '--help'])),
    cli(['files', 'add', '--help']),
    cli(['files', 'get', 'demo/notes']),
  ]);
  for (const [i, group] of groups.entries()) t.equal(spawned[i]!.code, 0, `trove ${group} --help exits 0`);
  t.match(spawned[groups.length]!.stdout, /--metadata <json>\s+metadata as a JSON object/);
  t.equal(spawned[groups.length + 1]!.code, 2, 'a missing argument exits 2 from the whole program');
});
