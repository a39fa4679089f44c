// MCP's Streamable HTTP transport at `POST /mcp` on the daemon, in front of the app: the Host and
// Origin checked first (origin-check.ts), then the same keys (Authorization: Bearer, or X-API-Key),
// before any MCP processing; a missing or bad key is the contract's 401 envelope with the
// `WWW-Authenticate: Bearer` challenge MCP clients look for. Stateless: each POST gets its own server and transport (no
// Mcp-Session-Id), and every tool call inside it is an in-process request to the app with the
// caller's own credential headers, so it goes through the routes' permission checks and access
// rules. Not a contract route, so not in /openapi.json; docs/tour.md ("Agents: MCP in detail") documents it.
import { TroveError } from '../contract/errors.js';
import { ANSWER_BODY_LIMIT } from '../domain/limits.js';
import type { App } from '../http/app.js';
import { checkJsonShape, commonHeaders, errorResponse, readBody, requestIdOf, type AppRequest, type AppResponse } from '../http/router.js';
import { appCaller } from './caller.js';
import { refusalOf } from './origin-check.js';
import { DEFAULT_MCP_SETTINGS, type McpSettings } from '../domain/mcp-settings.js';
import type { KeyInfo } from './tools.js';

export const MCP_PATH = '/mcp';

/**
 * The largest body a tool call needs: one call carries one API request body, and the largest route
 * limit is answer's (retrieval-api.md "Limits"). The route the call reaches still applies its own.
 */
export const MCP_BODY_LIMIT = ANSWER_BODY_LIMIT;

export interface McpEndpointOptions {
  version: string;
  /** Where the daemon listens (its URL once the server is bound): its own names and origins. */
  listeningUrl: () => string;
  /** Origins and hosts allowed besides the daemon's own, and the tool reply budget (src/domain/mcp-settings.ts). */
  settings?: McpSettings;
}

/** The app with `/mcp` served in front of it; every other path goes to the app unchanged. */
export function withMcp(app: App, options: McpEndpointOptions): App {
  return {
    routes: app.routes,
    handle: (req) => (pathOf(req.url) === MCP_PATH ? handleMcp(app, req, options) : app.handle(req)),
  };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

async function handleMcp(app: App, req: AppRequest, options: McpEndpointOptions): Promise<AppResponse> {
  const requestId = requestIdOf(req.headers);
  const refusal = refusalOf({ host: req.headers.host, origin: req.headers.origin }, options.listeningUrl(), options.settings ?? DEFAULT_MCP_SETTINGS);
  if (refusal) return errorResponse(new TroveError('forbidden', refusal.message, { reason: refusal.reason }), requestId);
  // Stateless mode: no session to resume a stream on (GET) or to end (DELETE). The MCP transport
  // spec lets a server answer both 405 ("does not offer an SSE stream", "does not allow clients to
  // terminate sessions"), and the SDK's client takes a GET 405 as that.
  if (req.method.toUpperCase() !== 'POST') {
    return errorResponse(new TroveError('method_not_allowed', `${req.method} is not allowed on ${MCP_PATH}; MCP clients POST their messages here (stateless Streamable HTTP).`), requestId, { allow: 'POST' });
  }
  const credentials = { authorization: req.headers.authorization, 'x-api-key': req.headers['x-api-key'] };
  const call = appCaller(app.handle, credentials);
  // Authentication first, through the app itself: a missing, bad or revoked key gets the route's
  // own 401 envelope (and a stopping daemon its 503) before the body is read. GET /info also names
  // the key (decisions.md §3), whose scope decides the tools offered.
  const info = await app.handle({ method: 'GET', url: '/info', headers: { ...credentials, 'x-request-id': requestId }, body: null });
  if (info.status === 401) return { ...info, headers: { ...info.headers, 'www-authenticate': bearerChallenge(credentials) } };
  if (info.status !== 200) return info;
  const key = (JSON.parse(String(info.body)) as { key: KeyInfo }).key;

  let body: Buffer;
  try {
    body = await readBody(req.body, MCP_BODY_LIMIT, 'The MCP message is larger than');
  } catch (err) {
    // As the Router does after a 413: the connection closes once the rest of the body is read.
    if (err instanceof TroveError) return errorResponse(err, requestId, err.code === 'request_too_large' ? { connection: 'close' } : {});
    throw err;
  }
  // Nesting is bounded here as for every other route: the SDK validates a tool's arguments
  // recursively, and a filter 10,000 levels deep overflowed the stack (found by a bad-input attack).
  // A body that is not JSON at all is left to the transport, whose JSON-RPC parse error says so.
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    // not JSON: the transport answers
  }
  try {
    checkJsonShape(parsed);
  } catch (err) {
    if (err instanceof TroveError) return errorResponse(err, requestId);
    throw err;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, value);
  // The transport reads the path alone, so the origin is fixed: built from the Host header, a value
  // such as `[bad` made the URL invalid and the request a 500 (found by a bad-input attack).
  const request = new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body: new Uint8Array(body) });

  const { createMcpServer, WebStandardStreamableHTTPServerTransport } = await loadMcp();
  const server = createMcpServer({ call, key, version: options.version, replyBudgetTokens: (options.settings ?? DEFAULT_MCP_SETTINGS).replyBudgetTokens });
  // JSON responses, not an SSE stream: a tool call's answer is one JSON-RPC response, and a plain
  // body goes through the adapter's drain and shutdown like any other request.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MCP_BODY_LIMIT });
  try {
    await server.connect(transport);
    // Parsed once, above: the transport takes it as it is (and parses the body itself only when it was not JSON).
    const response = await transport.handleRequest(request, parsed === undefined ? undefined : { parsedBody: parsed });
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name.toLowerCase()] = value));
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: { ...out, ...commonHeaders(requestId) }, body: bytes };
  } finally {
    await server.close();
  }
}

/** RFC 6750's challenge: a request that sent a credential learns that it was the credential that failed. */
function bearerChallenge(credentials: { authorization?: string | undefined; 'x-api-key'?: string | undefined }): string {
  return credentials.authorization !== undefined || credentials['x-api-key'] !== undefined ? 'Bearer realm="trove", error="invalid_token"' : 'Bearer realm="trove"';
}

/**
 * The SDK and the tools load on the first /mcp request, not at daemon start: importing them costs
 * 0.3-0.5 s of start-up (measured on the 2-core dev machine) that a daemon serving only the HTTP
 * API, as every test fixture does, would pay for nothing.
 */
let mcpModules: Promise<{
  createMcpServer: typeof import('./server.js').createMcpServer;
  WebStandardStreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
}> | undefined;
function loadMcp() {
  return (mcpModules ??= Promise.all([import('./server.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]).then(([server, transport]) => ({
    createMcpServer: server.createMcpServer,
    WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
  })));
}
