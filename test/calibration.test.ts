// Issue 16, item 2: the embedding's fusion weight calibrates itself per collection, without
// labels, from pseudo-queries drawn from the collection's own text (src/domain/search/calibration.ts).
import t from 'tap';
import { calibrateSemanticWeight, chooseWeight, MIN_PSEUDO_QUERIES, pseudoQueries, WEIGHT_GRID } from '../src/domain/search/calibration.js';
import { modelTerms, trainFromTerms } from '../src/domain/search/collection-model.js';
import { SEMANTIC_WEIGHT } from '../src/domain/search/fusion-weights.js';
import type { EmbeddingProvider } from '../src/domain/embed/provider.js';
import { conceptCorpus, conceptVector, scrambledVector } from './helpers/concept-corpus.js';

function provider(id: string, dimensions: number, vectorOf: (text: string) => number[]): EmbeddingProvider & { inputs: string[] } {
  const inputs: string[] = [];
  return {
    id,
    dimensions,
    inputs,
    embed: async (texts) => {
      inputs.push(...texts);
      return texts.map((x) => Float32Array.from(vectorOf(x)));
    },
  };
}

/** Rows of n scores where row i's answer is candidate i, from a score function. */
const matrix = (n: number, score: (i: number, j: number) => number) => Array.from({ length: n }, (_, i) => Float64Array.from({ length: n }, (_, j) => score(i, j)));

let seed = 3;
const noise = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;

t.test('pseudo-queries: one sentence of a file against the rest of it, chosen the same way every run', async (t) => {
  const texts = [
    'Cats purr when they are content and calm. Kittens learn to purr from their mothers early. Some large cats cannot purr at all, but roar.',
    'Too short. Two words.',
    'Only one sentence here has six or more words in it.',
  ];
  const first = await pseudoQueries(texts);
  t.equal(first.length, 1, 'a file needs three sentences of six words or more');
  const [pq] = first;
  t.ok(texts[0]!.includes(pq!.query), 'the query is a sentence of the file');
  t.notOk(pq!.rest.includes(pq!.query), 'and the answer is the rest of it, without that sentence');
  t.equal(pq!.rest.split('. ').length, 2);
  t.same(await pseudoQueries(texts), first, 'deterministic');
  t.equal((await pseudoQueries(Array.from({ length: 300 }, (_, i) => `${texts[0]} File ${i} has words enough to count.`))).length, 200, 'at most 200');
  const endless = `${'a line with no end and many words '.repeat(30)}\n${texts[0]}`;
  t.ok((await pseudoQueries([endless])).every((p) => p.query.length <= 500 && p.rest.length <= 2000), 'a query is a sentence of at most 500 characters, an answer at most 2,000');
});

t.test('chooseWeight keeps the default unless a weight clearly wins', async (t) => {
  const n = 200;
  // BM25 finds every answer by a wide margin: no weight of the cosine changes a rank much.
  const bm25 = matrix(n, (i, j) => (i === j ? 10 : noise()));
  const flat = chooseWeight({ bm25, cosine: matrix(n, () => noise()), collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.equal(flat.weight, null, 'a cosine that changes nothing at the default: the default stays');
  t.equal(flat.mrr.length, WEIGHT_GRID.length, 'every weight of the grid is measured');
  const same = chooseWeight({ bm25, cosine: bm25, collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.equal(same.weight, null, 'a cosine that repeats BM25 adds nothing: the default stays');

  const closeBm25 = matrix(n, (i, j) => (i === j ? 1 + noise() : noise()));
  const harmful = chooseWeight({ bm25: closeBm25, cosine: matrix(n, () => noise()), collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.ok(harmful.weight !== null && harmful.weight < SEMANTIC_WEIGHT, `a cosine of noise that costs answers at the default is turned down (${harmful.weight})`);

  const weakBm25 = matrix(n, (i, j) => (i === j ? 0.3 + noise() : noise()));
  const strong = chooseWeight({ bm25: weakBm25, cosine: matrix(n, (i, j) => (i === j ? 0.9 : 0.1 + 0.3 * noise())), collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.ok(strong.weight !== null && strong.weight >= 1, `a cosine that finds what BM25 misses earns a larger weight (${strong.weight})`);
  t.ok(strong.gain >= 0.02 && strong.gain >= 3 * strong.standardError);

  // Rows BM25 cannot score at all (no shared word): every candidate ties. A tie must not count as
  // a win, or weight 0, which leaves them tied, would look perfect.
  const blank = matrix(n, () => 0);
  const tied = chooseWeight({ bm25: blank, cosine: matrix(n, (i, j) => (i === j ? 0.9 : 0.3 * noise())), collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.not(tied.weight, 0, `ties count half: weight ${tied.weight}, MRR at 0 ${tied.mrr[0]!.toFixed(3)}`);
  t.ok(tied.mrr[0]! < 0.1, 'all tied: the answer is anywhere among them');

  const few = chooseWeight({ bm25: weakBm25.slice(0, MIN_PSEUDO_QUERIES - 1), cosine: matrix(MIN_PSEUDO_QUERIES - 1, (i, j) => (i === j ? 1 : 0)), collection: null }, SEMANTIC_WEIGHT, 0.6);
  t.equal(few.weight, null, 'too few pseudo-queries to tell: the default stays');
});

t.test('a provider whose vectors know the collection earns a larger weight; one with vectors of noise does not', async (t) => {
  const corpus = conceptCorpus(90);
  const texts = corpus.files.map((f) => f.text);
  const model = trainFromTerms(texts.map((x) => modelTerms(x)), { dimensions: 64, iterations: 2 });
  const strong = provider('test:concepts', corpus.concepts.length, (x) => conceptVector(corpus, x));
  const strongResult = await calibrateSemanticWeight(texts, strong, model);
  t.equal(strongResult.queries, 90);
  t.ok(strongResult.weight !== null && strongResult.weight >= 1.5, `concept vectors: weight ${strongResult.weight} (MRR by weight ${strongResult.mrr.map((m) => m.toFixed(3)).join(' ')})`);
  t.ok(strong.inputs.every((x) => x.length <= 2000), 'each text embedded is at most a passage long');

  const scrambled = provider('test:scrambled', 90, (x) => scrambledVector(x, 90));
  const scrambledResult = await calibrateSemanticWeight(texts, scrambled, model);
  t.equal(scrambledResult.weight, null, `vectors of noise: the default stays (best gain ${scrambledResult.gain.toFixed(4)})`);
});

t.test('calibrating again after one file changed asks the provider only for the changed pair', async (t) => {
  const corpus = conceptCorpus(90);
  const texts = corpus.files.map((f) => f.text);
  const counting = provider('test:counting', corpus.concepts.length, (x) => conceptVector(corpus, x));
  const first = await calibrateSemanticWeight(texts, counting, null);
  const askedFirst = counting.inputs.length;
  t.equal(askedFirst, 2 * first.queries, 'the first calibration embeds every pseudo-query and answer');
  const again = await calibrateSemanticWeight(texts, counting, null);
  t.equal(counting.inputs.length, askedFirst, 'the same files again: nothing new to embed');
  t.same(again, first, 'and the same result');
  const changed = [...texts];
  changed[5] = `${changed[5]} Another sentence about something new entirely.`;
  await calibrateSemanticWeight(changed, counting, null);
  t.ok(counting.inputs.length - askedFirst <= 2, `one file changed: ${counting.inputs.length - askedFirst} texts embedded`);
  const other = provider('test:other', corpus.concepts.length, (x) => conceptVector(corpus, x));
  await calibrateSemanticWeight(texts, other, null);
  t.equal(other.inputs.length, askedFirst, 'another provider gets no vectors of the first one');
});

