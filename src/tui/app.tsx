// The TUI's root: loads the collections once, keeps them live from the event stream (re-fetching
// only the collection an event names), routes between the views, and owns the header, the red
// status line and the key help line. A failed request never ends the app: it is shown and kept.
import { Component, useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { Box, useApp } from 'ink';
import { ColourContext, Text } from './views/text.js';
import type { TuiBackend } from './backend.js';
import { applyCollection, applyEvent, collectionOrder, emptyCollectionsState, loadedState, type CollectionsState } from './collections-state.js';
import { CliApiError, CliError } from '../cli/client.js';
import { colourEnabled } from '../cli/colour.js';
import { KeyRouterProvider, useKeyRouter, useKeys } from './keys.js';
import { describeError } from './errors.js';
import { truncate } from './format.js';
import { newerRun, runFromEvent } from './research-state.js';
import { refKey, type ChannelState, type CollectionRef, type ResearchMode, type ResearchRun, type TroveEvent } from './types.js';
import { CollectionsView } from './views/collections.js';
import { HelpContext, MIN_COLUMNS, MIN_ROWS, useTerminalSize } from './views/common.js';
import { ResearchView } from './views/research.js';
import { SearchView } from './views/search.js';

export interface AppProps {
  backend: TuiBackend;
  /** How long events about one collection are gathered before it is re-fetched once. */
  refetchDelayMs?: number;
  /** A collection to open the search view on at start (the CLI's saved default, `trove init`). */
  initial?: CollectionRef;
  /** While the daemon cannot be reached, how long between attempts to load the lists again. */
  retryDelayMs?: number;
  /** Colour or not; by default from the environment (NO_COLOR, FORCE_COLOR=0; src/cli/colour.ts). */
  colour?: boolean;
}

type View = { kind: 'collections' } | { kind: 'search'; target: CollectionRef } | { kind: 'research'; target: CollectionRef; runId: string; question?: string };

type Status = { tone: 'error' | 'info'; text: string; fromStream: boolean } | null;

const DEFAULT_REFETCH_DELAY_MS = 150;
const DEFAULT_RETRY_DELAY_MS = 2000;

/** The daemon is not there (refused, unreachable, timed out), as opposed to an answer saying no. */
function isDaemonDown(err: unknown): boolean {
  return err instanceof CliError && err.code === 'daemon_unreachable';
}

function channelText(channel: ChannelState | null): { text: string; colour: string } {
  if (!channel) return { text: 'live: connecting…', colour: 'gray' };
  const name = channel.channel === 'operator' ? 'operator socket' : 'SSE /events';
  const note = channel.note ? ` (${channel.note})` : '';
  if (channel.connected) return { text: `live: ${name}${note}`, colour: 'green' };
  return channel.stopped ? { text: `live: ${name} stopped${note}`, colour: 'red' } : { text: `live: ${name} disconnected, retrying${note}`, colour: 'yellow' };
}

export function App({ backend, refetchDelayMs = DEFAULT_REFETCH_DELAY_MS, initial, retryDelayMs = DEFAULT_RETRY_DELAY_MS, colour: colourProp }: AppProps) {
  const { exit } = useApp();
  const keyListeners = useKeyRouter();
  // The TUI always draws on a terminal: only the user's settings can turn colour off.
  const [colour] = useState(() => colourProp ?? colourEnabled({ env: process.env, isTTY: true }));
  // Set while the first load finds no daemon: the view says how to start one, and loads retry.
  // `attempt` makes each failed retry a new state, so the retry effect below runs again.
  const [down, setDown] = useState<{ message: string; attempt: number } | null>(null);
  const { columns, rows } = useTerminalSize();
  const [collections, setCollections] = useState<CollectionsState>(emptyCollectionsState);
  const [loaded, setLoaded] = useState(false);
  const [view, setView] = useState<View>(initial ? { kind: 'search', target: initial } : { kind: 'collections' });
  // Esc from the initial search lands on its collection in the list.
  const [selected, setSelected] = useState<string | undefined>(initial ? refKey(initial) : undefined);
  const [runs, setRuns] = useState<Record<string, ResearchRun>>({});
  const [status, setStatus] = useState<Status>(null);
  const [channel, setChannel] = useState<ChannelState | null>(null);
  const [help, setHelp] = useState('');

  // The event handlers run outside React's render: they read and write the latest state here.
  const state = useRef<CollectionsState>(emptyCollectionsState);
  const loading = useRef<TroveEvent[] | null>(null);
  const timers = useRef(new Map<string, NodeJS.Timeout>());
  const fetchSeq = useRef(new Map<string, number>());
  // How many times the event stream has connected, and that count when the latest load began.
  const connects = useRef(0);
  const loadStartedAtConnect = useRef<number | null>(null);
  const mounted = useRef(true);
  const loadedRef = useRef(false);
  loadedRef.current = loaded;

  const commit = useCallback((next: CollectionsState) => {
    state.current = next;
    setCollections(next);
  }, []);

  const report = useCallback((err: unknown) => {
    if (mounted.current) setStatus({ tone: 'error', text: describeError(err), fromStream: false });
  }, []);
  const clearError = useCallback(() => setStatus((s) => (s?.tone === 'error' && !s.fromStream ? null : s)), []);
  const inform = useCallback((text: string) => setStatus({ tone: 'info', text, fromStream: false }), []);
  const quit = useCallback(() => exit(), [exit]);

  const refetch = useCallback(
    (ref: CollectionRef) => {
      const key = refKey(ref);
      // Events about one collection come in bursts (a file's statuses, its job, the collection):
      // the first starts a short wait, the rest join it, and one GET follows.
      if (timers.current.has(key)) return;
      timers.current.set(
        key,
        setTimeout(() => {
          timers.current.delete(key);
          const mine = (fetchSeq.current.get(key) ?? 0) + 1;
          fetchSeq.current.set(key, mine);
          backend.getCollection(ref).then(
            (collection) => {
              if (!mounted.current || fetchSeq.current.get(key) !== mine) return;
              commit(applyCollection(state.current, ref, collection));
            },
            (err: unknown) => report(err),
          );
        }, refetchDelayMs),
      );
    },
    [backend, commit, refetchDelayMs, report],
  );

  const load = useCallback(async () => {
    const buffered: TroveEvent[] = [];
    loading.current = buffered;
    try {
      const namespaces = await backend.listNamespaces();
      const detailed = await Promise.all(
        namespaces.map(async (namespace) => {
          const [collections, jobs] = await Promise.all([backend.listCollections(namespace.name), backend.listActiveJobs(namespace.name)]);
          return { namespace, collections, jobs };
        }),
      );
      if (!mounted.current) return;
      // Events that arrived while the lists were read are newer than some of what they returned.
      let next = loadedState(detailed);
      for (const event of buffered) {
        const applied = applyEvent(next, event);
        next = applied.state;
        if (applied.refetch) refetch(applied.refetch);
      }
      commit(next);
      setLoaded(true);
      setDown(null);
      setStatus((s) => (s?.tone === 'error' && !s.fromStream ? null : s));
    } catch (err) {
      // Nothing on screen yet and no daemon: the collections view explains instead of "Loading…".
      if (isDaemonDown(err) && !loadedRef.current) {
        if (mounted.current) setDown((d) => ({ message: describeError(err), attempt: (d?.attempt ?? 0) + 1 }));
      } else report(err);
    } finally {
      if (loading.current === buffered) loading.current = null;
    }
  }, [backend, commit, refetch, report]);

  const onEvent = useCallback(
    (event: TroveEvent) => {
      if (!mounted.current) return;
      loading.current?.push(event);
      const applied = applyEvent(state.current, event);
      if (applied.state !== state.current) commit(applied.state);
      if (applied.refetch) refetch(applied.refetch);
      const run = runFromEvent(event);
      if (run) setRuns((all) => ({ ...all, [run.id]: newerRun(all[run.id], run) }));
    },
    [commit, refetch],
  );

  useEffect(() => {
    mounted.current = true;
    // A stream that starts "from now" misses what happened before it started, and a load that read
    // before the stream started may be older than the first event: so the lists are read once more
    // after each connection, unless a load already began after it. Loading at once as well puts
    // something on screen without waiting for the stream.
    const startLoad = () => {
      loadStartedAtConnect.current = connects.current;
      void load();
    };
    const unsubscribe = backend.subscribe(
      onEvent,
      (err) => {
        if (mounted.current) setStatus({ tone: 'error', text: `live events: ${describeError(err)}`, fromStream: true });
      },
      (next) => {
        if (!mounted.current) return;
        setChannel(next);
        if (!next.connected) return;
        setStatus((s) => (s?.fromStream ? null : s));
        connects.current++;
        if (loadStartedAtConnect.current === null || loadStartedAtConnect.current < connects.current) startLoad();
      },
    );
    if (loadStartedAtConnect.current === null) startLoad();
    const pending = timers.current;
    return () => {
      mounted.current = false;
      unsubscribe();
      for (const timer of pending.values()) clearTimeout(timer);
      pending.clear();
    };
  }, [backend, load, onEvent]);

  // While the daemon is down, try again every retryDelayMs until a load works (g retries at once).
  useEffect(() => {
    if (down === null) return;
    const timer = setTimeout(() => void load(), retryDelayMs);
    return () => clearTimeout(timer);
  }, [down, load, retryDelayMs]);

  const mergeRun = useCallback((run: ResearchRun) => setRuns((all) => ({ ...all, [run.id]: newerRun(all[run.id], run) })), []);

  const startResearch = useCallback(
    (target: CollectionRef, question: string, mode: ResearchMode) => {
      inform(`Starting a ${mode} research run on ${refKey(target)}…`);
      backend.startResearch(target, question, mode).then(
        (run) => {
          if (!mounted.current) return;
          mergeRun(run);
          setStatus(null);
          setView({ kind: 'research', target, runId: run.id, question });
        },
        (err: unknown) => report(err),
      );
    },
    [backend, inform, mergeRun, report],
  );

  const openRun = useCallback(
    async (target: CollectionRef, runId: string) => {
      // A run lives under its collection: look in the selected one first, then in the others.
      const candidates = [target, ...collectionOrder(state.current).filter((ref) => refKey(ref) !== refKey(target))];
      inform(`Looking for run ${runId}…`);
      for (const ref of candidates) {
        try {
          const run = await backend.getResearch(ref, runId);
          if (!mounted.current) return;
          mergeRun(run);
          setStatus(null);
          setView({ kind: 'research', target: { namespace: run.namespace, collection: run.collection }, runId: run.id });
          return;
        } catch (err) {
          if (err instanceof CliApiError && (err.status === 404 || err.status === 400)) continue;
          report(err);
          return;
        }
      }
      report(new Error(`No research run '${runId}' in any collection this key can see.`));
    },
    [backend, inform, mergeRun, report],
  );

  const back = useCallback(() => {
    clearError();
    setView({ kind: 'collections' });
  }, [clearError]);

  // One column is left free: a line exactly as wide as the terminal makes some of them wrap.
  const width = Math.max(10, columns - 1);
  // Header, status and help take three lines; one more stays free so Ink never has to clear the
  // screen for a frame as tall as the terminal.
  const bodyHeight = Math.max(1, rows - 4);

  // Key routing and the colour decision reach every view, whatever the app draws.
  const provide = (node: ReactNode) => (
    <KeyRouterProvider value={keyListeners}>
      <ColourContext.Provider value={colour}>{node}</ColourContext.Provider>
    </KeyRouterProvider>
  );

  if (columns < MIN_COLUMNS || rows < MIN_ROWS) return provide(<TooSmall columns={columns} rows={rows} quit={quit} />);

  const frame = { width, height: bodyHeight, report, clearError, quit };
  const first = collectionOrder(collections)[0];
  const viewKey = view.kind === 'research' ? `research:${view.runId}` : view.kind === 'search' ? `search:${refKey(view.target)}` : 'collections';
  const body =
    view.kind === 'collections' ? (
      <CollectionsView
        {...frame}
        state={collections}
        loaded={loaded}
        down={down === null ? undefined : { url: backend.url, message: down.message, retrySeconds: retryDelayMs / 1000 }}
        selected={selected ?? (first ? refKey(first) : undefined)}
        onSelect={setSelected}
        onSearch={(target) => {
          clearError();
          setSelected(refKey(target));
          setView({ kind: 'search', target });
        }}
        onResearch={startResearch}
        onOpenRun={(target, runId) => void openRun(target, runId)}
        onReload={() => {
          inform('Reloading…');
          void load().then(() => setStatus((s) => (s?.tone === 'info' ? null : s)));
        }}
      />
    ) : view.kind === 'search' ? (
      <SearchView {...frame} backend={backend} target={view.target} onBack={back} />
    ) : (
      <ResearchView {...frame} backend={backend} target={view.target} runId={view.runId} question={view.question} run={runs[view.runId]} onRun={mergeRun} onBack={back} />
    );
  const live = channelText(channel);
  const header = truncate(`trove · ${backend.url}`, Math.max(10, width - live.text.length - 2));

  return provide(
    <HelpContext.Provider value={setHelp}>
      <Box flexDirection="column">
        <Text wrap="truncate-end">
          <Text bold color="cyan">
            {header}
          </Text>
          <Text>{'  '}</Text>
          <Text color={live.colour}>{truncate(live.text, Math.max(0, width - [...header].length - 2))}</Text>
        </Text>
        <Box flexDirection="column" height={bodyHeight} overflow="hidden">
          <ViewBoundary key={viewKey} onBack={back} quit={quit} width={width}>
            {body}
          </ViewBoundary>
        </Box>
        <Text wrap="truncate-end" color={status?.tone === 'error' ? 'red' : 'gray'}>
          {status ? truncate(`${status.tone === 'error' ? '✗ ' : ''}${status.text}`, width) : ' '}
        </Text>
        <Text wrap="truncate-end" dimColor>
          {truncate(help, width) || ' '}
        </Text>
      </Box>
    </HelpContext.Provider>,
  );
}

function TooSmall({ columns, rows, quit }: { columns: number; rows: number; quit(): void }) {
  useKeys((input) => {
    if (input === 'q') quit();
  });
  return <Text color="yellow">{truncate(`Terminal too small (${columns}x${rows}); trove tui needs ${MIN_COLUMNS}x${MIN_ROWS}. q quits.`, Math.max(10, columns - 1))}</Text>;
}

/**
 * A view that throws while drawing (a response of a shape it did not expect) is replaced by a red
 * line instead of ending the app; Esc goes back to the collections.
 */
class ViewBoundary extends Component<{ children: ReactNode; onBack(): void; quit(): void; width: number }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: unknown): { error: Error } {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return <ViewFailed message={this.state.error.message} onBack={this.props.onBack} quit={this.props.quit} width={this.props.width} />;
  }
}

function ViewFailed({ message, onBack, quit, width }: { message: string; onBack(): void; quit(): void; width: number }) {
  useKeys((input, key) => {
    if (key.escape) onBack();
    else if (input === 'q') quit();
  });
  return <Text color="red">{truncate(`✗ This view failed: ${message}. Esc goes back, q quits.`, width)}</Text>;
}
