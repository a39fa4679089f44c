// A semantic model learned from a collection's own text (issue 16, item 1): latent semantic
// analysis, the top singular vectors of the collection's TF-IDF matrix. Words that share contexts
// in this collection ("feline" and "cat" in a vet's notes) get nearby vectors even where they
// never occur together, which BM25 cannot see and a general-purpose model may not know.
//
// bench/lsa-research.mjs measured it reranking FTS5's top 100 on the three dev sets: at weight
// 0.4, +0.031 nDCG@10 on average with every set gaining, more than the builtin GloVe fusion
// (docs/ranking.md). This module is the model alone: training (pure CPU, deterministic),
// embedding, and a compact binary form for storage. Wiring it into the indexing worker and the
// hybrid search is the next step.
import { termsOf } from '../answer/extractive.js';

export interface CollectionModelOptions {
  /** Dimensions kept (rank of the approximation). */
  dimensions?: number;
  /** Subspace iterations of the randomised SVD: more is closer to the exact singular vectors. */
  iterations?: number;
  /** Most terms kept, the most frequent first (among those in at least 2 texts and at most half). */
  maxTerms?: number;
}

export interface CollectionModel {
  dimensions: number;
  /** How many texts it was learned from. */
  texts: number;
  terms: string[];
  /** Inverse document frequency per term, ln(texts / df). */
  idf: Float32Array;
  /** Term vectors, row by row (terms × dimensions): rows of the top right singular vectors. */
  vectors: Float32Array;
}

/** Below this many texts there is not enough co-occurrence to learn from. */
export const MIN_TEXTS = 50;
const DEFAULTS = { dimensions: 128, iterations: 3, maxTerms: 30_000 };
/** Extra columns of the random subspace: the top `dimensions` converge faster with a margin. */
const OVERSAMPLE = 10;

interface SparseRow {
  idx: Int32Array;
  val: Float64Array;
}

/** log-tf × idf weights of the terms the model knows, one entry per distinct term. */
function weightsOf(terms: readonly string[], index: Map<string, number>, idf: ArrayLike<number>): Map<number, number> {
  const tf = new Map<number, number>();
  for (const t of terms) {
    const i = index.get(t);
    if (i !== undefined) tf.set(i, (tf.get(i) ?? 0) + 1);
  }
  for (const [i, f] of tf) tf.set(i, (1 + Math.log(f)) * idf[i]!);
  return tf;
}

/**
 * Learns the model from texts (passages, or a sample of them), or returns null when there are too
 * few texts or terms. Deterministic: the same texts give the same model.
 */
export function trainCollectionModel(texts: readonly string[], options: CollectionModelOptions = {}): CollectionModel | null {
  return trainFromTerms(texts.map((text) => termsOf(text)), options);
}

/** The words of a text as the model reads them (stemmed, stopwords dropped). */
export const modelTerms = termsOf;

/** trainCollectionModel on texts already split by modelTerms (a caller that embeds them too tokenizes once). */
export function trainFromTerms(docTerms: readonly (readonly string[])[], options: CollectionModelOptions = {}): CollectionModel | null {
  return train(docTerms, options)?.model ?? null;
}

/**
 * trainFromTerms, with each training text's unit vector in the model as embedTerms would give it
 * (null: none of its terms is kept), read off the last step of training: A·Q is already there, so
 * the vector of a text in the sample costs a small rotation instead of a pass over its terms.
 */
export function trainWithTextVectors(docTerms: readonly (readonly string[])[], options: CollectionModelOptions = {}): { model: CollectionModel; textVectors: (Float32Array | null)[] } | null {
  return train(docTerms, options, true);
}

function train(docTerms: readonly (readonly string[])[], options: CollectionModelOptions, withTextVectors = false): { model: CollectionModel; textVectors: (Float32Array | null)[] } | null {
  const { dimensions, iterations, maxTerms } = { ...DEFAULTS, ...options };
  const n = docTerms.length;
  if (n < MIN_TEXTS) return null;
  const df = new Map<string, number>();
  for (const ts of docTerms) for (const t of new Set(ts)) df.set(t, (df.get(t) ?? 0) + 1);
  const kept = [...df]
    .filter(([, c]) => c >= 2 && c <= n / 2)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, maxTerms)
    .map(([t]) => t);
  const m = kept.length;
  const k = Math.min(dimensions, m, n);
  if (k < 2) return null;
  const index = new Map(kept.map((t, i) => [t, i]));
  const idf = Float64Array.from(kept, (t) => Math.log(n / df.get(t)!));

  // Rows of the document-term matrix, each L2-normalised so long texts do not dominate.
  const rows: SparseRow[] = docTerms.map((ts) => {
    const w = weightsOf(ts, index, idf);
    const idx = Int32Array.from(w.keys());
    const val = Float64Array.from(w.values());
    let norm = 0;
    for (const v of val) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < val.length; j++) val[j]! /= norm;
    return { idx, val };
  });

  // Randomised subspace iteration on the term side: Q ← orth(Aᵀ A Q). Q and A·Q are kept row by
  // row, so each nonzero of A scales one short row that stays in cache (the products took 3× as
  // long column by column); the sums run in the same order either way, so the model is the same.
  const width = Math.min(k + OVERSAMPLE, m);
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296 - 0.5;
  };
  // The random start needs no orthonormalising: the first product's result is (a third of the time).
  let q: Dense = { rows: m, cols: width, data: new Float64Array(m * width) };
  for (let l = 0; l < width; l++) for (let t = 0; t < m; t++) q.data[t * width + l] = random();
  // Orthonormalised after every second product, and after the last: orth(X) is X times an
  // upper-triangular matrix with a positive diagonal, which leaves the Q of a QR as it was, so
  // skipping one changes only the rounding (the stored SciFact, Cranfield and CISI models are byte
  // for byte the same) and saves a sixth of the training; two products in a row square the
  // columns' conditioning, not more.
  for (let it = 0; it < iterations; it++) {
    q = transposeTimes(rows, times(rows, q), m);
    if (it % 2 === 1 || it === iterations - 1) orthonormaliseColumns(q);
  }
  // B = A Q (n × width); the eigenvectors of Bᵀ B rotate Q onto the right singular vectors.
  const b = times(rows, q);
  const sums = new Float64Array(width * width);
  for (let r = 0; r < n; r++) {
    const at = r * width;
    for (let i = 0; i < width; i++) {
      const bi = b.data[at + i]!;
      for (let j = i; j < width; j++) sums[i * width + j]! += bi * b.data[at + j]!;
    }
  }
  const gram = Array.from({ length: width }, (_, i) => Float64Array.from({ length: width }, (_, j) => (j >= i ? sums[i * width + j]! : sums[j * width + i]!)));
  const { values, vectors: rotation } = symmetricEigen(gram);
  const order = values.map((_, i) => i).sort((x, y) => values[y]! - values[x]!).slice(0, k);

  // A term's row of the right singular vectors, unscaled: scaling by the singular values, or
  // normalising each term, ranked worse in bench/lsa-research.mjs (ALPHA=1; docs/ranking.md).
  const turn = new Float64Array(width * k);
  for (let l = 0; l < width; l++) for (let d = 0; d < k; d++) turn[l * k + d] = rotation[l]![order[d]!]!;
  const vectors = new Float32Array(m * k);
  const row = new Float64Array(k);
  for (let t = 0; t < m; t++) {
    row.fill(0);
    for (let l = 0; l < width; l++) {
      const ql = q.data[t * width + l]!;
      for (let d = 0; d < k; d++) row[d]! += ql * turn[l * k + d]!;
    }
    for (let d = 0; d < k; d++) vectors[t * k + d] = row[d]!;
  }
  const model = { dimensions: k, texts: n, terms: kept, idf: Float32Array.from(idf), vectors };
  // A text's row of A·Q·turn is its weighted sum of the term vectors: embedTerms's direction (up to
  // the rounding of idf and the vectors to float32).
  const textVectors: (Float32Array | null)[] = [];
  if (withTextVectors) {
    for (let r = 0; r < n; r++) {
      row.fill(0);
      const at = r * width;
      for (let l = 0; l < width; l++) {
        const bl = b.data[at + l]!;
        for (let d = 0; d < k; d++) row[d]! += bl * turn[l * k + d]!;
      }
      textVectors.push(unit(row));
    }
  }
  return { model, textVectors };
}

/** The text the model reads for a file: its passages' headings and text, in order. */
export function modelText(passages: readonly { heading: string; text: string }[]): string {
  return passages.map((p) => (p.heading ? `${p.heading}\n${p.text}` : p.text)).join('\n');
}

/** A unit vector as stored: int8, each component × 127 (its components are at most 1 in size). */
export function encodeTopic(vector: Float32Array): Buffer {
  const out = new Int8Array(vector.length);
  // Int8Array stores round(x) wrapped to -128..127; components of a unit vector never exceed 127.
  for (let i = 0; i < vector.length; i++) out[i] = Math.round(vector[i]! * 127);
  return Buffer.from(out.buffer);
}

/** x / |x| as float32, or null for a vector of no length. */
function unit(x: Float64Array): Float32Array | null {
  let norm = 0;
  for (const v of x) norm += v * v;
  norm = Math.sqrt(norm);
  if (!(norm > 1e-12)) return null;
  return Float32Array.from(x, (v) => v / norm);
}

/** The unit vector of a text in the model's space (its known terms, tf-idf weighted), or null when it has none. */
export function embedWithModel(model: CollectionModel, text: string, index = termIndex(model)): Float32Array | null {
  return embedTerms(model, termsOf(text), index);
}

/**
 * embedWithModel on a text already split by modelTerms. The weights are those of weightsOf, summed
 * in the same order (a term's first occurrence), in arrays kept per model instead of a map per text:
 * the same bits, in a third less time when a training refolds every file (SciFact: 229 → 160 ms).
 */
export function embedTerms(model: CollectionModel, terms: readonly string[], index = termIndex(model)): Float32Array | null {
  const { counts, seen } = scratchOf(model);
  let distinct = 0;
  for (const term of terms) {
    const i = index.get(term);
    if (i === undefined) continue;
    if (counts[i] === 0) seen[distinct++] = i;
    counts[i]!++;
  }
  return weightedSum(model, distinct);
}

/**
 * embedTerms on a text whose words are numbers of a dictionary of the caller's (`ids`), with
 * `rowOf` giving each number's row in the model (-1: not a term of it): the same sums in the same
 * order, so the same bits, without a string lookup per word.
 */
export function embedTermIds(model: CollectionModel, ids: ArrayLike<number>, rowOf: Int32Array): Float32Array | null {
  const { counts, seen } = scratchOf(model);
  let distinct = 0;
  for (let j = 0; j < ids.length; j++) {
    const i = rowOf[ids[j]!]!;
    if (i < 0) continue;
    if (counts[i] === 0) seen[distinct++] = i;
    counts[i]!++;
  }
  return weightedSum(model, distinct);
}

/** The unit tf-idf sum of the `distinct` rows listed in the model's scratch; leaves the counts at zero. */
function weightedSum(model: CollectionModel, distinct: number): Float32Array | null {
  const { counts, seen } = scratchOf(model);
  if (distinct === 0) return null;
  const k = model.dimensions;
  const out = new Float64Array(k);
  for (let j = 0; j < distinct; j++) {
    const t = seen[j]!;
    const weight = (1 + Math.log(counts[t]!)) * model.idf[t]!;
    counts[t] = 0;
    const at = t * k;
    for (let d = 0; d < k; d++) out[d]! += weight * model.vectors[at + d]!;
  }
  return unit(out);
}

/** Per model: a count per term (all zero between calls) and the list of terms a text used. */
const SCRATCH = new WeakMap<CollectionModel, { counts: Float64Array; seen: Int32Array }>();

function scratchOf(model: CollectionModel): { counts: Float64Array; seen: Int32Array } {
  let scratch = SCRATCH.get(model);
  if (!scratch) SCRATCH.set(model, (scratch = { counts: new Float64Array(model.terms.length), seen: new Int32Array(model.terms.length) }));
  return scratch;
}

const INDEXES = new WeakMap<CollectionModel, Map<string, number>>();

/** Term → row, built once per model. */
export function termIndex(model: CollectionModel): Map<string, number> {
  let index = INDEXES.get(model);
  if (!index) INDEXES.set(model, (index = new Map(model.terms.map((t, i) => [t, i]))));
  return index;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Storage: a small header, the terms, their idf, and the vectors as int8 with one scale per term
// (a quarter of float32; cosines move by less than 0.01).

const MAGIC = 'trove-lsa-1';

export function serializeCollectionModel(model: CollectionModel): Buffer {
  const { dimensions: k, terms } = model;
  const header = Buffer.from(JSON.stringify({ magic: MAGIC, dimensions: k, texts: model.texts, terms: terms.length }) + '\n');
  const termBytes = Buffer.from(terms.join('\n'), 'utf8');
  const lengths = Buffer.alloc(8);
  lengths.writeUInt32LE(header.length, 0);
  lengths.writeUInt32LE(termBytes.length, 4);
  const idf = Buffer.from(model.idf.buffer, model.idf.byteOffset, model.idf.byteLength);
  const scales = new Float32Array(terms.length);
  const quantised = new Int8Array(terms.length * k);
  for (let t = 0; t < terms.length; t++) {
    let max = 0;
    for (let d = 0; d < k; d++) max = Math.max(max, Math.abs(model.vectors[t * k + d]!));
    const scale = max / 127 || 1;
    scales[t] = scale;
    for (let d = 0; d < k; d++) quantised[t * k + d] = Math.round(model.vectors[t * k + d]! / scale);
  }
  return Buffer.concat([lengths, header, termBytes, idf, Buffer.from(scales.buffer), Buffer.from(quantised.buffer)]);
}

export function deserializeCollectionModel(bytes: Buffer): CollectionModel {
  const headerLength = bytes.readUInt32LE(0);
  const termsLength = bytes.readUInt32LE(4);
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as { magic: string; dimensions: number; texts: number; terms: number };
  if (header.magic !== MAGIC) throw new Error(`not a collection model (${String(header.magic)})`);
  const k = header.dimensions;
  const m = header.terms;
  let at = 8 + headerLength;
  const terms = m === 0 ? [] : bytes.subarray(at, at + termsLength).toString('utf8').split('\n');
  if (terms.length !== m) throw new Error('a damaged collection model: term count mismatch');
  at += termsLength;
  // Copied out: typed arrays need aligned offsets, which a Buffer slice does not promise.
  const floats = (count: number) => {
    const out = new Float32Array(count);
    Buffer.from(out.buffer).set(bytes.subarray(at, at + count * 4));
    at += count * 4;
    return out;
  };
  const idf = floats(m);
  const scales = floats(m);
  const quantised = new Int8Array(bytes.buffer, bytes.byteOffset + at, m * k);
  const vectors = new Float32Array(m * k);
  for (let t = 0; t < m; t++) for (let d = 0; d < k; d++) vectors[t * k + d] = quantised[t * k + d]! * scales[t]!;
  return { dimensions: k, texts: header.texts, terms, idf, vectors };
}

// ---------------------------------------------------------------------------------------------
// Linear algebra on the sparse rows (n × m) and dense column lists

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** A dense matrix, row by row. */
interface Dense {
  rows: number;
  cols: number;
  data: Float64Array;
}

/** A · Q (Q: m × w): n × w. */
function times(rows: SparseRow[], q: Dense): Dense {
  const w = q.cols;
  const out = new Float64Array(rows.length * w);
  for (let r = 0; r < rows.length; r++) {
    const { idx, val } = rows[r]!;
    const at = r * w;
    for (let j = 0; j < idx.length; j++) {
      const v = val[j]!;
      const from = idx[j]! * w;
      for (let c = 0; c < w; c++) out[at + c]! += v * q.data[from + c]!;
    }
  }
  return { rows: rows.length, cols: w, data: out };
}

/** Aᵀ · B (B: n × w): m × w. */
function transposeTimes(rows: SparseRow[], b: Dense, m: number): Dense {
  const w = b.cols;
  const out = new Float64Array(m * w);
  for (let r = 0; r < rows.length; r++) {
    const { idx, val } = rows[r]!;
    const from = r * w;
    for (let j = 0; j < idx.length; j++) {
      const v = val[j]!;
      const at = idx[j]! * w;
      for (let c = 0; c < w; c++) out[at + c]! += v * b.data[from + c]!;
    }
  }
  return { rows: m, cols: w, data: out };
}

/** orthonormalise on a dense matrix's columns, copied out and back (Gram-Schmidt reads them whole). */
function orthonormaliseColumns(matrix: Dense): void {
  const { rows: m, cols: w, data } = matrix;
  const columns = Array.from({ length: w }, (_, c) => {
    const column = new Float64Array(m);
    for (let t = 0; t < m; t++) column[t] = data[t * w + c]!;
    return column;
  });
  orthonormalise(columns);
  for (let c = 0; c < w; c++) for (let t = 0; t < m; t++) data[t * w + c] = columns[c]![t]!;
}

/** Modified Gram-Schmidt, in place; a column that vanishes stays zero. */
function orthonormalise(cols: Float64Array[]): void {
  for (let j = 0; j < cols.length; j++) {
    const c = cols[j]!;
    for (let i = 0; i < j; i++) {
      const p = cols[i]!;
      const d = dot(c, p);
      for (let r = 0; r < c.length; r++) c[r]! -= d * p[r]!;
    }
    const norm = Math.sqrt(dot(c, c));
    if (norm > 1e-12) for (let r = 0; r < c.length; r++) c[r]! /= norm;
    else c.fill(0);
  }
}

/** Eigenvalues and eigenvectors (as columns) of a small symmetric matrix, by cyclic Jacobi rotations. */
function symmetricEigen(matrix: Float64Array[]): { values: number[]; vectors: Float64Array[] } {
  const n = matrix.length;
  const a = matrix.map((row) => Float64Array.from(row));
  const v = Array.from({ length: n }, (_, i) => Float64Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    let diagonal = 0;
    for (let p = 0; p < n; p++) {
      diagonal += a[p]![p]! ** 2;
      for (let q = p + 1; q < n; q++) off += a[p]![q]! ** 2;
    }
    if (off <= 1e-24 * diagonal) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p]![q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = 0.5 * Math.atan2(2 * apq, a[q]![q]! - a[p]![p]!);
        const c = Math.cos(theta);
        const s = Math.sin(theta);
        for (let k = 0; k < n; k++) {
          const akp = a[k]![p]!;
          const akq = a[k]![q]!;
          a[k]![p] = c * akp - s * akq;
          a[k]![q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p]![k]!;
          const aqk = a[q]![k]!;
          a[p]![k] = c * apk - s * aqk;
          a[q]![k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k]![p]!;
          const vkq = v[k]![q]!;
          v[k]![p] = c * vkp - s * vkq;
          v[k]![q] = s * vkp + c * vkq;
        }
      }
    }
  }
  return { values: a.map((row, i) => row[i]!), vectors: v };
}
