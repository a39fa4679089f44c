// Pieces every view uses: the help-line context, highlighted lines, and the terminal's size.
import { createContext, useContext, useEffect, useState } from 'react';
import { useStdout } from 'ink';
import { Text } from './text.js';
import { highlightSegments } from '../highlight.js';
import { truncate } from '../format.js';

/** Views say which keys they answer to; the app draws it at the bottom. */
export const HelpContext = createContext<(text: string) => void>(() => {});

export function useHelpLine(text: string): void {
  const setHelp = useContext(HelpContext);
  useEffect(() => setHelp(text), [setHelp, text]);
}

/** What a view gets from the app: its room on screen and how to report or quit. */
export interface ViewFrame {
  width: number;
  height: number;
  report(err: unknown): void;
  clearError(): void;
  quit(): void;
}

export const MIN_COLUMNS = 40;
export const MIN_ROWS = 10;

// A stream that is not a terminal (a test's, or --force-tty into a pipe) has no size: assume 80x24.
const sizeOf = (stdout: NodeJS.WriteStream) => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });

export function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => sizeOf(stdout));
  useEffect(() => {
    const onResize = () => setSize(sizeOf(stdout));
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

/** Text with the query's words in bold yellow, inside a line another Text lays out. */
export function HighlightedText({ text, terms }: { text: string; terms: readonly string[] }) {
  return (
    <>
      {highlightSegments(text, terms).map((segment, i) =>
        segment.match ? (
          <Text key={i} bold color="yellow">
            {segment.text}
          </Text>
        ) : (
          <Text key={i}>{segment.text}</Text>
        ),
      )}
    </>
  );
}

/** One line of text with the query's words highlighted, cut to `width`. */
export function HighlightedLine({ text, terms, width }: { text: string; terms: readonly string[]; width: number }) {
  return (
    <Text wrap="truncate-end">
      <HighlightedText text={truncate(text, width)} terms={terms} />
    </Text>
  );
}

/** The rows of a list that fit in `room` lines with the selected one visible. */
export function visibleWindow(count: number, selected: number, room: number): { start: number; end: number } {
  if (count <= room) return { start: 0, end: count };
  const start = Math.min(Math.max(0, selected - Math.floor(room / 2)), count - room);
  return { start, end: start + room };
}
