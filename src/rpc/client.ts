// The client of the operator channel, for the CLI and the TUI: queries and mutations over HTTP on
// the Unix socket (each a short connection, so a missing daemon fails at once), the event
// subscription over a WebSocket on the same socket (it reconnects and resumes by lastEventId).
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { createTRPCClient, createWSClient, httpLink, splitLink, TRPCClientError, wsLink, type TRPCClient, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import WebSocket from 'ws';
import { CLI_EXIT_CODES, ERROR_TABLE, isErrorCode, type ErrorCode } from '../contract/errors.js';
import type { OperatorErrorData, OperatorRouter } from './router.js';
import { clientSocketPath } from './socket.js';

/** `trove daemon status` and every operator command exit with this when no daemon serves the data dir. */
export const NO_DAEMON_EXIT_CODE = CLI_EXIT_CODES.daemon_not_running;
export const NO_DAEMON_CODE = 'daemon_not_running';

export const noDaemonMessage = (dataDir: string): string =>
  `No daemon is running for data dir ${dataDir}: start one with \`trove daemon start --data-dir ${dataDir}\` (or point --data-dir / TROVE_DATA_DIR at the data dir of the running daemon).`;

/** Nothing listens on the data dir's operator socket (no daemon, or one that died). */
export class OperatorUnavailableError extends Error {
  readonly code = NO_DAEMON_CODE;
  readonly exitCode = NO_DAEMON_EXIT_CODE;

  constructor(
    readonly dataDir: string,
    readonly socketPath: string,
    options?: { cause?: unknown },
  ) {
    super(noDaemonMessage(dataDir), options);
    this.name = 'OperatorUnavailableError';
  }
}

const UNAVAILABLE_ERRNO = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

/** fetch over the Unix socket (Node's fetch cannot dial one without undici's Agent). */
function socketFetch(dataDir: string, socketPath: string) {
  return (input: string | URL | { url: string }, init?: RequestInit): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const headers = Object.fromEntries(new Headers(init?.headers).entries());
      const req = request({ socketPath, path: url.pathname + url.search, method: init?.method ?? 'GET', headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 500;
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
          resolve(new Response(body, { status, headers: responseHeaders }));
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        reject(err.code && UNAVAILABLE_ERRNO.has(err.code) ? new OperatorUnavailableError(dataDir, socketPath, { cause: err }) : err);
      });
      const signal = init?.signal;
      if (signal) {
        if (signal.aborted) req.destroy(signal.reason as Error);
        else signal.addEventListener('abort', () => req.destroy(signal.reason as Error), { once: true });
      }
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    });
}

/** ws dials the socket itself, so a data dir path with ':' or spaces needs no URL escaping. */
function socketWebSocket(socketPath: string): typeof globalThis.WebSocket {
  class SocketWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols ?? [], { createConnection: () => connect(socketPath) });
    }
  }
  return SocketWebSocket as unknown as typeof globalThis.WebSocket;
}

/**
 * A subscription whose first connection fails ends with OperatorUnavailableError instead of
 * retrying forever (the caller may fall back to another source); once it has been connected, a
 * lost connection is retried and the stream resumes after the last event delivered.
 */
function failFastSubscriptions(dataDir: string, socketPath: string, onUnreachable: () => void): TRPCLink<OperatorRouter> {
  return () =>
    ({ op, next }) =>
      observable((observer) => {
        if (op.type !== 'subscription') return next(op).subscribe(observer);
        let connected = false;
        let failed = false;
        const inner = next(op).subscribe({
          next(envelope) {
            if (failed) return;
            const result = envelope.result as { type?: string; state?: string; error?: unknown };
            if (result.type === 'started' || result.type === 'data' || (result.type === 'state' && result.state === 'pending')) connected = true;
            if (!connected && result.type === 'state' && result.state === 'connecting' && result.error) {
              failed = true;
              observer.error(TRPCClientError.from(new OperatorUnavailableError(dataDir, socketPath, { cause: result.error })));
              onUnreachable();
              return;
            }
            observer.next(envelope);
          },
          error: (err) => observer.error(err),
          complete: () => observer.complete(),
        });
        return () => inner.unsubscribe();
      });
}

export interface OperatorConnection {
  client: TRPCClient<OperatorRouter>;
  socketPath: string;
  dataDir: string;
  close(): void;
}

/**
 * Connects to the daemon serving `dataDir`. Throws OperatorUnavailableError at once when there is
 * no socket; a socket left by a dead daemon fails the first call (or subscription) with it.
 */
export function connectOperator(dataDir: string): OperatorConnection {
  const socketPath = clientSocketPath(dataDir);
  if (!existsSync(socketPath)) throw new OperatorUnavailableError(dataDir, socketPath);
  // Lazy: no WebSocket is opened until something subscribes, and it closes when nothing does.
  const ws = createWSClient({
    url: 'ws://trove-operator/',
    WebSocket: socketWebSocket(socketPath),
    lazy: { enabled: true, closeMs: 0 },
    retryDelayMs: (attempt) => Math.min(250 * 2 ** attempt, 5000),
  });
  const client = createTRPCClient<OperatorRouter>({
    links: [
      failFastSubscriptions(dataDir, socketPath, () => void ws.close()),
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: wsLink({ client: ws }),
        false: httpLink({ url: 'http://trove-operator', fetch: socketFetch(dataDir, socketPath) }),
      }),
    ],
  });
  return { client, socketPath, dataDir, close: () => void ws.close() };
}

export interface OperatorFailure {
  /** A trove error code (ERROR_TABLE), or daemon_not_running / operator_error. */
  code: string;
  message: string;
  exitCode: number;
  retryable: boolean;
  details: Record<string, unknown>;
  /** The HTTP status the code stands for, when it is a trove error code. */
  status: number | null;
}

/** What went wrong on an operator call, in the terms the CLI prints and exits with. */
export function describeOperatorError(err: unknown): OperatorFailure {
  const unavailable = findUnavailable(err);
  if (unavailable) return { code: NO_DAEMON_CODE, message: unavailable.message, exitCode: NO_DAEMON_EXIT_CODE, retryable: false, details: { data_dir: unavailable.dataDir }, status: null };
  if (err instanceof TRPCClientError) {
    const trove = (err.data as { trove?: OperatorErrorData } | undefined)?.trove;
    if (trove && isErrorCode(trove.code)) {
      const code: ErrorCode = trove.code;
      return { code, message: err.message, exitCode: ERROR_TABLE[code].exitCode, retryable: trove.retryable, details: trove.details ?? {}, status: ERROR_TABLE[code].status };
    }
    const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code;
    const message = errno ? `The operator connection failed (${errno}): ${err.message}` : err.message;
    return { code: 'operator_error', message, exitCode: 1, retryable: false, details: {}, status: null };
  }
  return { code: 'operator_error', message: err instanceof Error ? err.message : String(err), exitCode: 1, retryable: false, details: {}, status: null };
}

function findUnavailable(err: unknown): OperatorUnavailableError | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    if (current instanceof OperatorUnavailableError) return current;
    current = (current as Error).cause;
  }
  return undefined;
}
