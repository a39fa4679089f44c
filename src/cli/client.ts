// A small fetch-based client of the trove HTTP API, and how the CLI reports what goes wrong.
import { Readable } from 'node:stream';
import type { Page } from '../client/index.js';
import { CLI_EXIT_CODES, ERROR_TABLE, isErrorCode } from '../contract/errors.js';
import { KEY_SECRET_SHAPE, keyPrefixOf } from '../contract/key-secret.js';
import { errOut } from './io.js';
import { suggestForNotFound } from '../contract/suggest.js';

const REQUEST_TIMEOUT_MS = 60_000;

/** Exit status when no daemon answers at the URL (ERROR_TABLE's neighbour CLI_EXIT_CODES). */
export const NO_DAEMON_EXIT = CLI_EXIT_CODES.daemon_not_running;

/** A failure of the CLI itself (bad arguments, no key, no daemon): a message and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
    readonly code: string = exitCode === 2 ? 'usage_error' : 'cli_error',
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The daemon answered with an error envelope. */
export class CliApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly status: number,
    readonly retryable: boolean = false,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliApiError';
  }

  get exitCode(): number {
    return isErrorCode(this.code) ? ERROR_TABLE[this.code].exitCode : 1;
  }

  envelope(): { error: { code: string; message: string; request_id: string | null; retryable: boolean; details: Record<string, unknown> } } {
    return { error: { code: this.code, message: this.message, request_id: this.requestId, retryable: this.retryable, details: this.details } };
  }
}

/** Where the key came from (src/cli/connection.ts), so a refused key can be traced to the flag, variable or file that gave it. */
export type KeySource = { kind: 'flag' } | { kind: 'env' } | { kind: 'file'; path: string };

/**
 * A key as it may be shown: the non-secret prefix the daemon files it under (src/contract/key-secret.ts),
 * which is what `trove keys list` shows; a string not of the minted shape shows its hash prefix.
 */
export function keyHint(key: string): string {
  const prefix = keyPrefixOf(key);
  return KEY_SECRET_SHAPE.test(key) ? `trove_${prefix}_…` : `prefix ${prefix}`;
}

export function describeKeySource(source: KeySource): string {
  if (source.kind === 'flag') return '--key';
  if (source.kind === 'env') return 'the TROVE_KEY environment variable';
  return `the cluster key file ${source.path}`;
}

/** The sentence added to a 401: which key was sent and where it came from, never the secret. */
export function describeKeyUsed(key: string, source: KeySource): string {
  return `The CLI sent key ${keyHint(key)} from ${describeKeySource(source)}.`;
}

export type { Page };

/**
 * A request body whose field names and types are the contract's (`z.input` of its schema), except
 * the fields in `AsTyped`: those go as the user typed them, so the daemon validates them and its
 * message reaches the user.
 */
export type RequestBody<T, AsTyped extends keyof T = never> = Omit<T, AsTyped> & { [K in AsTyped]?: unknown };

// The API's paths are the contract's (one definition for the CLI, the typed client and MCP).
export { collectionPath, namespacePath } from '../contract/paths.js';

export class ApiClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly key?: string,
    /** Named in the message of a 401, with the key's prefix (never its secret). */
    private readonly keySource?: KeySource,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** A client of a resolved connection (its URL, its key and where the key came from). */
  static of(conn: { url: string; key: string; keySource?: KeySource }): ApiClient {
    return new ApiClient(conn.url, conn.key, conn.keySource);
  }

  /** Sends one JSON request to `path` (relative to the base URL) and returns the parsed JSON body. */
  async request<T = unknown>(method: string, path: string, body?: unknown, options: { auth?: boolean; headers?: Record<string, string>; suggest?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.auth !== false && this.key) headers.authorization = `Bearer ${this.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = this.baseUrl + path;
    const response = await this.send(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    try {
      return (await readJson(response, method, url)) as T;
    } catch (err) {
      throw this.withKeyNote(await this.withSuggestion(err, path, options.suggest), options.auth !== false);
    }
  }

  /** A 401 says which key was sent and from where: the usual cause is a stale TROVE_KEY or the wrong data dir. */
  private withKeyNote(err: unknown, sentKey: boolean): unknown {
    if (!(err instanceof CliApiError) || err.code !== 'unauthenticated' || !sentKey || !this.key || !this.keySource) return err;
    return new CliApiError(err.code, `${err.message} ${describeKeyUsed(this.key, this.keySource)}`, err.requestId, err.status, err.retryable, err.details);
  }

  /** A not_found for a namespace or collection named by the user gets "did you mean" (src/contract/suggest.ts). */
  private async withSuggestion(err: unknown, path: string, suggest: boolean | undefined): Promise<unknown> {
    if (suggest === false || !(err instanceof CliApiError) || err.code !== 'not_found') return err;
    const message = await suggestForNotFound(path, async (listPath) =>
      (await this.listAll<{ name: string }>(listPath, {}, { suggest: false })).map((item) => item.name),
    );
    return message === null ? err : new CliApiError(err.code, message, err.requestId, err.status, err.retryable, err.details);
  }

  /** Every item of a paged list, following next_cursor. */
  async listAll<T>(path: string, query: Record<string, string> = {}, options: { suggest?: boolean } = {}): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams({ ...query, limit: '100', ...(cursor ? { cursor } : {}) });
      const page: Page<T> = await this.request<Page<T>>('GET', `${path}?${params}`, undefined, options);
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    return items;
  }

  /** PUTs raw bytes to a signed upload URL (which carries its own authority, so no key is sent). */
  async upload(url: string, headers: Record<string, string>, body: Readable): Promise<unknown> {
    const response = await this.send(url, {
      method: 'PUT',
      headers,
      body: Readable.toWeb(body) as unknown as RequestInit['body'],
      // Node's fetch needs this to send a streamed body.
      duplex: 'half',
    } as RequestInit, body);
    return readJson(response, 'PUT', url);
  }

  /** `source` is the streamed body, if any: its read errors are local failures, not network ones. */
  private async send(url: string, init: RequestInit, source?: Readable): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      throw source?.errored ?? this.networkError(err);
    }
  }

  private networkError(err: unknown): CliError {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      return new CliError(`The daemon at ${this.baseUrl} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s.`, 1, 'daemon_unreachable');
    }
    // No daemon answers: exit 9 in every command, as docs/tour.md's exit codes say (a timeout is not
    // that: something answered the connection, and it stays "unexpected").
    const code = errnoCode(err);
    if (code === 'ECONNREFUSED') {
      return new CliError(`No daemon at ${this.baseUrl}: start one with \`trove daemon start\` (or pass --url / set TROVE_URL).`, NO_DAEMON_EXIT, 'daemon_unreachable');
    }
    const reason = code ?? (err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err));
    return new CliError(`Cannot reach the daemon at ${this.baseUrl}: ${reason}.`, NO_DAEMON_EXIT, 'daemon_unreachable');
  }
}

/** The errno code buried in fetch's error chain (undici wraps it, sometimes in an AggregateError). */
function errnoCode(err: unknown): string | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    const nested = (current as AggregateError).errors?.[0];
    current = (current as Error).cause ?? nested;
  }
  return undefined;
}

async function readJson(response: Response, method: string, url: string): Promise<unknown> {
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (response.ok) {
    if (text.length > 0 && parsed === undefined) throw new CliError(`${method} ${url} answered HTTP ${response.status} with a body that is not JSON: is this a trove daemon?`);
    return parsed;
  }
  const envelope = (parsed as { error?: Record<string, unknown> } | undefined)?.error;
  if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    throw new CliApiError(
      envelope.code,
      envelope.message,
      typeof envelope.request_id === 'string' ? envelope.request_id : response.headers.get('x-request-id'),
      response.status,
      envelope.retryable === true,
      typeof envelope.details === 'object' && envelope.details !== null ? (envelope.details as Record<string, unknown>) : {},
    );
  }
  throw new CliError(`${method} ${url} failed with HTTP ${response.status} and no error envelope: is this a trove daemon?`);
}

/** Prints an error the way every command does and returns the exit code for it. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof CliApiError) {
    if (json) errOut().write(JSON.stringify(err.envelope()) + '\n');
    else errOut().write(`error ${err.code}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof CliError ? err.code : 'cli_error';
  if (json) errOut().write(JSON.stringify({ error: { code, message } }) + '\n');
  else errOut().write(`error: ${message}\n`);
  return err instanceof CliError ? err.exitCode : 1;
}
