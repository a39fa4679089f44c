// Research runs (retrieval-api.md: POST .../research, Research run; decisions.md §2, §4, §7): an
// answer produced asynchronously in stages, kept in the database, resumed after a restart, and
// cancelable. Runs execute on the daemon's thread one at a time (retrieval and generation are
// mostly waiting on helper threads or a model server); progress is written as each stage starts.
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { TroveError } from '../../contract/errors.js';
import { hasPrefix, newId, nowIso } from '../../contract/ids.js';
import type { ResearchRunSchema } from '../../contract/schemas.js';
import type { CollectionRow, NamespaceRow, ResearchRow, StoreReads } from '../../store/interface.js';
import type { Services } from '../context.js';
import { readCursor, requestBinding, signCursor, LIST_CURSOR_TTL_MS } from '../cursors.js';
import type { AuthenticatedKey } from '../keys.js';
import { answerTimeLimitMs, asServiceError, checkAnswerRequest, creditsFor, planQueries, produceAnswer, retrieveEvidence, type AnswerBody } from './answer.js';
import { readQueryImage } from './query-image.js';
import { verifyCitations } from './verify.js';

type Run = z.infer<typeof ResearchRunSchema>;

/** retrieval-api.md, Limits: idempotency retention. */
export const IDEMPOTENCY_RETENTION_MS = 86_400_000;

export function presentRun(r: ResearchRow): Run {
  return {
    id: r.id,
    namespace: r.namespace,
    collection: r.collection,
    status: r.status,
    mode: r.mode as Run['mode'],
    progress: r.progress ? (JSON.parse(r.progress) as Run['progress']) : null,
    answer: r.answer,
    sources: r.sources ? (JSON.parse(r.sources) as Run['sources']) : null,
    image_description: r.image_description,
    usage: r.usage ? (JSON.parse(r.usage) as Run['usage']) : null,
    error: r.error ? (JSON.parse(r.error) as Run['error']) : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
    completed_at: r.completed_at,
  };
}

/** The body a retry must repeat; the image counts by its bytes. */
function bodyHash(body: AnswerBody): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/** POST .../research: 202 with the run; a retry with the same Idempotency-Key and body returns the same run. */
export async function createResearch(s: Services, key: AuthenticatedKey, ns: NamespaceRow, col: CollectionRow, body: AnswerBody, idempotencyKey: string | undefined): Promise<Run> {
  if (idempotencyKey === undefined || idempotencyKey.trim() === '') throw new TroveError('invalid_request', 'Send an Idempotency-Key header with research requests (reuse it only to retry the same request).');
  if (idempotencyKey.length > 255) throw new TroveError('invalid_request', 'The Idempotency-Key header is at most 255 characters.');
  const hash = bodyHash(body);
  const replay = async (tx: StoreReads) => {
    const existing = await tx.research.findByIdempotency(key.id, idempotencyKey);
    if (!existing) return undefined;
    // The request is its URL as well as its body: the same key sent to another collection is a new
    // request, never a way to read the first collection's run from one the key may still reach.
    if (existing.collection_rid !== col.rid) throw new TroveError('idempotency_conflict', 'This Idempotency-Key was used for a research request to another collection; use a new key for a new request.');
    if (existing.body_hash !== hash) throw new TroveError('idempotency_conflict', 'This Idempotency-Key was used with a different request body; use a new key for a new request.');
    return presentRun(existing);
  };
  const earlier = await s.store.write(async (tx) => {
    await tx.research.expireIdempotencyKeys(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString());
    return replay(tx);
  });
  if (earlier) return earlier;
  await checkAnswerRequest(key, col, s, body);
  const limitMs = answerTimeLimitMs(body.mode, Boolean(body.query_image));
  const deadline = Date.now() + limitMs;
  // The image is read now, and only what was read is kept (retrieval-api.md: "not stored or indexed").
  const image = body.query_image ? await readQueryImage(body.query_image, Math.min(deadline, Date.now() + 45_000), await s.generator()) : null;
  const { query_image: _image, ...request } = body;
  const run = await s.store.write(async (tx) => {
    const again = await replay(tx);
    if (again) return again;
    const row = await tx.research.insert({
      id: newId('rsr'),
      namespace_rid: ns.rid,
      collection_rid: col.rid,
      namespace: ns.name,
      collection: col.name,
      key_id: key.id,
      idempotency_key: idempotencyKey,
      body_hash: hash,
      request: JSON.stringify(request),
      mode: body.mode,
      image_description: image?.description ?? null,
      image_text: image?.text ?? null,
      deadline_at: deadline,
      created_at: nowIso(),
    });
    return presentRun(row);
  });
  s.research.wake();
  return run;
}

/** Only the creating key or a cluster key can read or cancel a run; to others it does not exist. */
export async function resolveRun(s: Services, key: AuthenticatedKey, col: CollectionRow, runId: string): Promise<ResearchRow> {
  if (!hasPrefix(runId, 'rsr')) throw new TroveError('invalid_request', "A research run is named by its 'rsr_' ID.");
  const run = await s.store.research.find(col.rid, runId);
  if (!run || (key.scope.kind !== 'cluster' && run.key_id !== key.id)) throw new TroveError('not_found', `Research run '${runId}' not found.`);
  return run;
}

/** Newest first; a cluster key sees every run of the collection, another key its own. */
export async function listRuns(s: Services, key: AuthenticatedKey, col: CollectionRow, query: { cursor?: string | undefined; limit: number }) {
  const binding = requestBinding([key.id, 'research', col.id]);
  const before = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : null;
  const rows = await s.store.research.list({ collectionRid: col.rid, beforeRid: before, limit: query.limit + 1, keyId: key.scope.kind === 'cluster' ? undefined : key.id });
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  return { items: page.map(presentRun), next_cursor: more ? signCursor(s.cursorSecret, binding, page[page.length - 1]!.rid, LIST_CURSOR_TTL_MS) : null };
}

export async function cancelRun(s: Services, run: ResearchRow): Promise<Run> {
  if (await s.store.write((tx) => tx.research.finish(run.rid, { status: 'canceled', now: nowIso() }))) s.research.abort(run.rid);
  return presentRun((await s.store.research.byRid(run.rid))!);
}

// ------------------------------------------------------------------ the runner

interface Stage {
  stage: 'plan' | 'retrieve' | 'read' | 'synthesize' | 'verify';
  label: string;
}

/** decisions.md §7: standard may skip plan and verify; ultra and recall run all five. */
function stagesFor(mode: string): Stage[] {
  const all: Stage[] = [
    { stage: 'plan', label: 'Planning the queries' },
    { stage: 'retrieve', label: 'Searching the collection' },
    { stage: 'read', label: 'Reading and ranking the evidence' },
    { stage: 'synthesize', label: 'Writing the answer' },
    { stage: 'verify', label: 'Checking every citation' },
  ];
  return mode === 'standard' ? all.filter((s) => s.stage !== 'plan' && s.stage !== 'verify') : all;
}

class RunEnded extends Error {}

export interface ResearchRunner {
  wake(): void;
  abort(runRid: number): void;
  stop(): Promise<void>;
}

/** Starts the runner: re-queues runs a previous daemon left running, then works through the queue. */
export function startResearchRunner(s: Services, log: { error(message: string, fields: Record<string, unknown>): void }): ResearchRunner {
  let stopping = false;
  let current: { rid: number; controller: AbortController } | null = null;
  let wakeUp: (() => void) | null = null;
  const wake = () => wakeUp?.();

  const loop = (async () => {
    await s.store.write((tx) => tx.research.requeueInterrupted(nowIso()));
    while (!stopping) {
      const run = await s.store.write((tx) => tx.research.claim(nowIso()));
      if (!run) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          timer.unref();
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeUp = null;
        continue;
      }
      const controller = new AbortController();
      current = { rid: run.rid, controller };
      try {
        await execute(s, run, controller.signal);
      } catch (err) {
        log.error('research run failed unexpectedly', { run: run.id, cause: String((err as Error)?.stack ?? err) });
        await s.store.write((tx) => tx.research.finish(run.rid, { status: 'failed', error: JSON.stringify({ code: 'internal_error', message: 'The run failed unexpectedly.', retryable: false }), now: nowIso() }));
      } finally {
        current = null;
      }
    }
  })();

  return {
    wake,
    abort: (rid) => {
      if (current?.rid === rid) current.controller.abort();
    },
    stop: async () => {
      stopping = true;
      // An unfinished run stays `running` in the database and is re-queued by the next start.
      current?.controller.abort(new RunEnded('stopping'));
      wake();
      await loop;
    },
  };
}

async function execute(s: Services, run: ResearchRow, signal: AbortSignal): Promise<void> {
  const body = JSON.parse(run.request) as AnswerBody;
  const stages = stagesFor(run.mode);
  const now = () => nowIso();
  const fail = (code: string, message: string, retryable: boolean) => s.store.write((tx) => tx.research.finish(run.rid, { status: 'failed', error: JSON.stringify({ code, message, retryable }), now: now() }));
  if (Date.now() >= run.deadline_at) return void (await fail('deadline_exceeded', 'The run passed its time limit before it could finish.', true));
  const col = await s.store.collections.byRid(run.collection_rid);
  if (!col || col.deleted_at) return void (await fail('not_found', 'The collection was deleted.', false));
  const step = async (i: number) => {
    const st = stages[i]!;
    if (signal.aborted) throw new RunEnded();
    const progress = JSON.stringify({ stage: st.stage, label: st.label, step: i + 1, total_steps: stages.length });
    if (!(await s.store.write((tx) => tx.research.setProgress(run.rid, progress, now())))) throw new RunEnded();
  };
  const deadlineTimer = setTimeout(() => void fail('deadline_exceeded', `The run took longer than its ${answerTimeLimitMs(body.mode, run.image_text !== null) / 1000} s limit.`, true), Math.max(0, run.deadline_at - Date.now()));
  deadlineTimer.unref();
  // The key that created the run: retrieval binds nothing to it but its id.
  const key: AuthenticatedKey = { id: run.key_id, name: '', scope: { kind: 'cluster' } };
  try {
    let i = 0;
    let queries: string[];
    if (stages[i]?.stage === 'plan') await step(i++);
    queries = planQueries(body, run.image_text);
    await step(i++); // retrieve
    const evidence = await retrieveEvidence(s, key, col, body, queries, `req_${run.id}`);
    await step(i++); // read
    await step(i++); // synthesize
    const produced = await produceAnswer(await s.generator(), body, evidence, run.deadline_at, signal);
    let { answer, sources } = produced;
    if (stages[i]?.stage === 'verify') {
      await step(i++);
      ({ answer, sources } = verifyCitations(answer, sources));
    }
    if (signal.aborted) throw new RunEnded();
    await s.store.write((tx) => tx.research.finish(run.rid, {
      status: 'succeeded',
      answer,
      sources: body.return_sources ? JSON.stringify(sources) : null,
      usage: JSON.stringify({ credits: creditsFor(queries.length, evidence.passagesConsidered) }),
      now: now(),
    }));
  } catch (err) {
    if (err instanceof RunEnded || signal.aborted) return;
    const mapped = asServiceError(err);
    if (mapped instanceof TroveError) {
      // decisions.md §4: a run past its time limit fails with deadline_exceeded.
      const code = mapped.details.reason === 'deadline_exceeded' ? 'deadline_exceeded' : mapped.code;
      return void (await fail(code, mapped.message, mapped.retryable));
    }
    throw err;
  } finally {
    clearTimeout(deadlineTimer);
  }
}
