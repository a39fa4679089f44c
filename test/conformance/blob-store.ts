// The blob store's contract (src/store/blob-store.ts), written against the interface only: every
// engine runs it (test/blob-store-conformance.test.ts). What an engine cannot show through the
// interface (where its bytes live, their file modes) its own test checks.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { isStorageFull } from '../../src/contract/errors.js';
import type { BlobStore } from '../../src/store/blob-store.js';

export interface BlobStoreUnderTest {
  store: BlobStore;
  /**
   * Until the returned function is called, the store finds room for `room` more bytes of the blobs
   * it receives, then fails as a full disk does.
   */
  fullAfter(room: number): () => void;
  /**
   * Until the returned function is called, storing a received blob under this hash finds no room.
   * Left out by an engine whose commit writes nothing.
   */
  noRoomToCommit?(sha256: string): () => void;
  close(): Promise<void>;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
/** A body in chunks, as a request delivers it. */
const body = (bytes: Buffer, chunk = 16 * 1024) => Readable.from((function* () {
  for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
})());
const document = (size: number, seed = 1) => {
  const out = Buffer.alloc(size);
  for (let i = 0, x = seed; i < size; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return out;
};
async function streamed(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
const CAP = { maxBytes: 64 << 20 };

export function blobStoreConformance(t: Test, open: () => Promise<BlobStoreUnderTest>): void {
  const test = (name: string, fn: (t: Test, under: BlobStoreUnderTest) => Promise<void>) =>
    t.test(name, async (t) => {
      const under = await open();
      t.teardown(() => under.close());
      await fn(t, under);
    });

  test('a received blob is hashed as it arrives and stays invisible until committed', async (t, { store }) => {
    const seen: Buffer[] = [];
    const blob = await store.receive(Readable.from([Buffer.from('hello '), Buffer.from('world')]), { maxBytes: 1024, onChunk: (c) => seen.push(Buffer.from(c)) });
    t.same({ ...blob }, { sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9', bytes: 11 }, 'its sha256 and size');
    t.equal(Buffer.concat(seen).toString(), 'hello world', 'onChunk saw every byte, in order');
    t.equal(await store.exists(blob.sha256), false, 'pending: not stored');
    await t.rejects(store.read(blob.sha256, CAP), { code: 'not_found' }, 'pending: not readable');
    await store.commit(blob);
    t.equal(await store.exists(blob.sha256), true, 'committed: stored');
    t.equal((await store.read(blob.sha256, CAP)).toString(), 'hello world', 'read whole');
    const opened = await store.open(blob.sha256);
    t.equal(opened.bytes, 11, 'opened: its size');
    t.equal((await streamed(opened.stream)).toString(), 'hello world', 'opened: its bytes as a stream');
  });

  test('large and empty blobs come back byte for byte', async (t, { store }) => {
    for (const bytes of [document(3 << 20), Buffer.alloc(0)]) {
      const blob = await store.receive(body(bytes), CAP);
      t.same({ ...blob }, { sha256: sha256(bytes), bytes: bytes.length }, `${bytes.length} bytes: hash and size`);
      await store.commit(blob);
      t.ok((await store.read(blob.sha256, CAP)).equals(bytes), `${bytes.length} bytes: read`);
      t.ok((await streamed((await store.open(blob.sha256)).stream)).equals(bytes), `${bytes.length} bytes: streamed`);
    }
  });

  test('the same bytes are stored once', async (t, { store }) => {
    const bytes = document(200_000, 7);
    const first = await store.receive(body(bytes), CAP);
    const second = await store.receive(body(bytes, 999), CAP);
    t.equal(first.sha256, second.sha256);
    await store.commit(first);
    await store.commit(second);
    t.ok((await store.read(first.sha256, CAP)).equals(bytes), 'committing the same bytes again keeps them intact');
    const third = await store.receive(body(bytes), CAP);
    await store.discard(third);
    t.ok(await store.exists(first.sha256), 'discarding a pending copy leaves the stored one');
    await store.remove(first.sha256);
    t.equal(await store.exists(first.sha256), false, 'one remove: gone (one copy, no reference count)');
    t.equal(await store.removeUnfinishedUploads(), 0, 'no pending copy is left behind');
  });

  test('a body over the cap is refused, and nothing of it kept', async (t, { store }) => {
    const bytes = document(100_000, 3);
    await t.rejects(store.receive(body(bytes), { maxBytes: bytes.length - 1 }), { code: 'request_too_large', details: { limit_bytes: bytes.length - 1 } }, 'one byte over');
    t.equal(await store.removeUnfinishedUploads(), 0, 'no pending blob');
    t.equal(await store.exists(sha256(bytes)), false, 'no stored blob');
    const exact = await store.receive(body(bytes), { maxBytes: bytes.length });
    t.equal(exact.bytes, bytes.length, 'exactly the cap is taken');
    await store.discard(exact);
  });

  test('a whole read over its limit is refused unread', async (t, { store }) => {
    const bytes = document(10_000, 5);
    const blob = await store.receive(body(bytes), CAP);
    await store.commit(blob);
    await t.rejects(store.read(blob.sha256, { maxBytes: 9_999 }), { code: 'request_too_large', details: { limit_bytes: 9_999, bytes: 10_000 } });
    t.equal((await store.read(blob.sha256, { maxBytes: 10_000 })).length, 10_000, 'at the limit it is read');
  });

  test('a discarded blob is gone; discarding again is a no-op, committing it an error', async (t, { store }) => {
    const blob = await store.receive(body(Buffer.from('discard me')), CAP);
    await store.discard(blob);
    await store.discard(blob);
    t.equal(await store.exists(blob.sha256), false);
    t.equal(await store.removeUnfinishedUploads(), 0, 'nothing pending');
    await t.rejects(store.commit(blob), /not pending/, 'a discarded blob cannot be committed');
    const committed = await store.receive(body(Buffer.from('kept')), CAP);
    await store.commit(committed);
    await store.discard(committed);
    t.ok(await store.exists(committed.sha256), 'discarding after the commit leaves the stored blob');
  });

  test('a hash that is stored nowhere, or is no hash at all', async (t, { store }) => {
    for (const name of [sha256('never stored'), '../../../etc/passwd', '', 'AB'.repeat(32)]) {
      t.equal(await store.exists(name), false, `${JSON.stringify(name)}: does not exist`);
      await t.rejects(store.read(name, CAP), { code: 'not_found', details: { sha256: name } }, `${JSON.stringify(name)}: read is not_found`);
      await t.rejects(store.open(name), { code: 'not_found' }, `${JSON.stringify(name)}: open is not_found`);
      await store.remove(name);
    }
  });

  test('start-up cleanup removes what was received and never committed, and nothing else', async (t, { store }) => {
    const kept = await store.receive(body(Buffer.from('committed')), CAP);
    await store.commit(kept);
    const left = [await store.receive(body(Buffer.from('left one')), CAP), await store.receive(body(Buffer.from('left two')), CAP)];
    t.equal(await store.removeUnfinishedUploads(), 2, 'two were pending');
    t.equal(await store.removeUnfinishedUploads(), 0, 'then none');
    for (const blob of left) t.equal(await store.exists(blob.sha256), false, 'never stored');
    t.equal((await store.read(kept.sha256, CAP)).toString(), 'committed', 'the committed blob is untouched');
  });

  test('a body that fails partway, while a write is in flight, is the caller\'s error and leaves nothing', async (t, { store }) => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    t.teardown(() => process.off('uncaughtException', onUncaught));
    for (let round = 0; round < 20; round++) {
      const failing = Readable.from(
        (async function* () {
          yield Buffer.alloc(1024, 0x61);
          await new Promise((resolve) => setTimeout(resolve, 2));
          yield Buffer.alloc(1024, 0x62); // a write the store may still have in flight…
          throw new Error('the client went away'); // …when the body fails
        })(),
      );
      const outcome = await Promise.race([
        store.receive(failing, CAP).then(
          () => 'stored',
          (err: Error) => err.message,
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 5 s'), 5000)),
      ]);
      t.equal(outcome, 'the client went away', `round ${round}: the body's own error`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.same(uncaught, [], 'no error escaped to the process');
    t.equal(await store.removeUnfinishedUploads(), 0, 'no pending blob left behind');
  });

  test('no room while receiving: a storage-full error, nothing kept, and it works once there is room', async (t, { store, fullAfter }) => {
    const bytes = document(512 * 1024, 11);
    const roomAgain = fullAfter(64 * 1024);
    let failure: unknown;
    try {
      await store.receive(body(bytes), CAP);
    } catch (err) {
      failure = err;
    } finally {
      roomAgain();
    }
    t.ok(isStorageFull(failure), `a full disk's error (${String((failure as Error)?.message)})`);
    t.equal(await store.removeUnfinishedUploads(), 0, 'no half-written pending blob');
    t.equal(await store.exists(sha256(bytes)), false, 'no stored blob');
    const blob = await store.receive(body(bytes), CAP);
    await store.commit(blob);
    t.ok((await store.read(blob.sha256, CAP)).equals(bytes), 'received whole once there is room');
  });

  test('no room while committing: a storage-full error, the pending blob gone, and it works once there is room', async (t, { store, noRoomToCommit }) => {
    if (!noRoomToCommit) {
      t.pass('this engine writes nothing when it commits');
      return;
    }
    const bytes = document(50_000, 13);
    const blob = await store.receive(body(bytes), CAP);
    const roomAgain = noRoomToCommit(blob.sha256);
    let failure: unknown;
    try {
      await store.commit(blob);
    } catch (err) {
      failure = err;
    } finally {
      roomAgain();
    }
    t.ok(isStorageFull(failure), `a full disk's error (${String((failure as Error)?.message)})`);
    t.equal(await store.exists(blob.sha256), false, 'not stored');
    t.equal(await store.removeUnfinishedUploads(), 0, 'and no longer pending');
    const again = await store.receive(body(bytes), CAP);
    await store.commit(again);
    t.ok(await store.exists(again.sha256), 'stored once there is room');
  });

  test('receives run side by side', async (t, { store }) => {
    const docs = Array.from({ length: 8 }, (_, i) => document(100_000 + i, 100 + i));
    const blobs = await Promise.all(docs.map((d) => store.receive(body(d, 4096), CAP)));
    await Promise.all(blobs.map((b) => store.commit(b)));
    for (const [i, d] of docs.entries()) t.ok((await store.read(sha256(d), CAP)).equals(d), `blob ${i}`);
  });
}
