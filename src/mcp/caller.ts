// How the MCP tools reach trove: only through the public HTTP API, so that every tool call passes
// the same authentication, permission checks and access rules as the HTTP routes (retrieval-api.md
// "Authentication"). Two ways to send those requests: over the network with fetch (`trove mcp` on
// stdio) and in-process through the daemon's own app (`POST /mcp` on the daemon), with the caller's
// own credential either way.
import type { AppRequest, AppResponse } from '../http/router.js';

export interface ApiResult {
  status: number;
  /** Parsed JSON when the response is JSON; the raw bytes otherwise (a signed download). */
  body: unknown;
  /** The response's content type, lower-cased ('' when absent). */
  contentType: string;
  /** The response's x-request-id, when it has one. */
  requestId: string | null;
}

/**
 * One request to the public API; `path` is relative to the API's base (it may carry a query string).
 * `raw`: the body as bytes whatever its type (a file's content, whose JSON must not be re-serialized).
 */
export type ApiCaller = (method: string, path: string, body?: unknown, options?: { raw?: boolean }) => Promise<ApiResult>;

/** A request that never got an answer (the daemon is down, or stopped answering). */
export class UnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/** Tool calls such as `answer` may take minutes (retrieval-api.md "Limits": 600 s for ultra). */
const REQUEST_TIMEOUT_MS = 660_000;

function decode(status: number, contentType: string, requestId: string | null, bytes: Buffer, raw = false): ApiResult {
  const type = contentType.toLowerCase();
  const bare = type.split(';')[0]!.trim();
  if (raw && status >= 200 && status <= 299) return { status, body: bytes, contentType: type, requestId };
  if (bare === 'application/json' && bytes.length > 0) {
    try {
      return { status, body: JSON.parse(bytes.toString('utf8')), contentType: type, requestId };
    } catch {
      // A JSON content type with a body that is not JSON: handed over as bytes, for the tool to report.
    }
  }
  return { status, body: bytes.length === 0 && bare === 'application/json' ? null : bytes, contentType: type, requestId };
}

/** The API over the network: `baseUrl` such as http://127.0.0.1:7410, `key` sent as a Bearer token. */
export function httpCaller(baseUrl: string, key: string, fetchImpl: typeof fetch = fetch): ApiCaller {
  const base = baseUrl.replace(/\/+$/, '');
  return async (method, path, body, options) => {
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetchImpl(base + path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new UnreachableError(`No answer from the trove daemon at ${base} (${cause}). Is it running? Start it with \`trove daemon start\`, or set TROVE_URL.`);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    return decode(response.status, response.headers.get('content-type') ?? '', response.headers.get('x-request-id'), bytes, options?.raw);
  };
}

/**
 * The API in-process: each call is handed to the daemon's app as an HTTP request would be, with
 * the credential headers of the MCP request that carries it (never a key of the daemon's own).
 */
export function appCaller(handle: (req: AppRequest) => Promise<AppResponse>, credentials: { authorization?: string | undefined; 'x-api-key'?: string | undefined }): ApiCaller {
  return async (method, path, body, options) => {
    const headers: Record<string, string | undefined> = { accept: 'application/json', ...credentials };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await handle({ method, url: path, headers, body: body === undefined ? null : Buffer.from(JSON.stringify(body)) });
    if (res.stream) {
      // No tool asks for an event stream; close it rather than leave it open.
      await res.stream[Symbol.asyncIterator]().return?.();
    }
    const bytes = res.body === null ? Buffer.alloc(0) : Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.body);
    return decode(res.status, res.headers['content-type'] ?? '', res.headers['x-request-id'] ?? null, bytes, options?.raw);
  };
}
