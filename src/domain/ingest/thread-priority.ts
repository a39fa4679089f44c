// Background work yields the CPU to requests: the indexing worker lowers its own thread's scheduling
// priority, so that on a machine with fewer cores than busy threads a search or /health that wants
// the CPU gets it ahead of extraction and index writes (issue 15: search p95 under ingest).
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** How much nicer than the process the indexing thread runs (Linux nice steps; 19 is the floor). */
export const BACKGROUND_NICE_STEPS = 10;

/**
 * Lowers the calling thread's priority by `steps` nice levels, not the process's: on Linux a thread
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
    const nice = Math.min(19, getPriority(tid) + steps);
    setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return null;
  }
}
