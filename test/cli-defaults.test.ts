// The pure rules behind the CLI's defaults: which namespace and collection a command works on
// (arguments > flags > `trove init`'s saved defaults > "default"), which folder a bare `trove ingest`
// syncs, where the CLI finds the local daemon (daemon.json in the data dir) and how a key is named.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeKeyUsed, keyHint } from '../src/cli/client.js';
import { DEFAULT_URL, resolveConnection, resolveKeyWithSource, resolveUrl } from '../src/cli/connection.js';
import { resolveIngestTarget, resolveTarget, savedTarget, splitQueryArgs } from '../src/cli/defaults.js';
import { listeningFile, readListeningRecord, removeListeningRecord, writeListeningRecord } from '../daemon/listening.js';

const SAVED = { namespace: 'team', collection: 'notes', folder: '/home/me/notes' };
const EXAMPLE = 'trove search <collection> "<query>"';

t.test('resolveTarget: argument > flag > saved > "default"', async (t) => {
  const cases: { name: string; input: Parameters<typeof resolveTarget>[0]; saved: Record<string, unknown>; want: { namespace: string; collection: string } | RegExp }[] = [
    { name: 'nothing given: the saved pair', input: {}, saved: SAVED, want: { namespace: 'team', collection: 'notes' } },
    { name: 'a bare collection: in the saved namespace, not "default"', input: { collection: 'other' }, saved: SAVED, want: { namespace: 'team', collection: 'other' } },
    { name: 'ns/col names both', input: { collection: 'demo/other' }, saved: SAVED, want: { namespace: 'demo', collection: 'other' } },
    { name: '-n overrides the saved namespace', input: { namespaceFlag: 'demo' }, saved: SAVED, want: { namespace: 'demo', collection: 'notes' } },
    { name: '-c overrides the saved collection', input: { collectionFlag: 'other' }, saved: SAVED, want: { namespace: 'team', collection: 'other' } },
    { name: '-n and -c override both', input: { namespaceFlag: 'demo', collectionFlag: 'other' }, saved: SAVED, want: { namespace: 'demo', collection: 'other' } },
    { name: 'a bare collection with -n', input: { collection: 'other', namespaceFlag: 'demo' }, saved: SAVED, want: { namespace: 'demo', collection: 'other' } },
    { name: 'ns/col with the same -n', input: { collection: 'demo/other', namespaceFlag: 'demo' }, saved: SAVED, want: { namespace: 'demo', collection: 'other' } },
    { name: 'nothing saved: a bare collection is in "default" (as before)', input: { collection: 'notes' }, saved: {}, want: { namespace: 'default', collection: 'notes' } },
    { name: 'nothing saved: -c alone is in "default"', input: { collectionFlag: 'notes' }, saved: {}, want: { namespace: 'default', collection: 'notes' } },
    { name: 'only a namespace saved', input: { collection: 'notes' }, saved: { namespace: 'team' }, want: { namespace: 'team', collection: 'notes' } },
    { name: 'saved values that are not strings are ignored', input: { collection: 'notes' }, saved: { namespace: 7, collection: '' }, want: { namespace: 'default', collection: 'notes' } },
    { name: 'nothing given, nothing saved: usage error naming trove init', input: {}, saved: {}, want: /No collection given.*trove search <collection>.*-c <collection>.*trove init/ },
    { name: 'ns/col against another -n', input: { collection: 'demo/other', namespaceFlag: 'x' }, saved: SAVED, want: /names namespace 'demo' but --namespace says 'x'/ },
    { name: 'a collection argument and another -c', input: { collection: 'a', collectionFlag: 'b' }, saved: SAVED, want: /given twice/ },
    { name: 'a malformed ns/col', input: { collection: 'a/b/c' }, saved: SAVED, want: /'a\/b\/c' is not a collection/ },
    { name: 'an empty namespace in ns/col', input: { collection: '/b' }, saved: SAVED, want: /is not a collection/ },
  ];
  for (const c of cases) {
    if (c.want instanceof RegExp) {
      t.throws(() => resolveTarget(c.input, c.saved, EXAMPLE), { name: 'CliError', exitCode: 2, message: c.want }, c.name);
    } else {
      t.same(resolveTarget(c.input, c.saved, EXAMPLE), c.want, c.name);
    }
  }
});

t.test('splitQueryArgs: one argument is the query, two are collection and query', async (t) => {
  t.same(splitQueryArgs('rate limit', undefined, 'query', EXAMPLE), { query: 'rate limit' });
  t.same(splitQueryArgs('notes', 'rate limit', 'query', EXAMPLE), { collection: 'notes', query: 'rate limit' });
  t.throws(() => splitQueryArgs(undefined, undefined, 'query', EXAMPLE), { exitCode: 2, message: /Missing the query/ });
});

t.test('savedTarget: what the TUI opens on', async (t) => {
  t.same(savedTarget(SAVED), { namespace: 'team', collection: 'notes' });
  t.same(savedTarget({ collection: 'notes' }), { namespace: 'default', collection: 'notes' });
  t.equal(savedTarget({ namespace: 'team' }), null);
  t.equal(savedTarget({}), null);
});

t.test('resolveIngestTarget: a bare `trove ingest` re-syncs the saved folder', async (t) => {
  const cwd = '/work';
  const cases: { name: string; input: Parameters<typeof resolveIngestTarget>[0]; saved: Record<string, unknown>; want: Record<string, unknown> | RegExp }[] = [
    { name: 'no folder: the saved folder, namespace and collection', input: {}, saved: SAVED, want: { folder: '/home/me/notes', namespace: 'team', collection: 'notes', savedFolder: true } },
    { name: 'the saved folder named again (relative)', input: { folder: '../home/me/notes' }, saved: SAVED, want: { folder: '/home/me/notes', namespace: 'team', collection: 'notes', savedFolder: false } },
    { name: 'flags override the saved pair', input: { namespaceFlag: 'demo', collectionFlag: 'other' }, saved: SAVED, want: { folder: '/home/me/notes', namespace: 'demo', collection: 'other' } },
    { name: 'another folder with -c: the saved namespace', input: { folder: 'docs', collectionFlag: 'docs' }, saved: SAVED, want: { folder: '/work/docs', namespace: 'team', collection: 'docs' } },
    { name: 'nothing saved: every flag, as before', input: { folder: 'docs', namespaceFlag: 'demo', collectionFlag: 'docs' }, saved: {}, want: { folder: '/work/docs', namespace: 'demo', collection: 'docs' } },
    { name: 'another folder without -c would empty the saved collection: refused', input: { folder: 'docs' }, saved: SAVED, want: /not the saved folder.*-c <collection>.*'notes' would lose/ },
    { name: 'no folder, none saved', input: {}, saved: {}, want: /No folder given.*trove init/ },
    { name: 'nothing saved, no -c', input: { folder: 'docs', namespaceFlag: 'demo' }, saved: {}, want: /No collection given/ },
    { name: 'nothing saved, no -n: ingest does not fill "default" by itself', input: { folder: 'docs', collectionFlag: 'docs' }, saved: {}, want: /No namespace given/ },
    { name: 'a relative saved folder is not trusted', input: {}, saved: { ...SAVED, folder: 'notes' }, want: /No folder given/ },
  ];
  for (const c of cases) {
    if (c.want instanceof RegExp) t.throws(() => resolveIngestTarget(c.input, c.saved, cwd), { name: 'CliError', exitCode: 2, message: c.want }, c.name);
    else t.match(resolveIngestTarget(c.input, c.saved, cwd), c.want, c.name);
  }
});

t.test('keyHint and the 401 sentence never show the secret', async (t) => {
  const secret = 'trove_ab12cd34_' + 'S'.repeat(43);
  t.equal(keyHint(secret), 'trove_ab12cd34_…');
  const own = 'my-own-cluster-key-0123456789';
  t.match(keyHint(own), /^prefix h[0-9a-f]{11}$/);
  t.notMatch(keyHint(own), /own-cluster/);
  t.equal(describeKeyUsed(secret, { kind: 'flag' }), 'The CLI sent key trove_ab12cd34_… from --key.');
  t.match(describeKeyUsed(secret, { kind: 'env' }), /from the TROVE_KEY environment variable/);
  t.match(describeKeyUsed(secret, { kind: 'file', path: '/d/cluster-key' }), /from the cluster key file \/d\/cluster-key\./);
  t.notMatch(describeKeyUsed(secret, { kind: 'flag' }), /SSSS/);
});

t.test('where the CLI finds the daemon: --url > TROVE_URL > the data dir\'s running daemon > 7410', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-listening-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const env = { TROVE_DATA_DIR: dir };
  t.equal(resolveUrl({}, env), DEFAULT_URL, 'no record: the default port');

  writeListeningRecord(dir, { url: 'http://127.0.0.1:7499', pid: process.pid, started_at: new Date().toISOString() });
  t.equal(readListeningRecord(dir)?.url, 'http://127.0.0.1:7499');
  t.equal(resolveUrl({}, env), 'http://127.0.0.1:7499', 'the running daemon of the data dir');
  t.equal(resolveUrl({ dataDir: dir }, {}), 'http://127.0.0.1:7499', '--data-dir names the data dir too');
  t.equal(resolveUrl({}, { ...env, TROVE_URL: 'http://127.0.0.1:7777' }), 'http://127.0.0.1:7777', 'TROVE_URL beats the record');
  t.equal(resolveUrl({ url: 'http://127.0.0.1:8888/' }, { ...env, TROVE_URL: 'http://127.0.0.1:7777' }), 'http://127.0.0.1:8888', '--url beats both');

  // A record left by a daemon that died (its pid no longer runs) is ignored.
  const dead = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => dead.on('exit', resolve));
  writeListeningRecord(dir, { url: 'http://127.0.0.1:7499', pid: dead.pid!, started_at: '' });
  t.equal(resolveUrl({}, env), DEFAULT_URL, "a dead daemon's record is ignored");

  // Another process's record is not removed by this one's clean stop; its own is.
  removeListeningRecord(dir);
  t.not(readListeningRecord(dir), null, "another pid's record stays");
  writeListeningRecord(dir, { url: 'http://127.0.0.1:7499', pid: process.pid, started_at: '' });
  removeListeningRecord(dir);
  t.equal(readListeningRecord(dir), null, 'its own record goes');

  await writeFile(listeningFile(dir), 'not json');
  t.equal(resolveUrl({}, env), DEFAULT_URL, 'a damaged record is ignored, not an error');
});

t.test('which key, from where; a missing key is exit 3', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-keysource-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  t.same(await resolveKeyWithSource({ key: 'k1' }, { TROVE_KEY: 'k2', TROVE_DATA_DIR: dir }), { key: 'k1', source: { kind: 'flag' } });
  t.same(await resolveKeyWithSource({}, { TROVE_KEY: 'k2', TROVE_DATA_DIR: dir }), { key: 'k2', source: { kind: 'env' } });
  await t.rejects(resolveKeyWithSource({}, { TROVE_DATA_DIR: dir }), { name: 'CliError', exitCode: 3, code: 'unauthenticated', message: /No API key: there is no cluster key file at/ });
  await writeFile(path.join(dir, 'cluster-key'), '  \n');
  await t.rejects(resolveKeyWithSource({}, { TROVE_DATA_DIR: dir }), { exitCode: 3, message: /is empty/ });
  await writeFile(path.join(dir, 'cluster-key'), 'k3\n');
  const conn = await resolveConnection({}, { TROVE_DATA_DIR: dir });
  t.same(conn.keySource, { kind: 'file', path: path.join(dir, 'cluster-key') }, 'the Connection keeps where its key came from');
  t.equal(conn.key, 'k3');
});
