// What a tool reports when its call fails: the contract's error (retrieval-api.md "Errors"), as an
// MCP tool result with `isError: true`, so an agent reads the code and message and can act on them;
// never a protocol error, which most agents show as a crash of the server.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { UnreachableError, type ApiResult } from './caller.js';

export interface ContractError {
  code: string;
  message: string;
  request_id: string | null;
  retryable: boolean;
  details: Record<string, unknown>;
}

export class ToolFailure extends Error {
  constructor(readonly error: ContractError) {
    super(error.message);
    this.name = 'ToolFailure';
  }

  /** A failure found by the tool itself (bad arguments, a file that is not text): no request was made. */
  static invalid(message: string, details: Record<string, unknown> = {}): ToolFailure {
    return new ToolFailure({ code: 'invalid_request', message, request_id: null, retryable: false, details });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** The contract's error from a non-2xx answer: its envelope, or, without one (a proxy's page), what the status says. */
export function failureOf(res: ApiResult): ToolFailure {
  const envelope = isRecord(res.body) && isRecord(res.body.error) ? res.body.error : null;
  if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    return new ToolFailure({
      code: envelope.code,
      message: envelope.message,
      request_id: typeof envelope.request_id === 'string' ? envelope.request_id : res.requestId,
      retryable: envelope.retryable === true,
      details: isRecord(envelope.details) ? envelope.details : {},
    });
  }
  return new ToolFailure({
    code: res.status >= 500 ? 'internal_error' : 'invalid_request',
    message: `The API answered HTTP ${res.status} without trove's error envelope: is TROVE_URL the address of a trove daemon?`,
    request_id: res.requestId,
    retryable: false,
    details: { status: res.status },
  });
}

/** Any failure inside a tool as the tool result an agent gets. */
export function errorResult(err: unknown): CallToolResult {
  let error: ContractError;
  if (err instanceof ToolFailure) error = err.error;
  else if (err instanceof UnreachableError) {
    // Not a code of the table's own making: the daemon being down is "a dependency prevents the operation".
    error = { code: 'temporarily_unavailable', message: err.message, request_id: null, retryable: true, details: { reason: 'daemon_unreachable' } };
  } else {
    error = { code: 'internal_error', message: `The MCP tool failed: ${(err as Error)?.message ?? String(err)}`, request_id: null, retryable: false, details: {} };
  }
  const lines = [`Error ${error.code}: ${error.message}`];
  if (error.request_id) lines.push(`request_id: ${error.request_id}`);
  if (Object.keys(error.details).length > 0) lines.push(`details: ${JSON.stringify(error.details)}`);
  if (error.retryable) lines.push('This error is retryable: the same call may succeed later.');
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { error } };
}
