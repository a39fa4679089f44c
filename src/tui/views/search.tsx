// Searching one collection: a query line, mode and unit toggles, the ranked results with their
// evidence (the query's words highlighted), and a file's details under Enter.
import { useEffect, useRef, useState } from 'react';
import { Box } from 'ink';
import { useKeys } from '../keys.js';
import { LineInput } from './line-input.js';
import { Text } from './text.js';
import type { TuiBackend } from '../backend.js';
import { fitRight, formatLocation, formatScore, truncate, truncateStart } from '../format.js';
import { queryTerms } from '../highlight.js';
import { centredSnippet } from '../../cli/snippet.js';
import { refKey, type CollectionRef, type ResultUnit, type SearchMode, type SearchResponse, type SearchResult } from '../types.js';
import { HighlightedText, useHelpLine, visibleWindow, type ViewFrame } from './common.js';
import { FileDetails } from './file-details.js';

export interface SearchViewProps extends ViewFrame {
  backend: TuiBackend;
  target: CollectionRef;
  onBack(): void;
}

const RESULT_LIMIT = 20;

interface Searched {
  query: string;
  /** The mode the API says it used (or the one asked for). */
  mode: string;
  unit: ResultUnit;
  response: SearchResponse;
}

export function SearchView(props: SearchViewProps) {
  const { backend, target, width, height } = props;
  const [query, setQuery] = useState('');
  // undefined until Tab chooses one: the API's default applies (semantic when the collection has it).
  const [mode, setMode] = useState<SearchMode | undefined>(undefined);
  const [unit, setUnit] = useState<ResultUnit>('file');
  const [focus, setFocus] = useState<'input' | 'results'>('input');
  const [searched, setSearched] = useState<Searched | null>(null);
  const [busy, setBusy] = useState(false);
  const [selected, setSelected] = useState(0);
  const [detail, setDetail] = useState<SearchResult | null>(null);
  // Only the newest search may fill the list: an older one answering late is dropped.
  const generation = useRef(0);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );

  const run = (text: string, nextMode: SearchMode | undefined, nextUnit: ResultUnit) => {
    if (!text.trim()) return;
    const mine = ++generation.current;
    setBusy(true);
    backend.search(target, { query: text, mode: nextMode, unit: nextUnit, limit: RESULT_LIMIT }).then(
      (response) => {
        if (!mounted.current || mine !== generation.current) return;
        setBusy(false);
        setSearched({ query: text, mode: response.execution?.mode ?? nextMode ?? 'default', unit: nextUnit, response });
        setSelected(0);
        props.clearError();
        if (response.results.length > 0) setFocus('results');
      },
      (err: unknown) => {
        if (!mounted.current || mine !== generation.current) return;
        setBusy(false);
        props.report(err);
      },
    );
  };

  const results = searched?.response.results ?? [];
  const toggleMode = () => {
    // From the default, Tab goes to the other mode than the one the last search used.
    const current = mode ?? searched?.mode ?? 'semantic';
    const next: SearchMode = current === 'keyword' ? 'semantic' : 'keyword';
    setMode(next);
    if (searched) run(searched.query, next, unit);
  };
  const toggleUnit = () => {
    const next: ResultUnit = unit === 'file' ? 'passage' : 'file';
    setUnit(next);
    if (searched) run(searched.query, mode, next);
  };

  useHelpLine(
    detail
      ? '↑↓ scroll · Esc back to results · q quit'
      : focus === 'input'
        ? 'type a query · Enter search · Ctrl-U clear · Tab mode · Shift-Tab unit · ↓ results · Esc back · Ctrl-C quit'
        : '↑↓ move · Enter details · / edit query · Tab mode · Shift-Tab unit · Esc back · q quit',
  );

  useKeys(
    (input, key) => {
      if (key.tab) {
        if (key.shift) toggleUnit();
        else toggleMode();
        return;
      }
      if (focus === 'input') {
        if (key.escape) props.onBack();
        else if (key.downArrow && results.length > 0) setFocus('results');
        return;
      }
      if (input === 'q') props.quit();
      else if (key.escape) props.onBack();
      else if (input === '/' || input === 'i') setFocus('input');
      else if (key.upArrow || input === 'k') {
        if (selected === 0) setFocus('input');
        else setSelected(selected - 1);
      } else if (key.downArrow || input === 'j') setSelected(Math.min(results.length - 1, selected + 1));
      else if (key.pageUp) setSelected(Math.max(0, selected - 5));
      else if (key.pageDown) setSelected(Math.min(results.length - 1, selected + 5));
      else if (key.return && results[selected]) setDetail(results[selected]!);
    },
    { isActive: detail === null },
  );

  const terms = searched ? queryTerms(searched.query) : [];

  if (detail) {
    return <FileDetails {...props} result={detail} terms={terms} onClose={() => setDetail(null)} />;
  }

  const summary = busy
    ? 'Searching…'
    : searched
      ? `${results.length === 0 ? 'No results' : `${results.length} result${results.length === 1 ? '' : 's'}`} for “${truncate(searched.query, 30)}” (${searched.mode}, ${searched.unit})` +
        (searched.response.timing_ms ? ` · ${searched.response.timing_ms.total} ms` : '') +
        (searched.response.warnings.length > 0 ? ` · ${searched.response.warnings.map((w) => w.code).join(', ')}` : '')
      : 'Type a query and press Enter.';

  // Each result takes two lines: its header and its best evidence.
  // The query wraps when it is longer than a line; the results get what is left.
  const queryLines = Math.ceil(([...query].length + 9) / Math.max(1, width));
  const room = Math.max(1, Math.floor((height - 2 - queryLines) / 2));
  const window = visibleWindow(results.length, selected, room);
  const scoreWidth = 9;
  const pathWidth = Math.max(8, width - 6 - scoreWidth - 1);

  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold>{truncate(`Search ${refKey(target)}`, Math.max(10, width - 36))}</Text>
        <Text>{'  mode '}</Text>
        <Text color="cyan">{mode ?? 'default'}</Text>
        <Text>{'  unit '}</Text>
        <Text color="cyan">{unit}</Text>
      </Text>
      <Box width={width}>
        <Box flexShrink={0} width={8}>
          <Text color={focus === 'input' ? 'green' : 'gray'}>{'Query ›'}</Text>
        </Box>
        <LineInput value={query} onChange={setQuery} onSubmit={(value) => run(value, mode, unit)} focus={focus === 'input'} showCursor={focus === 'input'} />
      </Box>
      <Text dimColor wrap="truncate-end">
        {truncate(summary, width)}
      </Text>
      {results.slice(window.start, window.end).map((result, offset) => {
        const index = window.start + offset;
        const isSelected = focus === 'results' && index === selected;
        const evidence = result.evidence[0];
        const where = evidence ? formatLocation(evidence) : '';
        const textWidth = Math.max(8, width - 6 - where.length - 2);
        // Centred on the matched words, as the CLI shows it (src/cli/snippet.ts).
        const text = evidence ? centredSnippet(evidence.text, terms, textWidth).map((s) => s.text).join('') : '';
        return (
          <Box key={`${result.file_id}:${index}`} flexDirection="column">
            <Text wrap="truncate-end" inverse={isSelected}>
              {isSelected ? '▸' : ' '}
              {fitRight(`${result.rank}.`, 4)}{' '}
              <Text bold>{truncateStart(result.path, pathWidth)}</Text>
              {' '.repeat(Math.max(1, pathWidth - [...truncateStart(result.path, pathWidth)].length + 1))}
              <Text dimColor={!isSelected}>{fitRight(formatScore(result.score), scoreWidth)}</Text>
            </Text>
            <Text wrap="truncate-end">
              {'      '}
              {where ? <Text dimColor>{where + '  '}</Text> : null}
              <HighlightedText text={text} terms={terms} />
            </Text>
          </Box>
        );
      })}
    </Box>
  );
}
