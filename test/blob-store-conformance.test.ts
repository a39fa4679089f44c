// Every blob engine passes the one contract (test/conformance/blob-store.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openFsBlobStore } from '../src/store/fs-blobs/fs-blob-store.js';
import { MemoryBlobStore } from '../src/store/memory-blobs/memory-blob-store.js';
import { blobStoreConformance } from './conformance/blob-store.js';
import { diskFullAfter, noRoomForFoldersUnder } from './helpers/disk-full.js';

t.test('files in the data dir (src/store/fs-blobs)', async (t) => {
  blobStoreConformance(t, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trove-blobs-'));
    const store = openFsBlobStore(join(dir, 'blobs'));
    return {
      store,
      fullAfter: diskFullAfter,
      // Its folder, named by the hash's first two hex digits, is what a commit makes.
      noRoomToCommit: (sha256) => noRoomForFoldersUnder(join(store.dir, sha256.slice(0, 2))),
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  });
});

t.test('in memory (src/store/memory-blobs)', async (t) => {
  blobStoreConformance(t, async () => {
    const store = new MemoryBlobStore();
    return {
      store,
      fullAfter: (room) => {
        store.capacityBytes = store.usedBytes + room;
        return () => void (store.capacityBytes = Number.POSITIVE_INFINITY);
      },
      close: async () => {},
    };
  });
});
