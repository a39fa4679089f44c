// The vectors aggregate's part of the store's contract (test/conformance/store.ts runs it on each
// engine), written against the interface only: the reads the dense stage's scan and its in-memory
// copies make (src/domain/search/vector-scan.ts, vector-copies.ts). Vectors are not yet written
// through the interface, so these tests cover collections without vectors; the same reads over
// stored vectors are tested on SQLite in test/vector-copy.test.ts until they can move here.
import type { Test } from 'tap';
import { newFile } from './rows.js';
import { VECTOR_SHARDS, type CollectionRow, type NamespaceRow, type Store, type VectorShardShape } from '../../src/store/interface.js';

/** What the suite lends this part: its per-test store, set-up and clock. */
export interface VectorsConformanceKit {
  on: (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) => void;
  /** Namespace `alpha` with collections `docs` and `other`. */
  twoCollections: (store: Store) => Promise<{ ns: NamespaceRow; col: CollectionRow; other: CollectionRow }>;
  /** A second of 2025-01-01, as ISO text. */
  at: (second: number) => string;
}

const QUERY = new Float32Array([0.6, 0.8, 0, 0]);

export function storeVectorsConformance(t: Test, { on, twoCollections, at }: VectorsConformanceKit): void {
  /** Every shard's read: the shapes the reader was told and the rows it took. */
  const readAll = async (store: Store, collectionRid: number) => {
    const shapes: VectorShardShape[] = [];
    const rows: number[] = [];
    for (let shard = 0; shard < VECTOR_SHARDS; shard++) {
      await store.vectors.readShard(collectionRid, shard, {
        start: (shape) => {
          shapes.push(shape);
          return true;
        },
        row: (passageRid) => void rows.push(passageRid),
      });
    }
    return { shapes, rows };
  };

  t.test('vectors', async (t) => {
    const test = on(t);

    test('a collection without vectors: version 0, empty shards, no hits', async (t, store) => {
      const { col } = await twoCollections(store);
      t.equal(await store.vectors.version(col.rid), 0, 'version 0');
      t.equal(await store.vectors.version(987_654), 0, 'and 0 for a collection that does not exist');
      const { shapes, rows } = await readAll(store, col.rid);
      t.equal(shapes.length, VECTOR_SHARDS, 'each shard tells its shape first');
      t.ok(
        shapes.every((s) => s.rows === 0 && s.version === 0),
        'no rows, at version 0',
      );
      t.same(rows, [], 'and gives none');
      for (let shard = 0; shard < VECTOR_SHARDS; shard++) {
        t.same(await store.vectors.nearest(col.rid, QUERY, { shard, selection: null, limit: 10 }), [], `shard ${shard}: nothing nearest`);
        t.same(await store.vectors.nearest(col.rid, QUERY, { shard, selection: { fileRids: [], selectivity: 0 }, limit: 10 }), [], 'nor in an empty selection');
      }
      t.same(await store.vectors.exactHits(col.rid, QUERY, [], null), [], 'no passages asked, no hits');
      t.same(await store.vectors.exactHits(col.rid, QUERY, [1, 2, 3], null), [], 'passages without vectors are left out');
      t.same([...(await store.vectors.similarities(col.rid, QUERY, [1, 2, 3]))], [], 'and have no similarity');
    });

    test('writes that touch no vectors leave the version alone (copies are not rebuilt for them)', async (t, store) => {
      const { col, other } = await twoCollections(store);
      const before = await store.vectors.version(col.rid);
      const file = await store.write((tx) =>
        tx.files.insert(newFile('fil_v1', col.rid, { path: '/a.txt' })),
      );
      await store.write((tx) => tx.files.setStatus(file.rid, 'ready', at(41)));
      t.equal(await store.vectors.version(col.rid), before, 'a file inserted and made ready');
      t.equal(await store.vectors.version(other.rid), 0, 'another collection untouched');
      const selection = { fileRids: [file.rid], selectivity: 1 };
      for (let shard = 0; shard < VECTOR_SHARDS; shard++) t.same(await store.vectors.nearest(col.rid, QUERY, { shard, selection, limit: 10 }), [], 'a ready file without vectors is not a hit');
    });
  });
}
