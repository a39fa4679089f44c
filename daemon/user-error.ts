// A start-up error the user caused and can fix: a bad flag, variable or config file, an unreadable
// seed or TLS file, a port or data dir another daemon holds. `trove daemon start` prints its
// message alone; any other error is unexpected, and its stack goes to the daemon's log.
export class UserError extends Error {
  constructor(
    message: string,
    /** The CLI's exit code for it (docs/tour.md, exit codes): 1 unless the error says otherwise. */
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UserError';
  }
}
