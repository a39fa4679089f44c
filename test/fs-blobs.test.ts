// The data-dir blob engine (src/store/fs-blobs/) beyond the shared contract: where its bytes live,
// that they are private, and what a previous process left half-written.
import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { openFsBlobStore } from '../src/store/fs-blobs/fs-blob-store.js';

const HELLO_WORLD = 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

t.test('a blob is a private file under <aa>/<sha256>, stored once whatever the uploads of it', async (t) => {
  const umask = process.umask(0o022);
  t.teardown(() => void process.umask(umask));
  const root = mkdtempSync(join(tmpdir(), 'trove-blobs-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const store = openFsBlobStore(join(root, 'blobs'));
  for (let i = 0; i < 3; i++) await store.commit(await store.receive(Readable.from([Buffer.from('hello '), Buffer.from('world')]), { maxBytes: 1024 }));
  t.same(filesUnder(store.dir), [join('b9', HELLO_WORLD)], 'one file, under its hash; no temporary file left');
  t.equal(store.pathOf(HELLO_WORLD), join(store.dir, 'b9', HELLO_WORLD));
  const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
  t.equal(mode(store.dir), '700', 'the store\'s folder');
  t.equal(mode(join(store.dir, 'b9')), '700', 'a hash folder');
  t.equal(mode(join(store.dir, 'tmp')), '700', 'the folder of uploads being received');
  t.equal(mode(join(store.dir, 'b9', HELLO_WORLD)), '600', 'the blob');
});

t.test('uploads a previous process left half-written are removed at start-up', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'trove-blobs-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const before = openFsBlobStore(join(root, 'blobs'));
  await before.commit(await before.receive(Readable.from([Buffer.from('hello world')]), { maxBytes: 1024 }));
  mkdirSync(join(root, 'blobs', 'tmp'), { recursive: true });
  writeFileSync(join(root, 'blobs', 'tmp', 'a1b2c3'), 'half an upload');
  writeFileSync(join(root, 'blobs', 'tmp', 'd4e5f6'), 'another half');
  const after = openFsBlobStore(join(root, 'blobs'));
  t.equal(await after.removeUnfinishedUploads(), 2, 'both counted');
  t.same(filesUnder(after.dir), [join('b9', HELLO_WORLD)], 'only the stored blob is left');
  rmSync(join(root, 'blobs', 'tmp'), { recursive: true });
  t.equal(await after.removeUnfinishedUploads(), 0, 'no folder of uploads: nothing to remove');
});
