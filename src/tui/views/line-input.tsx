// A one-line text field: the query and the prompts. ink-text-input typed every key it did not
// know into the text (Ctrl-U became a "u") and had no line editing; this one has the readline keys
// people reach for: Ctrl-U clears the line, Ctrl-W deletes a word, Ctrl-A/Ctrl-E move to either end. Keys arrive one at a time (src/tui/keys.ts), so each edit sees the previous one.
import { useRef, useState } from 'react';
import { Text } from 'ink';
import { useKeys } from '../keys.js';

export interface LineInputProps {
  value: string;
  onChange(value: string): void;
  onSubmit?(value: string): void;
  focus?: boolean;
  showCursor?: boolean;
}

/** What one key does to a line and its cursor: the pure part, tested on its own. */
export function editLine(
  line: { value: string; cursor: number },
  input: string,
  key: { ctrl?: boolean; meta?: boolean; backspace?: boolean; delete?: boolean; leftArrow?: boolean; rightArrow?: boolean },
): { value: string; cursor: number } {
  const { value } = line;
  const cursor = Math.min(Math.max(0, line.cursor), value.length);
  if (key.ctrl) {
    switch (input) {
      case 'u':
        return { value: '', cursor: 0 };
      case 'w': {
        const before = value.slice(0, cursor).replace(/\S+\s*$/u, '');
        return { value: before + value.slice(cursor), cursor: before.length };
      }
      case 'a':
        return { value, cursor: 0 };
      case 'e':
        return { value, cursor: value.length };
      default:
        // Other control keys belong to the views (Ctrl-C quits); none of them is text.
        return { value, cursor };
    }
  }
  // Steps are whole code points: an emoji is two UTF-16 units and must not be split.
  const back = cursor >= 2 && /[\uDC00-\uDFFF]/.test(value[cursor - 1]!) && /[\uD800-\uDBFF]/.test(value[cursor - 2]!) ? 2 : 1;
  const forward = /[\uD800-\uDBFF]/.test(value[cursor] ?? '') ? 2 : 1;
  if (key.leftArrow) return { value, cursor: Math.max(0, cursor - back) };
  if (key.rightArrow) return { value, cursor: Math.min(value.length, cursor + forward) };
  // Ink reports the Backspace key (DEL, 0x7f) as "delete"; both erase backwards, as in a shell.
  if (key.backspace || key.delete) {
    if (cursor === 0) return { value, cursor };
    return { value: value.slice(0, cursor - back) + value.slice(cursor), cursor: cursor - back };
  }
  if (key.meta) return { value, cursor };
  // Control characters (a stray \n in a paste, NUL) are not text.
  const text = input.replace(/[\u0000-\u001F\u007F]/g, '');
  if (!text) return { value, cursor };
  return { value: value.slice(0, cursor) + text + value.slice(cursor), cursor: cursor + text.length };
}

export function LineInput({ value, onChange, onSubmit, focus = true, showCursor = true }: LineInputProps) {
  // The line as this field last left it. Kept in a ref, not state, so that the next key (handled
  // before any effect runs) edits what the previous key produced.
  const own = useRef({ value, cursor: value.length });
  // A value changed from outside (cleared, replaced) puts the cursor at its end.
  if (own.current.value !== value) own.current = { value, cursor: value.length };
  const [, redraw] = useState(0);

  useKeys(
    (input, key) => {
      if (key.return) {
        onSubmit?.(own.current.value);
        return;
      }
      if (key.upArrow || key.downArrow || key.tab || key.escape || key.pageUp || key.pageDown) return;
      const before = own.current;
      const next = editLine(before, input, key);
      if (next.value === before.value && next.cursor === before.cursor) return;
      own.current = next;
      if (next.value !== before.value) onChange(next.value);
      else redraw((n) => n + 1);
    },
    { isActive: focus },
  );

  if (!focus || !showCursor) return <Text>{value}</Text>;
  const at = Math.min(own.current.cursor, value.length);
  return (
    <Text>
      {value.slice(0, at)}
      <Text inverse>{value[at] ?? ' '}</Text>
      {value.slice(at + 1)}
    </Text>
  );
}
