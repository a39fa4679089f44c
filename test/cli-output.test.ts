// Output a person reads: when colour is used, snippets centred on the matched words with those words
// marked, and the --explain line. Pure functions; the end-to-end runs are in search-explain.test.ts.
import t from 'tap';
import { colourEnabled, paint } from '../src/cli/colour.js';
import { centredSnippet, matchSpans, renderSegments, snippetLine } from '../src/cli/snippet.js';
import { formatAnswer } from '../src/cli/commands/answer.js';
import { formatExplanation, formatResults } from '../src/cli/commands/search.js';

const ANSI = /\u001B\[[0-9;]*m/g;
const plain = (s: string) => s.replace(ANSI, '');

t.test('colour: a terminal yes, a pipe no, NO_COLOR never, FORCE_COLOR forces, --json never', async (t) => {
  t.equal(colourEnabled({ env: {}, isTTY: true }), true, 'a terminal');
  t.equal(colourEnabled({ env: {}, isTTY: false }), false, 'a pipe');
  t.equal(colourEnabled({ env: { TERM: 'dumb' }, isTTY: true }), false, 'a dumb terminal');
  t.equal(colourEnabled({ env: { NO_COLOR: '1' }, isTTY: true }), false, 'NO_COLOR=1');
  t.equal(colourEnabled({ env: { NO_COLOR: 'false' }, isTTY: true }), false, 'NO_COLOR: any non-empty value counts');
  t.equal(colourEnabled({ env: { NO_COLOR: '' }, isTTY: true }), true, 'an empty NO_COLOR does not count (no-color.org)');
  t.equal(colourEnabled({ env: { FORCE_COLOR: '1' }, isTTY: false }), true, 'FORCE_COLOR into a pipe');
  t.equal(colourEnabled({ env: { FORCE_COLOR: '0' }, isTTY: true }), false, 'FORCE_COLOR=0 turns it off');
  t.equal(colourEnabled({ env: { FORCE_COLOR: 'false' }, isTTY: true }), false, 'FORCE_COLOR=false turns it off');
  t.equal(colourEnabled({ env: { FORCE_COLOR: '1', NO_COLOR: '1' }, isTTY: true }), false, 'NO_COLOR wins over FORCE_COLOR');
  t.equal(colourEnabled({ env: { FORCE_COLOR: '1' }, isTTY: true, json: true }), false, '--json is never styled');
  t.equal(paint('x', ['bold'], false), 'x');
  t.match(paint('x', ['bold'], true), /^\u001B\[1mx\u001B\[22m$/);
  t.equal(plain(paint('x', ['bold', 'yellow'], true)), 'x');
});

const LONG =
  'Opening words that say nothing in particular about anything at all, and then some more of them to fill the line. ' +
  'Further filler text keeps going for a while so that the match sits far from the start of the passage. ' +
  'Here the rate limiter refuses requests above the configured rate, and the limit resets every minute. ' +
  'Closing words follow, again unrelated to the query, running on until the passage ends somewhere out here.';

t.test('snippets are centred on the densest run of matched words', async (t) => {
  const terms = ['rate', 'limit'];
  const segments = centredSnippet(LONG, terms, 80);
  const text = segments.map((s) => s.text).join('');
  t.ok(text.length <= 80, `at most 80 characters (${text.length})`);
  t.ok(text.startsWith('…') && text.endsWith('…'), 'cut on both sides, each marked');
  const marked = segments.filter((s) => s.match).map((s) => s.text.toLowerCase());
  t.ok(marked.includes('rate') && marked.includes('limit'), 'the matched words are inside and marked');
  // Centred: the matched words sit in the middle third of the window, not at an edge.
  const spans = matchSpans(text, terms);
  const middle = (spans[0]!.start + spans[spans.length - 1]!.end) / 2;
  t.ok(Math.abs(middle - text.length / 2) < text.length / 4, `the run is near the centre (${middle} of ${text.length})`);
  const words = text.replace(/…/g, '').trim().split(' ');
  for (const w of [words[0]!, words[words.length - 1]!]) t.ok(new RegExp(`(^|\\s)${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`).test(LONG), `edge word '${w}' is whole`);

  t.same(centredSnippet('short text about rates', ['rate'], 80), [{ text: 'short text about ', match: false }, { text: 'rates', match: true }], 'short text is kept whole; "rates" meets "rate"');
  const none = centredSnippet(LONG, ['zebra'], 60).map((s) => s.text).join('');
  t.ok(none.startsWith('Opening') && none.endsWith('…') && none.length <= 60, 'no match: the start of the text');
  t.equal(plain(snippetLine('a\n\n  b   rate', 'rate', true)), 'a b rate', 'whitespace flattened to one line');
});

t.test('highlight: styled on a terminal, plain otherwise', async (t) => {
  const segments = centredSnippet('The limit resets.', ['limit'], 200);
  t.equal(renderSegments(segments, false), 'The limit resets.');
  const styled = renderSegments(segments, true);
  t.not(styled, 'The limit resets.', 'styled differs');
  t.match(styled, /\u001B\[1m/, 'bold');
  t.equal(plain(styled), 'The limit resets.');
  t.match(styled, /The \u001B\[[0-9;]*m(\u001B\[[0-9;]*m)?limit\u001B/, 'exactly the matched word is styled');
});

const RESPONSE: Parameters<typeof formatResults>[0] = {
  execution: { mode: 'semantic', interpretation: 'literal', stages: ['keyword', 'semantic'] },
  results: [
    {
      file_id: 'fil_1',
      path: '/ops/limits.md',
      content_type: 'text/markdown',
      rank: 1,
      score: 1.12,
      matched_by: ['keyword', 'semantic'],
      evidence: [{ kind: 'text', text: LONG, location: { char_start: 0, char_end: LONG.length } }],
      explain: { fusion: 'minmax', bm25: 7.5, bm25_scaled: 1, cosine: 0.61, cosine_scaled: 0.6, semantic_weight: 0.2, keyword_part: 1, semantic_part: 0.12, collection_cosine: null, collection_cosine_scaled: null, collection_weight: 0, collection_part: 0, score: 1.12 },
    },
  ],
  warnings: [],
  next_cursor: null,
};

t.test('search output: centred, highlighted only with colour, explain line per result', async (t) => {
  const piped = formatResults(RESPONSE, { query: 'rate limit', colour: false });
  t.notMatch(piped, ANSI, 'no escape codes without colour');
  t.match(piped, /…[^\n]*rate limiter refuses requests[^\n]*…/, 'the snippet shows the matched part, not the opening');
  t.notMatch(piped, /Opening words/);
  t.match(piped, /explain: bm25 7\.50 → 1\.00  \+  cosine 0\.610 → 0\.600 × 0\.2 = 0\.120  =  score 1\.12/);
  const terminal = formatResults(RESPONSE, { query: 'rate limit', colour: true });
  t.match(terminal, ANSI);
  t.equal(plain(terminal), piped, 'the same text, styled');

  t.equal(formatExplanation({ fusion: 'keyword', bm25: 3.25, bm25_scaled: null, cosine: null, cosine_scaled: null, semantic_weight: 0, keyword_part: 3.25, semantic_part: 0, collection_cosine: null, collection_cosine_scaled: null, collection_weight: 0, collection_part: 0, score: 3.25 }), 'explain: bm25 3.25 = score 3.25');
  t.equal(
    formatExplanation({ fusion: 'keyword', bm25: 2.1e-6, bm25_scaled: null, cosine: null, cosine_scaled: null, semantic_weight: 0, keyword_part: 2e-6, semantic_part: 0, collection_cosine: null, collection_cosine_scaled: null, collection_weight: 0, collection_part: 0, score: 2e-6 }),
    'explain: bm25 2.10e-6 = score 2.00e-6',
    'tiny BM25 (a small collection) stays readable',
  );
  t.match(
    formatExplanation({ fusion: 'minmax', bm25: null, bm25_scaled: null, cosine: 0.5, cosine_scaled: 1, semantic_weight: 0.2, keyword_part: 0, semantic_part: 0.2, collection_cosine: null, collection_cosine_scaled: null, collection_weight: 0, collection_part: 0, score: 0.2 }),
    /bm25 none \(not a keyword hit\) → 0 {2}\+ {2}cosine 0\.500 → 1\.00 × 0\.2 = 0\.200/,
  );
  t.notMatch(formatResults({ ...RESPONSE, results: [{ ...RESPONSE.results[0]!, explain: undefined }] }), /explain:/, 'no explain line without explain');
});

t.test('answer output: sources centred and highlighted the same way', async (t) => {
  const response: Parameters<typeof formatAnswer>[0] = {
    answer: 'It resets every minute [SRC:1].',
    sources: { 'SRC:1': { file_id: 'fil_1', path: '/ops/limits.md', score: 1, is_cited: true, evidence: [{ kind: 'text', text: LONG }] } },
  };
  const piped = formatAnswer(response, 'when does the rate limit reset', false);
  t.notMatch(piped, ANSI);
  t.match(piped, /rate limiter refuses/);
  t.match(formatAnswer(response, 'when does the rate limit reset', true), ANSI);
});
