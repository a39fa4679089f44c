// The indexing worker reads an upload's bytes through the blob store (src/store/blob-store.ts),
// asking for no more than the per-file limit: a larger upload fails `too_large` and is never read
// into memory whole.
import t from 'tap';
import { runIndexJobs } from '../src/domain/ingest/pipeline.js';
import type { BlobStore } from '../src/store/blob-store.js';
import { claim, inProcessWorker } from './helpers/indexing.js';
import { seedCollection, startFixture } from './helpers/trove.js';

t.test('an upload over the per-file limit fails too_large, read with that limit', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'up', 'docs');
  const worker = inProcessWorker(f);
  const limit = worker.cfg.maxFileBytes;
  const reads: number[] = [];
  const blobs: BlobStore = f.rt.services.blobs;
  worker.blobs = Object.assign(Object.create(blobs) as BlobStore, {
    read: (sha256: string, options: { maxBytes: number }) => {
      reads.push(options.maxBytes);
      return blobs.read(sha256, options);
    },
  });
  const ids: Record<string, string> = {};
  for (const [path, size] of [['/at-limit.txt', limit], ['/over.txt', limit + 1]] as const) {
    const added = await f.call('POST', `${base}/files`, { path, source: { type: 'upload', content_type: 'text/plain' } });
    t.equal((await f.raw('PUT', new URL(added.body.upload.url).pathname, Buffer.alloc(size, 'a '), { authorization: undefined, 'content-type': 'text/plain' })).status, 200, `${path} uploaded`);
    ids[path] = added.body.file.id;
  }
  await runIndexJobs(worker, await claim(f));
  t.same(reads, [limit, limit], 'each read asked for at most the per-file limit');
  const over = (await f.call('GET', `${base}/files/${ids['/over.txt']}`)).body;
  t.match(over, { status: 'failed', error: { code: 'too_large', message: `The file is ${limit + 1} bytes; the limit is ${limit}.` } }, 'over the limit: too_large, saying by how much');
  t.equal((await f.call('GET', `${base}/files/${ids['/at-limit.txt']}`)).body.status, 'ready', 'at the limit: indexed');
});
