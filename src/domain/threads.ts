/**
 * Node flags for our worker threads: the embedding process's own, minus those that describe how
 * *it* was started (`node --input-type=module -e …`), which a worker module must not inherit.
 */
export function workerExecArgv(): string[] {
  return process.execArgv.filter((arg) => !arg.startsWith('--input-type') && arg !== '-e' && arg !== '--eval');
}
