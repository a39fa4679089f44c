// POST ...:answer (retrieval-api.md; decisions.md §3-4): retrieve evidence as the reader may see it,
// hand it to the generator, and return the text with its [[SRC:nnnn]] markers and the sources map.
// Research runs (./research.ts) reuse `prepareAnswer` and `produceAnswer` stage by stage.
import { performance } from 'node:perf_hooks';
import type { z } from 'zod';
import { TroveError } from '../../contract/errors.js';
import type { AnswerRequest, AnswerResponse } from '../../contract/schemas.js';
import type { CollectionRow } from '../../store/interface.js';
import { shutdownError, type Services } from '../context.js';
import type { AuthenticatedKey } from '../keys.js';
import { search } from '../search/search.js';
import { validateFilter } from '../../contract/filter.js';
import { readerFor, readerView, retrievalScope } from '../access/visibility.js';
import type { AnswerSource, Generator } from './generator.js';
import { followUpQuery, GenerationError } from './generator.js';
import { findMarkers, finishAnswer } from './markers.js';
import { readQueryImage } from './query-image.js';
import { questionSupport, questionTerms, type Support } from './support.js';

export type AnswerBody = z.output<typeof AnswerRequest>;
type Response = z.infer<typeof AnswerResponse>;
type SourceMap = NonNullable<Response['sources']>;
type Evidence = SourceMap[string]['evidence'][number];
export type AnswerMode = AnswerBody['mode'];

/** retrieval-api.md, POST ...:answer: 120 s standard, 600 s ultra and recall, +45 s with an image. */
export function answerTimeLimitMs(mode: AnswerMode, withImage: boolean): number {
  return (mode === 'standard' ? 120_000 : 600_000) + (withImage ? 45_000 : 0);
}

/** How much of the collection each mode reads (decisions.md §7: ultra asks more queries, recall reads far more). */
const MODE_DEPTH: Record<AnswerMode, { files: number; passagesPerFile: number }> = {
  standard: { files: 8, passagesPerFile: 3 },
  ultra: { files: 12, passagesPerFile: 4 },
  recall: { files: 40, passagesPerFile: 6 },
};

/**
 * The checks every answer and research request passes before any work (retrieval-api.md, POST
 * ...:answer "Rules"; decisions.md §4): cluster-only options, then the collection's state.
 */
export async function checkAnswerRequest(key: AuthenticatedKey, col: CollectionRow, s: Services, body: AnswerBody): Promise<void> {
  if (body.filter !== undefined && body.filter !== null) validateFilter(body.filter);
  // Principals: required when enforced, invalid when off (retrieval-api.md, Principals).
  const reader = readerFor(col, body.principals);
  if (key.scope.kind !== 'cluster') {
    const clusterOnly = [body.mode === 'recall' && 'mode "recall"', body.web_search === 'use_if_needed' && 'web_search "use_if_needed"', body.query_image && 'query_image'].filter(Boolean);
    if (clusterOnly.length > 0) throw new TroveError('forbidden', `${clusterOnly.join(', ')} need${clusterOnly.length === 1 ? 's' : ''} a cluster key.`);
  }
  // The state the reader sees: in an enforced collection, that of its readable files alone.
  const { status, counts } = await readerView(s.store, col, reader);
  if (status === 'empty') throw new TroveError('collection_empty', 'The collection has no files to answer from.');
  if (status === 'failed') throw new TroveError('collection_not_ready', 'Every file in the collection failed to index; there is nothing to answer from.', {}, { retryable: false });
  if (counts.ready === 0) throw new TroveError('collection_not_ready', 'No file in the collection is indexed yet; retry shortly.', { retry_after_seconds: 2 });
}

/** What retrieval found, ready for a generator. */
export interface PreparedEvidence {
  queries: string[];
  sources: AnswerSource[];
  sourceMap: SourceMap;
  passagesConsidered: number;
  retrievalMs: number;
  /** Whether the sources support the question at all (support.ts); below it the answer declines. */
  support: Support;
}

/** The retrieval queries of a mode: the question (resolved against the history), and for ultra and recall a few rewrites. */
export function planQueries(body: AnswerBody, imageText: string | null): string[] {
  const base = followUpQuery(body.query, body.history ?? []);
  const withImage = imageText ? `${base} ${imageText}`.slice(0, 32_000) : base;
  const queries = [withImage];
  if (body.mode !== 'standard') {
    // A keyword-only rewrite (question words dropped) and the bare question: different wordings find different files.
    const content = withImage.replace(/\b(?:what|which|who|whom|whose|when|where|why|how|does|do|did|is|are|was|were|can|could|should|would|will|the|a|an|of|in|on|for|to|and|or)\b/gi, ' ').replace(/\s+/g, ' ').trim();
    if (content && content !== withImage) queries.push(content);
    if (body.query !== withImage) queries.push(body.query);
  }
  return [...new Set(queries)];
}

/** Runs the retrieval queries as the reader (filter and principals apply inside each), fusing files across queries. */
export async function retrieveEvidence(s: Services, key: AuthenticatedKey, col: CollectionRow, body: AnswerBody, queries: string[], requestId: string): Promise<PreparedEvidence> {
  const started = performance.now();
  const processing = col.processing;
  const depth = MODE_DEPTH[body.mode];
  const fused = new Map<string, { fileId: string; path: string; score: number; evidence: Evidence[]; fusion: number }>();
  let passagesConsidered = 0;
  for (const query of queries) {
    const result = await search(
      s,
      key,
      col,
      {
        query,
        mode: processing.semantic ? 'semantic' : 'keyword',
        interpretation: 'literal',
        limit: depth.files,
        result_unit: 'file',
        filter: body.filter ?? null,
        principals: body.principals ?? null,
      },
      requestId,
      { wholePassages: true, evidencePerFile: depth.passagesPerFile, paged: false },
    );
    result.results.forEach((r, i) => {
      passagesConsidered += r.evidence.length;
      const entry = fused.get(r.file_id) ?? { fileId: r.file_id, path: r.path, score: r.score, evidence: [], fusion: 0 };
      // Reciprocal rank across the rewrites: a file several wordings find ranks first.
      entry.fusion += 1 / (60 + i + 1);
      entry.score = Math.max(entry.score, r.score);
      for (const ev of r.evidence) if (!entry.evidence.some((e) => e.text === ev.text)) entry.evidence.push(ev);
      fused.set(r.file_id, entry);
    });
  }
  const ranked = [...fused.values()].sort((a, b) => b.fusion - a.fusion || b.score - a.score).slice(0, depth.files);
  const sources: AnswerSource[] = [];
  const sourceMap: SourceMap = {};
  ranked.forEach((f, i) => {
    const key = `SRC:${String(i + 1).padStart(4, '0')}`;
    sources.push({ key, fileId: f.fileId, path: f.path, score: f.score, passages: f.evidence.map((e) => ({ text: e.text, heading: '' })) });
    sourceMap[key] = { file_id: f.fileId, path: f.path, score: f.score, is_cited: false, evidence: f.evidence };
  });
  // The question's words weighed by the passages this reader may read (a filter narrows what is
  // returned, never the statistics, as in search).
  // The first query is the question as retrieval read it: with the words a follow-up borrows and a query image's reading.
  const terms = questionTerms(queries[0] ?? body.query, []);
  const words = [...terms.words];
  // The same postings and statistics the keyword stage ranks by (cached per index state and file list).
  const scope = await retrievalScope(s.store, col.rid, readerFor(col, body.principals), null);
  const counted = await s.store.keywordIndex.postings({
    collectionRid: col.rid,
    collectionId: col.id,
    phrases: words.map(([, word]) => `"${word.replaceAll('"', '""')}"`),
    files: scope.readableFiles ?? (await s.store.retrievableFiles.live(col.rid)),
  });
  const frequencies = new Map(words.map(([term], i) => [term, counted.phrases[i]!.passages.length]));
  const support = questionSupport(terms, sources, { passages: counted.passages.rids.length, frequencies });
  return { queries, sources, sourceMap, passagesConsidered, retrievalMs: performance.now() - started, support };
}

/** The answer's text when the collection does not support the question: no markers, no sources. */
export const DECLINED_ANSWER = 'The collection holds nothing that answers this question.';
/** The warning a declined answer carries (docs/decisions.md, Answers). */
export const DECLINED_WARNING = {
  code: 'no_supporting_evidence',
  message: 'No passage the collection holds supports this question, so nothing is quoted and no source is listed.',
} as const;

export interface ProducedAnswer {
  answer: string;
  sources: SourceMap;
  cited: string[];
  generationMs: number;
  /** True when the answer declines: DECLINED_ANSWER, no markers, no sources. */
  declined: boolean;
}

/** The generator's text, with markers kept only where they point at a source, and `is_cited` set to match. */
export async function produceAnswer(generator: Generator, body: AnswerBody, evidence: PreparedEvidence, deadline: number, signal?: AbortSignal): Promise<ProducedAnswer> {
  const started = performance.now();
  const declined = (): ProducedAnswer => ({ answer: DECLINED_ANSWER, sources: {}, cited: [], generationMs: performance.now() - started, declined: true });
  // Nothing supports the question: no generator is asked to quote (or a model to write) around it.
  if (!evidence.support.supported) return declined();
  let generated;
  try {
    generated = await generator.generate({
      question: body.query,
      history: body.history ?? [],
      sources: evidence.sources,
      mode: body.mode,
      deadline,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    throw asServiceError(err);
  }
  const { answer, cited } = finishAnswer(generated.answer, Object.keys(evidence.sourceMap));
  if (generated.declined && cited.length === 0) return declined();
  const quoted = quotedBySource(answer);
  const sources: SourceMap = {};
  for (const [k, v] of Object.entries(evidence.sourceMap)) {
    const isCited = cited.includes(k);
    sources[k] = { ...v, is_cited: isCited, evidence: isCited ? quotedFirst(v.evidence, quoted.get(k) ?? []) : v.evidence };
  }
  return { answer, sources, cited, generationMs: performance.now() - started, declined: false };
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Per cited key, the text each of its markers follows (back to the previous marker), whitespace collapsed. */
function quotedBySource(answer: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let from = 0;
  for (const m of findMarkers(answer)) {
    const said = collapse(answer.slice(from, m.index));
    from = m.index + m.length;
    if (!said) continue; // a second marker on the same sentence
    out.set(m.key, [...(out.get(m.key) ?? []), said]);
  }
  return out;
}

/**
 * A cited source's evidence with the passages its sentences were quoted from first, in the order
 * of the answer: a reader (or a client that shows one passage per source) sees the cited words
 * where the marker points, not another passage of the same file. Nothing is added or dropped.
 */
function quotedFirst(evidence: Evidence[], quoted: string[]): Evidence[] {
  const texts = evidence.map((e) => collapse(e.text));
  const first: number[] = [];
  for (const q of quoted) {
    const i = texts.findIndex((t, k) => !first.includes(k) && t.includes(q));
    if (i >= 0) first.push(i);
  }
  return [...first.map((i) => evidence[i]!), ...evidence.filter((_, i) => !first.includes(i))];
}

/**
 * A generator's failure in the contract's terms: past the deadline is decisions.md §4's
 * deadline_exceeded; an unreachable or failing model server is temporarily_unavailable.
 */
export function asServiceError(err: unknown): unknown {
  if (!(err instanceof GenerationError)) return err;
  if (err.code === 'deadline_exceeded') return new TroveError('temporarily_unavailable', err.message, { reason: 'deadline_exceeded' }, { retryable: true });
  if (err.code === 'aborted') return err;
  // retryable follows the contract's table (temporarily_unavailable: always true; a contract audit
  // found the generator's own flag passed on as false); whether the model server itself expects a
  // retry to help stays in the details.
  return new TroveError('temporarily_unavailable', `The answer generator is unavailable: ${err.message}`, { reason: `generation_${err.code}`, generator_retryable: err.retryable });
}

/** decisions.md §3: credits count the retrieval queries and the generation (one each), plus one per 20 passages read. */
export function creditsFor(queries: number, passagesConsidered: number): number {
  return queries + 1 + Math.floor(passagesConsidered / 20);
}

function deadlineExceeded(limitMs: number): TroveError {
  return new TroveError('temporarily_unavailable', `The answer took longer than its ${limitMs / 1000} s limit.`, { reason: 'deadline_exceeded' }, { retryable: true });
}

/** POST ...:answer. */
export async function answer(s: Services, key: AuthenticatedKey, col: CollectionRow, body: AnswerBody, requestId: string): Promise<Response> {
  await checkAnswerRequest(key, col, s, body);
  const limitMs = answerTimeLimitMs(body.mode, Boolean(body.query_image));
  const deadline = Date.now() + limitMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onShutdown = () => {};
  // The answer ends early two ways, both aborting the generator: its time limit, and the end of
  // the daemon's shutdown drain (docs/decisions.md, "Stopping").
  const expired = new Promise<never>((_, reject) => {
    const end = (err: TroveError) => {
      controller.abort(err);
      reject(err);
    };
    timer = setTimeout(() => end(deadlineExceeded(limitMs)), limitMs);
    onShutdown = () => end(shutdownError());
    if (s.shutdown.aborted) onShutdown();
    else s.shutdown.addEventListener('abort', onShutdown, { once: true });
  });
  const work = (async (): Promise<Response> => {
    const image = body.query_image ? await readQueryImage(body.query_image, deadline, await s.generator()) : null;
    const evidence = await retrieveEvidence(s, key, col, body, planQueries(body, image?.text ?? null), requestId);
    const produced = await produceAnswer(await s.generator(), body, evidence, deadline, controller.signal);
    const out: Response = {
      answer: produced.answer,
      warnings: produced.declined ? [{ ...DECLINED_WARNING }] : [],
      image_description: image?.description ?? null,
      mode: body.mode,
      request_id: requestId,
      usage: {
        retrieval_ms: Math.round(evidence.retrievalMs),
        generation_ms: Math.round(produced.generationMs),
        passages_considered: evidence.passagesConsidered,
        sources_cited: produced.cited.length,
        credits: creditsFor(evidence.queries.length, evidence.passagesConsidered),
      },
    };
    if (body.return_sources) out.sources = produced.sources;
    return out;
  })();
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    s.shutdown.removeEventListener('abort', onShutdown);
  }
}
