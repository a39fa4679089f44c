// A corpus where meaning and words part ways, and an embedding server that knows the meaning: each
// file is about one concept and names it by a different synonym in every sentence, among filler
// words every file shares. BM25 cannot tell which file a sentence comes from; the "concept"
// provider, which maps every synonym to its concept, can. The "scrambled" provider returns
// vectors with no meaning (a hash of the text). Used to show that calibration (issue 16, item 2)
// raises a strong provider's weight and leaves a useless one at the default.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const SYNONYMS_PER_CONCEPT = 6;

/** Deterministic invented words: consonant-vowel syllables from a seeded generator. */
function wordMaker(seed: number): () => string {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  const seen = new Set<string>();
  return () => {
    for (;;) {
      let w = '';
      for (let i = 0; i < 3; i++) w += consonants[Math.floor(next() * consonants.length)]! + vowels[Math.floor(next() * vowels.length)]!;
      w += consonants[Math.floor(next() * consonants.length)]!;
      if (!seen.has(w)) {
        seen.add(w);
        return w;
      }
    }
  };
}

export interface ConceptCorpus {
  /** concepts[c][k]: synonym k of concept c. */
  concepts: string[][];
  /** One file per concept: file c is about concept c. */
  files: { path: string; text: string }[];
}

/**
 * `concepts` files; file c's sentence k names concept c by synonym k, among six filler words. With
 * `decoy`, file 0 never uses synonym 0 of its concept, and file 1 (about concept 1) gets one extra
 * sentence with that synonym: a query of that word finds file 1 by keyword, file 0 by meaning.
 */
export function conceptCorpus(concepts: number, options: { decoy?: boolean } = {}): ConceptCorpus {
  const word = wordMaker(7);
  const fillers = Array.from({ length: 60 }, word);
  const names = Array.from({ length: concepts }, () => Array.from({ length: SYNONYMS_PER_CONCEPT }, word));
  let state = 11;
  const pick = () => fillers[(state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % fillers.length]!;
  const sentence = (name: string) => {
    const words = [pick(), pick(), pick(), name, pick(), pick(), pick()];
    return `${words.join(' ')}.`;
  };
  const files = names.map((synonyms, c) => {
    const used = options.decoy && c === 0 ? synonyms.slice(1) : synonyms;
    const sentences = used.map(sentence);
    if (options.decoy && c === 1) sentences.push(sentence(names[0]![0]!));
    return { path: `/concept-${String(c).padStart(3, '0')}.txt`, text: sentences.join(' ') };
  });
  return { concepts: names, files };
}

/** The concept provider's vector of a text: how often it names each concept, as a unit vector. */
export function conceptVector(corpus: ConceptCorpus, text: string): number[] {
  const v = new Array<number>(corpus.concepts.length).fill(0);
  const conceptOf = new Map(corpus.concepts.flatMap((names, c) => names.map((n) => [n, c] as const)));
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const c = conceptOf.get(w);
    if (c !== undefined) v[c]! += 1;
  }
  const norm = Math.hypot(...v);
  return norm > 0 ? v.map((x) => x / norm) : v;
}

/** A vector with no meaning: components from a hash of the text. */
export function scrambledVector(text: string, dimensions: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  const v = Array.from({ length: dimensions }, () => ((h = (Math.imul(h, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

export interface EmbeddingServer {
  url: string;
  close(): Promise<void>;
}

/** An OpenAI-compatible /v1/embeddings server that embeds with `vectorOf`. */
export async function embeddingServer(vectorOf: (text: string) => number[]): Promise<EmbeddingServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
