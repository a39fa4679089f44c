// POST ...:search (retrieval-api.md): keyword or hybrid retrieval with evidence; filters and access
// rules are applied inside the retrieval queries, before ranking and the top-k cut.
import { performance } from 'node:perf_hooks';
import type { z } from 'zod';
import { TroveError, type WarningCode } from '../../contract/errors.js';
import type { SearchRequest, SearchResponse } from '../../contract/schemas.js';
import type { CollectionRow, DenseHit, FileCard, PassageRow } from '../../store/interface.js';
import { readerFor, readerView, retrievalScope, type RetrievalScope } from '../access/visibility.js';
import type { Services } from '../context.js';
import { readSearchCursor, requestBinding } from '../cursors.js';
import type { AuthenticatedKey } from '../keys.js';
import { validateFilter } from '../../contract/filter.js';
import { collectionModelOf, topicScores } from './collection-topics.js';
import { COLLECTION_WEIGHT, minMax, SEMANTIC_WEIGHT } from './fusion-weights.js';
import { keywordRanking, type PassageHit } from './keyword-ranking.js';
import { buildMatchPhrases, queryTerms } from './query-text.js';
import { absoluteSpans } from '../ingest/json-path.js';
import type { JsonSpan } from '../ingest/types.js';
import { bestJsonSnippet, bestSnippet } from './snippet.js';
import { continuePage, KEYWORD_FIRST_DEPTH, keywordExplanation, saveFirstPage, type PageGroup, type SnapshotRequest } from './snapshot.js';

type SearchBody = z.output<typeof SearchRequest>;
type SearchResult = z.infer<typeof SearchResponse>['results'][number];
type Evidence = SearchResult['evidence'][number];
type Explanation = NonNullable<SearchResult['explain']>;
type Warning = { code: WarningCode; message: string };

/** Passages of evidence a file result carries. */
const EVIDENCE_PER_FILE = 3;

/** How a search serves another operation (answers): whole passages as evidence, and how many per file. */
export interface SearchOptions {
  wholePassages?: boolean;
  evidencePerFile?: number;
  /** False: one page only (no cursor, nothing kept for later pages). */
  paged?: boolean;
}

export async function search(s: Services, key: AuthenticatedKey, col: CollectionRow, body: SearchBody, requestId: string, options: SearchOptions = {}): Promise<z.infer<typeof SearchResponse>> {
  const started = performance.now();
  const processing = col.processing;
  if (body.mode === 'keyword' && !processing.keyword) throw new TroveError('invalid_request', "Keyword search is disabled for this collection (processing.keyword is false).");
  if (body.mode === 'semantic' && !processing.semantic) {
    // Advice only when it helps: with keyword off as well, mode 'keyword' fails too.
    const advice = processing.keyword ? "; send mode 'keyword'" : "; keyword search is disabled too: PATCH the collection's processing to turn one on";
    throw new TroveError('invalid_request', `Semantic search is disabled for this collection (processing.semantic is false)${advice}.`);
  }
  const reader = readerFor(col, body.principals);
  const filter = body.filter === undefined || body.filter === null ? null : validateFilter(body.filter);

  // `explain` only adds fields, never changes the ranking: a cursor stays good with or without it.
  const binding = requestBinding([key.id, 'search', col.id, { ...body, cursor: null, explain: undefined }]);
  const explain = body.explain === true;
  const position = body.cursor ? readSearchCursor(s.cursorSecret, body.cursor, binding) : null;

  const warnings: Warning[] = [];
  if (body.interpretation === 'natural_language') warnings.push({ code: 'interpretation_literal', message: 'Natural-language interpretation derives no filters in this build; the sentence was searched as text.' });

  // The collection as this reader sees it: in an enforced one, over the files its principals may
  // read alone (status, counts and generation are channels too).
  const view = await readerView(s.store, col, reader);
  const stages: ('keyword' | 'semantic')[] = [];
  // Later pages report what the first page did: they serve its ranking.
  let pageOne: { index_generation: string | null; stages: typeof stages } | null = null;
  const respond = (results: SearchResult[], nextCursor: string | null, retrievalMs: number) => ({
    request_id: requestId,
    index_generation: pageOne ? pageOne.index_generation : view.generation,
    execution: { mode: body.mode, interpretation: body.interpretation, stages: pageOne ? pageOne.stages : stages },
    results,
    timing_ms: { retrieval: Math.round(retrievalMs), total: Math.round(performance.now() - started) },
    warnings,
    next_cursor: nextCursor,
  });

  // State rules (retrieval-api.md, Collection: behaviour by state).
  if (view.status === 'empty') return respond([], null, 0);
  const readable = view.counts;
  if (view.status === 'failed') {
    const mine = readable.failed > 0 ? ` (${readable.failed} failed)` : '';
    warnings.push({ code: 'collection_failed', message: `Every file in the collection failed to index${mine}.` });
    return respond([], null, 0);
  }
  if (readable.ready === 0) {
    throw new TroveError('collection_not_ready', 'The collection has no indexed file yet; retry shortly.', { retry_after_seconds: 2 });
  }
  if (body.mode === 'semantic' && col.embedding_model && col.embedding_model !== s.embedding.modelId) {
    throw new TroveError(
      'collection_not_ready',
      `The collection's vectors come from ${col.embedding_model} but the daemon uses ${s.embedding.modelId}; reindex the collection (POST …:reindex) or search with mode "keyword".`,
      { reason: 'embedding_model_mismatch', collection_model: col.embedding_model, daemon_model: s.embedding.modelId },
      { retryable: false },
    );
  }
  if (readable.failed > 0) warnings.push({ code: 'files_failed', message: `${readable.failed} file(s) in the collection failed to index and are not searched.` });
  if (readable.pending + readable.indexing > 0) warnings.push({ code: 'indexing_in_progress', message: `${readable.pending + readable.indexing} file(s) are still being indexed and are not searched yet.` });

  const retrievalStarted = performance.now();
  // Filter and access rules narrow the candidates inside both retrieval stages, before any cut.
  const scope = await retrievalScope(s.store, col.rid, reader, filter);
  if (scope.selected?.selectivity === 0) {
    // Nothing the reader may read matches the filter: no stage has anything to rank.
    stages.push(...(body.mode === 'keyword' ? (['keyword'] as const) : (['keyword', 'semantic'] as const)));
    return respond([], null, performance.now() - retrievalStarted);
  }
  const match = buildMatchPhrases(body.query);
  const perFile = options.evidencePerFile ?? EVIDENCE_PER_FILE;
  /** The ranking as the collection is now, to `wanted` results, best first; `into` collects the stages that ran. */
  const rankTo = async (wanted: number, withParts: boolean, into: typeof stages): Promise<FileGroup[]> => {
    let ranked: RankedPassage[];
    if (body.mode === 'keyword') {
      into.push('keyword');
      if (match === null) return [];
      const keywordHits = await keywordStage(s, col, match, scope);
      const hits = body.result_unit === 'passage' ? keywordHits(wanted) : passagesCoveringFiles(keywordHits, wanted, fileWindow(keywordHits.extent(), wanted));
      ranked = hits.map((h) => ({ ...h, fileScore: h.score, matchedBy: KEYWORD_ONLY, ...(withParts ? { explain: keywordExplanation(h.score) } : {}) }));
    } else {
      ranked = await hybridPassages(s, col, { query: body.query, match, scope, wanted, unit: body.result_unit, explain: withParts }, into);
    }
    return body.result_unit === 'file' ? groupByFile(ranked, perFile) : ranked.map(singlePassageGroup);
  };
  const paged = options.paged !== false;
  const snapshotRequest: SnapshotRequest = {
    col,
    binding,
    unit: body.result_unit,
    limit: body.limit,
    evidencePerFile: perFile,
    mode: body.mode,
    query: body.query,
    match,
    scope,
    // Past the snapshot's entries: the parts of each score are kept, as a later page may ask for explain.
    rankTo: (wanted) => rankTo(wanted, true, []),
    queryVector: async () => {
      try {
        return (await (await s.embedding.get()).embed([body.query]))[0];
      } catch (err) {
        throw new TroveError('temporarily_unavailable', `The embedding model ${s.embedding.modelId} is unavailable: ${(err as Error).message}`, { reason: 'embedding_unavailable' });
      }
    },
  };
  let pageGroups: PageGroup[];
  let firstRank = 1;
  let next: string | null = null;
  if (position) {
    const page = await continuePage(s, snapshotRequest, position);
    pageOne = page.pageOne;
    pageGroups = page.groups;
    firstRank = page.firstRank;
    next = page.next;
  } else {
    // A keyword ranking is exact top-k at any depth, so the first page ranks deeper for the snapshot
    // at little cost; a fused ranking's candidates depend on the depth, so it keeps the page's.
    const wanted = paged && body.mode === 'keyword' ? Math.max(body.limit, KEYWORD_FIRST_DEPTH) + 1 : body.limit + 1;
    // A later page may ask for explain: a snapshot keeps the parts of every fused score (a keyword
    // score is its own explanation).
    // Files added after this instant stay out of later pages (snapshot.ts).
    const rankedAt = Date.now();
    const groups = await rankTo(wanted, explain || (paged && body.mode !== 'keyword'), stages);
    if (body.mode === 'keyword' && match === null) return respond([], null, 0);
    pageGroups = groups.slice(0, body.limit);
    if (paged) next = await saveFirstPage(s, snapshotRequest, groups, wanted, { index_generation: view.generation, stages }, rankedAt);
  }
  const retrievalMs = performance.now() - retrievalStarted;
  const terms = queryTerms(body.query);

  const passages = new Map((await s.store.passages.byRids(pageGroups.flatMap((g) => g.passages.map((p) => p.passageRid)))).map((p) => [p.rid, p]));
  const files = new Map((await s.store.files.cards([...new Set(pageGroups.map((g) => g.fileRid))])).map((f) => [f.rid, f]));

  const results: SearchResult[] = pageGroups.map((g, i) => {
    const file = files.get(g.fileRid)!;
    return {
      file_id: file.id,
      path: file.path,
      content_type: file.content_type,
      rank: firstRank + i,
      score: roundScore(g.score),
      matched_by: g.matchedBy,
      evidence: g.passages.map((h) => toEvidence(passages.get(h.passageRid)!, terms, options.wholePassages ?? false)),
      // A file scores as its best passage, which leads its group: that passage's parts explain it.
      ...(explain && g.passages[0]?.explain ? { explain: roundExplanation(g.passages[0].explain) } : {}),
    };
  });
  if (body.sort?.length) sortWithinPage(results, body.sort, files);
  return respond(results, next, retrievalMs);
}

const KEYWORD_ONLY: ('keyword' | 'semantic')[] = ['keyword'];

/** A ranked passage, best first: its own score, its file's score, and the stages that found it. */
interface RankedPassage {
  passageRid: number;
  fileRid: number;
  score: number;
  fileScore: number;
  matchedBy: ('keyword' | 'semantic')[];
  /** Only when the request asked for `explain`: the parts `score` was made from. */
  explain?: Explanation;
}


/**
 * The parts rounded as the score is, so that `score` equals the result's score exactly. Raw BM25
 * and cosine keep six decimals or six significant digits, whichever says more: BM25 runs from ~10
 * down to ~1e-6 (a term in every passage of a million has an IDF of 5e-7), where six decimals alone
 * would flatten it to a digit and six significant digits alone would round a keyword score of 12.3
 * away from the score it is.
 */
function roundExplanation(e: Explanation): Explanation {
  const r = (x: number | null) => (x === null ? null : roundScore(x));
  const significant = (x: number | null) => (x === null ? null : Math.abs(x) >= 1 ? roundScore(x) : Number(x.toPrecision(6)));
  return {
    ...e,
    bm25: significant(e.bm25),
    bm25_scaled: r(e.bm25_scaled),
    cosine: significant(e.cosine),
    cosine_scaled: r(e.cosine_scaled),
    collection_cosine: significant(e.collection_cosine),
    collection_cosine_scaled: r(e.collection_cosine_scaled),
    keyword_part: roundScore(e.keyword_part),
    semantic_part: roundScore(e.semantic_part),
    collection_part: roundScore(e.collection_part),
    score: roundScore(e.score),
  };
}

/** BM25 candidates considered at least; the dense stage adds its own top DENSE_DEPTH. */
const KEYWORD_DEPTH = 100;
const DENSE_DEPTH = 20;

interface HybridRequest {
  query: string;
  /** The query's FTS5 phrases; null when it has no word the keyword index could match. */
  match: string[] | null;
  scope: RetrievalScope;
  wanted: number;
  unit: 'file' | 'passage';
  explain: boolean;
}

/** What the keyword and dense stages found, before fusion. */
interface HybridCandidates {
  /** False when the query's vector has no direction (only unknown words): no cosine counts. */
  usable: boolean;
  bm25: Map<number, number>;
  cosine: Map<number, number>;
  candidates: Map<number, { fileRid: number; matchedBy: ('keyword' | 'semantic')[] }>;
}

async function hybridPassages(s: Services, col: CollectionRow, request: HybridRequest, stages: ('keyword' | 'semantic')[]): Promise<RankedPassage[]> {
  return fuseCandidates(s, col, request, await hybridCandidates(s, col, request, stages));
}

async function hybridCandidates(s: Services, col: CollectionRow, request: HybridRequest, stages: ('keyword' | 'semantic')[]): Promise<HybridCandidates> {
  const { query, match, scope, wanted, unit } = request;
  let queryVector: Float32Array | undefined;
  try {
    queryVector = (await (await s.embedding.get()).embed([query]))[0];
  } catch (err) {
    throw new TroveError('temporarily_unavailable', `The embedding model ${s.embedding.modelId} is unavailable: ${(err as Error).message}`, { reason: 'embedding_unavailable' });
  }
  const keywordDepth = Math.max(KEYWORD_DEPTH, unit === 'file' ? wanted * EVIDENCE_PER_FILE : wanted);
  // A query made only of words the model does not know has no direction to search in.
  const usable = queryVector !== undefined && queryVector.some((x) => x !== 0);
  // The dense scan runs on its helper thread while the keyword stage runs here. When keywords find
  // too little, the dense stage fills the page, so a filtered search still returns `limit` results
  // when that many files match.
  const denseFor = (depth: number): Promise<DenseHit[]> =>
    usable
      ? s.denseSearch({ collectionRid: col.rid, query: queryVector!, selection: scope.selected, limit: depth }).catch((err: unknown) => {
          throw new TroveError('temporarily_unavailable', `The vector scan failed: ${(err as Error).message}`, { reason: 'dense_scan_failed' });
        })
      : Promise.resolve([]);
  const fillDepth = Math.max(DENSE_DEPTH, unit === 'file' ? wanted * EVIDENCE_PER_FILE : wanted);
  const denseFirst = denseFor(DENSE_DEPTH);
  // Awaited below; until then a failure must not count as an unhandled rejection.
  denseFirst.catch(() => undefined);
  const keywordHits = match === null ? null : await keywordStage(s, col, match, scope);
  const keyword = keywordHits === null ? [] : unit === 'file' ? passagesCoveringFiles(keywordHits, wanted, keywordDepth) : keywordHits(keywordDepth);
  stages.push('keyword');
  let dense = await denseFirst;
  if (keyword.length < wanted && fillDepth > DENSE_DEPTH) dense = await denseFor(fillDepth);
  if (usable) stages.push('semantic');

  const cosine = new Map(dense.map((d) => [d.passageRid, d.similarity]));
  const missing = keyword.filter((k) => !cosine.has(k.passageRid)).map((k) => k.passageRid);
  if (usable) for (const [rid, sim] of await s.store.vectors.similarities(col.rid, queryVector!, missing)) cosine.set(rid, sim);

  const bm25 = new Map(keyword.map((k) => [k.passageRid, k.score]));
  const candidates = new Map<number, { fileRid: number; matchedBy: ('keyword' | 'semantic')[] }>();
  for (const k of keyword) candidates.set(k.passageRid, { fileRid: k.fileRid, matchedBy: ['keyword'] });
  for (const d of dense) {
    const c = candidates.get(d.passageRid);
    if (c) c.matchedBy = ['keyword', 'semantic'];
    else candidates.set(d.passageRid, { fileRid: d.fileRid, matchedBy: ['semantic'] });
  }
  return { usable, bm25, cosine, candidates };
}

/** Min-max fusion of BM25, the embedding's cosine and the collection model (docs/ranking.md), best first. */
async function fuseCandidates(s: Services, col: CollectionRow, request: HybridRequest, found: HybridCandidates): Promise<RankedPassage[]> {
  const { query, scope, explain } = request;
  const { usable, bm25, cosine, candidates } = found;
  const scaleBm25 = minMax([...bm25.values()]);
  const scaleCos = minMax([...candidates.keys()].map((rid) => cosine.get(rid) ?? 0));
  // The collection model scores files (a vector per file; per passage would not fit the 1M disk budget).
  // It and the embedding's calibrated weight are learnt from every file of the collection, so a
  // reader of an enforced collection, whose scores may count only what it may read (issue 16,
  // item 4), ranks without the model and with the default weight.
  const model = scope.readableFiles === null ? await collectionModelOf(s.store, col.rid) : null;
  const calibrated = model?.semanticWeight;
  const semanticWeight = calibrated && calibrated.embeddingModel === s.embedding.modelId ? calibrated.weight : SEMANTIC_WEIGHT;
  const topics = await topicScores(s.store, model, query, [...new Set([...candidates.values()].map((c) => c.fileRid))]);
  const scaleTopic = minMax(topics ? [...candidates.values()].map((c) => topics.get(c.fileRid) ?? 0) : []);
  const ranked: RankedPassage[] = [...candidates].map(([rid, c]) => {
    const raw = bm25.get(rid);
    const keywordPart = raw === undefined ? 0 : scaleBm25(raw);
    const cosineScaled = usable ? scaleCos(cosine.get(rid) ?? 0) : null;
    const semanticPart = cosineScaled === null ? 0 : semanticWeight * cosineScaled;
    const topic = topics ? (topics.get(c.fileRid) ?? null) : null;
    const topicScaled = topics ? scaleTopic(topic ?? 0) : null;
    const collectionPart = topicScaled === null ? 0 : COLLECTION_WEIGHT * topicScaled;
    const score = keywordPart + semanticPart + collectionPart;
    const passage: RankedPassage = { passageRid: rid, fileRid: c.fileRid, score, fileScore: score, matchedBy: c.matchedBy };
    // The parts of the score, kept apart; only on request, so the default path allocates nothing more.
    if (explain) {
      passage.explain = {
        fusion: 'minmax',
        bm25: raw ?? null,
        bm25_scaled: raw === undefined ? null : keywordPart,
        cosine: usable ? (cosine.get(rid) ?? null) : null,
        cosine_scaled: cosineScaled,
        semantic_weight: usable ? semanticWeight : 0,
        collection_cosine: topic,
        collection_cosine_scaled: topicScaled,
        collection_weight: topics ? COLLECTION_WEIGHT : 0,
        keyword_part: keywordPart,
        semantic_part: semanticPart,
        collection_part: collectionPart,
        score,
      };
    }
    return passage;
  });
  ranked.sort((a, b) => b.score - a.score || a.passageRid - b.passageRid);
  return ranked;
}


interface FileGroup {
  fileRid: number;
  score: number;
  passages: RankedPassage[];
  matchedBy: ('keyword' | 'semantic')[];
}

const singlePassageGroup = (h: RankedPassage): FileGroup => ({ fileRid: h.fileRid, score: h.score, passages: [h], matchedBy: h.matchedBy });

/** Files in order of their best passage, each with up to EVIDENCE_PER_FILE passages as evidence. */
function groupByFile(ranked: RankedPassage[], perFile: number): FileGroup[] {
  const groups = new Map<number, FileGroup>();
  for (const p of ranked) {
    const g = groups.get(p.fileRid);
    if (!g) groups.set(p.fileRid, { fileRid: p.fileRid, score: p.fileScore, passages: [p], matchedBy: [...p.matchedBy] });
    else {
      if (g.passages.length < perFile) g.passages.push(p);
      for (const m of p.matchedBy) if (!g.matchedBy.includes(m)) g.matchedBy.push(m);
    }
  }
  for (const g of groups.values()) g.matchedBy.sort();
  return [...groups.values()];
}

/**
 * The best `limit` keyword passages among what a search may return, best first; `extent` tells how
 * many passages and files the ranking counts (what windows are sized from).
 */
type KeywordHits = ((limit: number) => PassageHit[]) & { extent(): { passages: number | null; files: number } };

/**
 * The keyword stage: BM25 over the live passages of an open collection, or, for a reader of an
 * enforced collection, over the passages of the files the reader may read (a reader's scores and
 * order must not depend on files it cannot read). Every match is scored at once, so a wider window
 * is another cut of the same scores.
 */
async function keywordStage(s: Services, col: CollectionRow, match: string[], scope: RetrievalScope): Promise<KeywordHits> {
  const files = scope.readableFiles ?? (await s.store.retrievableFiles.live(col.rid));
  const narrowed = scope.selected?.fileRids;
  const selectedFiles = narrowed && narrowed !== files ? new Set(narrowed) : null;
  const ranking = await keywordRanking(s.store, { collectionRid: col.rid, collectionId: col.id, phrases: match, files, selectedFiles });
  // The counted passages and files: sized from the whole collection's, how much evidence a file
  // shows would depend on files an enforced reader cannot read.
  return Object.assign((limit: number) => ranking.top(limit), { extent: () => ({ passages: ranking.passages, files: files.length }) });
}

/**
 * The passages a page of `wanted` files needs: each file's evidence comes from the window, so as
 * many passages per file as the collection has on average, up to the evidence a result shows. A
 * window twice the page read and joined three times the rows SciFact's page needs (issue 15).
 */
function fileWindow({ passages, files }: { passages: number | null; files: number }, wanted: number): number {
  const perFile = passages === null || files === 0 ? 2 : Math.min(EVIDENCE_PER_FILE, Math.max(1, passages / files));
  // A margin for files that bring more than the average: a short window costs a second, wider query.
  return Math.ceil(wanted * perFile * FILE_WINDOW_MARGIN);
}
const FILE_WINDOW_MARGIN = 1.25;

/**
 * File unit: the best keyword passages, enough of them to cover `wanted` distinct files
 * (groupByFile then ranks files by their best passage). When a few files hold most of the top
 * passages, the window grows until enough files are seen or the matches run out.
 */
function passagesCoveringFiles(keywordHits: KeywordHits, wanted: number, firstWindow: number): PassageHit[] {
  for (let window = firstWindow; ; window *= 4) {
    const hits = keywordHits(window);
    if (hits.length < window || new Set(hits.map((h) => h.fileRid)).size >= wanted) return hits;
  }
}

function toEvidence(p: PassageRow, terms: string[], whole: boolean): Evidence {
  const stored = p.location ? (JSON.parse(p.location) as NonNullable<Evidence['location']> & { json_spans?: JsonSpan[] }) : null;
  if (stored && 'json_path' in stored) {
    // JSON evidence is the value that holds the matched words, at its own path (not the passage's
    // common ancestor); passages indexed before values' spans were stored keep the passage's path.
    const { json_spans: spans, ...location } = stored;
    const cut = whole
      ? { start: 0, end: p.text.length, path: location.json_path }
      : spans
        ? bestJsonSnippet(p.text, absoluteSpans(spans, location.json_path), terms)
        : { ...bestSnippet(p.text, terms), path: location.json_path };
    return { kind: p.evidence_kind as Evidence['kind'], text: p.text.slice(cut.start, cut.end), location: { json_path: cut.path } };
  }
  const cut = whole ? { start: 0, end: p.text.length } : bestSnippet(p.text, terms);
  const text = p.text.slice(cut.start, cut.end);
  // A char-span location narrows to the snippet shown. A page keeps its page and box and also says
  // where the snippet lies in the extracted text, the span an agent reads around it with (MCP `get`);
  // a time span still holds as it is.
  const span = { char_start: p.char_start + cut.start, char_end: p.char_start + cut.end };
  const location = !stored || 'char_start' in stored ? span : 'page' in stored ? { ...stored, ...span } : stored;
  return { kind: p.evidence_kind as Evidence['kind'], text, location };
}

function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

type SortSpec = NonNullable<SearchBody['sort']>;

/** "Order within each page only; relevance rank is unchanged"; unknown sizes sort last. */
function sortWithinPage(results: SearchResult[], sort: SortSpec, files: Map<number, FileCard>): void {
  const byId = new Map([...files.values()].map((f) => [f.id, f]));
  const value = (r: SearchResult, field: SortSpec[number]['field']): string | number | null => {
    const f = byId.get(r.file_id)!;
    switch (field) {
      case 'score':
        return r.score;
      case 'path':
        return r.path;
      case 'content_type':
        return r.content_type;
      case 'bytes':
        return f.bytes;
      case 'created_at':
        return f.created_at;
      case 'updated_at':
        return f.updated_at;
    }
  };
  results.sort((a, b) => {
    for (const { field, order } of sort) {
      const va = value(a, field);
      const vb = value(b, field);
      if (va === vb) continue;
      if (va === null) return 1;
      if (vb === null) return -1;
      const cmp = va < vb ? -1 : 1;
      return order === 'asc' ? cmp : -cmp;
    }
    return a.rank - b.rank;
  });
}
