// Search pages after the first serve the ranking the first page saw (a point in time, as Elastic's
// point-in-time does), not a fresh one: a file added or deleted between pages cannot shift the
// later pages, so no result repeats and none is skipped. The ranking is kept in the store
// (its searchSnapshots), not in this process, so the next page may reach another daemon
// on the same database. What a later page shows is checked again when it is served: a file deleted
// since, no longer ready, or no longer readable by the request's principals (or selected by its
// filter) is left out and the page fills from the next entries; an edited file keeps its place and
// shows its current evidence. docs/decisions.md, "Search cursors", says what happens past the kept depth.
import { TroveError } from '../../contract/errors.js';
import { randomHex } from '../../contract/ids.js';
import type { SearchResponse } from '../../contract/schemas.js';
import type { CollectionRow, SearchSnapshotRow, SnapshotBounds } from '../../store/interface.js';
import type { z } from 'zod';
import type { RetrievalScope } from '../access/visibility.js';
import type { Services } from '../context.js';
import { invalidCursor, SEARCH_CURSOR_TTL_MS, signSearchCursor, type SearchPosition } from '../cursors.js';
import { keywordRanking } from './keyword-ranking.js';

type Explanation = NonNullable<z.infer<typeof SearchResponse>['results'][number]['explain']>;
type Stage = 'keyword' | 'semantic';

/** A result as the ranking and the page see it: a file (or one passage of it) with its evidence, best first. */
export interface PageGroup {
  fileRid: number;
  score: number;
  matchedBy: Stage[];
  passages: { passageRid: number; explain?: Explanation }[];
}

/** What a later page reports as the first page did. */
export interface PageOne {
  index_generation: string | null;
  stages: Stage[];
}

/** As kept: with the time of the first page, which files added or changed since are measured against. */
interface KeptPageOne extends PageOne {
  at: number;
  encoding?: number;
}

/** Entries a snapshot keeps at most: past them, a continuation is refused (docs/decisions.md). */
export const MAX_SNAPSHOT_ENTRIES = 1000;
/**
 * Snapshots kept at most, in number and in bytes of entries; past either the oldest go, and their
 * cursors get invalid_cursor. A keyword first page keeps ~5 kB, a semantic one ~25 kB (its
 * explanation parts), one paged to MAX_SNAPSHOT_ENTRIES up to ~250 kB.
 */
export const SNAPSHOT_BOUNDS: SnapshotBounds = { rows: 5000, bytes: 64 * 1024 * 1024 };
/**
 * A keyword search's first page ranks at least this deep, so that the next pages of a small limit
 * come from the snapshot. Exact top-k either way (the page is the head of the deeper ranking); a
 * deeper window only joins more rows.
 */
export const KEYWORD_FIRST_DEPTH = 100;
/**
 * First pages whose snapshot this store is still writing, by store. The first page answers before
 * its snapshot commits (writing it cost a tenth of a keyword search, and more while the indexing
 * worker holds the write token); a next page that comes sooner waits for it here.
 */
const savingSnapshots = new WeakMap<object, Map<string, Promise<unknown>>>();
/** Past this many snapshots waiting to commit, a first page waits for its own: the queue stays bounded. */
const MAX_SAVING = 64;
/** How long a next page waits for a snapshot that another daemon may still be committing. */
export const SNAPSHOT_ARRIVAL_MS = 5000;
const SNAPSHOT_POLL_MS = 25;
/** How far past the kept entries a continuation ranks again when it needs more of them. */
const EXTENSION_STEP = 100;

/** The request a snapshot serves: what ranks again past its entries, and who may read what. */
export interface SnapshotRequest {
  col: CollectionRow;
  binding: string;
  unit: 'file' | 'passage';
  limit: number;
  evidencePerFile: number;
  mode: 'keyword' | 'semantic';
  query: string;
  /** The query's FTS5 phrases, null when it has no word the keyword index could match. */
  match: string[] | null;
  scope: RetrievalScope;
  /** The current ranking to `wanted` results, with the parts of each score. */
  rankTo(wanted: number): Promise<PageGroup[]>;
  /** The query's embedding (semantic mode), for an edited file's evidence. */
  queryVector(): Promise<Float32Array | undefined>;
}

/**
 * Entry encoding, compact since a snapshot holds up to MAX_SNAPSHOT_ENTRIES of them:
 * [file rid, passage rids, score, matched_by bits (1 keyword, 2 semantic), explanation parts?]
 * A file whose content changed since has other passages: passage rids are never used twice
 * (the store's passages), so an entry whose passages all still belong to its file is unchanged,
 * whatever else (metadata, path) changed. Reading each listed file's version when the first page
 * was saved instead cost a fifth of a keyword search.
 */
type Entry = [number, number[], number, number, (number | null)[]?];
/** Snapshots kept in an earlier entry encoding are not read: their cursors have expired. */
const ENCODING = 2;

const EXPLANATION_PARTS = [
  'bm25',
  'bm25_scaled',
  'cosine',
  'cosine_scaled',
  'semantic_weight',
  'collection_cosine',
  'collection_cosine_scaled',
  'collection_weight',
  'keyword_part',
  'semantic_part',
  'collection_part',
  'score',
] as const satisfies readonly (keyof Explanation)[];

function encodeGroup(g: PageGroup): Entry {
  const bits = (g.matchedBy.includes('keyword') ? 1 : 0) | (g.matchedBy.includes('semantic') ? 2 : 0);
  const e = g.passages[0]?.explain;
  const entry: Entry = [g.fileRid, g.passages.map((p) => p.passageRid), g.score, bits];
  // Keyword explanations are the score itself (rebuilt when served); only fused ones are kept.
  if (e && e.fusion === 'minmax') entry.push(EXPLANATION_PARTS.map((k) => e[k]));
  return entry;
}

function matchedBy(bits: number): Stage[] {
  const out: Stage[] = [];
  if (bits & 1) out.push('keyword');
  if (bits & 2) out.push('semantic');
  return out;
}

function explanationOf(entry: Entry, mode: 'keyword' | 'semantic'): Explanation | undefined {
  const parts = entry[4];
  if (parts) return Object.fromEntries([['fusion', 'minmax'], ...EXPLANATION_PARTS.map((k, i) => [k, parts[i]])]) as Explanation;
  if (mode !== 'keyword') return undefined;
  return keywordExplanation(entry[2]);
}

/** Keyword mode ranks by BM25 alone: its score is its own explanation. */
export function keywordExplanation(bm25: number): Explanation {
  return {
    fusion: 'keyword',
    bm25,
    bm25_scaled: null,
    cosine: null,
    cosine_scaled: null,
    semantic_weight: 0,
    collection_cosine: null,
    collection_cosine_scaled: null,
    collection_weight: 0,
    keyword_part: bm25,
    semantic_part: 0,
    collection_part: 0,
    score: bm25,
  };
}

/**
 * After a first page of `limit` out of `groups` (ranked to `wanted`): keeps the ranking and returns
 * the cursor to the next page, or null when there is none. `rankedAt` is when the ranking was read:
 * files created after it are the ones later pages treat as added since.
 */
export async function saveFirstPage(s: Services, req: SnapshotRequest, groups: PageGroup[], wanted: number, pageOne: PageOne, rankedAt = Date.now()): Promise<string | null> {
  if (groups.length <= req.limit) return null;
  const kept = groups.slice(0, MAX_SNAPSHOT_ENTRIES);
  const entries = kept.map(encodeGroup);
  const id = randomHex(16);
  // From now, not from rankedAt: a next page on another daemon waits for the snapshot a while after the cursor was made.
  const expiresAt = Date.now() + SEARCH_CURSOR_TTL_MS;
  const row: SearchSnapshotRow = {
    id,
    collection_rid: req.col.rid,
    binding: req.binding,
    page_one: JSON.stringify({ ...pageOne, at: rankedAt, encoding: ENCODING } satisfies KeptPageOne),
    entries: JSON.stringify(entries),
    entry_count: entries.length,
    complete: groups.length < wanted && kept.length === groups.length,
    expires_at: expiresAt,
  };
  const saved = s.store.write((tx) => tx.searchSnapshots.insert(row, rankedAt, SNAPSHOT_BOUNDS));
  let saving = savingSnapshots.get(s.store);
  if (!saving) savingSnapshots.set(s.store, (saving = new Map()));
  const pending = saving;
  pending.set(id, saved);
  // A snapshot that failed to commit (a full disk) makes its cursor invalid_cursor; the page stands.
  saved.catch(() => undefined).finally(() => pending.delete(id));
  if (pending.size > MAX_SAVING) await saved.catch(() => undefined);
  return signSearchCursor(s.cursorSecret, req.binding, { snapshot: id, entry: req.limit, shown: req.limit }, expiresAt);
}

export interface LaterPage {
  groups: PageGroup[];
  /** The rank of the page's first result. */
  firstRank: number;
  next: string | null;
  pageOne: PageOne;
}

/** A later page: the snapshot's next entries that may still be shown, as they are now. */
export async function continuePage(s: Services, req: SnapshotRequest, at: SearchPosition, now = Date.now()): Promise<LaterPage> {
  let row = await keptSnapshot(s, at, now);
  if (!row) throw invalidCursor('has expired');
  const kept = JSON.parse(row.page_one) as KeptPageOne;
  if (kept.encoding !== ENCODING) throw invalidCursor('has expired');
  if (row.collection_rid !== req.col.rid || row.binding !== req.binding) throw invalidCursor('belongs to another request or key');
  let entries = JSON.parse(row.entries) as Entry[];
  let complete = row.complete;
  const served = new Served(s, req);
  const groups: PageGroup[] = [];
  let next = at.entry;
  while (groups.length < req.limit) {
    if (next >= entries.length) {
      if (complete) break;
      const extended = await extend(s, req, row, entries, now);
      ({ row, entries } = extended);
      complete = row.complete;
      continue;
    }
    const batch = entries.slice(next, next + req.limit - groups.length);
    for (const g of await served.resolve(batch, next, entries)) groups.push(g);
    next += batch.length;
  }
  const pageOne = { index_generation: kept.index_generation, stages: kept.stages };
  const more = next < entries.length || !complete;
  let cursor: string | null = null;
  if (more) {
    const expiresAt = now + SEARCH_CURSOR_TTL_MS;
    await s.store.write((tx) => tx.searchSnapshots.keepUntil(row.id, expiresAt));
    cursor = signSearchCursor(s.cursorSecret, req.binding, { snapshot: row.id, entry: next, shown: at.shown + groups.length }, expiresAt);
  }
  return { groups, firstRank: at.shown + 1, next: cursor, pageOne };
}

/**
 * The snapshot a cursor names: once this process has written it, or, for a fresh cursor whose
 * snapshot is not there at all, once the daemon that served the first page has committed it.
 */
async function keptSnapshot(s: Services, at: SearchPosition, now: number): Promise<SearchSnapshotRow | undefined> {
  const row = await s.store.searchSnapshots.get(at.snapshot, now);
  if (row) return row;
  const saving = savingSnapshots.get(s.store)?.get(at.snapshot);
  if (saving) {
    await saving.catch(() => undefined);
    return s.store.searchSnapshots.get(at.snapshot, Date.now());
  }
  const issued = (at.expiresAt ?? 0) - SEARCH_CURSOR_TTL_MS;
  while (!s.shutdown.aborted && !(await s.store.searchSnapshots.exists(at.snapshot)) && Date.now() - issued < SNAPSHOT_ARRIVAL_MS) {
    await new Promise((r) => setTimeout(r, SNAPSHOT_POLL_MS));
  }
  if (s.shutdown.aborted) return undefined;
  return s.store.searchSnapshots.get(at.snapshot, Date.now());
}

/**
 * Past the kept entries, the ranking is read again as the collection is now, and what it holds
 * that the snapshot does not yet (by file, or by passage), in files that existed at the first page,
 * is appended: each result is still listed once, and in the first page's order as far as the
 * snapshot reached; a keyword ranking of an unchanged collection goes on exactly as it would have.
 */
async function extend(s: Services, req: SnapshotRequest, row: SearchSnapshotRow, entries: Entry[], now: number): Promise<{ row: SearchSnapshotRow; entries: Entry[] }> {
  let wanted = entries.length + Math.max(req.limit, EXTENSION_STEP) + 1;
  for (;;) {
    if (entries.length >= MAX_SNAPSHOT_ENTRIES) {
      throw new TroveError('invalid_cursor', `The pages of one search reach at most ${MAX_SNAPSHOT_ENTRIES} results; narrow the query or the filter and start again.`, {
        reason: 'too_deep',
      });
    }
    const ranking = await req.rankTo(wanted);
    const key = (fileRid: number, passageRids: readonly number[]) => (req.unit === 'file' ? fileRid : passageRids[0]!);
    const known = new Set(entries.map((e) => key(e[0], e[1])));
    // Files added since the first page were not part of its ranking: they stay out of its pages.
    const since = (JSON.parse(row.page_one) as KeptPageOne).at;
    const candidates = ranking.filter((g) => !known.has(key(g.fileRid, g.passages.map((p) => p.passageRid))));
    const added = new Set((await s.store.files.cards([...new Set(candidates.map((g) => g.fileRid))])).filter((f) => Date.parse(f.created_at) > since).map((f) => f.rid));
    let tail = candidates.filter((g) => !added.has(g.fileRid));
    let complete = ranking.length < wanted;
    const room = MAX_SNAPSHOT_ENTRIES - entries.length;
    if (tail.length > room) {
      tail = tail.slice(0, room);
      complete = false;
    }
    if (tail.length === 0 && !complete) {
      // All that ranked here was listed or added since: look deeper.
      wanted *= 2;
      continue;
    }
    const longer = [...entries, ...tail.map(encodeGroup)];
    const json = JSON.stringify(longer);
    const extended = { entries: json, entry_count: longer.length, complete };
    if (await s.store.write((tx) => tx.searchSnapshots.extend(row.id, entries.length, extended, SNAPSHOT_BOUNDS.bytes))) {
      return { row: { ...row, ...extended }, entries: longer };
    }
    // Another page of the same search extended it first: serve its entries.
    const again = await s.store.searchSnapshots.get(row.id, now);
    if (!again) throw invalidCursor('has expired');
    if (again.entry_count > entries.length || again.complete) return { row: again, entries: JSON.parse(again.entries) as Entry[] };
    row = again;
    entries = JSON.parse(again.entries) as Entry[];
    wanted = entries.length + Math.max(req.limit, EXTENSION_STEP) + 1;
  }
}

/** Turns snapshot entries into what a page shows now; caches what it learns for the request. */
class Served {
  private readonly readable: Set<number> | null;
  private readonly current = new Map<number, number[]>();
  private vector: Promise<Float32Array | undefined> | undefined;

  constructor(
    private readonly s: Services,
    private readonly req: SnapshotRequest,
  ) {
    // The request's principals and filter, as they are now: what the first page could read may be
    // hidden since. `selected` lists ready, live files only; without it, the store checks that.
    const selected = req.scope.selected?.fileRids;
    this.readable = selected ? new Set(selected) : null;
  }

  async resolve(batch: Entry[], from: number, entries: Entry[]): Promise<PageGroup[]> {
    const files = await this.s.store.searchSnapshots.liveReadyFiles(this.req.col.rid, [...new Set(batch.map((e) => e[0]))]);
    const showable = batch.filter((e) => files.has(e[0]) && (this.readable === null || this.readable.has(e[0])));
    const stored = await this.s.store.searchSnapshots.passageFiles(showable.flatMap((e) => e[1]));
    const out: PageGroup[] = [];
    for (const entry of showable) {
      const [fileRid, passageRids, score, bits] = entry;
      const unchanged = passageRids.every((rid) => stored.get(rid) === fileRid);
      let passages: number[];
      if (unchanged) passages = passageRids;
      else if (this.req.unit === 'file') passages = (await this.currentEvidence(fileRid)).slice(0, this.req.evidencePerFile);
      else {
        // The file's n-th passage result shows its n-th best passage now.
        const nth = entries.slice(0, from + batch.indexOf(entry)).filter((e) => e[0] === fileRid).length;
        const now = (await this.currentEvidence(fileRid))[nth];
        passages = now === undefined ? [] : [now];
      }
      // An edited file that no longer matches the query at all has nothing to show.
      if (passages.length === 0) continue;
      const explain = explanationOf(entry, this.req.mode);
      out.push({ fileRid, score, matchedBy: matchedBy(bits), passages: passages.map((passageRid, i) => (i === 0 && explain ? { passageRid, explain } : { passageRid })) });
    }
    return out;
  }

  /**
   * An edited file's passages that match the query, best first by the keyword stage's own BM25 over
   * the statistics the stage counts (the reader's files, or the collection's live ones): the same
   * scores a first page would give them now. Only their order within the file is used.
   */
  private async keywordEvidence(fileRid: number, match: readonly string[]): Promise<number[]> {
    const { col, scope } = this.req;
    const files = scope.readableFiles ?? (await this.s.store.retrievableFiles.live(col.rid));
    const ranking = await keywordRanking(this.s.store, { collectionRid: col.rid, collectionId: col.id, phrases: match, files, selectedFiles: new Set([fileRid]) });
    return ranking.top(ranking.passages).map((hit) => hit.passageRid);
  }

  /** An edited file's passages, best first: those matching the query's words, then (semantic mode) the rest by cosine. */
  private async currentEvidence(fileRid: number): Promise<number[]> {
    const cached = this.current.get(fileRid);
    if (cached) return cached;
    const matching = this.req.match === null ? [] : await this.keywordEvidence(fileRid, this.req.match);
    let ordered = matching;
    if (this.req.mode === 'semantic') {
      const rest = (await this.s.store.searchSnapshots.passagesOfFile(fileRid)).filter((rid) => !matching.includes(rid));
      const vector = await (this.vector ??= this.req.queryVector());
      if (vector && rest.length > 0) {
        const cos = await this.s.store.vectors.similarities(this.req.col.rid, vector, rest);
        rest.sort((a, b) => (cos.get(b) ?? -1) - (cos.get(a) ?? -1) || a - b);
      }
      ordered = [...matching, ...rest];
    }
    this.current.set(fileRid, ordered);
    return ordered;
  }
}
