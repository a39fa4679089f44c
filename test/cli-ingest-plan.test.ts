import t from 'tap';
import fc from 'fast-check';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { planIngest, sha256Checksum, type LocalFile, type RemoteFile } from '../src/cli/ingest-plan.js';
import { walkFolder } from '../src/cli/walk.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

const HEX_A = 'a'.repeat(64);
const HEX_B = 'b'.repeat(64);

const local = (p: string, sha256 = HEX_A): LocalFile => ({ path: p, size: 1, sha256, contentType: 'text/plain' });
/** `checksum: null` stands for a remote file that declared none. */
const remote = (p: string, checksum: string | null = sha256Checksum(HEX_A), status = 'ready', extra: Partial<RemoteFile> = {}): RemoteFile => ({
  id: `fil_${p.replace(/\W/g, '')}`,
  path: p,
  ...(checksum === null ? {} : { checksum }),
  status,
  ...extra,
});

const paths = (files: { path: string }[]) => files.map((f) => f.path);

t.test('planIngest sorts files into add, update, remove and unchanged', async (t) => {
  const plan = planIngest(
    [local('/new.md'), local('/same.md'), local('/changed.md', HEX_B), local('/was-failed.md'), local('/no-checksum.md'), local('/pending.md'), local('/stuck.md')],
    [
      remote('/same.md'),
      remote('/changed.md'),
      remote('/was-failed.md', sha256Checksum(HEX_A), 'failed'),
      remote('/no-checksum.md', null),
      remote('/pending.md', sha256Checksum(HEX_A), 'pending'),
      remote('/stuck.md', sha256Checksum(HEX_A), 'pending', { awaitingUpload: true }),
      remote('/gone.md'),
    ],
  );
  t.same(paths(plan.add), ['/new.md']);
  t.same(plan.update.map((u) => u.local.path), ['/changed.md', '/no-checksum.md', '/stuck.md', '/was-failed.md']);
  t.same(plan.update.map((u) => u.remote.path), ['/changed.md', '/no-checksum.md', '/stuck.md', '/was-failed.md'], 'each update carries its remote file');
  t.same(paths(plan.remove), ['/gone.md']);
  t.same(plan.unchanged.map((u) => u.local.path), ['/pending.md', '/same.md'], 'a pending or ready file with the same bytes is left alone');
});

t.test('planIngest: a checksum of another algorithm or in another case is a change', async (t) => {
  const plan = planIngest([local('/a'), local('/b')], [remote('/a', `md5:${'a'.repeat(32)}`), remote('/b', `sha256:${HEX_A.toUpperCase()}`)]);
  t.same(plan.update.map((u) => u.local.path), ['/a', '/b']);
});

t.test('planIngest: empty sides', async (t) => {
  t.same(planIngest([], []), { add: [], update: [], remove: [], unchanged: [] });
  t.same(paths(planIngest([], [remote('/x'), remote('/a')]).remove), ['/a', '/x']);
  t.same(paths(planIngest([local('/z'), local('/a')], []).add), ['/a', '/z']);
});

t.test('planIngest: every path lands in exactly one list', async () => {
  const pathArb = fc.constantFrom('/a', '/b', '/c', '/d/e', '/f', '/g');
  const hexArb = fc.constantFrom(HEX_A, HEX_B);
  const statusArb = fc.constantFrom('pending', 'indexing', 'ready', 'failed');
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.record({ path: pathArb, sha: hexArb }), { selector: (x) => x.path }),
      fc.uniqueArray(fc.record({ path: pathArb, sha: fc.option(hexArb), status: statusArb }), { selector: (x) => x.path }),
      (locals, remotes) => {
        const plan = planIngest(
          locals.map((l) => local(l.path, l.sha)),
          remotes.map((r) => remote(r.path, r.sha === null ? null : sha256Checksum(r.sha), r.status)),
        );
        const localSide = [...paths(plan.add), ...plan.update.map((u) => u.local.path), ...plan.unchanged.map((u) => u.local.path)].sort();
        if (JSON.stringify(localSide) !== JSON.stringify(locals.map((l) => l.path).sort())) return false;
        const localPaths = new Set(locals.map((l) => l.path));
        const expectedRemove = remotes.filter((r) => !localPaths.has(r.path)).map((r) => r.path).sort();
        if (JSON.stringify(paths(plan.remove)) !== JSON.stringify(expectedRemove)) return false;
        return plan.unchanged.every((u) => u.remote.status !== 'failed' && u.remote.checksum === sha256Checksum(u.local.sha256));
      },
    ),
  );
});

async function tree(t: TestContext, files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'trove-walk-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
  return root;
}

t.test('walkFolder honours .gitignore files at every level and does not ingest them', async (t) => {
  const root = await tree(t, {
    '.gitignore': '*.log\n!keep.log\nbuild/\n/top-only.md\n',
    'readme.md': '# hi',
    'debug.log': 'x',
    'keep.log': 'kept by negation',
    'top-only.md': 'ignored at the top',
    'build/out.txt': 'ignored folder',
    'docs/top-only.md': 'anchored rule does not reach here',
    'docs/.gitignore': 'secret.txt\n!important.log\n*.tmp\n',
    'docs/secret.txt': 'x',
    'docs/important.log': 'deeper negation re-includes',
    'docs/other.log': 'still ignored by the root rule',
    'docs/guide.md': 'guide',
    'docs/deep/secret.txt': 'rules apply below their folder too',
    'docs/deep/a.tmp': 'x',
    'docs/deep/.gitignore': '!a.tmp\n',
    'notes/secret.txt': 'docs rules do not apply to a sibling',
    'notes/build/x.md': 'build/ matches at any depth',
    'excluded/.gitignore': '',
    'excluded/inner.md': 'x',
  });
  await writeFile(path.join(root, '.gitignore'), '*.log\n!keep.log\nbuild/\n/top-only.md\nexcluded/\n!excluded/inner.md\n');
  const { files, skipped } = await walkFolder(root);
  t.same(paths(files), [
    '/docs/deep/a.tmp',
    '/docs/guide.md',
    '/docs/important.log',
    '/docs/top-only.md',
    '/keep.log',
    '/notes/secret.txt',
    '/readme.md',
  ]);
  t.same(skipped, []);
  const readme = files.find((f) => f.path === '/readme.md')!;
  t.equal(readme.absPath, path.join(root, 'readme.md'));
  t.equal(readme.size, 4);
  t.equal(readme.contentType, 'text/markdown');
});

t.test('walkFolder skips .git, escaping symlinks and non-regular files; follows symlinks inside', async (t) => {
  const outside = await tree(t, { 'outside.md': 'not ours', 'dir/x.md': 'not ours either' });
  const root = await tree(t, {
    '.git/HEAD': 'ref: refs/heads/main',
    '.git/objects/ab/cdef': 'blob',
    'sub/.git': 'gitdir: ../.git/modules/sub',
    'sub/file.txt': 'in a submodule',
    'real/doc.md': 'real doc',
  });
  await symlink(path.join(outside, 'outside.md'), path.join(root, 'escape.md'));
  await symlink(path.join(outside, 'dir'), path.join(root, 'escape-dir'));
  await symlink('../real/doc.md', path.join(root, 'sub/inside-link.md'));
  await symlink('real', path.join(root, 'linked-dir'));
  await symlink('.', path.join(root, 'real/loop'));
  await symlink('missing.md', path.join(root, 'dangling.md'));

  const { files, skipped } = await walkFolder(root);
  t.same(paths(files), ['/linked-dir/doc.md', '/real/doc.md', '/sub/file.txt', '/sub/inside-link.md']);
  t.same(
    skipped.map((s) => s.path),
    ['/dangling.md', '/escape-dir', '/escape.md', '/linked-dir/loop', '/real/loop'],
  );
  t.match(skipped.find((s) => s.path === '/escape.md')!.reason, /outside the folder/);
  t.match(skipped.find((s) => s.path === '/real/loop')!.reason, /loops/);
});

t.test('walkFolder content types and the size limit', async (t) => {
  const root = await tree(t, {
    'a.markdown': 'x',
    'b.htm': '<p>x</p>',
    'c.json': '{}',
    'd.jsonl': '{}\n',
    'e.ndjson': '{}\n',
    'f.csv': 'a,b\n',
    'g.txt': 'text',
    'Makefile': 'all:\n\techo hi\n',
    'h.bin': 'a\u0000b',
    'big.txt': 'x'.repeat(101),
  });
  const { files, skipped } = await walkFolder(root, { maxFileBytes: 100 });
  t.same(Object.fromEntries(files.map((f) => [f.path, f.contentType])), {
    '/Makefile': 'text/plain',
    '/a.markdown': 'text/markdown',
    '/b.htm': 'text/html',
    '/c.json': 'application/json',
    '/d.jsonl': 'application/x-ndjson',
    '/e.ndjson': 'application/x-ndjson',
    '/f.csv': 'text/csv',
    '/g.txt': 'text/plain',
    '/h.bin': 'application/octet-stream',
  });
  t.same(paths(skipped), ['/big.txt']);
  t.match(skipped[0]!.reason, /larger than 100 B/);
});

t.test('walkFolder refuses a path that is not a folder', async (t) => {
  const root = await tree(t, { 'file.txt': 'x' });
  await t.rejects(walkFolder(path.join(root, 'file.txt')), /not a folder/);
  await t.rejects(walkFolder(path.join(root, 'missing')), { code: 'ENOENT' });
});
