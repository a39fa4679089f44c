// One search result's file: path, content type, status, size, metadata, and every piece of its
// evidence with where it sits, the query's words highlighted.
import { useEffect, useState } from 'react';
import { Box } from 'ink';
import { useKeys } from '../keys.js';
import { Text } from './text.js';
import type { TuiBackend } from '../backend.js';
import { formatBytes, formatLocation, formatScore, formatValue, truncate, wrapText } from '../format.js';
import type { CollectionRef, FileItem, SearchResult } from '../types.js';
import { HighlightedLine, useHelpLine, type ViewFrame } from './common.js';

export interface FileDetailsProps extends ViewFrame {
  backend: TuiBackend;
  target: CollectionRef;
  result: SearchResult;
  terms: readonly string[];
  onClose(): void;
}

type Line = { text: string; tone?: 'title' | 'label' | 'dim' | 'error'; highlight?: boolean };

/** The details as plain lines of at most `width` characters, so the view can scroll them. */
export function detailLines(result: SearchResult, file: FileItem | null, width: number, loading: boolean): Line[] {
  // Paths, URIs, errors and notes wrap rather than being cut: their ends (a file name, a query string)
  // are what tells two of them apart, and a cut URI can be neither read nor copied.
  const wrapped = (text: string, tone?: Line['tone']): Line[] => wrapText(text, width).map((line) => (tone ? { text: line, tone } : { text: line }));
  const lines: Line[] = wrapped(result.path, 'title');
  if (file) {
    lines.push({ text: truncate(`type ${file.source.content_type} · status ${file.status} · size ${formatBytes(file.source.bytes)} · source ${file.source.type}`, width) });
    lines.push({ text: truncate(`id ${file.id} · rank ${result.rank} · score ${formatScore(result.score)}`, width), tone: 'dim' });
    if (file.source.uri) lines.push(...wrapped(`uri ${file.source.uri}`, 'dim'));
    if (file.error) lines.push(...wrapped(`failed ${file.error.code}: ${file.error.message}`, 'error'));
    const metadata = Object.entries(file.metadata ?? {});
    lines.push({ text: metadata.length === 0 ? 'metadata: none' : 'metadata:', tone: 'label' });
    for (const [key, value] of metadata) lines.push({ text: truncate(`  ${key}: ${formatValue(value)}`, width) });
    for (const note of file.notes ?? []) lines.push(...wrapped(`note: ${note}`, 'dim'));
  } else {
    lines.push({ text: loading ? 'Loading the file…' : 'The file could not be loaded.', tone: 'dim' });
  }
  lines.push({ text: '' }, { text: `evidence (${result.evidence.length})`, tone: 'label' });
  for (const evidence of result.evidence) {
    lines.push({ text: truncate(`  ${formatLocation(evidence)} (${evidence.kind})`, width), tone: 'dim' });
    for (const line of wrapText(evidence.text.replace(/\s+/g, ' ').trim(), Math.max(10, width - 4))) lines.push({ text: `    ${line}`, highlight: true });
  }
  return lines;
}

export function FileDetails(props: FileDetailsProps) {
  const { backend, target, result, terms, width, height } = props;
  const [file, setFile] = useState<FileItem | null>(null);
  const [loading, setLoading] = useState(true);
  const [scroll, setScroll] = useState(0);

  useEffect(() => {
    let live = true;
    backend.getFile(target, result.file_id).then(
      (loaded) => {
        if (!live) return;
        setFile(loaded);
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setLoading(false);
        props.report(err);
      },
    );
    return () => {
      live = false;
    };
    // Loaded once per file shown; props.report is the app's stable callback.
  }, [backend, target, result.file_id]);

  const lines = detailLines(result, file, width, loading);
  const maxScroll = Math.max(0, lines.length - height);

  useHelpLine('↑↓ scroll · Esc back to results · q quit');
  useKeys((input, key) => {
    if (input === 'q') props.quit();
    else if (key.escape || key.leftArrow || key.backspace) props.onClose();
    else if (key.upArrow || input === 'k') setScroll(Math.max(0, scroll - 1));
    else if (key.downArrow || input === 'j') setScroll(Math.min(maxScroll, scroll + 1));
    else if (key.pageUp) setScroll(Math.max(0, scroll - height));
    else if (key.pageDown) setScroll(Math.min(maxScroll, scroll + height));
  });

  const start = Math.min(scroll, maxScroll);
  return (
    <Box flexDirection="column">
      {lines.slice(start, start + height).map((line, i) =>
        line.highlight ? (
          <HighlightedLine key={start + i} text={line.text} terms={terms} width={width} />
        ) : (
          <Text
            key={start + i}
            wrap="truncate-end"
            bold={line.tone === 'title' || line.tone === 'label'}
            dimColor={line.tone === 'dim'}
            color={line.tone === 'error' ? 'red' : line.tone === 'title' ? 'cyan' : undefined}
          >
            {line.text || ' '}
          </Text>
        ),
      )}
    </Box>
  );
}
