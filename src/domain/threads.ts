// Our worker threads: how they are started and how they share the CPU.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Node flags for our worker threads: the embedding process's own, minus those that describe how
 * *it* was started (`node --input-type=module -e …`), which a worker module must not inherit.
 */
export function workerExecArgv(): string[] {
  return process.execArgv.filter((arg) => !arg.startsWith('--input-type') && arg !== '-e' && arg !== '--eval');
}

// Background work yields the CPU to requests: the indexing worker lowers its own thread's scheduling
// priority, so that on a machine with fewer cores than busy threads a search or /health that wants
// the CPU gets it ahead of extraction and index writes (issue 15: search p95 under ingest).

/** How much nicer than the process the indexing thread runs (Linux nice steps; 19 is the floor). */
export const BACKGROUND_NICE_STEPS = 10;

/**
 * Sets the calling thread's priority `steps` nice levels below the process's, not the process's own: on Linux a thread
 * has its own nice value, set through its thread id, which `/proc/thread-self` names. Elsewhere (no
 * per-thread nice through this path) it does nothing. Returns the thread's new nice value, or null
 * when nothing changed. Lowering one's own priority needs no privilege, so failure is unexpected
 * and harmless: the thread keeps the process's priority.
 */
export function lowerThisThreadPriority(steps = BACKGROUND_NICE_STEPS): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    // The main thread's id is the process id: renicing it would slow the whole daemon.
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return null;
    // From the process's priority, not the thread's: a thread started by a lowered thread inherits its nice value.
    const nice = Math.min(19, getPriority(process.pid) + steps);
    setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return null;
  }
}
