// What indexing writes, as the store's contract (test/conformance/store.ts runs it on each engine),
// written against the interface only: a file's passages replaced or deleted, their keyword text
// prepared outside the transaction and written last, and their vectors.
import type { Test } from 'tap';
import { newFile } from './rows.js';
import type { CollectionRow, FileRow, KeywordText, NewPassage, NewVector, Store, StoreReads } from '../../src/store/interface.js';

/** What the suite lends this part: its per-test store, set-up and clock. */
export interface IngestConformanceKit {
  on: (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) => void;
  /** Namespace `alpha` with collections `docs` and `other`. */
  twoCollections: (store: Store) => Promise<{ col: CollectionRow; other: CollectionRow }>;
  /** A second of 2025-01-01, as ISO text. */
  at: (second: number) => string;
}

export function storeIngestConformance(t: Test, { on, twoCollections, at }: IngestConformanceKit): void {
  const addFile = (store: Store, id: string, collectionRid: number) => store.write((tx) => tx.files.insert(newFile(id, collectionRid)));
  const passage = (ordinal: number, text: string, heading = ''): NewPassage => ({ ordinal, evidence_kind: 'text', heading, text, char_start: 0, char_end: text.length, location: null });

  /** Replaces a file's passages and indexes their text, as the indexing worker does: keyword text prepared first, written last. */
  async function index(store: Store, col: CollectionRow, file: FileRow, passages: NewPassage[], keywordText: readonly KeywordText[] = passages): Promise<number[]> {
    const text = await store.keywordIndex.prepare(col.rid, keywordText);
    return store.write(async (tx) => {
      const [rids] = await tx.passages.replace(col.rid, [{ fileRid: file.rid, passages }]);
      await tx.passages.indexKeywordText(col.rid, [{ passageRids: rids!, text }]);
      return rids!;
    });
  }

  /** Each query word's passages among the files', as rids, with the passages counted. */
  async function postings(store: StoreReads, col: CollectionRow, files: readonly number[], words: readonly string[]): Promise<{ counted: number[]; hits: number[][] }> {
    const found = await store.keywordIndex.postings({ collectionRid: col.rid, collectionId: col.id, phrases: words.map((w) => `"${w}"`), files });
    const counted = Array.from(found.passages.rids);
    return { counted, hits: found.phrases.map((p) => Array.from(p.passages, (i) => counted[i]!)) };
  }

  const texts = (rows: readonly { text: string }[]) => rows.map((r) => r.text);
  const unit = (...v: number[]) => {
    const norm = Math.hypot(...v);
    return Float32Array.from(v, (x) => x / norm);
  };

  t.test('passages and their keyword text', async (t) => {
    const test = on(t);

    test("a file's passages replaced are what byRids, ofFiles and the keyword postings then return", async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const first = await index(store, col, file, [passage(0, 'The lantern glows in the orchard.', 'Evening'), passage(1, 'Apples ripen slowly.')]);
      t.equal(first.length, 2, 'a rid per passage');
      t.ok(first[0]! < first[1]!, "in the passages' order");
      const rows = (await store.passages.ofFiles([file.rid])).get(file.rid)!;
      t.same(
        rows.map((p) => [p.rid, p.file_rid, p.ordinal, p.heading, p.text]),
        [
          [first[0], file.rid, 0, 'Evening', 'The lantern glows in the orchard.'],
          [first[1], file.rid, 1, '', 'Apples ripen slowly.'],
        ],
        'ofFiles: the passages in order',
      );
      t.same(texts((await store.passages.byRids(first)).sort((a, b) => a.rid - b.rid)), ['The lantern glows in the orchard.', 'Apples ripen slowly.'], 'byRids');
      t.same(await postings(store, col, [file.rid], ['lantern', 'apples', 'evening']), { counted: first, hits: [[first[0]], [first[1]], [first[0]]] }, 'the keyword index holds heading and text');

      const second = await index(store, col, file, [passage(0, 'Pears fall in the wind.')]);
      t.equal(second.length, 1);
      t.ok(second[0]! > first[1]!, 'new rids');
      t.same(texts((await store.passages.ofFiles([file.rid])).get(file.rid)!), ['Pears fall in the wind.'], 'only the new passages');
      t.same(await store.passages.byRids(first), [], 'the old rids are gone');
      t.same(await postings(store, col, [file.rid], ['lantern', 'pears']), { counted: second, hits: [[], second] }, 'the old text left the keyword index');
    });

    test("deleting a file's passages takes its keyword rows; other files keep theirs", async (t, store) => {
      const { col } = await twoCollections(store);
      const a = await addFile(store, 'fil_a', col.rid);
      const b = await addFile(store, 'fil_b', col.rid);
      const ofA = await index(store, col, a, [passage(0, 'Lantern light on the path.')]);
      const ofB = await index(store, col, b, [passage(0, 'A lantern by the gate.')]);
      t.same((await postings(store, col, [a.rid, b.rid], ['lantern'])).hits, [[...ofA, ...ofB]]);
      await store.write((tx) => tx.passages.deleteOfFile(col.rid, a.rid));
      t.same((await store.passages.ofFiles([a.rid, b.rid])).get(a.rid), [], 'the file has none');
      t.same(await store.passages.byRids(ofA), []);
      t.same(texts(await store.passages.byRids(ofB)), ['A lantern by the gate.'], "the other file's stay");
      t.same(await postings(store, col, [a.rid, b.rid], ['lantern']), { counted: ofB, hits: [ofB] }, "only the other file's rows are found");
      await store.write((tx) => tx.passages.deleteOfFile(col.rid, a.rid));
      t.pass('deleting a file without passages is no change');
    });

    test('only the files the request names count', async (t, store) => {
      const { col } = await twoCollections(store);
      const a = await addFile(store, 'fil_a', col.rid);
      const b = await addFile(store, 'fil_b', col.rid);
      const ofA = await index(store, col, a, [passage(0, 'Lantern one.')]);
      await index(store, col, b, [passage(0, 'Lantern two.')]);
      t.same(await postings(store, col, [a.rid], ['lantern']), { counted: ofA, hits: [ofA] });
    });

    test("a collection's keyword rows are its own", async (t, store) => {
      const { col, other } = await twoCollections(store);
      const mine = await addFile(store, 'fil_a', col.rid);
      const theirs = await addFile(store, 'fil_b', other.rid);
      const ofMine = await index(store, col, mine, [passage(0, 'The lantern glows.')]);
      const ofTheirs = await index(store, other, theirs, [passage(0, 'A lantern, a lantern.')]);
      t.same((await postings(store, col, [mine.rid], ['lantern'])).hits, [ofMine]);
      t.same((await postings(store, other, [theirs.rid], ['lantern'])).hits, [ofTheirs]);
      const found = await store.keywordIndex.postings({ collectionRid: col.rid, collectionId: col.id, phrases: ['"lantern"'], files: [mine.rid] });
      t.same(Array.from(found.phrases[0]!.body), [1], "one occurrence: the other collection's two are not counted");
    });

    test('the keyword index holds the text prepared, not the passage (a keyword form of it)', async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const rids = await index(store, col, file, [passage(0, 'Lantern')], [{ heading: 'dusk', text: 'beacon' }]);
      t.same((await postings(store, col, [file.rid], ['beacon', 'dusk', 'lantern'])).hits, [rids, rids, []]);
      t.same(texts(await store.passages.byRids(rids)), ['Lantern'], 'the passage keeps its own text');
    });

    test('several files in one replace, and their keyword text in one write', async (t, store) => {
      const { col } = await twoCollections(store);
      const a = await addFile(store, 'fil_a', col.rid);
      const b = await addFile(store, 'fil_b', col.rid);
      const pa = [passage(0, 'Cedar and pine.'), passage(1, 'Birch.')];
      const pb = [passage(0, 'Pine cones.')];
      const [ta, tb] = [await store.keywordIndex.prepare(col.rid, pa), await store.keywordIndex.prepare(col.rid, pb)];
      const rids = await store.write(async (tx) => {
        const made = await tx.passages.replace(col.rid, [
          { fileRid: a.rid, passages: pa },
          { fileRid: b.rid, passages: pb },
        ]);
        t.same(texts(await tx.passages.byRids(made.flat())), ['Cedar and pine.', 'Birch.', 'Pine cones.'], 'the transaction reads its own passages');
        await tx.passages.indexKeywordText(col.rid, [
          { passageRids: made[0]!, text: ta },
          { passageRids: made[1]!, text: tb },
        ]);
        return made;
      });
      t.same(rids.map((r) => r.length), [2, 1], "each file's rids");
      t.same((await postings(store, col, [a.rid, b.rid], ['pine', 'birch'])).hits, [[rids[0]![0], rids[1]![0]], [rids[0]![1]]]);
    });

    test('keyword text prepared for other passages than given is refused, and nothing of the change is written', async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const text = await store.keywordIndex.prepare(col.rid, [passage(0, 'One.'), passage(1, 'Two.')]);
      await t.rejects(
        store.write(async (tx) => {
          const [rids] = await tx.passages.replace(col.rid, [{ fileRid: file.rid, passages: [passage(0, 'One.')] }]);
          await tx.passages.indexKeywordText(col.rid, [{ passageRids: rids!, text }]);
        }),
      );
      t.same((await store.passages.ofFiles([file.rid])).get(file.rid), []);
    });

    test('a rid is never given twice, not even after the passages holding the largest went', async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const first = await index(store, col, file, [passage(0, 'One.'), passage(1, 'Two.')]);
      await store.write((tx) => tx.passages.deleteOfFile(col.rid, file.rid));
      const again = await index(store, col, file, [passage(0, 'Three.')]);
      t.ok(again[0]! > Math.max(...first), `${again[0]} after ${first.join(', ')}`);
    });

    test('a passage that is a slice of its inline source reads back as that slice', async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const source = 'Intro line.\nThe lantern glows in the orchard.\n';
      await store.write((tx) => tx.files.insertVersion({ id: 'ver_fil_a', file_rid: file.rid, inline_text: source, blob_sha256: null, upload_state: null, created_at: at(40) }));
      const sliced: NewPassage = { ...passage(0, 'The lantern glows in the orchard.'), char_start: 12, char_end: 45 };
      const rewritten: NewPassage = { ...passage(1, 'Intro line (rewritten).'), char_start: 0, char_end: 11 };
      const text = await store.keywordIndex.prepare(col.rid, [sliced, rewritten]);
      const rids = await store.write(async (tx) => {
        const [made] = await tx.passages.replace(col.rid, [{ fileRid: file.rid, passages: [sliced, rewritten], source: { versionId: 'ver_fil_a', text: source } }]);
        await tx.passages.indexKeywordText(col.rid, [{ passageRids: made!, text }]);
        return made!;
      });
      t.same(texts((await store.passages.ofFiles([file.rid])).get(file.rid)!), ['The lantern glows in the orchard.', 'Intro line (rewritten).']);
      t.same((await postings(store, col, [file.rid], ['orchard', 'rewritten'])).hits, [[rids[0]], [rids[1]]]);
    });
  });

  t.test('vectors', async (t) => {
    const test = on(t);

    const vectorsOf = (rids: readonly number[], hashes: readonly string[], embeddings: readonly Float32Array[]): NewVector[] =>
      rids.map((passageRid, i) => ({ passageRid, textHash: hashes[i]!, embedding: embeddings[i]! }));

    test("inserted: a file's vectors by text hash, and similarities to a query", async (t, store) => {
      const { col } = await twoCollections(store);
      const file = await addFile(store, 'fil_a', col.rid);
      const rids = await index(store, col, file, [passage(0, 'North.'), passage(1, 'East.'), passage(2, 'Nowhere.')]);
      const [north, east] = [unit(1, 0, 0), unit(0, 1, 0)];
      await store.write((tx) => tx.vectors.insert(col.rid, vectorsOf(rids, ['h-north', 'h-east', 'h-zero'], [north, east, new Float32Array(3)])));
      const byHash = await store.vectors.ofFileByTextHash(col.rid, file.rid);
      t.same([...byHash.keys()].sort(), ['h-east', 'h-north'], 'an all-zero vector is left out');
      t.same(Array.from(byHash.get('h-north')!), Array.from(north), 'the embedding as stored');
      const similar = await store.vectors.similarities(col.rid, unit(1, 1, 0), rids);
      t.same([...similar.keys()].sort((a, b) => a - b), rids.slice(0, 2), 'a passage without a vector is left out');
      t.ok(Math.abs(similar.get(rids[0]!)! - Math.SQRT1_2) < 1e-5, 'cosine similarity');
      t.same(await store.vectors.ofFileByTextHash(col.rid, (await addFile(store, 'fil_b', col.rid)).rid), new Map(), 'a file without vectors');
    });

    test("a file's vectors go with its passages, replaced or deleted", async (t, store) => {
      const { col } = await twoCollections(store);
      const a = await addFile(store, 'fil_a', col.rid);
      const b = await addFile(store, 'fil_b', col.rid);
      const ofA = await index(store, col, a, [passage(0, 'North.')]);
      const ofB = await index(store, col, b, [passage(0, 'East.')]);
      await store.write(async (tx) => {
        await tx.vectors.insert(col.rid, vectorsOf(ofA, ['h-a'], [unit(1, 0)]));
        await tx.vectors.insert(col.rid, vectorsOf(ofB, ['h-b'], [unit(0, 1)]));
      });
      const again = await index(store, col, a, [passage(0, 'North again.')]);
      t.same(await store.vectors.ofFileByTextHash(col.rid, a.rid), new Map(), 'replaced passages have no vectors');
      t.same(await store.vectors.similarities(col.rid, unit(1, 0), [...ofA, ...again]), new Map());
      await store.write((tx) => tx.passages.deleteOfFile(col.rid, b.rid));
      t.same(await store.vectors.ofFileByTextHash(col.rid, b.rid), new Map(), 'deleted passages have none');
      t.same(await store.vectors.similarities(col.rid, unit(0, 1), ofB), new Map());
    });

    test("dropAll: the collection's vectors go, another collection's stay", async (t, store) => {
      const { col, other } = await twoCollections(store);
      const mine = await addFile(store, 'fil_a', col.rid);
      const theirs = await addFile(store, 'fil_b', other.rid);
      const ofMine = await index(store, col, mine, [passage(0, 'North.')]);
      const ofTheirs = await index(store, other, theirs, [passage(0, 'North.')]);
      await store.write(async (tx) => {
        await tx.vectors.insert(col.rid, vectorsOf(ofMine, ['h'], [unit(1, 0)]));
        await tx.vectors.insert(other.rid, vectorsOf(ofTheirs, ['h'], [unit(1, 0)]));
      });
      await store.write((tx) => tx.vectors.dropAll(col.rid));
      t.same(await store.vectors.ofFileByTextHash(col.rid, mine.rid), new Map());
      t.same(await store.vectors.similarities(col.rid, unit(1, 0), ofMine), new Map());
      t.same([...(await store.vectors.ofFileByTextHash(other.rid, theirs.rid)).keys()], ['h'], "the other collection's stay");
      await store.write((tx) => tx.vectors.insert(col.rid, vectorsOf(ofMine, ['h3'], [unit(1, 0, 0)])));
      t.same([...(await store.vectors.ofFileByTextHash(col.rid, mine.rid)).keys()], ['h3'], 'and new ones may have other dimensions');
    });
  });
}
