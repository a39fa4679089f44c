// The TUI's input and layout pure parts: cutting a read into keys, line editing, which collection
// columns a narrow terminal keeps, and paths cut from the left.
import t from 'tap';
import { splitKeys } from '../src/tui/keys.js';
import { editLine } from '../src/tui/views/line-input.js';
import { collectionLayout } from '../src/tui/views/collections.js';
import { truncateStart } from '../src/tui/format.js';

t.test('splitKeys: one key per character, escape sequences whole', async (t) => {
  t.same(splitKeys('abc\r'), ['a', 'b', 'c', '\r']);
  t.same(splitKeys('x'), ['x']);
  t.same(splitKeys(''), []);
  t.same(splitKeys('\u001B[A\u001B[B'), ['\u001B[A', '\u001B[B'], 'arrow keys');
  t.same(splitKeys('\u001B[Z\t'), ['\u001B[Z', '\t'], 'shift-tab then tab');
  t.same(splitKeys('\u001B[5~j'), ['\u001B[5~', 'j'], 'page up then a letter');
  t.same(splitKeys('\u001BOA'), ['\u001BOA'], 'SS3 arrow');
  t.same(splitKeys('\u001B\u001B[A'), ['\u001B\u001B[A'], 'meta + arrow');
  t.same(splitKeys('\u001B'), ['\u001B'], 'a lone Escape');
  t.same(splitKeys('\u001Bq'), ['\u001Bq'], 'Alt+q');
  t.same(splitKeys('a\r\nb'), ['a', '\r', 'b'], 'a pasted CRLF is one Enter');
  t.same(splitKeys('🐈x'), ['🐈', 'x'], 'an astral character stays whole');
  t.same(splitKeys('\u0015ab\u007f'), ['\u0015', 'a', 'b', '\u007f'], 'control keys');
});

t.test('editLine: typing, cursor moves, erasing, and the readline keys', async (t) => {
  const at = (value: string, cursor = value.length) => ({ value, cursor });
  t.same(editLine(at(''), 'a', {}), at('a'));
  t.same(editLine(at('ac', 1), 'b', {}), at('abc', 2), 'inserts at the cursor');
  t.same(editLine(at('abc'), '', { delete: true }), at('ab'), 'Backspace (reported as delete) erases backwards');
  t.same(editLine(at('abc', 0), '', { backspace: true }), at('abc', 0));
  t.same(editLine(at('abc'), '', { leftArrow: true }), at('abc', 2));
  t.same(editLine(at('abc', 3), '', { rightArrow: true }), at('abc', 3));
  t.same(editLine(at('rate limit'), 'u', { ctrl: true }), at(''), 'Ctrl-U clears the line');
  t.same(editLine(at('rate limit', 4), 'u', { ctrl: true }), at(''), 'wherever the cursor is');
  t.same(editLine(at('rate limit now'), 'w', { ctrl: true }), at('rate limit '), 'Ctrl-W deletes a word');
  t.same(editLine(at('abc'), 'a', { ctrl: true }), at('abc', 0), 'Ctrl-A');
  t.same(editLine(at('abc', 0), 'e', { ctrl: true }), at('abc', 3), 'Ctrl-E');
  t.same(editLine(at('abc'), 'x', { ctrl: true }), at('abc'), 'other control keys type nothing');
  t.same(editLine(at('a'), 'b\nc', {}), at('abc'), 'control characters in a paste are dropped');
  t.same(editLine(at('a🐈'), '', { delete: true }), at('a'), 'an emoji is erased whole');
});

t.test('collectionLayout: the name keeps room; jobs, pending, indexing go first', async (t) => {
  const wide = collectionLayout(79);
  t.same([...wide.shown].sort(), ['failed', 'indexing', 'jobs', 'pending', 'ready'], 'everything at 80 columns');
  t.equal(wide.nameWidth, 15, 'the name width at 80 columns is what it was');
  const narrow = collectionLayout(39);
  t.same([...narrow.shown], ['failed'], 'at 40 columns: name, status and the failed count');
  t.ok(narrow.nameWidth >= 15, `the name keeps ${narrow.nameWidth} columns`);
  t.ok(2 + narrow.nameWidth + 1 + 9 + 7 <= 39, 'and the row fits');
  const middle = collectionLayout(59);
  t.same([...middle.shown].sort(), ['failed', 'indexing', 'pending', 'ready'], 'at 60 columns only the jobs summary goes');
});

t.test('truncateStart keeps the end of a path', async (t) => {
  t.equal(truncateStart('/a/b/c/file.md', 10), '…c/file.md');
  t.equal(truncateStart('/file.md', 10), '/file.md');
  t.equal(truncateStart('/file.md', 0), '');
});
