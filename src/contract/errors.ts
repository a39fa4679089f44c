// The one error type and the one table from code to HTTP status, retryable flag and CLI exit code.
// Codes and statuses come from retrieval-api.md "Errors" and decisions.md §4.

export const ERROR_TABLE = {
  invalid_request: { status: 400, retryable: false, exitCode: 2 },
  invalid_filter: { status: 400, retryable: false, exitCode: 2 },
  invalid_cursor: { status: 400, retryable: false, exitCode: 2 },
  unauthenticated: { status: 401, retryable: false, exitCode: 3 },
  forbidden: { status: 403, retryable: false, exitCode: 4 },
  not_found: { status: 404, retryable: false, exitCode: 5 },
  // Not in the contract's table: an HTTP method the route does not serve. Releases may add codes
  // (retrieval-api.md "Versioning" 3); see docs/decisions.md.
  method_not_allowed: { status: 405, retryable: false, exitCode: 2 },
  already_exists: { status: 409, retryable: false, exitCode: 6 },
  idempotency_conflict: { status: 409, retryable: false, exitCode: 6 },
  collection_empty: { status: 409, retryable: false, exitCode: 6 },
  collection_not_ready: { status: 409, retryable: true, exitCode: 7 },
  operation_in_progress: { status: 409, retryable: true, exitCode: 7 },
  limit_exceeded: { status: 409, retryable: false, exitCode: 6 },
  external_source: { status: 409, retryable: false, exitCode: 6 },
  webhook_disabled: { status: 409, retryable: false, exitCode: 6 },
  request_too_large: { status: 413, retryable: false, exitCode: 2 },
  temporarily_unavailable: { status: 503, retryable: true, exitCode: 7 },
  internal_error: { status: 500, retryable: false, exitCode: 1 },
} as const satisfies Record<string, { status: number; retryable: boolean; exitCode: number }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/**
 * Exit codes of CLI outcomes that are not API errors, kept next to ERROR_TABLE so no two outcomes
 * share a code: 0 success, 1 anything unexpected, 2-7 from ERROR_TABLE, then these.
 */
export const CLI_EXIT_CODES = {
  /** Every request succeeded but some files could not be uploaded or indexed (ingest, files add). */
  files_failed: 8,
  /** No daemon serves the data dir (operator commands: daemon status/stop, config, roots, ns restore). */
  daemon_not_running: 9,
} as const;

/**
 * Why a file is `failed` (its `error.code`; docs/decisions.md, "File errors"), or why its index job
 * ended without indexing it. Beside ERROR_TABLE because these are not request errors: they never
 * set an HTTP status or an exit code, they describe one file.
 */
export const FILE_ERROR_CODES = {
  unsupported_content: 'no extractor reads the file, or its format is turned off',
  extraction_failed: 'the file is damaged, or its text could not be read within the limits',
  source_mismatch: 'the bytes do not match the declared sha256 or size',
  too_large: 'the file is over a size, page or time limit',
  fetch_failed: 'the URL or the local file could not be read',
  upload_expired: 'the signed upload URL expired before the bytes arrived',
  embedding_failed: 'the embedding provider failed',
  embedding_model_mismatch: "the collection's vectors come from another model (reindex to switch)",
  canceled: "a file never indexed, whose index job was canceled",
  superseded: 'the file changed or was deleted before its job finished (a job\'s code, not a file\'s)',
} as const;
export type FileErrorCode = keyof typeof FILE_ERROR_CODES;

/** A successful search's or answer's caveats (`warnings[].code`): what was searched differs from what was asked. */
export const WARNING_CODES = {
  interpretation_literal: 'natural-language interpretation derived no filters; the query was searched as text',
  collection_failed: 'every file in the collection failed to index',
  files_failed: 'some files failed to index and are not searched',
  indexing_in_progress: 'some files are still being indexed and are not searched yet',
} as const;
export type WarningCode = keyof typeof WARNING_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; request_id: string; retryable: boolean; details: Record<string, unknown> };
}

export class TroveError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TroveError';
    this.code = code;
    this.details = details;
    // collection_not_ready is retryable "or false when processing failed" (retrieval-api.md).
    this.retryable = options.retryable ?? ERROR_TABLE[code].retryable;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  toBody(requestId: string): ErrorBody {
    return { error: { code: this.code, message: this.message, request_id: requestId, retryable: this.retryable, details: this.details } };
  }
}

/**
 * What Node (ENOSPC, EDQUOT) and SQLite (SQLITE_FULL, which better-sqlite3 puts in `code`) say when
 * the disk holding the data dir has no room left. On a full tmpfs SQLite answers a write with
 * SQLITE_FULL and rolls the whole transaction back (measured with better-sqlite3 12).
 */
const STORAGE_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** True when `err` (or an error it wraps) says the disk is full or the owner's quota is spent. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && STORAGE_FULL_CODES.has(code)) return true;
  }
  return false;
}

/**
 * Anything thrown that is not a TroveError becomes internal_error; the cause is logged, never sent.
 * A full disk is no fault of the daemon or the request: 503 with reason insufficient_storage, which
 * a client retries once the operator has freed space (nothing of the failed request was kept).
 */
export function asTroveError(err: unknown): TroveError {
  if (err instanceof TroveError) return err;
  if (isStorageFull(err)) {
    return new TroveError('temporarily_unavailable', "The disk that holds trove's data is full; nothing of this request was kept. Retry once space has been freed.", { reason: 'insufficient_storage' }, { cause: err });
  }
  return new TroveError('internal_error', 'Unexpected server failure.', {}, { cause: err });
}

export const invalid = (message: string, details: Record<string, unknown> = {}) => new TroveError('invalid_request', message, details);
