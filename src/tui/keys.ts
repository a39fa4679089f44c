// Several keys in one read. A terminal delivers whatever arrived since the last read as one chunk:
// pasted text, or fast typing such as "abc\r", comes as a single string. Ink hands each chunk to
// every useInput handler as one "key", so "abc\r" was typed into the query as four characters
// including the carriage return, and "jj" in a list moved nowhere. Here each chunk is cut into
// keys, and the keys are handled one at a time, each seeing what the previous one did.
import { createContext, useCallback, useContext, useLayoutEffect, useState } from 'react';
import { useApp, useInput, useStdin, type Key } from 'ink';

// An escape sequence: CSI (ESC [ params final), SS3 (ESC O x), or ESC + one character (meta),
// optionally after a second ESC (meta + arrow). Anything else is one key per code point.
const ESCAPE_SEQUENCE = /^\u001B{1,2}(?:\[\[[A-E]|\[[0-9;?<=>]*[\u0040-\u007E]|O[\s\S])/;

/** `data` cut into the keys it holds, in order; escape sequences stay whole. */
export function splitKeys(data: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < data.length) {
    if (data[i] === '\u001B') {
      const sequence = ESCAPE_SEQUENCE.exec(data.slice(i));
      if (sequence) {
        keys.push(sequence[0]);
        i += sequence[0].length;
        continue;
      }
      // ESC followed by a plain character is Alt+character; a lone ESC is Escape.
      const next = data.codePointAt(i + 1);
      const width = next === undefined ? 1 : 1 + (next > 0xffff ? 2 : 1);
      keys.push(data.slice(i, i + width));
      i += width;
      continue;
    }
    // \r\n from a paste is one Enter, not two.
    if (data[i] === '\r' && data[i + 1] === '\n') {
      keys.push('\r');
      i += 2;
      continue;
    }
    const code = data.codePointAt(i)!;
    const width = code > 0xffff ? 2 : 1;
    keys.push(data.slice(i, i + width));
    i += width;
  }
  return keys;
}

type Emitter = { emit(event: string | symbol, ...args: unknown[]): boolean };
type Handler = (input: string, key: Key) => void;
interface Listener {
  handler: Handler;
  isActive: boolean;
  mounted: boolean;
}

/** Where the views' key handlers are listed, in the order they mounted. */
const RouterContext = createContext<Listener[] | null>(null);
export const KeyRouterProvider = RouterContext.Provider;

/**
 * The app's key routing, installed once at its root. Ink hands every chunk to each useInput as one
 * key, and re-subscribes a handler only in a passive effect after a render, so a key that follows
 * another within a turn reaches handlers holding the state from before it. Here instead:
 * - each chunk is cut into keys (splitKeys), handed to Ink's parser one at a time, in order;
 * - one Ink useInput, subscribed once, passes each parsed key to the views' handlers (useKeys),
 *   which are refreshed as they render and registered in layout effects, so synchronously: a key
 *   sees the state the previous key left, and a field that key opened.
 * Returns the list the provider hands to useKeys.
 */
export function useKeyRouter(): Listener[] {
  const [listeners] = useState<Listener[]>(() => []);
  const { internal_eventEmitter: events, internal_exitOnCtrlC: exitOnCtrlC } = useStdin() as unknown as { internal_eventEmitter?: Emitter; internal_exitOnCtrlC?: boolean };
  const { exit } = useApp();
  useLayoutEffect(() => {
    if (!events) return;
    const original = events.emit;
    events.emit = function (event: string | symbol, ...args: unknown[]): boolean {
      if (event !== 'input' || typeof args[0] !== 'string') return original.call(this, event, ...args);
      const keys = splitKeys(args[0]);
      for (const key of keys) {
        // Ink quits on a read that is exactly Ctrl-C; one inside a longer read quits here.
        if (key === '\u0003' && keys.length > 1 && exitOnCtrlC) {
          exit();
          return true;
        }
        // Each key is handled and rendered (Ink renders synchronously, in legacy mode) before the next.
        original.call(this, event, key);
      }
      return true;
    };
    return () => {
      events.emit = original;
    };
  }, [events, exit, exitOnCtrlC]);
  useInput(
    useCallback(
      (input: string, key: Key) => {
        // A copy: a handler may mount or unmount views (and so listeners) while the key is handled.
        for (const listener of [...listeners]) if (listener.mounted && listener.isActive) listener.handler(input, key);
      },
      [listeners],
    ),
  );
  return listeners;
}

/** Ink's useInput, through the app's key router: same arguments, but never a stale handler. */
export function useKeys(handler: Handler, options: { isActive?: boolean } = {}): void {
  const listeners = useContext(RouterContext);
  const [listener] = useState<Listener>(() => ({ handler, isActive: options.isActive !== false, mounted: false }));
  // Refreshed during render on purpose: the next key must see this render's state and props.
  listener.handler = handler;
  listener.isActive = options.isActive !== false;
  useLayoutEffect(() => {
    if (!listeners) return;
    listener.mounted = true;
    listeners.push(listener);
    return () => {
      listener.mounted = false;
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    };
  }, [listeners, listener]);
  // Outside an app with a router (a view rendered on its own), Ink's own hook does the work.
  useInput(handler, { isActive: listeners === null && options.isActive !== false });
}
