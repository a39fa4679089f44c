// How the operator commands (daemon status/stop, config, roots, ns restore) reach the daemon: the
// operator channel of the data dir (--data-dir / TROVE_DATA_DIR / default), not the HTTP API, so
// they need no key. Its failures become the CLI's errors: a trove error code prints and exits by
// ERROR_TABLE; no daemon for the data dir exits NO_DAEMON_EXIT_CODE.
import type { OperatorConnection, OperatorFailure } from '../../rpc/client.js';
import { CliApiError, CliError } from '../client.js';
import { resolveDataDir, type GlobalOptions } from '../connection.js';

function asCliError(err: unknown, describe: (err: unknown) => OperatorFailure): CliError | CliApiError {
  if (err instanceof CliError || err instanceof CliApiError) return err;
  const failure = describe(err);
  if (failure.status !== null) return new CliApiError(failure.code, failure.message, null, failure.status, failure.retryable, failure.details);
  return new CliError(failure.message, failure.exitCode, failure.code);
}

/** Runs `work` with a connection to the data dir's daemon, closed afterwards. */
export async function withOperator<T>(globalOpts: GlobalOptions, work: (operator: OperatorConnection) => Promise<T>): Promise<T> {
  const dataDir = resolveDataDir(globalOpts);
  // The tRPC client loads only for the commands that use it (CLI start-up stays quick).
  const { connectOperator, describeOperatorError } = await import('../../rpc/client.js');
  let operator: OperatorConnection;
  try {
    operator = connectOperator(dataDir);
  } catch (err) {
    throw asCliError(err, describeOperatorError);
  }
  try {
    return await work(operator);
  } catch (err) {
    throw asCliError(err, describeOperatorError);
  } finally {
    operator.close();
  }
}
