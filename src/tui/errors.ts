// What the red status line says about a failure: the API's code, message and request id, or the
// CLI's own message (daemon down), with a hint for the failures a user can fix from here.
import { TRPCClientError } from '@trpc/client';
import { CliApiError, CliError } from '../cli/client.js';
import { describeOperatorError, OperatorUnavailableError } from '../rpc/client.js';

export function describeError(err: unknown): string {
  if (err instanceof CliApiError) {
    const request = err.requestId ? ` (request ${err.requestId})` : '';
    const hint = err.status === 401 ? ' Check --key / TROVE_KEY.' : err.status === 403 ? ' This key may not do that.' : '';
    // The hint before the request ID: a narrow terminal cuts the end of the line first.
    return `${err.code}: ${err.message}${hint}${request}`;
  }
  if (err instanceof CliError) return err.message;
  if (err instanceof TRPCClientError || err instanceof OperatorUnavailableError) {
    const failure = describeOperatorError(err);
    return failure.code === 'operator_error' || failure.code === 'daemon_not_running' ? failure.message : `${failure.code}: ${failure.message}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** A failure that retrying the same request will not fix (a bad key, a forbidden stream). */
export function isPermanent(err: unknown): boolean {
  return err instanceof CliApiError && (err.status === 401 || err.status === 403);
}
