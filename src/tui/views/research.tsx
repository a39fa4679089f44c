// Watching a research run: its stages as research.progress events arrive, then the answer with its
// [[SRC:nnnn]] markers as footnote numbers and the sources under it.
import { useEffect, useState } from 'react';
import { Box } from 'ink';
import { useKeys } from '../keys.js';
import { Text } from './text.js';
import type { TuiBackend } from '../backend.js';
import { footnoteSegments, renderFootnotes } from '../footnotes.js';
import { truncate, wrapText } from '../format.js';
import { isFinished, researchStages, type StageState } from '../research-state.js';
import { refKey, type CollectionRef, type ResearchRun } from '../types.js';
import { useHelpLine, type ViewFrame } from './common.js';

export interface ResearchViewProps extends ViewFrame {
  backend: TuiBackend;
  target: CollectionRef;
  runId: string;
  /** The question, when this session started the run (the run resource does not repeat it). */
  question?: string | undefined;
  run: ResearchRun | undefined;
  onRun(run: ResearchRun): void;
  onBack(): void;
}

type Line = { text: string; tone?: 'title' | 'label' | 'dim' | 'error' | 'answer' | StageState };

const STAGE_MARKS: Record<StageState, string> = { done: '✓', active: '▸', failed: '✗', pending: '·' };
const STATUS_COLOURS: Record<string, string> = { queued: 'gray', running: 'yellow', succeeded: 'green', failed: 'red', canceled: 'gray' };

export function researchLines(run: ResearchRun | undefined, question: string | undefined, width: number): Line[] {
  const lines: Line[] = [];
  if (question) for (const line of wrapText(`Q: ${question}`, width)) lines.push({ text: line, tone: 'label' });
  if (!run) {
    lines.push({ text: 'Loading the run…', tone: 'dim' });
    return lines;
  }
  for (const stage of researchStages(run)) {
    lines.push({ text: truncate(`${STAGE_MARKS[stage.state]} ${stage.step}/${stage.total} ${stage.label}`, width), tone: stage.state });
  }
  if (run.error) lines.push({ text: '' }, ...wrapText(`${run.error.code}: ${run.error.message}`, width).map((text) => ({ text, tone: 'error' as const })));
  if (run.answer !== null) {
    const rendered = renderFootnotes(run.answer, run.sources);
    lines.push({ text: '' }, { text: 'Answer', tone: 'title' });
    for (const line of wrapText(rendered.text, width)) lines.push({ text: line, tone: 'answer' });
    if (rendered.sources.length > 0) {
      lines.push({ text: '' }, { text: 'Sources', tone: 'title' });
      for (const source of rendered.sources) {
        const mark = source.number === null ? '–' : `[${source.number}]`;
        const tail = source.number === null ? (source.cited ? ' (cited)' : ' (not cited)') : '';
        lines.push({ text: truncate(`${mark.padStart(4)} ${source.path}${tail}`, width), tone: source.number === null ? 'dim' : undefined });
      }
    }
  } else if (!isFinished(run)) {
    lines.push({ text: '' }, { text: 'The answer appears here when the run finishes.', tone: 'dim' });
  }
  return lines;
}

export function ResearchView(props: ResearchViewProps) {
  const { backend, target, runId, run, width, height } = props;
  const [scroll, setScroll] = useState(0);

  useEffect(() => {
    let live = true;
    backend.getResearch(target, runId).then(
      (loaded) => {
        if (live) props.onRun(loaded);
      },
      (err: unknown) => {
        if (live) props.report(err);
      },
    );
    return () => {
      live = false;
    };
    // Fetched once per run shown; later states come from research.* events.
  }, [backend, target, runId]);

  const lines = researchLines(run, props.question, width);
  const room = Math.max(1, height - 1);
  const maxScroll = Math.max(0, lines.length - room);

  useHelpLine('↑↓ scroll · Esc back · q quit');
  useKeys((input, key) => {
    if (input === 'q') props.quit();
    else if (key.escape) props.onBack();
    else if (key.upArrow || input === 'k') setScroll(Math.max(0, scroll - 1));
    else if (key.downArrow || input === 'j') setScroll(Math.min(maxScroll, scroll + 1));
    else if (key.pageUp) setScroll(Math.max(0, scroll - room));
    else if (key.pageDown) setScroll(Math.min(maxScroll, scroll + room));
  });

  const start = Math.min(scroll, maxScroll);
  const status = run?.status ?? 'loading';
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold>{truncate(`Research ${refKey(target)} · ${runId}`, Math.max(10, width - 28))}</Text>
        {run ? <Text>{`  ${run.mode}  `}</Text> : null}
        <Text color={STATUS_COLOURS[status] ?? 'white'}>{status}</Text>
      </Text>
      {lines.slice(start, start + room).map((line, i) => (
        <ResearchLine key={start + i} line={line} />
      ))}
    </Box>
  );
}

function ResearchLine({ line }: { line: Line }) {
  if (line.tone === 'answer') {
    return (
      <Text wrap="truncate-end">
        {footnoteSegments(line.text).map((part, i) =>
          part.footnote ? (
            <Text key={i} color="cyan" bold>
              {part.text}
            </Text>
          ) : (
            <Text key={i}>{part.text}</Text>
          ),
        )}
      </Text>
    );
  }
  const colour =
    line.tone === 'error' || line.tone === 'failed' ? 'red' : line.tone === 'done' ? 'green' : line.tone === 'active' ? 'yellow' : line.tone === 'title' ? 'cyan' : undefined;
  return (
    <Text wrap="truncate-end" color={colour} bold={line.tone === 'title' || line.tone === 'label'} dimColor={line.tone === 'dim' || line.tone === 'pending'}>
      {line.text || ' '}
    </Text>
  );
}
