// The vectors aggregate's part of the store's contract (test/conformance/store.ts runs it on each
// engine), written against the interface only: the reads the dense stage's scan and its in-memory
// copies make (src/domain/search/vector-scan.ts, vector-copies.ts), over collections without
// vectors and over vectors written through the interface.
import type { Test } from 'tap';
import { newFile } from './rows.js';
import { VECTOR_SHARDS, type CollectionRow, type FileRow, type NamespaceRow, type Store, type VectorShardShape } from '../../src/store/interface.js';

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

    test('stored vectors: a version; each shard its rows in rid order, as stored; nearest and exactHits agree; ready and selected files only', async (t, store) => {
      const { col, other } = await twoCollections(store);
      let seed = 11;
      const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
      const unit = (v: number[]) => {
        const norm = Math.hypot(...v);
        return Float32Array.from(v, (x) => x / norm);
      };
      // 15 files of two passages, the last file's two vectors equal (a tie broken by passage rid).
      const embeddings = Array.from({ length: 28 }, () => unit(Array.from({ length: 8 }, random)));
      const twin = unit([1, 1, 1, 1, 1, 1, 1, 1]);
      embeddings.push(twin, twin);
      const written = await store.write(async (tx) => {
        const files: FileRow[] = [];
        for (let i = 0; i < 15; i++) files.push(await tx.files.insert(newFile(`fil_${i}`, col.rid)));
        const passage = (ordinal: number) => ({ ordinal, evidence_kind: 'text', heading: '', text: `p${ordinal}`, char_start: 0, char_end: 2, location: null });
        const rids = await tx.passages.replace(col.rid, files.map((f) => ({ fileRid: f.rid, passages: [passage(0), passage(1)] })));
        const passages = rids.flatMap((pair, i) => pair.map((passageRid) => ({ passageRid, fileRid: files[i]!.rid })));
        await tx.vectors.insert(col.rid, passages.map((p, i) => ({ passageRid: p.passageRid, textHash: `h${i}`, embedding: embeddings[i]! })));
        for (const f of files) await tx.files.setStatus(f.rid, 'ready', at(41));
        return { files, passages };
      });
      const embeddingOf = new Map(written.passages.map((p, i) => [p.passageRid, embeddings[i]!]));
      const version = await store.vectors.version(col.rid);
      t.ok(version > 0, `vectors written: version ${version}`);
      t.equal(await store.vectors.version(col.rid), version, 'reading does not move it');
      t.equal(await store.vectors.version(other.rid), 0, "another collection's stays 0");

      const { shapes, rows } = await readAll(store, col.rid);
      t.same(shapes.map((s) => [s.version, s.dimensions]), Array.from({ length: VECTOR_SHARDS }, () => [version, 8]), 'each shard: the version and the dimensions');
      t.equal(shapes.reduce((n, s) => n + s.rows, 0), embeddings.length, 'the shapes count every vector');
      t.same([...rows].sort((a, b) => a - b), [...embeddingOf.keys()].sort((a, b) => a - b), 'every vector once');
      const bytes = new Map<number, Buffer>();
      for (let shard = 0; shard < VECTOR_SHARDS; shard++) {
        const mine: number[] = [];
        await store.vectors.readShard(col.rid, shard, { start: () => true, row: (rid, embedding) => (mine.push(rid), void bytes.set(rid, Buffer.from(embedding))) });
        t.ok(mine.every((rid) => rid % VECTOR_SHARDS === shard), `shard ${shard}: its own rows`);
        t.same(mine, [...mine].sort((a, b) => a - b), 'in rid order');
      }
      t.ok([...embeddingOf].every(([rid, v]) => bytes.get(rid)!.equals(Buffer.from(v.buffer, v.byteOffset, v.byteLength))), 'as the float32 bytes written');
      let taken = 0;
      await store.vectors.readShard(col.rid, 0, { start: () => false, row: () => void taken++ });
      t.equal(taken, 0, 'a reader that declines reads no row');
      t.equal((await readAll(store, other.rid)).rows.length, 0, "another collection's shards are empty");

      const byRank = (a: { similarity: number; passageRid: number }, b: { similarity: number; passageRid: number }) => b.similarity - a.similarity || a.passageRid - b.passageRid;
      const nearestAll = async () => (await Promise.all(Array.from({ length: VECTOR_SHARDS }, (_, shard) => store.vectors.nearest(col.rid, twin, { shard, selection: null, limit: 100 })))).flat().sort(byRank);
      const nearest = await nearestAll();
      t.equal(nearest.length, embeddings.length, 'nearest scores every vector of a ready file');
      const twins = written.passages.slice(-2).map((p) => p.passageRid);
      t.same(nearest.slice(0, 2).map((h) => h.passageRid), twins, 'equal vectors: the lower passage rid first');
      t.ok(Math.abs(nearest[0]!.similarity - 1) < 1e-6, 'a vector is nearest itself');
      const fileOf = new Map(written.passages.map((p) => [p.passageRid, p.fileRid]));
      t.ok(nearest.every((h) => h.fileRid === fileOf.get(h.passageRid)), 'each hit names its file');
      const expected = (rid: number) => [...twin].reduce((sum, x, i) => sum + x * embeddingOf.get(rid)![i]!, 0);
      t.ok(nearest.every((h) => Math.abs(h.similarity - expected(h.passageRid)) < 1e-5), 'similarities are the cosines');
      const top5 = await store.vectors.nearest(col.rid, twin, { shard: 0, selection: null, limit: 5 });
      t.same(top5, nearest.filter((h) => h.passageRid % VECTOR_SHARDS === 0).slice(0, 5), "a limit keeps a shard's best");
      const all = nearest.map((h) => h.passageRid);
      t.same((await store.vectors.exactHits(col.rid, twin, all, null)).sort(byRank), nearest, 'exactHits: the same passages, files and similarities as nearest');
      const similarities = await store.vectors.similarities(col.rid, twin, all);
      t.ok(all.every((rid) => Math.abs(similarities.get(rid)! - expected(rid)) < 1e-5), 'similarities agree');

      const odd = written.files.filter((_, i) => i % 2 === 1).map((f) => f.rid);
      const selection = { fileRids: odd, selectivity: odd.length / written.files.length };
      const narrowed = await store.vectors.exactHits(col.rid, twin, all, selection);
      t.ok(narrowed.length === odd.length * 2 && narrowed.every((h) => odd.includes(h.fileRid)), 'exactHits keeps the selected files only');
      const narrowedNearest = (await Promise.all(Array.from({ length: VECTOR_SHARDS }, (_, shard) => store.vectors.nearest(col.rid, twin, { shard, selection, limit: 100 })))).flat();
      t.same(narrowedNearest.sort(byRank), narrowed.sort(byRank), 'and so does nearest, before its cut');

      const best = nearest[0]!.fileRid;
      await store.write((tx) => tx.files.setStatus(best, 'indexing', at(42)));
      t.notOk((await store.vectors.exactHits(col.rid, twin, all, null)).some((h) => h.fileRid === best), 'a file that is not ready drops out of exactHits');
      t.notOk((await nearestAll()).some((h) => h.fileRid === best), 'and of nearest');
      t.equal(await store.vectors.version(col.rid), version, 'a file status change does not move the version');

      await store.write((tx) => tx.vectors.dropAll(col.rid));
      t.not(await store.vectors.version(col.rid), version, 'dropping them moves the version');
      t.equal((await readAll(store, col.rid)).rows.length, 0, 'and leaves no row');
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
