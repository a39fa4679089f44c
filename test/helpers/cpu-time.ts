// A guard against a pathological slowdown (a quadratic loop, a backtracking regex) counts the CPU
// time this process spent, not wall time: on a machine whose cores another process keeps busy, wall
// time stretches with the load while CPU time barely moves.

/** Runs `work` and returns its result with the CPU time (user + system, all threads of this process) it took, in ms. */
export async function withCpuTime<T>(work: () => T | Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await work();
  const spent = process.cpuUsage(before);
  return { value, cpuMs: (spent.user + spent.system) / 1000 };
}
