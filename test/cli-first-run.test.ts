// A new user's first run, with the built CLI against a real daemon on a port that is not 7410:
// the CLI finds it through the data dir (no --url), `trove init` saves the defaults, one-argument
// `trove search` and `trove answer` and a bare `trove ingest` use them, the API's default mode
// applies, `--principal` narrows a search, and a refused or missing key is exit 3, named. Commands
// run in-process (runCliInProcess) but one, which runs through the real entry, and daemon start.
import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiOf, freePort, newClusterKey, parseJson, runCli, runCliInProcess, startDaemonProcess } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

// Three daemons and a few dozen CLI processes on a busy two-core machine.

interface SearchBody {
  execution: { mode: string };
  results: { path: string }[];
}

const work = await mkdtemp(path.join(os.tmpdir(), 'trove-first-run-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const folder = path.join(work, 'notes');
await mkdir(folder);
await writeFile(path.join(folder, 'ferry.md'), 'The ferry leaves the harbour at dawn, every day but Sunday.\n');
await writeFile(path.join(folder, 'garden.md'), 'Tomatoes need staking before the first summer storm.\n');
const dataDir = path.join(work, 'data');
const configHome = path.join(work, 'config');
const key = newClusterKey();
const port = await freePort();
const daemon = await startDaemonProcess({ key, args: ['--data-dir', dataDir, '--port', String(port)] });
t.teardown(() => daemon.kill());
const api = apiOf(daemon);
// No --url and no --key: the CLI finds both through the data dir, as a user's shell would.
const env = { TROVE_DATA_DIR: dataDir, TROVE_CONFIG_HOME: configHome };

t.test('trove status finds a daemon on a non-default port without --url', async (t) => {
  t.notMatch(daemon.url, /:7410$/);
  const record = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { url: string; pid: number; started_at: string };
  t.match(record, { url: daemon.url, pid: daemon.child.pid, started_at: /^\d{4}-/ });
  // The real entry, once: exit code, stdout and stderr as a process of its own gives them.
  const run = await runCli(['status', '--json'], { env });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stderr, '');
  t.match(parseJson(run), { url: daemon.url, up: true });

  // An ephemeral daemon keeps its record in its own temporary dir: the data dir's still names the first.
  const ephemeral = await startDaemonProcess({ env: { TROVE_DATA_DIR: dataDir } });
  t.teardown(() => ephemeral.kill());
  t.equal(JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')).url, daemon.url, 'an --ephemeral daemon did not clobber the record');
  t.ok(existsSync(path.join(ephemeral.dataDir, 'daemon.json')), 'it wrote its own in its own dir');
  ephemeral.kill();

  // A daemon start runs in a process of its own.
  const second = await runCli(['daemon', 'start', '--data-dir', dataDir, '--port', '0']);
  t.not(second.code, 0, 'a second daemon on the same data dir is refused');
  t.match(second.stderr, `listening on ${daemon.url}`, 'and the refusal says where the first one listens');
});

t.test('no saved defaults and no collection: a usage error that says what to do', async (t) => {
  const run = await runCliInProcess(['search', 'ferry'], { env });
  t.equal(run.code, 2);
  t.match(run.stderr, /No collection given and no default saved: name one .*or run `trove init`/);
  const bare = await runCliInProcess(['ingest'], { env });
  t.equal(bare.code, 2);
  t.match(bare.stderr, /No folder given.*trove init/);
});

t.test('trove init, then a one-argument search with the saved defaults', async (t) => {
  const init = await runCliInProcess(['init', '-n', 'team', '-c', 'notes', '--folder', folder, '--semantic', '--no-watch', '--json'], { env });
  t.equal(init.code, 0, init.stderr);
  const [setup, summary] = init.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.match(setup, { event: 'init', namespace: 'team', collection: 'notes', next_command: 'trove search "<words to find>"' });
  t.match(summary, { added: 2, ready: 2, failed: 0 });

  const human = await runCliInProcess(['init', '-n', 'team', '-c', 'notes', '--folder', folder, '--semantic', '--no-watch'], { env });
  t.equal(human.code, 0, human.stderr);
  t.match(human.stdout, /^Next: trove search "<words to find>"$/m, 'init says what to try next');

  const search = await runCliInProcess(['search', 'ferry harbour', '--json'], { env });
  t.equal(search.code, 0, search.stderr);
  const body = parseJson<SearchBody>(search);
  t.equal(body.results[0]?.path, '/ferry.md', 'the saved collection was searched');
  t.equal(body.execution.mode, 'semantic', "no --mode: the API's default, semantic on a collection that has it");

  const text = await runCliInProcess(['search', 'ferry harbour'], { env });
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /\(semantic search\)/, 'the human output says which mode was used');
  t.match(text.stdout, /1\. \/ferry\.md/);

  const keyword = await runCliInProcess(['search', 'ferry', '--mode', 'keyword', '--json'], { env });
  t.equal(parseJson<SearchBody>(keyword).execution.mode, 'keyword', '--mode keyword chooses');

  // The two-argument forms keep working; a bare collection is looked for in the saved namespace.
  const bareCollection = await runCliInProcess(['search', 'notes', 'ferry', '--json'], { env });
  t.equal(bareCollection.code, 0, bareCollection.stderr);
  t.equal(parseJson<SearchBody>(bareCollection).results[0]?.path, '/ferry.md', '`search notes …` looks in the saved namespace team');
  const both = await runCliInProcess(['search', 'team/notes', 'ferry', '--json'], { env });
  t.equal(both.code, 0, both.stderr);
  const elsewhere = await runCliInProcess(['search', 'notes', 'ferry', '-n', 'default'], { env });
  t.equal(elsewhere.code, 5, '-n overrides the saved namespace (there is no default/notes)');

  const answer = await runCliInProcess(['answer', 'when does the ferry leave?', '--json'], { env });
  t.equal(answer.code, 0, answer.stderr);
  const sources = Object.values((parseJson<{ sources: Record<string, { path: string }> }>(answer)).sources);
  t.ok(sources.some((s) => s.path === '/ferry.md'), 'answer used the saved collection too');
});

t.test('a bare trove ingest re-syncs the saved folder; another folder needs -c', async (t) => {
  await writeFile(path.join(folder, 'lighthouse.md'), 'The lighthouse keeper logged every passing ship.\n');
  const run = await runCliInProcess(['ingest', '--json'], { env });
  t.equal(run.code, 0, run.stderr);
  t.match(parseJson(run), { added: 1, unchanged: 2, removed: 0 });
  const found = await runCliInProcess(['search', 'lighthouse keeper', '--mode', 'keyword', '--json'], { env });
  t.equal(parseJson<SearchBody>(found).results[0]?.path, '/lighthouse.md');

  const other = path.join(work, 'other');
  await mkdir(other);
  const refused = await runCliInProcess(['ingest', other], { env });
  t.equal(refused.code, 2, 'another folder into the saved collection would remove its files: refused');
  t.match(refused.stderr, /name its collection with -c/);
  t.equal((await api<{ file_counts: { ready: number } }>('GET', '/namespaces/team/collections/notes')).body.file_counts.ready, 3, 'nothing was removed');
});

t.test('no mode sent on a keyword-only collection: keyword, not an error', async (t) => {
  const res = await api('POST', '/namespaces/team/collections', { name: 'plain', processing: { semantic: false } });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const ingest = await runCliInProcess(['ingest', folder, '-c', 'plain', '--json'], { env });
  t.equal(ingest.code, 0, ingest.stderr);
  const run = await runCliInProcess(['search', 'plain', 'ferry', '--json'], { env });
  t.equal(run.code, 0, run.stderr);
  t.equal(parseJson<SearchBody>(run).execution.mode, 'keyword');
  // The API keeps the contract's rule (retrieval-api.md: default semantic, its flag must be on);
  // the fallback to keyword is the CLI's (src/cli/search-request.ts).
  const bare = await api<{ error: { code: string } }>('POST', '/namespaces/team/collections/plain:search', { query: 'ferry' });
  t.equal(bare.status, 400, 'the API itself still refuses a default (semantic) search there');
  t.equal(bare.body.error.code, 'invalid_request');
  const semantic = await runCliInProcess(['search', 'plain', 'ferry', '--mode', 'semantic'], { env });
  t.equal(semantic.code, 2, 'semantic asked for by name is still refused there');
});

t.test('--principal narrows a search in a collection with access rules', async (t) => {
  const shared = path.join(work, 'shared');
  await mkdir(path.join(shared, 'alice'), { recursive: true });
  await mkdir(path.join(shared, 'bob'), { recursive: true });
  await writeFile(path.join(shared, 'alice', 'plan.md'), 'The secret plan: a picnic by the river.\n');
  await writeFile(path.join(shared, 'bob', 'plan.md'), 'The secret plan: a kayak trip at noon.\n');
  const res = await api('POST', '/namespaces/team/collections', { name: 'shared', access_control: 'enforced', processing: { semantic: false } });
  t.equal(res.status, 201, JSON.stringify(res.body));
  t.equal((await runCliInProcess(['ingest', shared, '-c', 'shared', '--json'], { env })).code, 0);
  for (const who of ['alice', 'bob']) {
    const rule = await runCliInProcess(['rules', 'set', 'team/shared', `/${who}/`, '--reader', who], { env });
    t.equal(rule.code, 0, rule.stderr);
    // Its files move under the rule in a job and stay hidden until it ends (an in-process run no
    // longer takes the time a process start gave it).
    const job = /files move under it: job (job_\w+)/.exec(rule.stdout)?.[1];
    if (job) await waitFor(`job ${job}`, async () => ((await api<{ status: string }>('GET', `/jobs/${job}`)).body.status === 'succeeded' ? true : undefined));
  }
  const asAlice = await runCliInProcess(['search', 'shared', 'secret plan', '--principal', 'alice', '--json'], { env });
  t.equal(asAlice.code, 0, asAlice.stderr);
  t.same(parseJson<SearchBody>(asAlice).results.map((r) => r.path), ['/alice/plan.md']);
  const asBoth = await runCliInProcess(['search', 'shared', 'secret plan', '--principal', 'alice', 'bob', '--json'], { env });
  t.same(parseJson<SearchBody>(asBoth).results.map((r) => r.path).sort(), ['/alice/plan.md', '/bob/plan.md']);
});

t.test('a refused key names itself and its source; a missing key is exit 3', async (t) => {
  const wrong = 'trove_wrongkey1_' + 'x'.repeat(43);
  const flag = await runCliInProcess(['--key', wrong, 'search', 'ferry'], { env });
  t.equal(flag.code, 3);
  t.match(flag.stderr, /error unauthenticated: .*The CLI sent key trove_wrongkey1_… from --key\./);
  t.notMatch(flag.stderr, /xxxxxxxx/, 'never the secret');

  const fromEnv = await runCliInProcess(['search', 'ferry'], { env: { ...env, TROVE_KEY: wrong } });
  t.equal(fromEnv.code, 3);
  t.match(fromEnv.stderr, /from the TROVE_KEY environment variable/);

  const stale = path.join(work, 'stale');
  await mkdir(stale);
  await writeFile(path.join(stale, 'cluster-key'), 'an-old-cluster-key\n');
  const fromFile = await runCliInProcess(['--url', daemon.url, '--data-dir', stale, 'search', 'ferry'], { env });
  t.equal(fromFile.code, 3);
  t.match(fromFile.stderr, `from the cluster key file ${path.join(stale, 'cluster-key')}.`);
  t.match(fromFile.stderr, /key prefix h[0-9a-f]{11}/);
  t.notMatch(fromFile.stderr, /an-old-cluster-key/);

  const empty = path.join(work, 'empty');
  await mkdir(empty);
  const missing = await runCliInProcess(['--url', daemon.url, '--data-dir', empty, 'search', 'ferry'], { env });
  t.equal(missing.code, 3, 'no key anywhere: exit 3, as docs/tour.md lists the exit codes');
  t.match(missing.stderr, /No API key: there is no cluster key file/);
});

t.test('a clean stop removes the record', async (t) => {
  daemon.child.kill('SIGTERM');
  const { code } = await daemon.exited;
  t.equal(code, 0, daemon.stderr());
  t.notOk(existsSync(path.join(dataDir, 'daemon.json')), 'daemon.json is gone');
  const down = await runCliInProcess(['status', '--json'], { env });
  // Only the URL is checked: whether a daemon answers on 7410 on this machine (a developer's own, from
  // the README) is not this test's business; if one does, it refuses this data dir's key.
  t.match(parseJson(down), { url: 'http://127.0.0.1:7410' }, 'and the CLI falls back to the default port');
});

t.test('status names the daemon that refused the key, in --json on stdout', async (t) => {
  const other = await startDaemonProcess();
  t.teardown(() => other.kill());
  const refused = await runCliInProcess(['--url', other.url, '--key', 'trove_not_this_daemons_key', 'status', '--json']);
  t.equal(refused.code, 3, 'exit 3: unauthenticated');
  t.match(parseJson(refused), { url: other.url, up: true, health: 'ok', error: { code: 'unauthenticated' } });
  const human = await runCliInProcess(['--url', other.url, '--key', 'trove_not_this_daemons_key', 'status']);
  t.match(human.stderr, `trove daemon at ${other.url}: up (health ok), but:\nerror unauthenticated:`);
});
