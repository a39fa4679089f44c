// End to end: the built CLI against a real daemon process (`npm test` builds before tap runs). Commands
// run in-process (runCliInProcess); the first ingest runs through the real entry.
import t from 'tap';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { cleanEnv, freePort, newClusterKey, parseJson, PUBLISHED_BIN, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const KEY = newClusterKey();
const startDaemon = () => startDaemonProcess({ key: KEY });

interface FileItem {
  path: string;
  status: string;
}

interface SearchBody {
  results: { rank: number; path: string; evidence: { text: string; location?: Record<string, unknown> | null }[] }[];
  warnings: { code: string }[];
}

interface IngestSummary {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  ready: number;
  failed: number;
  failed_files: { path: string; code: string }[];
}

t.test('trove ingest, search and status against a running daemon', async (t) => {
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-e2e-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const folder = path.join(work, 'notes');
  const write = async (rel: string, content: string | Buffer) => {
    await mkdir(path.dirname(path.join(folder, rel)), { recursive: true });
    await writeFile(path.join(folder, rel), content);
  };
  await write('.gitignore', 'private.md\n');
  await write('aurora.md', '# Northern lights\n\nThe aurora borealis shimmered green over the harbour of Tromsø at midnight.\n');
  await write('garden.txt', 'Tomatoes need staking before the first summer storm arrives.\n');
  await write('recipe.json', JSON.stringify({ recipe: { name: 'saffron risotto', minutes: 35 } }));
  await write('deep/trail.md', 'The switchback trail climbs past a frozen waterfall.\n');
  await write('private.md', 'The quokka smiled for the camera.\n');

  const daemon = await startDaemon();
  t.teardown(() => {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
  });
  const conn = ['--url', daemon.url, '--key', KEY];
  const listFiles = async (t: TestContext): Promise<FileItem[]> => {
    const res = await fetch(`${daemon.url}/namespaces/demo/collections/notes/files?limit=100`, { headers: { authorization: `Bearer ${KEY}` } });
    t.equal(res.status, 200, 'list files');
    return ((await res.json()) as { items: FileItem[] }).items.sort((a, b) => a.path.localeCompare(b.path));
  };
  const search = async (t: TestContext, query: string) => {
    // Keyword chosen by name: these checks are about which words a file holds (no mode would mean
    // the API's default, semantic, which always ranks the nearest files).
    const run = await runCliInProcess([...conn, 'search', 'notes', query, '-n', 'demo', '--mode', 'keyword', '--json']);
    t.equal(run.code, 0, `search "${query}" exits 0 (${run.stderr})`);
    return parseJson<SearchBody>(run);
  };

  await t.test('first ingest uploads every file git would track', async (t) => {
    // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
    const run = await runCli([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--json']);
    t.equal(run.code, 0, `exit 0 (${run.stderr})`);
    t.equal(run.stderr, '', '--json writes no progress');
    const summary = parseJson<IngestSummary>(run);
    t.match(summary, { added: 4, updated: 0, removed: 0, unchanged: 0, ready: 4, failed: 0, failed_files: [] });
    const files = await listFiles(t);
    t.same(
      files.map((f) => f.path),
      ['/aurora.md', '/deep/trail.md', '/garden.txt', '/recipe.json'],
    );
    t.ok(files.every((f) => f.status === 'ready'), 'every file is ready');
  });

  await t.test('answer cites the file that holds the answer', async (t) => {
    const run = await runCliInProcess([...conn, 'answer', 'demo/notes', 'what shimmered over the harbour of Tromsø?', '--json']);
    t.equal(run.code, 0, `exit 0 (${run.stderr})`);
    const body = parseJson<{ answer: string; sources: Record<string, { path: string; is_cited: boolean }> }>(run);
    t.match(body.answer, /aurora borealis shimmered green .*\[\[SRC:0001\]\]/);
    t.equal(body.sources['SRC:0001']?.path, '/aurora.md');
    const human = await runCliInProcess([...conn, 'answer', 'notes', 'what shimmered over the harbour?', '-n', 'demo']);
    t.equal(human.code, 0);
    t.match(human.stdout, /Sources:\n  \[SRC:0001\] \/aurora\.md/);
    const bad = await runCliInProcess([...conn, 'answer', 'demo/notes', 'x', '--mode', 'deep']);
    t.not(bad.code, 0, 'a bad --mode is refused');
  });

  await t.test('keys create, list and revoke', async (t) => {
    const made = await runCliInProcess([...conn, 'keys', 'create', 'notes-reader', '--namespace', 'demo', '--collection', 'notes', '--actions', 'search,read', '--json']);
    t.equal(made.code, 0, `exit 0 (${made.stderr})`);
    const key = parseJson<{ id: string; secret: string; scope: unknown }>(made);
    t.same(key.scope, { kind: 'collection', namespace: 'demo', collections: ['notes'], actions: ['search', 'read'] });
    const asReader = await runCliInProcess(['--url', daemon.url, '--key', key.secret, 'search', 'demo/notes', 'aurora', '--json']);
    t.equal(asReader.code, 0, 'the new key searches');
    const listed = await runCliInProcess([...conn, 'keys', 'list']);
    t.match(listed.stdout, new RegExp(`${key.id}\\s+notes-reader\\s+collection demo/notes \\[search,read\\]`));
    t.notMatch(listed.stdout, /trove_[a-z0-9]+_/, 'no secret in the list');
    const revoked = await runCliInProcess([...conn, 'keys', 'revoke', key.id]);
    t.equal(revoked.code, 0);
    t.match(revoked.stdout, /^revoked key_/);
    const after = await runCliInProcess(['--url', daemon.url, '--key', key.secret, 'search', 'demo/notes', 'aurora', '--json']);
    t.equal(after.code, 3, 'a revoked key exits with the unauthenticated code');
    t.match(after.stderr, /"code":"unauthenticated"/);
    const noScope = await runCliInProcess([...conn, 'keys', 'create', 'vague']);
    t.equal(noScope.code, 2, 'a key needs a scope flag');
    t.match(noScope.stderr, /--namespace .*--cluster/);
  });

  await t.test('rules set, list, explain and rm', async (t) => {
    const api = (method: string, p: string, body?: unknown) =>
      fetch(`${daemon.url}${p}`, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    t.equal((await api('POST', '/namespaces/demo/collections', { name: 'private', access_control: 'enforced' })).status, 201);
    const all = await runCliInProcess([...conn, 'rules', 'set', 'demo/private', '/', '--reader', 'staff', 'admins', '--json']);
    t.equal(all.code, 0, `exit 0 (${all.stderr})`);
    const sealed = await runCliInProcess([...conn, 'rules', 'set', 'private', '/payroll/', '--reader', 'payroll', '--sealed', '-n', 'demo']);
    t.equal(sealed.code, 0);
    t.match(sealed.stdout, /folder \/payroll\/ \(sealed\)\s+readers: payroll/);
    await runCliInProcess([...conn, 'rules', 'set', 'demo/private', '/payroll/ceo.md', '--reader', 'ceo']);
    const list = await runCliInProcess([...conn, 'rules', 'list', 'demo/private', '--json']);
    t.same(parseJson<{ folder: string | null; file: string | null }[]>(list).map((r) => r.folder ?? r.file), ['/', '/payroll/', '/payroll/ceo.md']);
    const explain = await runCliInProcess([...conn, 'rules', 'explain', 'demo/private', '/payroll/ceo.md', '--json']);
    t.match(parseJson<{ governing_rule: { folder: string }; readers: string[] }>(explain), { governing_rule: { folder: '/payroll/' }, readers: ['payroll'] }, 'the sealed folder governs, not the file rule');
    const human = await runCliInProcess([...conn, 'rules', 'explain', 'demo/private', '/handbook.md']);
    t.match(human.stdout, /^\/handbook\.md: governed by acr_\w+\s+folder \/\s+readers: staff, admins/);
    const payroll = parseJson<{ id: string; folder: string | null }[]>(list).find((r) => r.folder === '/payroll/')!;
    const rm = await runCliInProcess([...conn, 'rules', 'rm', 'demo/private', payroll.id]);
    t.equal(rm.code, 0);
    t.match(rm.stdout, /^deleted acr_/);
    const after = await runCliInProcess([...conn, 'rules', 'explain', 'demo/private', '/payroll/ceo.md', '--json']);
    t.match(parseJson<{ governing_rule: { file: string } }>(after), { governing_rule: { file: '/payroll/ceo.md' } }, 'without the seal the file rule governs');
    const bad = await runCliInProcess([...conn, 'rules', 'set', 'demo/private', 'payroll', '--reader', 'x']);
    t.equal(bad.code, 2, 'a path must start with /');
  });

  await t.test('search finds the right file with evidence', async (t) => {
    const body = await search(t, 'aurora borealis');
    t.equal(body.results[0]?.rank, 1);
    t.equal(body.results[0]?.path, '/aurora.md');
    t.ok(body.results[0]!.evidence.length > 0, 'has evidence');
    t.match(body.results[0]!.evidence[0]!.text, /aurora/i);

    t.same((await search(t, 'quokka')).results, [], 'a gitignored file is not indexed');

    const human = await runCliInProcess([...conn, 'search', 'demo/notes', 'saffron risotto']);
    t.equal(human.code, 0, human.stderr);
    t.match(human.stdout, /^\s*1\. \/recipe\.json +\(score [-\d.e+]+\)\n\s+\$\.recipe\S*\s+.*saffron/m, 'rank, path, score and a JSON path location');

    const text = await runCliInProcess([...conn, 'search', 'notes', 'frozen waterfall', '--namespace', 'demo']);
    t.equal(text.code, 0, text.stderr);
    t.match(text.stdout, /1\. \/deep\/trail\.md .*\n\s+chars \d+-\d+\s+The switchback trail/);
  });

  await t.test('a changed folder: dry run changes nothing, then the re-run mirrors it', async (t) => {
    await write('garden.txt', 'Courgettes multiply faster than anyone can eat them.\n');
    await unlink(path.join(folder, 'recipe.json'));
    await write('deep/new.md', 'A lighthouse keeper logged every passing ship.\n');
    const before = await listFiles(t);

    const dryJson = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--dry-run', '--yes', '--json']);
    t.equal(dryJson.code, 0, dryJson.stderr);
    const plan = parseJson<{ counts: Record<string, number>; add: { path: string }[]; update: { path: string }[]; remove: { path: string }[] }>(dryJson);
    t.same(plan.counts, { add: 1, update: 1, remove: 1, unchanged: 2 });
    t.same([plan.add[0]?.path, plan.update[0]?.path, plan.remove[0]?.path], ['/deep/new.md', '/garden.txt', '/recipe.json']);

    const dryHuman = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--dry-run', '--yes']);
    t.equal(dryHuman.code, 0, dryHuman.stderr);
    t.match(dryHuman.stdout, /^\+ \/deep\/new\.md$/m);
    t.match(dryHuman.stdout, /^~ \/garden\.txt$/m);
    t.match(dryHuman.stdout, /^- \/recipe\.json$/m);
    t.match(dryHuman.stdout, /1 to add, 1 to update, 1 to remove, 2 unchanged/);
    t.same(await listFiles(t), before, 'a dry run changes nothing');

    const run = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--yes', '--json']);
    t.equal(run.code, 0, run.stderr);
    t.match(parseJson<IngestSummary>(run), { added: 1, updated: 1, removed: 1, unchanged: 2, ready: 4, failed: 0 });
    t.same(
      (await listFiles(t)).map((f) => f.path),
      ['/aurora.md', '/deep/new.md', '/deep/trail.md', '/garden.txt'],
    );
    t.same((await search(t, 'saffron')).results, [], 'the deleted file is gone from search');
    t.equal((await search(t, 'courgettes')).results[0]?.path, '/garden.txt', 'the updated file is searched with its new text');
    t.same((await search(t, 'tomatoes')).results, [], 'its old text is gone');

    const again = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--json']);
    t.equal(again.code, 0, again.stderr);
    t.match(parseJson<IngestSummary>(again), { added: 0, updated: 0, removed: 0, unchanged: 4 });
  });

  await t.test('a file that fails to index makes ingest exit non-zero and is named', async (t) => {
    // A PDF by its name and its first bytes, so the plan sends it, whose body no PDF reader can open.
    await write('broken.pdf', Buffer.from('%PDF-1.7\n\x00\x01 this is not the rest of a PDF\n'));
    const run = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes']);
    t.not(run.code, 0, 'non-zero exit');
    t.match(run.stdout, /1 added/);
    t.match(run.stdout, /^failed \/broken\.pdf: \w+/m);

    await unlink(path.join(folder, 'broken.pdf'));
    const cleaned = await runCliInProcess([...conn, 'ingest', folder, '-n', 'demo', '-c', 'notes', '--prune', '--json']);
    t.equal(cleaned.code, 0, cleaned.stderr);
    t.match(parseJson<IngestSummary>(cleaned), { removed: 1, failed: 0 });
  });

  await t.test('status', async (t) => {
    const run = await runCliInProcess([...conn, 'status', '--json']);
    t.equal(run.code, 0, run.stderr);
    const status = parseJson<{ up: boolean; namespaces: { name: string; collections: { name: string; status: string; file_counts: Record<string, number> }[] }[] }>(run);
    t.equal(status.up, true);
    const demo = status.namespaces.find((ns) => ns.name === 'demo');
    t.match(demo?.collections, [{ name: 'notes', status: 'ready', file_counts: { ready: 4, pending: 0, indexing: 0, failed: 0 } }]);

    const fromKeyFile = await runCliInProcess(['--url', daemon.url, '--data-dir', daemon.dataDir, 'status']);
    t.equal(fromKeyFile.code, 0, `the key is read from <data-dir>/cluster-key (${fromKeyFile.stderr})`);
    t.match(fromKeyFile.stdout, /namespace demo[\s\S]*notes\s+ready\s+4 ready/);

    const down = `http://127.0.0.1:${await freePort()}`;
    const downRun = await runCliInProcess(['--url', down, '--key', KEY, 'status']);
    t.equal(downRun.code, 9, 'exit 9 when the daemon is down');
    t.match(downRun.stderr, `No daemon at ${down}: start one with \`trove daemon start\``);
    const downJson = await runCliInProcess(['--url', down, '--key', KEY, 'status', '--json']);
    t.equal(downJson.code, 9);
    t.match(parseJson(downJson), { url: down, up: false });
  });

  await t.test('errors map to exit codes', async (t) => {
    const badJson = await runCliInProcess([...conn, 'search', 'notes', 'x', '-n', 'demo', '--filter', '{not json']);
    t.equal(badJson.code, 2, 'unparseable --filter exits 2');
    t.match(badJson.stderr, /--filter is not valid JSON/);

    const badField = await runCliInProcess([...conn, 'search', 'notes', 'x', '-n', 'demo', '--filter', '{"field":"colour","op":"eq","value":"red"}']);
    t.equal(badField.code, 2, 'invalid_filter exits 2');
    t.match(badField.stderr, /^error invalid_filter: .* \(request req_\w+\)$/m);

    const wrongKey = await runCliInProcess(['--url', daemon.url, '--key', 'trove_wrong_key', 'search', 'notes', 'aurora', '-n', 'demo']);
    t.equal(wrongKey.code, 3, 'unauthenticated exits 3');
    t.match(wrongKey.stderr, /^error unauthenticated: .+ \(request req_\w+\)$/m);
    const wrongKeyJson = await runCliInProcess(['--url', daemon.url, '--key', 'trove_wrong_key', 'ingest', folder, '-n', 'demo', '-c', 'notes', '--json']);
    t.equal(wrongKeyJson.code, 3);
    t.match(JSON.parse(wrongKeyJson.stderr), { error: { code: 'unauthenticated', request_id: /^req_/ } });

    const missing = await runCliInProcess([...conn, 'search', 'nope', 'x', '-n', 'demo']);
    t.equal(missing.code, 5, 'not_found exits 5');
  });

  await t.test('the daemon stops cleanly on SIGTERM', async (t) => {
    daemon.child.kill('SIGTERM');
    const { code, signal } = await daemon.exited;
    t.equal(signal, null);
    t.equal(code, 0, `exit 0 (${daemon.stderr()})`);
  });
});

t.test('bin/trove, the published entry, runs the built CLI', async (t) => {
  const run = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [PUBLISHED_BIN, '--help'], { env: cleanEnv() });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
  t.equal(run.code, 0);
  t.match(run.stdout, /Usage: trove/);
});
