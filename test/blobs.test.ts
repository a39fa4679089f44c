// Receiving an upload's bytes into the blob store (src/domain/blobs.ts): a body that fails partway
// leaves no temporary file and no error the daemon does not hear.
import t from 'tap';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { commitBlob, receiveBlob } from '../src/domain/blobs.js';

t.test('a body that fails while a write is in flight is an error for the caller, not for the process', async (t) => {
  // Found while testing an abandoned upload: destroying the file stream with a write still pending
  // raised ERR_STREAM_DESTROYED on an 'error' event nobody listened to, and the daemon died.
  const dir = mkdtempSync(join(tmpdir(), 'trove-blobs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  t.teardown(() => process.off('uncaughtException', onUncaught));
  for (let round = 0; round < 20; round++) {
    const body = Readable.from(
      (async function* () {
        yield Buffer.alloc(1024, 0x61);
        await new Promise((resolve) => setTimeout(resolve, 2));
        yield Buffer.alloc(1024, 0x62); // a write the file stream has queued, not yet done…
        throw new Error('the client went away'); // …when the body fails
      })(),
    );
    // Without a listener the stream's error was lost and receiveBlob never settled (or the process died).
    const outcome = await Promise.race([
      receiveBlob(dir, body, 64 << 20).then(
        () => 'stored',
        (err: Error) => err.message,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 5 s'), 5000)),
    ]);
    t.equal(outcome, 'the client went away', `round ${round}: the body's own error`);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(uncaught, [], 'no error escaped to the process');
  const leftovers = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  t.same(leftovers.map((e) => e.name), [], 'no temporary file left behind');
});

t.test('a whole body is stored under its hash', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trove-blobs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const blob = await receiveBlob(dir, Readable.from([Buffer.from('hello '), Buffer.from('world')]), 1024);
  t.equal(blob.bytes, 11);
  t.equal(blob.sha256, 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9');
  commitBlob(dir, blob);
  t.ok(readdirSync(join(dir, 'b9')).length === 1, 'kept under its hash');
  await t.rejects(receiveBlob(dir, Readable.from([Buffer.alloc(2048)]), 1024), { code: 'request_too_large' }, 'more than the limit is refused');
});
