// The start screen: namespaces and their collections with live file counts and active jobs.
// Enter searches the selected collection; r starts a research run on it; o opens a run by ID.
import { useState } from 'react';
import { Box } from 'ink';
import { useKeys } from '../keys.js';
import { LineInput } from './line-input.js';
import { Text } from './text.js';
import { collectionOrder, jobSummary, namespaceJobsKey, type CollectionsState } from '../collections-state.js';
import { fit, fitRight, truncate, wrapText } from '../format.js';
import { refKey, type CollectionRef, type ResearchMode } from '../types.js';
import { useHelpLine, visibleWindow, type ViewFrame } from './common.js';

export interface CollectionsViewProps extends ViewFrame {
  state: CollectionsState;
  loaded: boolean;
  /** Set while no daemon answers: what failed, where, and how often it is tried again. */
  down?: { url: string; message: string; retrySeconds: number };
  selected: string | undefined;
  onSelect(key: string): void;
  onSearch(ref: CollectionRef): void;
  onResearch(ref: CollectionRef, question: string, mode: ResearchMode): void;
  onOpenRun(ref: CollectionRef, runId: string): void;
  onReload(): void;
}

type Prompt = { kind: 'question'; text: string; mode: ResearchMode } | { kind: 'run'; text: string };

const RESEARCH_MODES: ResearchMode[] = ['standard', 'ultra', 'recall'];

export const STATUS_COLOURS: Record<string, string> = { ready: 'green', indexing: 'yellow', degraded: 'yellow', failed: 'red', empty: 'gray', deleting: 'gray' };

// Fixed columns after the name: status, the four counts, and the jobs summary.
const COLUMNS = { status: 9, ready: 6, indexing: 9, pending: 8, failed: 7 } as const;
const JOBS_WIDTH = 18;
/** The name keeps at least this much room; columns go, least telling first, to make it. */
const NAME_MIN = 15;
type Optional = 'jobs' | 'pending' | 'indexing' | 'ready' | 'failed';
const DROP_ORDER: readonly Optional[] = ['jobs', 'pending', 'indexing', 'ready', 'failed'];

export interface CollectionLayout {
  nameWidth: number;
  jobsWidth: number;
  shown: ReadonlySet<Optional>;
}

/**
 * Which columns a `width`-wide terminal shows. The name and status always stay; on a narrow
 * terminal the jobs summary goes first, then the pending and indexing counts (the status already
 * says "indexing"), then ready, and failed last.
 */
export function collectionLayout(width: number): CollectionLayout {
  const shown = new Set<Optional>(DROP_ORDER);
  // Marker and name gap, status, the shown counts, the gap before jobs, two columns of slack.
  const fixed = () =>
    2 + 1 + COLUMNS.status + (['ready', 'indexing', 'pending', 'failed'] as const).reduce((n, c) => n + (shown.has(c) ? COLUMNS[c] : 0), 0) + (shown.has('jobs') ? 2 + JOBS_WIDTH : 0) + 2;
  for (const column of DROP_ORDER) {
    if (width - fixed() >= NAME_MIN) break;
    shown.delete(column);
  }
  return { nameWidth: Math.max(8, width - fixed()), jobsWidth: shown.has('jobs') ? JOBS_WIDTH : 0, shown };
}

type Row = { kind: 'namespace'; name: string; jobs: string } | { kind: 'collection'; ref: CollectionRef; index: number };

function jobsText(running: number, queued: number): string {
  const parts = [running > 0 ? `${running} running` : '', queued > 0 ? `${queued} queued` : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : '—';
}

export function CollectionsView(props: CollectionsViewProps) {
  const { state, loaded, width, height } = props;
  const [prompt, setPrompt] = useState<Prompt | null>(null);
  const order = collectionOrder(state);
  const selectedIndex = Math.max(
    0,
    order.findIndex((ref) => refKey(ref) === props.selected),
  );
  const current = order[selectedIndex];

  useHelpLine(
    prompt?.kind === 'question'
      ? 'type the question · Enter start · Tab mode · Esc cancel · Ctrl-C quit'
      : prompt?.kind === 'run'
        ? 'type the run ID (rsr_…) · Enter open · Esc cancel · Ctrl-C quit'
        : '↑↓ move · Enter search · r research · o open run · g reload · q quit',
  );

  useKeys(
    (input, key) => {
      if (prompt) {
        if (key.escape) setPrompt(null);
        else if (key.tab && prompt.kind === 'question') {
          const next = RESEARCH_MODES[(RESEARCH_MODES.indexOf(prompt.mode) + (key.shift ? RESEARCH_MODES.length - 1 : 1)) % RESEARCH_MODES.length]!;
          setPrompt({ ...prompt, mode: next });
        }
        return;
      }
      if (input === 'q') props.quit();
      else if (input === 'g') props.onReload();
      else if ((key.upArrow || input === 'k') && order.length > 0) props.onSelect(refKey(order[Math.max(0, selectedIndex - 1)]!));
      else if ((key.downArrow || input === 'j') && order.length > 0) props.onSelect(refKey(order[Math.min(order.length - 1, selectedIndex + 1)]!));
      else if (key.pageUp && order.length > 0) props.onSelect(refKey(order[Math.max(0, selectedIndex - 10)]!));
      else if (key.pageDown && order.length > 0) props.onSelect(refKey(order[Math.min(order.length - 1, selectedIndex + 10)]!));
      else if (!current) return;
      else if (key.return) props.onSearch(current);
      else if (input === 'r') setPrompt({ kind: 'question', text: '', mode: 'standard' });
      else if (input === 'o') setPrompt({ kind: 'run', text: '' });
    },
  );

  const submit = (value: string) => {
    const text = value.trim();
    if (!prompt || !current || !text) return;
    setPrompt(null);
    if (prompt.kind === 'question') props.onResearch(current, text, prompt.mode);
    else props.onOpenRun(current, text);
  };

  const { nameWidth, jobsWidth, shown } = collectionLayout(width);
  const rows: Row[] = [];
  let index = 0;
  for (const ns of state.namespaces) {
    const own = jobSummary(state, namespaceJobsKey(ns.name));
    rows.push({ kind: 'namespace', name: ns.name, jobs: own.running + own.queued > 0 ? jobsText(own.running, own.queued) : '' });
    for (const c of ns.collections) rows.push({ kind: 'collection', ref: { namespace: ns.name, collection: c.name }, index: index++ });
  }

  // The prompt: a blank line, its label, then the typed text, which wraps when it is long.
  const promptLines = prompt ? 2 + Math.ceil(([...prompt.text].length + 1) / Math.max(1, width)) : 0;
  const room = Math.max(1, height - 2 - promptLines);
  const selectedRow = rows.findIndex((r) => r.kind === 'collection' && r.index === selectedIndex);
  const window = visibleWindow(rows.length, Math.max(0, selectedRow), room);

  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {fit('  COLLECTION', nameWidth + 2)}
        {fit(' STATUS', COLUMNS.status + 1)}
        {shown.has('ready') ? fitRight('READY', COLUMNS.ready) : ''}
        {shown.has('indexing') ? fitRight('INDEXING', COLUMNS.indexing) : ''}
        {shown.has('pending') ? fitRight('PENDING', COLUMNS.pending) : ''}
        {shown.has('failed') ? fitRight('FAILED', COLUMNS.failed) : ''}
        {shown.has('jobs') ? '  ' + truncate('JOBS', jobsWidth) : ''}
      </Text>
      {!loaded && rows.length === 0 && props.down ? (
        <DaemonDown {...props.down} width={width} />
      ) : !loaded && rows.length === 0 ? (
        <Text dimColor>  Loading…</Text>
      ) : rows.length === 0 ? (
        <Text dimColor wrap="truncate-end">
          {truncate('  No collections yet: `trove ingest <folder> -n <namespace> -c <collection>` makes one.', width)}
        </Text>
      ) : null}
      {rows.slice(window.start, window.end).map((row) => {
        if (row.kind === 'namespace') {
          return (
            <Text key={`ns:${row.name}`} wrap="truncate-end">
              <Text bold color="cyan">
                {truncate(row.name, Math.max(4, width - 24))}
              </Text>
              {row.jobs ? <Text dimColor>{`  namespace jobs: ${row.jobs}`}</Text> : null}
            </Text>
          );
        }
        const entry = state.namespaces.find((n) => n.name === row.ref.namespace)?.collections.find((c) => c.name === row.ref.collection);
        if (!entry) return null;
        const selected = row.index === selectedIndex;
        const counts = entry.file_counts;
        const jobs = jobSummary(state, refKey(row.ref));
        return (
          <Text key={`col:${refKey(row.ref)}`} wrap="truncate-end" inverse={selected}>
            {selected ? '▸ ' : '  '}
            {fit(entry.name, nameWidth)}
            {' '}
            <Text color={STATUS_COLOURS[entry.status] ?? 'white'}>{fit(entry.status, COLUMNS.status)}</Text>
            {shown.has('ready') ? fitRight(String(counts.ready), COLUMNS.ready) : ''}
            {shown.has('indexing') ? fitRight(String(counts.indexing), COLUMNS.indexing) : ''}
            {shown.has('pending') ? fitRight(String(counts.pending), COLUMNS.pending) : ''}
            {shown.has('failed') ? <Text color={counts.failed > 0 ? 'red' : undefined}>{fitRight(String(counts.failed), COLUMNS.failed)}</Text> : ''}
            {shown.has('jobs') ? '  ' + fit(jobsText(jobs.running, jobs.queued), jobsWidth) : ''}
          </Text>
        );
      })}
      {prompt && current ? (
        <Box flexDirection="column" marginTop={1} width={width}>
          <Text color="cyan" wrap="truncate-end">
            {truncate(
              prompt.kind === 'question' ? `Research ${refKey(current)} (${prompt.mode}): your question` : `Open run in ${refKey(current)} (or any other collection): its ID`,
              width,
            )}
          </Text>
          <LineInput value={prompt.text} onChange={(text) => setPrompt({ ...prompt, text })} onSubmit={submit} />
        </Box>
      ) : null}
    </Box>
  );
}

/** In place of "Loading…" while no daemon answers: what happened, how to start one, and that it retries. */
function DaemonDown({ url, message, retrySeconds, width }: { url: string; message: string; retrySeconds: number; width: number }) {
  const every = retrySeconds >= 1 ? `${Math.round(retrySeconds)} s` : `${Math.round(retrySeconds * 1000)} ms`;
  const lines = [
    ...wrapText(message, width - 2).map((text) => ({ text, tone: 'error' as const })),
    { text: '', tone: 'plain' as const },
    { text: 'Start one with:', tone: 'plain' as const },
    { text: '  trove daemon start', tone: 'command' as const },
    ...wrapText(`Trying ${url} again every ${every}; g tries now, q quits.`, width - 2).map((text) => ({ text, tone: 'dim' as const })),
  ];
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <Text key={i} wrap="truncate-end" color={line.tone === 'error' ? 'red' : line.tone === 'command' ? 'cyan' : undefined} bold={line.tone === 'command'} dimColor={line.tone === 'dim'}>
          {'  ' + truncate(line.text, width - 2)}
        </Text>
      ))}
    </Box>
  );
}
