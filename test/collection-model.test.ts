// The collection's own semantic model (issue 16, item 1): learned from the collection's text, it
// puts words that share contexts together even where they never occur in the same text.
import t from 'tap';
import { MIN_TEXTS, cosine, deserializeCollectionModel, embedWithModel, serializeCollectionModel, trainCollectionModel } from '../src/domain/search/collection-model.js';

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
