// Answer generators (retrieval-api.md: POST ...:answer, Research run; decisions.md §7 synthesize):
// the offline extractive generator (verbatim sentences picked by MMR, one marker each), the
// OpenAI-compatible generator against a local server speaking the chat completions wire format,
// the marker helpers both share, and the follow-up query rewrite.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extractiveGenerator, NOTHING_FOUND, sentenceSpans, stem, termsOf } from '../src/domain/answer/extractive.js';
import { questionSupport, questionTerms } from '../src/domain/answer/support.js';
import { followUpQuery, GenerationError, type AnswerSource, type GenerateInput, type GeneratedAnswer } from '../src/domain/answer/generator.js';
import { citedKeys, findMarkers, stripMarkers, stripUnknownMarkers } from '../src/domain/answer/markers.js';
import { historyMessages, mapCitations, openAiGenerator } from '../src/domain/answer/openai.js';
import { withCpuTime } from './helpers/cpu-time.js';
import { PATIENCE_MS } from './helpers/wait.js';

const ws = (s: string) => s.replace(/\s+/g, ' ').trim();

const SOURCES: AnswerSource[] = [
  {
    key: 'SRC:0001',
    fileId: 'fil_cats',
    path: '/notes/cats.md',
    score: 12.4,
    passages: [
      {
        heading: 'Purring',
        text:
          'Cats purr at a frequency of roughly 25 to 150 Hz. Most cats purr when they are content, e.g. while being stroked, ' +
          'but they also purr when injured or frightened. Dr. Lyons suggests that purring may help bones heal faster.',
      },
      {
        heading: 'Lifespan',
        text: 'Indoor cats typically live 12 to 18 years.\nOutdoor cats face traffic, fights and disease, so their lives are often much shorter.',
      },
    ],
  },
  {
    key: 'SRC:0002',
    fileId: 'fil_tides',
    path: '/science/tides.txt',
    score: 9.8,
    passages: [
      {
        heading: 'Tides',
        text:
          "The Moon's gravity pulls on Earth's oceans, which causes two high tides every day. Spring tides happen at new and full moon, " +
          'when the Sun and the Moon line up. Neap tides are weaker and occur at the quarter moons.',
      },
    ],
  },
  {
    key: 'SRC:0003',
    fileId: 'fil_ocean',
    path: '/science/ocean-basics.md',
    score: 9.1,
    passages: [
      {
        heading: 'Why the sea rises and falls',
        text:
          'The gravity of the Moon pulls on the oceans of Earth, which causes two high tides each day. ' +
          'The tidal range in the Bay of Fundy reaches 16 m, the largest in the world.',
      },
    ],
  },
  {
    key: 'SRC:0004',
    fileId: 'fil_solar',
    path: '/home/solar-panels.md',
    score: 4.2,
    passages: [
      {
        heading: 'Output',
        text:
          'A typical residential solar panel produces about 350 W in full sun. Panels lose roughly 0.5% of their output per year, ' +
          'so after 25 years they still deliver around 88% of their rated power.\n- Dust and shade reduce output; cleaning panels twice a year helps.',
      },
      { heading: 'Inverters', text: 'An inverter converts the DC output of the panels to AC for the house. Microinverters sit behind each panel.' },
    ],
  },
];

/** The answer as (sentence, key) pairs; throws when text follows the last marker. */
function marked(answer: string): { sentence: string; key: string }[] {
  const parts = answer.split(/\[\[(SRC:\d+)\]\]/);
  const out: { sentence: string; key: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) out.push({ sentence: ws(parts[i]!), key: parts[i + 1]! });
  if (ws(parts.at(-1)!) !== '') throw new Error(`text after the last marker: ${parts.at(-1)}`);
  return out;
}

/** Every marked sentence is verbatim (whitespace aside) in the passages of the source its marker names. */
function checkGrounded(tt: Test, res: GeneratedAnswer, sources: AnswerSource[]) {
  const byKey = new Map(sources.map((s) => [s.key, s]));
  const pairs = marked(res.answer);
  tt.ok(pairs.length > 0, 'the answer has markers');
  for (const { sentence, key } of pairs) {
    const src = byKey.get(key);
    tt.ok(src, `${key} is a given key`);
    tt.ok(sentence.length > 0, 'a sentence precedes each marker');
    tt.ok(src?.passages.some((p) => ws(p.text).includes(sentence)), `"${sentence}" is verbatim in ${key}`);
  }
  tt.same(res.cited, [...new Set(pairs.map((p) => p.key))], 'cited = the markers present, first-cited order');
}

function input(question: string, over: Partial<GenerateInput> = {}): GenerateInput {
  return { question, history: [], sources: SOURCES, mode: 'standard', deadline: Date.now() + PATIENCE_MS, ...over };
}

t.test('extractive: answers from the sources, one marker per verbatim sentence', async (t) => {
  const g = extractiveGenerator();
  t.equal(g.provider, 'extractive');
  t.equal(g.model, 'mmr-v1');
  const cases: { q: string; key: string; has: RegExp }[] = [
    { q: 'Why do cats purr?', key: 'SRC:0001', has: /purr when they are content, e\.g\. while being stroked/ },
    { q: 'How long do cats live?', key: 'SRC:0001', has: /Indoor cats typically live 12 to 18 years\./ },
    { q: 'What causes tides?', key: 'SRC:0002', has: /Moon's gravity pulls on Earth's oceans/ },
    { q: 'How much power does a solar panel produce, and how much does it lose each year?', key: 'SRC:0004', has: /0\.5% of their output per year/ },
    { q: 'What does an inverter do?', key: 'SRC:0004', has: /converts the DC output/ },
    { q: 'tidal range Bay of Fundy', key: 'SRC:0003', has: /16 m, the largest in the world/ },
  ];
  for (const c of cases) {
    const res = await g.generate(input(c.q));
    t.comment(`${c.q} → ${res.answer}`);
    checkGrounded(t, res, SOURCES);
    t.equal(res.cited[0], c.key, `${c.q}: cites ${c.key} first`);
    t.match(res.answer, c.has, `${c.q}: holds the answer`);
    const n = marked(res.answer).length;
    t.ok(n >= 1 && n <= 5, `${c.q}: 1-5 sentences in standard mode (${n})`);
  }
  // Off-topic sentences of the right source stay out.
  const purr = await g.generate(input('Why do cats purr?'));
  t.notMatch(purr.answer, /Indoor cats/, 'lifespan is not an answer to purring');
  t.match(purr.answer, /Dr\. Lyons suggests that purring may help bones heal faster\./, '"Dr." does not cut the sentence');
});

t.test('extractive: MMR keeps one of two sources saying the same thing', async (t) => {
  const g = extractiveGenerator();
  const res = await g.generate(input('What causes the tides in the oceans each day?'));
  t.comment(res.answer);
  checkGrounded(t, res, SOURCES);
  const gravity = marked(res.answer).filter((p) => /gravity/.test(p.sentence) && /two high tides/.test(p.sentence));
  t.equal(gravity.length, 1, 'the near-duplicate gravity sentence appears once');
  t.equal(gravity[0]?.key, 'SRC:0002', 'from the better-ranked source');

  // Two copies of a whole passage in two sources: no sentence is repeated.
  const twins: AnswerSource[] = [
    { key: 'SRC:0001', fileId: 'a', path: '/a.md', score: 2, passages: [{ heading: '', text: 'Solar panels convert sunlight into electricity. Solar panels work best facing south at a tilt of about 35 degrees.' }] },
    { key: 'SRC:0002', fileId: 'b', path: '/b.md', score: 1, passages: [{ heading: '', text: 'Solar panels turn sunlight into electricity! Solar panels work best when facing south at a tilt of about 35 degrees.' }] },
  ];
  const twin = await g.generate(input('How do solar panels work best?', { sources: twins, mode: 'ultra' }));
  t.comment(twin.answer);
  checkGrounded(t, twin, twins);
  const south = marked(twin.answer).filter((p) => /facing south/.test(p.sentence));
  t.equal(south.length, 1, 'the "facing south" fact is stated once');
});

/** The statistics of a collection holding exactly these passages, for the question's terms. */
function statisticsOf(sources: AnswerSource[], question: string) {
  const passages = sources.flatMap((s) => s.passages.map((p) => new Set(termsOf(p.text))));
  const terms = questionTerms(question, []);
  return { terms, stats: { passages: passages.length, frequencies: new Map([...terms.weights.keys()].map((t) => [t, passages.filter((p) => p.has(t)).length])) } };
}

t.test('extractive: nothing relevant → a plain answer without markers', async (t) => {
  const g = extractiveGenerator();
  for (const q of ['What is the capital of Mongolia?', 'What is it?', '???']) {
    const res = await g.generate(input(q));
    t.equal(res.answer, NOTHING_FOUND, `${q}: nothing found`);
    t.same(res.cited, [], `${q}: cites nothing`);
    t.same(findMarkers(res.answer), [], `${q}: no markers`);
    t.equal(res.declined, true, `${q}: declined`);
  }
  // "world" occurs in the sources (Bay of Fundy) and "cats" and "oceans" too, but nothing answers
  // these: the support the sources give them, on the collection's statistics, is below the line.
  for (const q of ['Who won the football world cup in 1998?', 'How do cats fly airplanes across oceans?']) {
    const { terms, stats } = statisticsOf(SOURCES, q);
    const support = questionSupport(terms, SOURCES, stats);
    t.notOk(support.supported, `${q}: not supported (coverage ${support.coverage.toFixed(2)}, matched ${support.matched.toFixed(2)})`);
  }
  for (const q of ['Why do cats purr?', 'What causes the tides?', 'How long do indoor cats live?']) {
    const { terms, stats } = statisticsOf(SOURCES, q);
    t.ok(questionSupport(terms, SOURCES, stats).supported, `${q}: supported`);
  }
  const none = await g.generate(input('Why do cats purr?', { sources: [] }));
  t.equal(none.answer, NOTHING_FOUND, 'no sources: nothing found');
  const custom = await extractiveGenerator({ nothingFound: 'Nothing here.' }).generate(input('capital of Mongolia'));
  t.equal(custom.answer, 'Nothing here.');
});

t.test('extractive: modes bound the number of sentences; abbreviations and decimals stay whole', async (t) => {
  const facts = Array.from({ length: 14 }, (_, i) => `Fact ${i + 1} about honeybees: a honeybee colony ${['forages', 'dances', 'swarms', 'stores honey', 'guards', 'cools', 'builds comb'][i % 7]} in season ${i + 1}.`);
  const sources: AnswerSource[] = [
    { key: 'SRC:0001', fileId: 'a', path: '/bees.md', score: 3, passages: [{ heading: 'Bees', text: facts.slice(0, 7).join(' ') }] },
    { key: 'SRC:0002', fileId: 'b', path: '/bees-2.md', score: 2, passages: [{ heading: 'Bees', text: facts.slice(7).join(' ') }] },
  ];
  const g = extractiveGenerator();
  const std = await g.generate(input('What does a honeybee colony do?', { sources }));
  const ultra = await g.generate(input('What does a honeybee colony do?', { sources, mode: 'ultra' }));
  const recall = await g.generate(input('What does a honeybee colony do?', { sources, mode: 'recall' }));
  for (const r of [std, ultra, recall]) checkGrounded(t, r, sources);
  t.ok(marked(std.answer).length >= 2 && marked(std.answer).length <= 5, `standard: 2-5 (${marked(std.answer).length})`);
  t.ok(marked(ultra.answer).length > 5 && marked(ultra.answer).length <= 8, `ultra: up to 8 (${marked(ultra.answer).length})`);
  t.ok(marked(recall.answer).length <= 8, 'recall: up to 8');
  // Grouping: the sentences of one source stand together.
  const keys = marked(ultra.answer).map((p) => p.key);
  t.same(keys, [...keys].sort((a, b) => keys.indexOf(a) - keys.indexOf(b)), 'sentences of a source are grouped');

  const spans = (s: string) => sentenceSpans(s).map((x) => s.slice(x.start, x.end));
  t.same(spans('Use a mat, e.g. Yoga mats work well. Next one.'), ['Use a mat, e.g. Yoga mats work well.', 'Next one.']);
  t.same(spans('It costs $3.50 per kWh, i.e. a lot. Prof. J. Smith agrees.'), ['It costs $3.50 per kWh, i.e. a lot.', 'Prof. J. Smith agrees.']);
  t.same(spans('Heading\n- first item\n* second item\n2. third item'), ['Heading', 'first item', 'second item', 'third item']);
  t.same(spans('Cats, dogs, etc. are pets. Birds, fish etc. They too.'), ['Cats, dogs, etc. are pets.', 'Birds, fish etc.', 'They too.']);
  const long = Array.from({ length: 130 }, (_, i) => `word${i}`).join(' ');
  const pieces = spans(long);
  t.ok(pieces.length >= 3 && pieces.every((p) => p.length <= 400 && long.includes(p)), 'an unpunctuated run is cut into verbatim pieces');
  t.equal(stem('causes'), stem('causing'));
  t.equal(stem('purring'), stem('purrs'));
  t.equal(stem('panels'), 'panel');
  t.equal(stem('batteries'), stem('battery'));
});

t.test('extractive: a recall-sized input answers quickly', async (t) => {
  const topics = ['glacier', 'volcano', 'river', 'desert', 'forest', 'coral', 'storm', 'canyon'];
  const sources: AnswerSource[] = Array.from({ length: 200 }, (_, i) => ({
    key: `SRC:${String(i + 1).padStart(4, '0')}`,
    fileId: `fil_${i}`,
    path: `/geo/${topics[i % 8]}-${i}.md`,
    score: 200 - i,
    passages: Array.from({ length: 8 }, (_, p) => ({
      heading: `${topics[(i + p) % 8]} notes`,
      text: Array.from({ length: 8 }, (_, k) => `The ${topics[(i + p + k) % 8]} number ${i}-${p}-${k} changes by ${k}.${p} percent when the ${topics[(i + k) % 8]} season ends.`).join(' '),
    })),
  }));
  const g = extractiveGenerator();
  const { value: res, cpuMs } = await withCpuTime(() => g.generate(input('How does a glacier change when the volcano season ends?', { sources, mode: 'recall' })));
  checkGrounded(t, res, sources);
  t.ok(cpuMs < 3_000, `200 sources × 8 passages (6,000 candidate sentences) in ${Math.round(cpuMs)} ms of CPU`);
});

t.test('extractive: follow-up questions borrow the subject from history; deadline and abort', async (t) => {
  const g = extractiveGenerator();
  const history: GenerateInput['history'] = [
    { role: 'user', content: 'How long do indoor cats live?' },
    { role: 'assistant', content: 'Indoor cats typically live 12 to 18 years. [[SRC:0001]]' },
  ];
  const res = await g.generate(input('And outdoor ones?', { history }));
  t.comment(res.answer);
  checkGrounded(t, res, SOURCES);
  t.match(res.answer, /Outdoor cats face traffic/);

  await t.rejects(g.generate(input('Why do cats purr?', { deadline: Date.now() - 1 })), { name: 'GenerationError', code: 'deadline_exceeded' });
  const ac = new AbortController();
  ac.abort();
  await t.rejects(g.generate(input('Why do cats purr?', { signal: ac.signal })), { code: 'aborted' });
});

t.test('extractive: property — markers point at given keys, marked sentences are verbatim', async (t) => {
  const words = ['cat', 'cats', 'purr', 'tide', 'tides', 'moon', 'solar', 'panel', 'panels', 'power', 'the', 'a', 'of', 'is', 'and', 'bee', 'honey', 'e.g.', 'Dr.', '3.5', '1998', 'Zürich', '猫', 'océan', '[[SRC:0001]]', '[2]', 'It', 'why'];
  const word = fc.constantFrom(...words);
  const sep = fc.constantFrom(' ', ' ', ' ', '  ', '\n', '\t', '\u00a0', ', ');
  const sentence = fc
    .tuple(fc.array(fc.tuple(word, sep), { minLength: 1, maxLength: 14 }), fc.constantFrom('.', '!', '?', '', '...', '.\n', ';'), fc.constantFrom('', '- ', '# ', '1. '))
    .map(([ws_, end, lead]) => lead + ws_.map(([w, s]) => w + s).join('').trim() + end);
  const passage = fc.record({
    heading: fc.oneof(fc.constant(''), word),
    text: fc.oneof(
      fc.array(sentence, { minLength: 1, maxLength: 6 }).map((xs) => xs.join(' ')),
      fc.string({ unit: 'grapheme', maxLength: 200 }),
    ),
  });
  const sources = fc.array(fc.tuple(fc.array(passage, { minLength: 0, maxLength: 3 }), fc.double({ min: -10, max: 10, noNaN: true })), { minLength: 0, maxLength: 5 }).map((xs) =>
    xs.map(([passages, score], i): AnswerSource => ({ key: `SRC:${String(i + 1).padStart(4, '0')}`, fileId: `fil_${i}`, path: `/doc-${i}.md`, score, passages })),
  );
  const question = fc.oneof({ arbitrary: fc.array(word, { minLength: 1, maxLength: 3 }).map((xs) => `${xs.join(' ')}?`), weight: 4 }, { arbitrary: fc.string({ maxLength: 40 }), weight: 1 });
  const mode = fc.constantFrom('standard', 'ultra', 'recall') as fc.Arbitrary<GenerateInput['mode']>;
  const g = extractiveGenerator();
  let answered = 0;
  await fc.assert(
    fc.asyncProperty(sources, question, mode, async (srcs, q, m) => {
      const res = await g.generate({ question: q, history: [], sources: srcs, mode: m, deadline: Date.now() + PATIENCE_MS });
      if (res.cited.length === 0) {
        if (res.answer !== NOTHING_FOUND) throw new Error(`no citation but not the nothing-found answer: ${res.answer}`);
        return;
      }
      answered++;
      const byKey = new Map(srcs.map((s) => [s.key, s]));
      const pairs = marked(res.answer);
      if (pairs.length > (m === 'standard' ? 5 : 8)) throw new Error(`too many sentences: ${pairs.length}`);
      for (const { sentence, key } of pairs) {
        const src = byKey.get(key);
        if (!src) throw new Error(`marker ${key} points at no source`);
        if (sentence === '' || !src.passages.some((p) => ws(p.text).includes(sentence))) throw new Error(`"${sentence}" is not verbatim in ${key}`);
      }
      const expected = [...new Set(pairs.map((p) => p.key))];
      if (JSON.stringify(res.cited) !== JSON.stringify(expected)) throw new Error(`cited ${res.cited} ≠ markers ${expected}`);
    }),
    { numRuns: 400, seed: 20240611 },
  );
  t.ok(answered > 50, `the property saw real answers (${answered} of 400)`);
});

t.test('markers: find, list, strip unknown, tidy', async (t) => {
  const text = 'A [[SRC:0002]]. B [[SRC:0009]]. C [[SRC:0001]][[SRC:0002]] D [[ SRC:0001 ]] E [[SRC:0007]]';
  t.same(citedKeys(text), ['SRC:0002', 'SRC:0009', 'SRC:0001', 'SRC:0007']);
  t.same(findMarkers('x [[SRC:0003]] y')[0], { key: 'SRC:0003', index: 2, length: 12 });
  t.equal(stripUnknownMarkers(text, ['SRC:0001', 'SRC:0002']), 'A [[SRC:0002]]. B. C [[SRC:0001]][[SRC:0002]] D [[SRC:0001]] E');
  t.equal(stripUnknownMarkers('x [[SRC:0001]] [[SRC:0001]][[SRC:0001]]. y', ['SRC:0001']), 'x [[SRC:0001]]. y');
  t.equal(stripMarkers('Cats purr [[SRC:0001]]. Tides [[SRC:0002]] follow the moon.'), 'Cats purr. Tides follow the moon.');
  t.equal(stripMarkers('[[SRC:0001]] Start\n[[SRC:0002]] next'), 'Start\nnext');
});

t.test('openai: citation mapping', async (t) => {
  const map = (s: string) => mapCitations(s, SOURCES);
  t.same(map('Cats purr when content [1]. Tides follow the moon [2][9].'), {
    answer: 'Cats purr when content [[SRC:0001]]. Tides follow the moon [[SRC:0002]].',
    cited: ['SRC:0001', 'SRC:0002'],
  });
  t.same(map('A [1, 3]. B 【2】. C [2-4]. D [Source 4]. E [^1] [0] [12].').answer, 'A [[SRC:0001]][[SRC:0003]]. B [[SRC:0002]]. C [[SRC:0002]][[SRC:0003]][[SRC:0004]]. D [[SRC:0004]]. E [[SRC:0001]].');
  t.same(map('A [9][2] b [1][1], c [[SRC:0003]] d [[SRC:0042]].'), { answer: 'A [[SRC:0002]] b [[SRC:0001]], c [[SRC:0003]] d.', cited: ['SRC:0002', 'SRC:0001', 'SRC:0003'] });
  t.equal(map('See [the docs](http://x) and [1](http://y).').answer, 'See [the docs](http://x) and [1](http://y).', 'links are not citations');
  t.equal(map('<think>maybe [3]</think>Tides follow the moon [2].').answer, 'Tides follow the moon [[SRC:0002]].', 'reasoning is dropped');
  t.equal(map('Tides follow the moon [2].\n\nSources:\n[1] /notes/cats.md\n[2] /science/tides.txt').answer, 'Tides follow the moon [[SRC:0002]].', 'a trailing source list is dropped');
  t.same(map('Nothing in the collection answers this [7].'), { answer: 'Nothing in the collection answers this.', cited: [] });
});

t.test('openai: history becomes alternating prior messages', async (t) => {
  t.same(
    historyMessages([
      { role: 'assistant', content: 'Hello! [[SRC:0001]]' },
      { role: 'user', content: 'Do cats purr?' },
      { role: 'user', content: 'Loudly?' },
      { role: 'assistant', content: 'Yes [[SRC:0002]].' },
      { role: 'assistant', content: '   ' },
      { role: 'user', content: 'Why?' },
    ]),
    [
      { role: 'user', content: 'Do cats purr?\n\nLoudly?' },
      { role: 'assistant', content: 'Yes.' },
      { role: 'user', content: 'Why?' },
    ],
    'starts with a user turn, merges repeats, strips markers, drops empty turns',
  );
  const long = Array.from({ length: 32 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} ${'x'.repeat(3000)}` }) as const);
  const kept = historyMessages(long);
  t.ok(kept.reduce((n, m) => n + m.content.length, 0) <= 12_000, 'bounded');
  t.match(kept.at(-1)!.content, /^turn 31 /, 'keeps the most recent turns');
});

// ---------------------------------------------------------------------------------------------
// A local OpenAI-compatible server.

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model: string; messages: { role: string; content: string }[]; stream?: boolean; temperature?: number };
}

async function chatServer(t: Test, handle: (seen: Seen, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const s: Seen = { path: req.url ?? '', headers: req.headers, body: JSON.parse(raw) as Seen['body'] };
      seen.push(s);
      handle(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return { seen, base: `http://127.0.0.1:${port}` };
}

function completion(content: string) {
  return JSON.stringify({
    id: 'chatcmpl-test123',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 321, completion_tokens: 17, total_tokens: 338 },
  });
}

t.test('openai: request wire format and mapped answer', async (t) => {
  const { seen, base } = await chatServer(t, (_s, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion('Cats purr when content [1]. Tides follow the moon [2][9].'));
  });
  const g = openAiGenerator({ baseUrl: `${base}/v1/`, apiKey: 'sk-test-SECRET-123', model: 'test-model' });
  t.equal(g.provider, 'openai');
  t.equal(g.model, 'test-model');
  const history: GenerateInput['history'] = [
    { role: 'user', content: 'Do cats purr?' },
    { role: 'assistant', content: 'Yes, cats purr. [[SRC:0001]]' },
  ];
  const res = await g.generate(input('Why do cats purr, and what moves the tides?', { history }));
  t.same(res, { answer: 'Cats purr when content [[SRC:0001]]. Tides follow the moon [[SRC:0002]].', cited: ['SRC:0001', 'SRC:0002'] });

  t.equal(seen.length, 1);
  const req = seen[0]!;
  t.equal(req.path, '/v1/chat/completions');
  t.equal(req.headers.authorization, 'Bearer sk-test-SECRET-123');
  t.match(req.headers['content-type'], /application\/json/);
  t.equal(req.body.model, 'test-model');
  t.equal(req.body.stream, false);
  t.same(req.body.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
  t.match(req.body.messages[0]!.content, /only .*evidence/i, 'the system message restricts the model to the evidence');
  t.match(req.body.messages[0]!.content, /\[2\]/, 'and shows the citation form');
  t.equal(req.body.messages[2]!.content, 'Yes, cats purr.', 'old markers are stripped from history');
  const last = req.body.messages[3]!.content;
  SOURCES.forEach((s, i) => t.ok(last.includes(`[${i + 1}] (${s.path}) `), `evidence block [${i + 1}] names ${s.path}`));
  t.match(last, /\[1\] \(\/notes\/cats\.md\) Purring: Cats purr at a frequency/);
  t.ok(last.indexOf('[1]') < last.indexOf('[2]') && last.indexOf('[2]') < last.indexOf('[4]'), 'numbered in source order');
  t.match(last, /Question: Why do cats purr, and what moves the tides\?$/);

  // A history ending in a user turn folds it into the final user message (roles keep alternating).
  await g.generate(input('And tides?', { history: [...history, { role: 'user', content: 'Why do cats purr?' }] }));
  t.same(seen.at(-1)!.body.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
  t.match(seen.at(-1)!.body.messages[3]!.content, /^Earlier question: Why do cats purr\?\n\nEvidence:/);
  seen.length = 1;

  // A bare origin gets /v1, as the embedding client does.
  const bare = openAiGenerator({ baseUrl: base, model: 'm' });
  await bare.generate(input('Why do cats purr?'));
  t.equal(seen[1]!.path, '/v1/chat/completions');
  t.equal(seen[1]!.headers.authorization, undefined, 'no key, no authorization header');
});

t.test('openai: errors', async (t) => {
  let status = 500;
  let body = '{"error":{"message":"model crashed while loading weights; key sk-test-SECRET-123 was fine"}}';
  const { seen, base } = await chatServer(t, (s, res) => {
    if (s.body.model === 'reasoner') {
      // Like OpenAI's reasoning models: any temperature but the default is refused.
      const refuse = s.body.temperature !== undefined;
      res.writeHead(refuse ? 400 : 200, { 'content-type': 'application/json' });
      res.end(refuse ? '{"error":{"message":"Unsupported value: \'temperature\' does not support 0.2 with this model."}}' : completion('Cats purr when content [1].'));
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  const g = openAiGenerator({ baseUrl: `${base}/v1`, apiKey: 'sk-test-SECRET-123', model: 'test-model' });
  const err = await g.generate(input('Why do cats purr?')).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof GenerationError, 'a GenerationError');
  const e = err as GenerationError;
  t.equal(e.code, 'upstream_error');
  t.equal(e.status, 500);
  t.equal(e.retryable, true);
  t.match(e.message, /answered 500: .*model crashed while loading weights/);
  t.notMatch(e.message, /sk-test-SECRET-123/, 'the api key never appears in errors');

  status = 401;
  body = 'Unauthorized';
  await t.rejects(g.generate(input('Why do cats purr?')), { code: 'upstream_error', status: 401, retryable: false, message: /answered 401: Unauthorized/ });

  status = 200;
  body = '<html>not json</html>';
  await t.rejects(g.generate(input('Why do cats purr?')), { code: 'bad_response', message: /not JSON/ });
  body = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] });
  await t.rejects(g.generate(input('Why do cats purr?')), { code: 'bad_response', message: /no answer text/ });

  // A model that refuses a temperature gets the request again without one, and later requests send none.
  const before = seen.length;
  const g2 = openAiGenerator({ baseUrl: `${base}/v1`, model: 'reasoner' });
  t.same(await g2.generate(input('Why do cats purr?')), { answer: 'Cats purr when content [[SRC:0001]].', cited: ['SRC:0001'] });
  t.equal(seen.length - before, 2, 'one retry');
  t.equal(seen.at(-2)!.body.temperature, 0.2, 'the first request sent a temperature');
  t.equal(seen.at(-1)!.body.temperature, undefined, 'the retry sends none');
  await g2.generate(input('Why do cats purr?'));
  t.equal(seen.length - before, 3, 'the next request needs no retry');

  const down = openAiGenerator({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-test-SECRET-123', model: 'm' });
  await t.rejects(down.generate(input('Why do cats purr?')), { code: 'unreachable', retryable: true, message: /could not be reached/ });
});

t.test('openai: deadline and caller abort', async (t) => {
  const { base } = await chatServer(t, (_s, res) => {
    const timer = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion('Too late [1].'));
    }, 5_000);
    res.on('close', () => clearTimeout(timer));
  });
  const g = openAiGenerator({ baseUrl: `${base}/v1`, model: 'slow' });
  const started = Date.now();
  await t.rejects(g.generate(input('Why do cats purr?', { deadline: Date.now() + 300 })), { name: 'GenerationError', code: 'deadline_exceeded', retryable: true, message: /aborted/ });
  const took = Date.now() - started;
  // The server answers after 5 s: giving up before then, and not before the deadline, is giving up at it.
  t.ok(took >= 250 && took < 5_000, `gave up at the deadline (${took} ms)`);

  const ac = new AbortController();
  setTimeout(() => ac.abort(), 150);
  await t.rejects(g.generate(input('Why do cats purr?', { signal: ac.signal })), { code: 'aborted', retryable: false });

  const short = openAiGenerator({ baseUrl: `${base}/v1`, model: 'slow', timeoutMs: 200 });
  await t.rejects(short.generate(input('Why do cats purr?')), { code: 'upstream_error', message: /timeout/ });

  await t.rejects(g.generate(input('Why do cats purr?', { deadline: Date.now() - 5 })), { code: 'deadline_exceeded' });
});

t.test('followUpQuery: follow-ups borrow the salient words of the last user turn', async (t) => {
  const history: GenerateInput['history'] = [
    { role: 'user', content: 'How long do indoor cats live?' },
    { role: 'assistant', content: 'Indoor cats typically live 12 to 18 years. [[SRC:0001]]' },
  ];
  t.equal(followUpQuery('Why do tides happen twice a day?', history), 'Why do tides happen twice a day?', 'a self-contained question is unchanged');
  t.equal(followUpQuery('And outdoor ones?', history), 'And outdoor ones? indoor cats');
  t.equal(followUpQuery('What about their diet?', history), 'What about their diet? indoor cats');
  t.equal(followUpQuery('Why is that?', history), 'Why is that? indoor cats');
  t.equal(followUpQuery('  Why do cats purr?  ', []), 'Why do cats purr?', 'no history: the question, trimmed');
  // The last user turn was itself a follow-up: earlier turns fill in.
  const deeper: GenerateInput['history'] = [
    { role: 'user', content: 'Tell me about solar panel degradation' },
    { role: 'assistant', content: 'Panels lose 0.5% a year.' },
    { role: 'user', content: 'and inverters?' },
    { role: 'assistant', content: 'They convert DC to AC.' },
  ];
  t.equal(followUpQuery('How long do they last?', deeper), 'How long do they last? inverters solar panel degradation');
});
