// The operator channel (decisions.md §1): the local user's own session with the daemon, served over a
// Unix socket only that user can open (src/rpc/server.ts), so it needs no API key. Status, the live
// event stream of every namespace, config.json, file:// roots, workspace restore and stop.
import { initTRPC, tracked, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import { z } from 'zod';
import { asTroveError, ERROR_TABLE, isStorageFull, TroveError, type ErrorCode } from '../contract/errors.js';
import { issuesSentence } from '../contract/issues.js';
import type { Services } from '../domain/context.js';
import { EVENT_TYPES, presentEvent } from '../domain/events.js';
import type { FileRoots } from '../domain/file-roots.js';
import { clusterCounts, operatorEventCursor, operatorEventsAfter, restoreWorkspaceForOperator } from '../domain/operator.js';
import { maskValue, readConfig, setConfig } from './config.js';

export interface OperatorLog {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What the router needs from the running daemon (daemon/main.ts builds it). */
export interface OperatorDeps {
  services: Services;
  roots: FileRoots;
  version: string;
  startedAt: Date;
  /** The HTTP API's URL, once it listens. */
  httpUrl: () => string | null;
  socketPath: () => string | null;
  /** Stops the daemon the way SIGTERM does; called once the reply to daemon.stop is out. */
  requestStop: () => void;
  log: OperatorLog;
  /** The daemon's environment, where TROVE_* overrides of config.json live. */
  env?: NodeJS.ProcessEnv;
  /** How often the event stream looks at the outbox (written with each change, src/store/sqlite/events.ts). */
  eventPollMs?: number;
}

export interface OperatorContext {
  /** Runs `fn` once the reply to the current call has been handed to the connection. */
  afterReply(fn: () => void): void;
}

/** The trove error carried by every operator error, so a client prints its code and exits by ERROR_TABLE. */
export interface OperatorErrorData {
  code: ErrorCode;
  retryable: boolean;
  details: Record<string, unknown>;
}

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

const TROVE_CODE_BY_TRPC: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
  BAD_REQUEST: 'invalid_request',
  PARSE_ERROR: 'invalid_request',
  NOT_FOUND: 'not_found',
  METHOD_NOT_SUPPORTED: 'method_not_allowed',
  PAYLOAD_TOO_LARGE: 'request_too_large',
  SERVICE_UNAVAILABLE: 'temporarily_unavailable',
};

/** Input validation failures read like the HTTP API's: one sentence per issue (src/contract/issues.ts). */
function describeInputIssues(cause: unknown): string | null {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return null;
  // tRPC may hand over Standard Schema paths, whose segments can be `{ key }` objects.
  const normalized = (issues as { path?: readonly (PropertyKey | { key: PropertyKey })[] }[]).map((issue) => ({
    ...issue,
    path: (issue.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)),
  })) as unknown as z.core.$ZodIssue[];
  return issuesSentence(normalized, { root: 'the input' });
}

export function troveErrorOf(error: TRPCError): { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> } {
  const cause = error.cause;
  if (cause instanceof TroveError) return { code: cause.code, message: cause.message, retryable: cause.retryable, details: cause.details };
  if (isStorageFull(cause)) {
    const full = asTroveError(cause);
    return { code: full.code, message: full.message, retryable: full.retryable, details: full.details };
  }
  const code = TROVE_CODE_BY_TRPC[error.code] ?? 'internal_error';
  if (code === 'internal_error') return { code, message: 'Unexpected daemon failure (see the daemon log).', retryable: false, details: {} };
  const issues = describeInputIssues(cause);
  return { code, message: issues ?? error.message, retryable: ERROR_TABLE[code].retryable, details: {} };
}

const t = initTRPC.context<OperatorContext>().create({
  // Stacks stay in the daemon log; the socket's other end gets the trove error only.
  isDev: false,
  errorFormatter({ shape, error }) {
    const trove = troveErrorOf(error);
    const data: OperatorErrorData & { httpStatus: number; path?: string } = {
      code: trove.code,
      retryable: trove.retryable,
      details: trove.details,
      httpStatus: ERROR_TABLE[trove.code].status,
      ...(shape.data.path ? { path: shape.data.path } : {}),
    };
    return { ...shape, message: trove.message, data: { ...shape.data, stack: undefined, trove: data } };
  },
});

/** A TroveError thrown by a procedure keeps its meaning on the wire (its HTTP-like status too). */
const procedure = t.procedure.use(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof TroveError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE_BY_STATUS[cause.status] ?? 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
  }
  return result;
});

const eventTypes = z.enum(EVENT_TYPES);

export const EventsInput = z
  .object({
    lastEventId: z.string().nullish(),
    types: z.array(eventTypes).max(EVENT_TYPES.length).optional(),
  })
  .strict();

const ConfigValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });

export function createOperatorRouter(deps: OperatorDeps) {
  const s = deps.services;
  const env = deps.env ?? process.env;
  const pollMs = deps.eventPollMs ?? 200;

  const runningConfig = () => ({
    embedding: { ...s.embedding.config, model_id: s.embedding.modelId },
    generation: s.generation,
  });

  return t.router({
    status: procedure.query(async () => {
      const counts = await clusterCounts(s);
      const now = Date.now();
      return {
        running: true as const,
        version: deps.version,
        pid: process.pid,
        started_at: deps.startedAt.toISOString(),
        uptime_s: Math.round((now - deps.startedAt.getTime()) / 1000),
        data_dir: s.dataDir,
        http_url: deps.httpUrl(),
        operator_socket: deps.socketPath(),
        ready: s.ready(),
        indexer: { alive: s.indexerAlive() },
        ...counts,
        embedding: { provider: s.embedding.config.provider, model_id: s.embedding.modelId },
        generation: { provider: s.generation.provider, model: s.generation.model },
        file_roots: deps.roots.list(),
      };
    }),

    // Every namespace's events (the operator sees the cluster), exactly as GET /events shows them.
    // Each is `tracked` by its event ID, so a client that reconnects resumes after the last one it got.
    events: procedure.input(EventsInput).subscription(async function* ({ input, signal }) {
      let cursor = await operatorEventCursor(s, input.lastEventId);
      const wanted = input.types ? new Set<string>(input.types) : null;
      while (!signal?.aborted && s.ready()) {
        const rows = await operatorEventsAfter(s, cursor, 500);
        for (const row of rows) {
          cursor = row.rid;
          if (!wanted || wanted.has(row.type)) yield tracked(row.id, presentEvent(row));
        }
        if (rows.length < 500) await sleep(pollMs, signal);
      }
    }),

    config: t.router({
      get: procedure.input(z.object({ key: z.string().min(1).optional() }).strict().optional()).query(({ input }) => readConfig(s.dataDir, runningConfig(), env, input?.key)),
      set: procedure.input(z.object({ key: z.string().min(1), value: ConfigValue }).strict()).mutation(({ input }) => {
        const change = setConfig(s.dataDir, input.key, input.value, env);
        if (change.changed) deps.log.info('operator changed config.json', { key: change.key, value: maskValue(change.key, change.value) });
        return change;
      }),
    }),

    roots: t.router({
      list: procedure.query(() => ({ roots: deps.roots.list() })),
      add: procedure.input(z.object({ path: z.string().min(1) }).strict()).mutation(async ({ input }) => {
        const result = await deps.roots.add(input.path);
        if (result.added) deps.log.info('operator granted a file root', { path: result.root.path });
        return result;
      }),
      remove: procedure.input(z.object({ path: z.string().min(1) }).strict()).mutation(async ({ input }) => {
        const result = await deps.roots.remove(input.path);
        deps.log.info('operator removed a file root', { path: result.removed });
        return result;
      }),
    }),

    workspace: t.router({
      restore: procedure.input(z.object({ ref: z.string().min(1) }).strict()).mutation(async ({ input }) => {
        const { id, name, namespace } = await restoreWorkspaceForOperator(s, input.ref);
        deps.log.info('operator restored a workspace', { id, name });
        return { namespace };
      }),
    }),

    daemon: t.router({
      stop: procedure.mutation(({ ctx }) => {
        deps.log.info('stop requested over the operator channel');
        ctx.afterReply(deps.requestStop);
        return { stopping: true as const, pid: process.pid, data_dir: s.dataDir };
      }),
    }),
  });
}

export type OperatorRouter = ReturnType<typeof createOperatorRouter>;

