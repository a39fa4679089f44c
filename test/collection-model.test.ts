// The collection's own semantic model (issue 16, item 1): learned from the collection's text, it
// puts words that share contexts together even where they never occur in the same text.
import t from 'tap';
import { MIN_TEXTS, cosine, deserializeCollectionModel, embedTerms, embedWithModel, encodeTopic, modelTerms, serializeCollectionModel, termIndex, trainCollectionModel, trainFromTerms, trainWithTextVectors, type CollectionModel } from '../src/domain/search/collection-model.js';

/** A vet's notes: cats called "cat" or "feline" and dogs "dog" or "canine", never both names in one note. */
function vetNotes(count: number): string[] {
  let seed = 7;
  // The LCG's high bits: its low bits cycle with a short period.
  const pick = <T>(xs: readonly T[]) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return xs[Math.floor((seed / 2 ** 31) * xs.length)]!;
  };
  const topics = [
    { names: ['cat', 'feline'], context: ['purr', 'whiskers', 'litter', 'meow', 'mouse', 'scratch', 'claws', 'yarn'] },
    { names: ['dog', 'canine'], context: ['bark', 'leash', 'fetch', 'bone', 'puppy', 'kennel', 'walk', 'tail'] },
    { names: ['horse', 'equine'], context: ['saddle', 'hoof', 'stable', 'gallop', 'hay', 'mane', 'rider', 'bridle'] },
  ];
  const generic = ['happy', 'sleep', 'food', 'owner', 'house', 'morning', 'vet', 'visit', 'healthy', 'weight'];
  return Array.from({ length: count }, () => {
    const topic = pick(topics);
    const name = pick(topic.names);
    const words = [name, ...Array.from({ length: 6 }, () => pick(topic.context)), ...Array.from({ length: 4 }, () => pick(generic))];
    return `The ${name} ${words.slice(1).join(' ')}.`;
  });
}

const notes = vetNotes(300);
// Three topics: a rank-3 model keeps what the notes are about and drops which name each used.
const model = trainCollectionModel(notes, { dimensions: 3 })!;

t.test('synonyms that never meet share a direction, learned from their contexts', async (t) => {
  t.ok(model, 'a model');
  t.ok(notes.every((n) => !(n.includes('cat') && n.includes('feline'))), 'no note names a cat both ways');
  const v = (text: string) => embedWithModel(model, text)!;
  t.ok(cosine(v('feline'), v('cat')) > 0.8, `feline ~ cat (${cosine(v('feline'), v('cat')).toFixed(3)})`);
  t.ok(cosine(v('feline'), v('dog')) < 0.3, `feline is not dog (${cosine(v('feline'), v('dog')).toFixed(3)})`);
  t.ok(cosine(v('canine'), v('dog')) > 0.8, 'canine ~ dog');
  // The example: "feline happiness" over two notes ranked the dog note first.
  const query = v('feline happiness');
  const cats = v('Cats purr when they are happy.');
  const dogs = v('Dogs wag their tails when happy.');
  t.ok(cosine(query, cats) > cosine(query, dogs), `the cat note ranks first (${cosine(query, cats).toFixed(3)} vs ${cosine(query, dogs).toFixed(3)})`);
  t.equal(embedWithModel(model, 'qwerty zxcvb'), null, 'a text with no known term has no vector');
});

t.test('deterministic, and its stored form keeps what it knows', async (t) => {
  const again = trainCollectionModel(notes, { dimensions: 3 })!;
  t.same(Array.from(again.vectors), Array.from(model.vectors), 'the same texts give the same model');
  const wide = trainCollectionModel(notes, { dimensions: 32 })!;
  const wideBytes = serializeCollectionModel(wide).length;
  t.ok(wideBytes < wide.vectors.byteLength / 2, `int8 storage: ${wideBytes} bytes for ${wide.vectors.byteLength} of float32 vectors`);
  const bytes = serializeCollectionModel(model);
  const read = deserializeCollectionModel(bytes);
  t.same(read.terms, model.terms);
  t.equal(read.dimensions, model.dimensions);
  t.equal(read.texts, 300);
  for (const [a, b] of [['feline', 'cat'], ['feline', 'dog'], ['saddle', 'equine']] as const) {
    const before = cosine(embedWithModel(model, a)!, embedWithModel(model, b)!);
    const after = cosine(embedWithModel(read, a)!, embedWithModel(read, b)!);
    t.ok(Math.abs(before - after) < 0.01, `${a}/${b}: ${before.toFixed(4)} → ${after.toFixed(4)}`);
  }
  t.throws(() => deserializeCollectionModel(Buffer.concat([Buffer.from([5, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{"a"}\n')])), 'damaged bytes are refused');
  t.throws(() => deserializeCollectionModel(serializeCollectionModel(model).fill(0, 8, 20)), 'so is a damaged header');
});

t.test('too little to learn from: no model', async (t) => {
  t.equal(trainCollectionModel(notes.slice(0, MIN_TEXTS - 1)), null, `fewer than ${MIN_TEXTS} texts`);
  t.equal(trainCollectionModel(Array.from({ length: 60 }, (_, i) => `word${i} other${i}`)), null, 'no term in two texts');
  t.equal(trainCollectionModel([]), null);
});

/** embedTerms as first written, a map of log-tf × idf per text: the reference the faster one must match bit for bit. */
function referenceEmbed(model: CollectionModel, terms: readonly string[]): Float32Array | null {
  const index = termIndex(model);
  const tf = new Map<number, number>();
  for (const term of terms) {
    const i = index.get(term);
    if (i !== undefined) tf.set(i, (tf.get(i) ?? 0) + 1);
  }
  if (tf.size === 0) return null;
  const k = model.dimensions;
  const out = new Float64Array(k);
  for (const [i, f] of tf) for (let d = 0; d < k; d++) out[d]! += (1 + Math.log(f)) * model.idf[i]! * model.vectors[i * k + d]!;
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 1e-12 ? Float32Array.from(out, (x) => x / norm) : null;
}

t.test("a text's vector is the same whatever was embedded before it", async (t) => {
  const texts = vetNotes(200).map((x) => modelTerms(x));
  const model = trainFromTerms(texts, { dimensions: 16, iterations: 2 })!;
  // Repeated terms, unknown terms, and a text of unknown terms only between two known ones.
  const probes = [...texts.slice(0, 50), ['cat', 'cat', 'cat', 'purr'], ['qqq', 'zzz'], ['dog', 'qqq', 'dog'], texts[0]!];
  for (const [i, terms] of probes.entries()) {
    const got = embedTerms(model, terms);
    const want = referenceEmbed(model, terms);
    if (want === null) t.equal(got, null, `probe ${i}: no known term, no vector`);
    else t.same(Array.from(got!), Array.from(want), `probe ${i}: bit for bit the reference`);
  }
});

t.test("the sample's vectors read off the training are the ones embedTerms gives", async (t) => {
  const texts = [...vetNotes(150).map((x) => modelTerms(x)), ['qqq', 'zzz']];
  const trained = trainWithTextVectors(texts, { dimensions: 16, iterations: 2 })!;
  t.equal(trained.textVectors.length, texts.length, 'one per training text');
  t.same(serializeCollectionModel(trained.model), serializeCollectionModel(trainFromTerms(texts, { dimensions: 16, iterations: 2 })!), 'the same model as trainFromTerms');
  t.equal(trained.textVectors.at(-1), null, 'a text with no kept term has none');
  let worst = 1;
  let differing = 0;
  for (const [i, terms] of texts.entries()) {
    const direct = embedTerms(trained.model, terms);
    const read = trained.textVectors[i]!;
    if (!direct) continue;
    worst = Math.min(worst, cosine(direct, read));
    const a = encodeTopic(direct);
    const b = encodeTopic(read);
    for (let d = 0; d < a.length; d++) if (a[d] !== b[d]) differing++;
  }
  t.ok(worst > 1 - 1e-6, `the same direction (worst cosine ${worst})`);
  t.ok(differing <= 2, `and the same stored bytes, but for a rounding at most (${differing} components differ)`);
});
