// Lets request handlers nudge the running dispatcher (after a replay or re-enable) without importing it.
import type { Services } from '../context.js';

const wakers = new WeakMap<Services, () => void>();

export function registerWaker(s: Services, wake: (() => void) | undefined): void {
  if (wake) wakers.set(s, wake);
  else wakers.delete(s);
}

export function wakeDispatcher(s: Services): void {
  wakers.get(s)?.();
}
