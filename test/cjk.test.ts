// Chinese and Japanese text (issue 16, item 5): a query shorter than the run of Han or kana
// characters it stands in finds that run, through the keyword index's bigrams; English text and
// queries see exactly what they saw before.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/cli.js';
import { hasCjk, keywordIndexText, keywordPhraseText, splitCjkRuns } from '../src/contract/cjk.js';
import { buildMatchPhrases, queryTerms, wordsOf } from '../src/domain/search/query-text.js';
import { chunkDocument } from '../src/domain/ingest/chunk.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

const CORPUS = join(ROOT, 'fixtures', 'cjk');

t.test('the keyword index form: bigrams then characters, other text unchanged', async (t) => {
  t.equal(keywordIndexText('東京都庁'), ' 東京 京都 都庁 東 京 都 庁 ');
  t.equal(keywordIndexText('猫'), ' 猫 ');
  t.equal(keywordIndexText('コーヒー'), ' コー ーヒ ヒー コ ー ヒ ー ', 'the prolonged sound mark belongs to the katakana run');
  t.equal(keywordIndexText('iPhone価格'), 'iPhone 価格 価 格 ', 'a run is set off from the letters it touches');
  t.equal(keywordIndexText('𠮷野家'), ' 𠮷野 野家 𠮷 野 家 ', 'an ideograph outside the BMP is one character');
  for (const text of ['The quick brown fox.', 'Ünïcödé café — naïve', 'Привет, мир', '서울 특별시', '']) t.equal(keywordIndexText(text), text, `unchanged: ${text}`);
  t.notOk(hasCjk('서울'), 'Hangul is not rewritten: Korean puts spaces between words');
});

t.test('a query run is the phrase of its bigrams; other words are as before', async (t) => {
  t.equal(keywordPhraseText('東京都'), '東京 京都');
  t.equal(keywordPhraseText('猫'), '猫');
  t.equal(keywordPhraseText('coffee'), 'coffee');
  t.same(splitCjkRuns('iphone価格'), ['iphone', '価格']);
  t.same(wordsOf('最新のiPhone価格'), ['最新の', 'iphone', '価格']);
  t.same(buildMatchPhrases('東京 首都'), ['"東京"', '"首都"']);
  t.same(buildMatchPhrases('東京都庁'), ['"東京 京都 都庁"']);
  t.same(buildMatchPhrases('lazy dog'), ['"lazy"', '"dog"']);
  t.same(queryTerms('最新のiPhone価格'), ['最新の', 'iphone', '価格'], 'snippets look for the words as written');
});

t.test('the chunker counts each Han or kana character as a word', async (t) => {
  const text = '東京は日本の首都です。'.repeat(40); // 440 characters, no spaces
  const passages = chunkDocument({ text, blocks: [{ type: 'paragraph', charStart: 0, charEnd: text.length }] }, { chunkTokens: 64, chunkOverlap: 0 });
  t.ok(passages.length >= 6, `a long run is split (${passages.length} passages)`);
  for (const p of passages) t.ok(p.charEnd - p.charStart <= 64, 'at most 64 characters each');
  t.ok(passages.slice(0, -1).every((p) => text[p.charEnd - 1] === '。'), 'each break falls after a sentence end');
  const english = 'The quick brown fox jumps over the lazy dog. '.repeat(20).trim();
  const plain = chunkDocument({ text: english, blocks: [{ type: 'paragraph', charStart: 0, charEnd: english.length }] }, { chunkTokens: 64, chunkOverlap: 0 });
  t.same(
    plain.map((p) => [p.charStart, p.charEnd]),
    [
      [0, 314],
      [315, 629],
      [630, 899],
    ],
    'English text is chunked as before',
  );
});

t.test('search: shorter queries find longer runs, in Chinese and Japanese', async (t) => {
  const f: Fixture = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'cjk', 'notes', { processing: { semantic: false } });
  for (const name of readdirSync(CORPUS).filter((n) => n !== 'README.md')) {
    const r = await addInline(f, base, `/${name}`, readFileSync(join(CORPUS, name), 'utf8'), name.endsWith('.md') ? 'text/markdown' : 'text/plain');
    t.equal(r.status, 202, name);
  }
  await f.waitForIdle('cjk', 'notes');
  const paths = async (query: string) => {
    const r = await f.call('POST', `${base}:search`, { query, mode: 'keyword', limit: 10 });
    t.equal(r.status, 200, query);
    return { paths: (r.body.results as { path: string }[]).map((x) => x.path).sort(), body: r.body };
  };
  t.same((await paths('首都')).paths, ['/ja-tokyo.md', '/zh-beijing.txt'], 'a two-character word inside a Chinese and a Japanese run');
  t.same((await paths('新宿')).paths, ['/ja-tokyo.md']);
  t.same((await paths('東京都庁')).paths, ['/ja-tokyo.md'], 'the whole run');
  t.same((await paths('经济中心')).paths, ['/zh-shanghai.txt'], 'a phrase inside the run');
  t.same((await paths('中心')).paths, ['/zh-beijing.txt', '/zh-shanghai.txt']);
  t.same((await paths('猫')).paths, ['/ja-cat.txt'], 'a one-character word');
  t.same((await paths('コーヒー')).paths, ['/ja-coffee.txt'], 'katakana with ー');
  t.same((await paths('価格')).paths, ['/ja-mixed.txt'], 'a run glued to Latin letters');
  t.same((await paths('iphone')).paths, ['/ja-mixed.txt'], 'and the Latin word beside it');
  t.same((await paths('心中')).paths, [], 'characters in another order are not a match');
  t.same((await paths('tokyo coffee')).paths, ['/en-cities.txt'], 'English as before');

  const { body } = await paths('新宿');
  const evidence = body.results[0].evidence[0];
  t.match(evidence.text, /新宿区/, 'evidence is the passage as written, not its index form');
  t.notMatch(evidence.text, /新宿 宿区/);
});

t.test('the CLI and TUI mark a Chinese or Japanese word inside its run', async (t) => {
  const { highlightSegments, queryTerms: markedTerms } = await import('../src/tui/highlight.js');
  t.same(markedTerms('iPhone価格 ガス'), ['iphone', '価格', 'ガス'], 'runs split from letters; kana keep their voicing marks');
  t.same(highlightSegments('東京都庁は新宿区にあります。', markedTerms('新宿 東京')), [
    { text: '東京', match: true },
    { text: '都庁は', match: false },
    { text: '新宿', match: true },
    { text: '区にあります。', match: false },
  ]);
  t.same(highlightSegments('ガスとカス', ['ガス']), [
    { text: 'ガス', match: true },
    { text: 'とカス', match: false },
  ]);
  t.same(highlightSegments('a cat sat', markedTerms('cat')), [
    { text: 'a ', match: false },
    { text: 'cat', match: true },
    { text: ' sat', match: false },
  ], 'other text as before');
});

t.test('evidence in a long Chinese or Japanese passage is cut at 。, around the match', async (t) => {
  const { bestSnippet, MAX_EVIDENCE_CHARS } = await import('../src/domain/search/snippet.js');
  const text = '今日は晴れです。'.repeat(80) + '新宿区に都庁があります。' + '明日は雨です。'.repeat(20);
  const cut = bestSnippet(text, ['新宿']);
  const shown = text.slice(cut.start, cut.end);
  t.ok(shown.length <= MAX_EVIDENCE_CHARS);
  t.match(shown, /新宿区に都庁があります。/, 'the sentence with the match is shown');
  t.equal(text[cut.start - 1], '。', 'the cut starts at a sentence');
});
