// End to end: `trove research`, `trove events tail` and `trove rules batch` against real daemon
// processes, each command's effect checked through the HTTP API. Commands run in-process
// (runCliInProcess); one runs through the real entry, and the ones that keep running (watch, tail
// --follow) in processes of their own.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, cleanEnv, humanError, newClusterKey, ok, parseJson, ROOT, runCli, runCliInProcess, startDaemonProcess, type CliRun, type DaemonProcess } from './helpers/cli.js';
import { PATIENCE_MS } from './helpers/wait.js';


const work = await mkdtemp(path.join(os.tmpdir(), 'trove-cli-research-'));
t.teardown(() => rm(work, { recursive: true, force: true }));

const KEY = newClusterKey();
const daemon = await startDaemonProcess({ key: KEY });
t.teardown(() => daemon.kill());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function client(d: DaemonProcess, key = d.key) {
  const cli = (args: string[], options: { input?: string } = {}) => runCliInProcess(['--url', d.url, '--key', key, ...args], options);
  const api = async <T = Record<string, unknown>>(method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${d.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
  return { cli, api };
}

const { cli, api } = client(daemon);

interface Run {
  id: string;
  status: string;
  progress: { stage: string; step: number; total_steps: number } | null;
  answer: string | null;
  sources: Record<string, { path: string; is_cited: boolean }> | null;
}
interface Event {
  id: string;
  type: string;
  data: Record<string, unknown>;
}
interface Rule {
  id: string;
  folder: string | null;
  file: string | null;
  readers: string[];
  sealed: boolean;
}

/** A collection with a few ready inline files, made through the API. */
async function seed(api: ReturnType<typeof client>['api'], ns: string, col: string, files: Record<string, string>, extra: Record<string, unknown> = {}) {
  await api('POST', '/namespaces', { name: ns, exist_ok: true });
  await api('POST', `/namespaces/${ns}/collections`, { name: col, ...extra });
  for (const [p, text] of Object.entries(files)) {
    const res = await api('POST', `/namespaces/${ns}/collections/${col}/files`, { path: p, source: { type: 'inline', text, content_type: 'text/markdown' } });
    if (res.status !== 202) throw new Error(`seeding ${p}: ${JSON.stringify(res.body)}`);
  }
  for (;;) {
    const counts = (await api<{ file_counts: Record<string, number> }>('GET', `/namespaces/${ns}/collections/${col}`)).body.file_counts;
    if (counts.pending! + counts.indexing! === 0) return;
    await sleep(100);
  }
}

/** A CLI process that keeps running: its stdout lines as they come, and its exit. */
function spawnCli(d: DaemonProcess, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, '--url', d.url, '--key', d.key, ...args], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = async (predicate: (lines: string[]) => boolean, what: string, ms = PATIENCE_MS) => {
    const deadline = Date.now() + ms;
    while (!predicate(lines)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${lines.join('\n')}; stderr: ${stderr}`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(200), exited]);
    }
  };
  t.teardown(() => void child.kill('SIGKILL'));
  return { child, lines, exited, waitFor, stderr: () => stderr };
}

await seed(api, 'lab', 'docs', {
  '/cats.md': '# Cats\n\nCats purr when they are content and relaxed.\n',
  '/dogs.md': '# Dogs\n\nDogs bark to warn their family about strangers.\n',
  '/tea.md': '# Tea\n\nGreen tea is steeped at eighty degrees for two minutes.\n',
});

t.test('research start, get, watch and cancel', async (t) => {
  const started = await cli(['research', 'start', 'lab/docs', 'why do cats purr?', '--idempotency-key', 'k-1', '--json']);
  t.equal(started.code, 0, ok(started));
  const run = parseJson<Run>(started);
  t.match(run, { id: /^rsr_/, status: /^(queued|running|succeeded)$/ });
  t.equal((await api<Run>('GET', `/namespaces/lab/collections/docs/research/${run.id}`)).status, 200, 'the API has the run');

  const [retry, conflict, badFilter, badHistory, unknownCollection, badMode] = await Promise.all([
    cli(['research', 'start', 'lab/docs', 'why do cats purr?', '--idempotency-key', 'k-1', '--json']),
    // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
    runCli(['--url', daemon.url, '--key', KEY, 'research', 'start', 'lab/docs', 'why do dogs bark?', '--idempotency-key', 'k-1']),
    cli(['research', 'start', 'lab/docs', 'x', '--filter', '{path:']),
    cli(['research', 'start', 'lab/docs', 'x', '--history', '{"role":"user"}']),
    cli(['research', 'start', 'lab/nope', 'x']),
    cli(['research', 'start', 'lab/docs', 'x', '--mode', 'deep']),
  ]);
  t.equal(parseJson<Run>(retry).id, run.id, 'the same idempotency key and body return the same run');
  t.equal(conflict.code, 6, 'the same key with another body: idempotency_conflict');
  t.match(conflict.stderr, humanError('idempotency_conflict'));
  t.equal(conflict.stdout, '');
  t.equal(badFilter.code, 2, 'bad JSON in --filter');
  t.match(badFilter.stderr, /--filter is not valid JSON/);
  t.equal(badHistory.code, 2, '--history must be an array');
  t.equal(unknownCollection.code, 5);
  t.equal(badMode.code, 2);

  const watched = await cli(['research', 'watch', 'lab/docs', run.id, '--json']);
  t.equal(watched.code, 0, ok(watched));
  const lines = watched.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const final = lines.at(-1) as unknown as Run;
  t.match(final, { id: run.id, status: 'succeeded', answer: /\[\[SRC:\d{4}\]\]/ }, 'the last line is the finished run');
  t.ok(Object.values(final.sources ?? {}).some((s) => s.path === '/cats.md' && s.is_cited), 'it cites the file that answers');
  t.ok(lines.slice(0, -1).every((l) => l.event === 'progress' && l.id === run.id), 'every earlier line is progress of this run');
  t.same(final, (await api<Run>('GET', `/namespaces/lab/collections/docs/research/${run.id}`)).body, 'the run as the API has it');

  const [human, got, gotHuman, unknownRun, canceledDone] = await Promise.all([
    cli(['research', 'start', 'docs', 'how long is green tea steeped?', '-n', 'lab', '--watch']),
    cli(['research', 'get', 'lab/docs', run.id, '--json']),
    cli(['research', 'get', 'lab/docs', run.id]),
    cli(['research', 'get', 'lab/docs', 'rsr_doesnotexist']),
    cli(['research', 'cancel', 'lab/docs', run.id, '--json']),
  ]);
  t.equal(human.code, 0, ok(human));
  t.match(human.stdout, /^started rsr_\w+ \(idempotency key cli-[0-9a-f-]+\)$/m);
  t.match(human.stdout, /^succeeded {2}\[\d\/\d \w+: .+\]$/m, 'each status is printed with its stage as it happens');
  t.match(human.stdout, /eighty degrees.*\[\[SRC:\d{4}\]\]/, 'the answer, with its markers');
  t.match(human.stdout, /^sources:\n {2}\[SRC:\d{4}\] \/tea\.md {2}\(fil_\w+, cited\)$/m, 'and its sources');
  t.same(parseJson(got), (await api('GET', `/namespaces/lab/collections/docs/research/${run.id}`)).body);
  t.match(gotHuman.stdout, new RegExp(`^id:\\s+${run.id}$`, 'm'));
  t.match(gotHuman.stdout, /^status:\s+succeeded$/m);
  t.equal(unknownRun.code, 5);
  t.match(unknownRun.stderr, humanError('not_found'));
  t.equal(parseJson<Run>(canceledDone).status, 'succeeded', 'canceling a finished run returns it unchanged');
  t.equal((await api<Run>('GET', `/namespaces/lab/collections/docs/research/${run.id}`)).body.status, 'succeeded');
});

t.test('research watch polls when the key may not read /events', async (t) => {
  const made = await api<{ secret: string }>('POST', '/keys', { name: 'lab-asker', scope: { kind: 'collection', namespace: 'lab', collections: ['docs'], actions: ['query'] } });
  t.equal(made.status, 201);
  const asker = client(daemon, made.body.secret);
  t.equal((await asker.api('GET', '/events')).status, 403, 'a collection key cannot read the event log');
  const watched = await asker.cli(['research', 'start', 'lab/docs', 'why do dogs bark?', '--watch', '--json']);
  t.equal(watched.code, 0, ok(watched));
  const final = JSON.parse(watched.stdout.trim().split('\n').at(-1)!) as Run;
  t.match(final, { status: 'succeeded', answer: /strangers/ });
  t.equal((await asker.api<Run>('GET', `/namespaces/lab/collections/docs/research/${final.id}`)).body.status, 'succeeded');
});

t.test('a run in progress: watch follows it, cancel ends it', async (t) => {
  // A model server that accepts the request and never answers keeps the run in its synthesize stage.
  const held: http.ServerResponse[] = [];
  const model = http.createServer((_req, res) => void held.push(res));
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const res of held) res.destroy();
    model.close();
  });
  const port = (model.address() as { port: number }).port;
  const slow = await startDaemonProcess({
    env: { TROVE_GENERATION_PROVIDER: 'openai', TROVE_GENERATION_URL: `http://127.0.0.1:${port}/v1`, TROVE_GENERATION_MODEL: 'held' },
  });
  t.teardown(() => slow.kill());
  const { cli: slowCli, api: slowApi } = client(slow);
  await seed(slowApi, 'lab', 'docs', { '/cats.md': '# Cats\n\nCats purr when they are content.\n' });
  const created = await slowApi<Run>('POST', '/namespaces/lab/collections/docs/research', { query: 'why do cats purr?' }, { 'idempotency-key': 'slow-1' });
  t.equal(created.status, 202);
  const runPath = `/namespaces/lab/collections/docs/research/${created.body.id}`;
  while ((await slowApi<Run>('GET', runPath)).body.progress?.stage !== 'synthesize') await sleep(100);

  const watch = spawnCli(slow, ['research', 'watch', 'lab/docs', created.body.id, '--json']);
  await watch.waitFor((lines) => lines.length > 0, 'the first progress line');
  t.match(JSON.parse(watch.lines[0]!), { event: 'progress', id: created.body.id, status: 'running', progress: { stage: 'synthesize' } });

  const canceled = await slowCli(['research', 'cancel', 'lab/docs', created.body.id, '--json']);
  t.equal(canceled.code, 0, ok(canceled));
  t.equal(parseJson<Run>(canceled).status, 'canceled');
  t.equal((await slowApi<Run>('GET', runPath)).body.status, 'canceled', 'the API has it canceled');

  t.equal(await watch.exited, 1, 'watch ends when the run does; a canceled run exits 1');
  t.match(JSON.parse(watch.lines.at(-1)!), { id: created.body.id, status: 'canceled' });
  t.ok(watch.lines.some((l) => (JSON.parse(l) as { status?: string; event?: string }).event === 'progress' && l.includes('"canceled"')), 'the cancel arrived as progress before the final run');
});

t.test('events tail: a page of the log, filters, and --follow', async (t) => {
  const everything: Event[] = [];
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const page: { body: { items: Event[]; next_cursor: string | null } } = await api('GET', `/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    everything.push(...page.body.items);
    cursor = page.body.next_cursor;
  }
  t.ok(everything.length > 10, 'the earlier tests left events');
  const pivot = everything[everything.length - 6]!;
  const [last5, research, after, human, unknownAfter, badLimit] = await Promise.all([
    cli(['events', 'tail', '--limit', '5', '--json']),
    cli(['events', 'tail', '--type', 'research.*', '--limit', '1000', '--json']),
    cli(['events', 'tail', '--after', pivot.id, '--json']),
    cli(['events', 'tail', '--limit', '3']),
    cli(['events', 'tail', '--after', 'evt_00000000000000000000']),
    cli(['events', 'tail', '--limit', '0']),
  ]);
  const parseLines = (run: CliRun) => run.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
  t.equal(last5.code, 0, ok(last5));
  t.same(parseLines(last5).map((e) => e.id), everything.slice(-5).map((e) => e.id), 'the newest five, oldest first, one JSON line each');
  const researchEvents = parseLines(research);
  t.same(researchEvents.map((e) => e.id), everything.filter((e) => e.type.startsWith('research.')).map((e) => e.id), "--type 'research.*' keeps exactly those");
  t.ok(researchEvents.some((e) => e.type === 'research.progress'));
  t.same(parseLines(after).map((e) => e.id), everything.slice(-5).map((e) => e.id), '--after prints every later event');
  t.equal(human.stdout.trim().split('\n').length, 3);
  t.match(human.stdout, /^\S+Z {2}evt_\w+ {2}\S+/m, 'human lines carry the time, the ID and the type');
  t.equal(unknownAfter.code, 2, 'an unknown --after is invalid_request');
  t.match(unknownAfter.stderr, humanError('invalid_request'));
  t.equal(badLimit.code, 2);

  const follow = spawnCli(daemon, ['events', 'tail', '--follow', '--limit', '1', '--type', 'file.ready', '--json']);
  await follow.waitFor((lines) => lines.length >= 1, 'the tail before following');
  t.equal((JSON.parse(follow.lines[0]!) as Event).type, 'file.ready');
  // The tail printed its line, so it has its place in the log: what is added now comes after it.
  t.equal((await api('POST', '/namespaces/lab/collections/docs/files', { path: '/live.md', source: { type: 'inline', text: 'Otters hold hands while they sleep.' } })).status, 202);
  await follow.waitFor((lines) => lines.some((l) => (JSON.parse(l) as Event).data.path === '/live.md'), 'the new file.ready event');
  t.ok(follow.lines.every((l) => (JSON.parse(l) as Event).type === 'file.ready'), 'the filter holds while following');
  follow.child.kill('SIGINT');
  t.equal(await follow.exited, 0, 'Ctrl-C ends --follow cleanly');
});

t.test('rules batch applies a file of operations in one transaction', async (t) => {
  await seed(api, 'lab', 'hr', { '/payroll/bands.md': 'Salary bands for 2024.' }, { access_control: 'enforced' });
  const rulesOf = async () => (await api<{ items: Rule[] }>('GET', '/namespaces/lab/collections/hr/access-rules')).body.items;
  const yamlFile = path.join(work, 'rules.yaml');
  await writeFile(yamlFile, 'operations:\n  - { op: upsert, folder: /, readers: [group:staff] }\n  - op: upsert\n    folder: /payroll/\n    readers: [group:payroll]\n    sealed: true\n');
  const applied = await cli(['rules', 'batch', 'lab/hr', yamlFile, '--json']);
  t.equal(applied.code, 0, ok(applied));
  const res = parseJson<{ rules: Rule[]; job: { type: string } | null }>(applied);
  t.same(res.rules.map((r) => [r.folder, r.readers, r.sealed]), [['/', ['group:staff'], false], ['/payroll/', ['group:payroll'], true]]);
  t.match(res.job, { type: 'apply_access_rule' }, 'the file under the new rules moves: a job');
  t.same((await rulesOf()).map((r) => r.folder).sort(), ['/', '/payroll/'], 'the API has both rules');

  const fromStdin = await cli(['rules', 'batch', 'hr', '-', '-n', 'lab'], { input: JSON.stringify([{ op: 'update', folder: '/', add_readers: ['user:ana'] }]) });
  t.equal(fromStdin.code, 0, ok(fromStdin));
  t.match(fromStdin.stdout, /^applied 1 operation\(s\)$/m);
  t.match(fromStdin.stdout, /^acr_\w+\s+\/\s+no\s+group:staff, user:ana$/m, 'human output: the rules left, with their IDs');
  t.same((await rulesOf()).find((r) => r.folder === '/')?.readers, ['group:staff', 'user:ana'], 'a bare JSON list from stdin works too');

  const partial = path.join(work, 'partial.json');
  await writeFile(partial, JSON.stringify({ operations: [{ op: 'upsert', folder: '/new/', readers: ['x'] }, { op: 'delete', folder: '/nope/' }] }));
  const broken = path.join(work, 'broken.yaml');
  await writeFile(broken, 'operations: [ { op: upsert');
  const empty = path.join(work, 'empty.json');
  await writeFile(empty, '{"operations": []}');
  const [failed, unparsable, none, missingFile, missingArg] = await Promise.all([
    cli(['rules', 'batch', 'lab/hr', partial]),
    cli(['rules', 'batch', 'lab/hr', broken]),
    cli(['rules', 'batch', 'lab/hr', empty]),
    cli(['rules', 'batch', 'lab/hr', path.join(work, 'absent.yaml')]),
    cli(['rules', 'batch', 'lab/hr']),
  ]);
  t.equal(failed.code, 5, 'an operation on a rule that does not exist: not_found');
  t.match(failed.stderr, /^error not_found: operations\.1: .+ \(request req_\w+\)$/m, 'the error names the operation');
  t.notOk((await rulesOf()).some((r) => r.folder === '/new/'), 'all or nothing: the upsert before it was not kept');
  t.equal(unparsable.code, 2, 'a file that is neither JSON nor YAML');
  t.match(unparsable.stderr, /neither JSON nor YAML/);
  t.equal(none.code, 2, 'no operations');
  t.equal(missingFile.code, 2, 'a missing file');
  t.equal(missingArg.code, 2, 'no file argument');
  t.equal((await rulesOf()).length, 2, 'bad input changed no rule');
});
