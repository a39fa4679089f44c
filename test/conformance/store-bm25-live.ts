// Keyword scores are BM25 over the live passages, on every engine: after any sequence of adds,
// edits, deletes and reindexes written through the interface, the domain's BM25 over the postings an
// engine serves equals BM25 computed from scratch over the passages that are live then (ready files,
// not deleted), to 1e-9; and an enforced collection's reader who may read every file gets the open
// collection's scores. The reference tokenizes with a keyword index of its own, built from nothing
// but the live passages' text (test/helpers/bm25.ts), so no engine state leaks into it.
import fc from 'fast-check';
import type { Test } from 'tap';
import { keywordIndexText } from '../../src/contract/cjk.js';
import { keywordRanking } from '../../src/domain/search/keyword-ranking.js';
import { buildMatchPhrases } from '../../src/domain/search/query-text.js';
import type { CollectionRow, NamespaceRow, NewPassage, Store } from '../../src/store/interface.js';
import { bm25FromScratch, relativeError } from '../helpers/bm25.js';

export interface Bm25LiveKit {
  on: (parent: Test) => (name: string, fn: (t: Test, store: Store) => Promise<void>) => void;
  /** A second of 2025-01-01, as ISO text. */
  at: (second: number) => string;
}

const WORDS = ['lantern', 'harbour', 'ledger', 'orchard', 'quarry', 'signal', 'budget', 'weather'];
const QUERIES = ['report', 'lantern', 'harbour ledger', 'orchard quarry signal report', 'budget weather lantern', '"harbour ledger"'];

type Op = { kind: 'put'; file: number; heading: string[]; body: string[] } | { kind: 'delete'; file: number } | { kind: 'reindex' };
const words = fc.array(fc.constantFrom(...WORDS, 'report', 'report'), { minLength: 0, maxLength: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('put' as const), file: fc.nat(5), heading: fc.array(fc.constantFrom(...WORDS, 'report'), { maxLength: 3 }), body: words }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), file: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reindex' as const) }) },
);

/** A file's passages as the pipeline cuts them: its heading section, and a trailer of its own. */
function passagesOf(heading: string, body: string, step: number): NewPassage[] {
  const trailer = `report ${step}`;
  return [
    { ordinal: 0, evidence_kind: 'text', heading, text: body, char_start: 0, char_end: body.length, location: null },
    { ordinal: 1, evidence_kind: 'text', heading: '', text: trailer, char_start: body.length, char_end: body.length + trailer.length, location: null },
  ];
}

export function bm25LiveConformance(t: Test, { on, at }: Bm25LiveKit): void {
  t.test('keyword statistics are live', async (t) => {
    const test = on(t);
    test('BM25 over the postings an engine serves is BM25 over the live passages, after any adds, edits, deletes and reindexes; open and enforced agree', async (t, store) => {
      let run = 0;
      let checked = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 9 }), async (ops) => {
          const r = run++;
          const { open, enforced, rule } = await store.write(async (tx) => {
            const ns: NamespaceRow = await tx.namespaces.insert({ id: `ns_${r}`, name: `live${r}`, display_name: null, created_at: at(0), updated_at: at(0) });
            const processing = { keyword: true, semantic: false, chunk_tokens: 64, chunk_overlap: 0, ocr: false };
            const common = { namespace_rid: ns.rid, display_name: null, processing, embedding_model: null, created_at: at(1), updated_at: at(1) };
            const open = await tx.collections.insert({ ...common, id: `col_o${r}`, name: 'open', access_control: 'off' });
            const enforced = await tx.collections.insert({ ...common, id: `col_e${r}`, name: 'enforced', access_control: 'enforced' });
            const rule = await tx.accessRules.insert({ id: `rul_${r}`, collection_rid: enforced.rid, target: { folder: '/' }, readers: ['all'], sealed: false, now: at(2) });
            return { open, enforced, rule };
          });
          const files = new Map<string, { rid: number; content: { heading: string; body: string; step: number } }>();
          const put = async (col: CollectionRow, file: number, content: { heading: string; body: string; step: number }) => {
            const key = `${col.rid}:${file}`;
            const passages = passagesOf(content.heading, content.body, content.step);
            const prepared = await store.keywordIndex.prepare(col.rid, passages.map((p) => ({ heading: keywordIndexText(p.heading), text: keywordIndexText(p.text) })));
            const version = `ver_${r}_${col.rid}_${file}_${content.step}_${Math.random().toString(36).slice(2)}`;
            const rid = await store.write(async (tx) => {
              const known = files.get(key);
              const source = { source_type: 'inline' as const, declared_content_type: 'text/markdown', content_type: 'text/markdown', bytes: content.body.length, checksum: null, uri: null, version_id: version };
              const row = known
                ? await tx.files.replaceSource(known.rid, source, null, at(3))
                : await tx.files.insert({ ...source, id: `fil_${r}_${col.rid}_${file}_${content.step}`, collection_rid: col.rid, path: `/f${file}.md`, status: 'pending', metadata: {}, created_at: at(3), updated_at: at(3), governing_rule_rid: col.rid === enforced.rid ? rule.rid : null });
              const [rids] = await tx.passages.replace(col.rid, [{ fileRid: row.rid, passages }]);
              await tx.files.markIndexed(row.rid, { versionId: version, contentType: 'text/markdown' }, at(4));
              await tx.passages.indexKeywordText(col.rid, [{ passageRids: rids!, text: prepared }]);
              return row.rid;
            });
            files.set(key, { rid, content });
          };
          const remove = async (col: CollectionRow, file: number) => {
            const known = files.get(`${col.rid}:${file}`);
            if (!known) return;
            files.delete(`${col.rid}:${file}`);
            // As a DELETE and its job do: the file leaves the live set at once, its passages later.
            await store.write((tx) => tx.files.markDeleted(known.rid, at(5)));
            await check(`after deleting /f${file}.md, before its passages go`, false);
            await store.write((tx) => tx.passages.deleteOfFile(col.rid, known.rid));
          };
          /** Every query's scores in both collections against BM25 from scratch, and (`agree`) the open one's against the enforced one's. */
          const check = async (when: string, agree = true) => {
            for (const query of QUERIES) {
              const phrases = buildMatchPhrases(query)!;
              const scoresOf = async (col: CollectionRow, live: readonly number[]) => {
                const ranking = await keywordRanking(store, { collectionRid: col.rid, collectionId: col.id, phrases, files: live, selectedFiles: null });
                return new Map(ranking.top(1_000_000).map((h) => [h.passageRid, h.score]));
              };
              const openLive = await store.retrievableFiles.live(open.rid);
              const readable = (await store.retrievableFiles.select(enforced.rid, { filter: null, principals: ['all'] })).fileRids;
              const got = [await scoresOf(open, openLive), await scoresOf(enforced, readable)];
              for (const [which, col, live] of [[0, open, openLive], [1, enforced, readable]] as const) {
                const passages = [...(await store.passages.ofFiles(live)).values()].flat().map((p) => ({ rid: p.rid, heading: p.heading, text: p.text }));
                const expected = bm25FromScratch(passages, query);
                const mine = got[which]!;
                const name = `${col.name} "${query}" ${when}`;
                if (mine.size !== expected.size || [...expected.keys()].some((rid) => !mine.has(rid))) throw new Error(`${name}: passages ${[...mine.keys()]} scored, ${[...expected.keys()]} expected`);
                for (const [rid, score] of expected) {
                  if (!(relativeError(mine.get(rid)!, score) <= 1e-9)) throw new Error(`${name}: passage ${rid} scores ${mine.get(rid)} where BM25 gives ${score}`);
                  checked++;
                }
              }
              const sorted = (m: Map<number, number>) => [...m.values()].sort((a, b) => b - a);
              if (agree && JSON.stringify(sorted(got[0]!)) !== JSON.stringify(sorted(got[1]!))) throw new Error(`"${query}" ${when}: enforced scores ${sorted(got[1]!)} vs open ${sorted(got[0]!)}`);
            }
          };
          for (const [step, o] of ops.entries()) {
            for (const col of [open, enforced]) {
              if (o.kind === 'put') await put(col, o.file, { heading: o.heading.join(' '), body: `${o.body.join(' ')} report`, step });
              else if (o.kind === 'delete') await remove(col, o.file);
              else {
                // A reindex: every live file's passages cut again, as new rows with new rids.
                for (const [key, f] of [...files]) if (key.startsWith(`${col.rid}:`)) await put(col, Number(key.split(':')[1]), { ...f.content, step });
              }
            }
            await check(`after ${JSON.stringify(ops.slice(0, step + 1))}`);
          }
        }),
        { numRuns: 12, seed: 35, endOnFailure: true },
      );
      t.ok(checked > 300, `${checked} scores checked against BM25 from scratch`);
    });
  });
}
