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
  // Each distinct word gets a number once; the texts are read as numbers from then on (a string
  // lookup per word, not one per word per pass).
  const numbers = new Map<string, number>();
  const words: string[] = [];
  const dfOf: number[] = [];
  const lastText: number[] = [];
  const textIds = docTerms.map((ts, d) => {
    const ids = new Int32Array(ts.length);
    for (let j = 0; j < ts.length; j++) {
      let id = numbers.get(ts[j]!);
      if (id === undefined) {
        numbers.set(ts[j]!, (id = words.length));
        words.push(ts[j]!);
        dfOf.push(0);
        lastText.push(-1);
      }
      if (lastText[id] !== d) {
        lastText[id] = d;
        dfOf[id]!++;
      }
      ids[j] = id;
    }
    return ids;
  });
  const keptIds = words
    .map((_, id) => id)
    .filter((id) => dfOf[id]! >= 2 && dfOf[id]! <= n / 2)
    .sort((a, b) => dfOf[b]! - dfOf[a]! || (words[a]! < words[b]! ? -1 : 1))
    .slice(0, maxTerms);
  const kept = keptIds.map((id) => words[id]!);
  const m = kept.length;
  const k = Math.min(dimensions, m, n);
  if (k < 2) return null;
  const rowOf = new Int32Array(words.length).fill(-1);
  keptIds.forEach((id, row) => (rowOf[id] = row));
  const idf = Float64Array.from(keptIds, (id) => Math.log(n / dfOf[id]!));

  // Rows of the document-term matrix, each L2-normalised so long texts do not dominate: log-tf ×
  // idf per kept term, in the order of each term's first occurrence in the text (the order the
  // products below have always summed in, so the model stays the same, bit for bit).
  const counts = new Float64Array(m);
  const seen = new Int32Array(m);
  const rows: SparseRow[] = textIds.map((ids) => {
    const distinct = countRows(ids, rowOf, counts, seen);
    const idx = seen.slice(0, distinct);
    const val = new Float64Array(distinct);
    for (let j = 0; j < distinct; j++) {
      const i = idx[j]!;
      val[j] = (1 + Math.log(counts[i]!)) * idf[i]!;
      counts[i] = 0;
    }
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
  const columns = transposeRows(rows, m);
  for (let l = 0; l < width; l++) for (let t = 0; t < m; t++) q.data[t * width + l] = random();
  // Orthonormalised after every second product, and after the last: orth(X) is X times an
  // upper-triangular matrix with a positive diagonal, which leaves the Q of a QR as it was, so
  // skipping one changes only the rounding (the stored SciFact, Cranfield and CISI models are byte
  // for byte the same) and saves a sixth of the training; two products in a row square the
  // columns' conditioning, not more.
  for (let it = 0; it < iterations; it++) {
    q = times(columns, times(rows, q));
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
  const pair = new Float64Array(k);
  // Two terms at a time share each row of `turn` (each sum still runs over l in order: the same bits).
  let t = 0;
  for (; t + 1 < m; t += 2) {
    row.fill(0);
    pair.fill(0);
    for (let l = 0; l < width; l++) {
      const q0 = q.data[t * width + l]!;
      const q1 = q.data[(t + 1) * width + l]!;
      const at = l * k;
      for (let d = 0; d < k; d++) {
        const tl = turn[at + d]!;
        row[d]! += q0 * tl;
        pair[d]! += q1 * tl;
      }
    }
    for (let d = 0; d < k; d++) {
      vectors[t * k + d] = row[d]!;
      vectors[(t + 1) * k + d] = pair[d]!;
    }
  }
  for (; t < m; t++) {
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
 * embedWithModel on a text already split by modelTerms: log-tf × idf per known term, summed in the
 * order of each term's first occurrence, in arrays kept per model instead of a map per text (a
 * third less time when a training refolds every file, SciFact 229 → 160 ms, with the same bits).
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
  return weightedSum(model, countRows(ids, rowOf, counts, seen));
}

/**
 * Counts a text's words (numbers, `rowOf` their rows; -1: not kept) into `counts`, listing each row
 * in `seen` at its first occurrence; returns how many distinct rows. `counts` is zero where the
 * caller left it so.
 */
function countRows(ids: ArrayLike<number>, rowOf: Int32Array, counts: Float64Array, seen: Int32Array): number {
  let distinct = 0;
  for (let j = 0; j < ids.length; j++) {
    const i = rowOf[ids[j]!]!;
    if (i < 0) continue;
    if (counts[i] === 0) seen[distinct++] = i;
    counts[i]!++;
  }
  return distinct;
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

/**
 * A · Q (Q: m × w): n × w. Two nonzeros of a row at a time, each output still summed over them in
 * order ((x + a) + b is what two passes compute), with one load and store of it instead of two.
 */
function times(rows: SparseRow[], q: Dense): Dense {
  const w = q.cols;
  const data = q.data;
  const out = new Float64Array(rows.length * w);
  for (let r = 0; r < rows.length; r++) {
    const { idx, val } = rows[r]!;
    const at = r * w;
    let j = 0;
    for (; j + 1 < idx.length; j += 2) {
      const v0 = val[j]!;
      const v1 = val[j + 1]!;
      const from0 = idx[j]! * w;
      const from1 = idx[j + 1]! * w;
      for (let c = 0; c < w; c++) out[at + c] = out[at + c]! + v0 * data[from0 + c]! + v1 * data[from1 + c]!;
    }
    for (; j < idx.length; j++) {
      const v = val[j]!;
      const from = idx[j]! * w;
      for (let c = 0; c < w; c++) out[at + c]! += v * data[from + c]!;
    }
  }
  return { rows: rows.length, cols: w, data: out };
}

/**
 * The rows of Aᵀ: for each term, the texts it occurs in, in order, with its weights. Aᵀ · B read
 * from these sums each output over the texts in the same order as A's rows would give it.
 */
function transposeRows(rows: SparseRow[], m: number): SparseRow[] {
  const lengths = new Int32Array(m);
  for (const { idx } of rows) for (let j = 0; j < idx.length; j++) lengths[idx[j]!]!++;
  const out = Array.from(lengths, (length) => ({ idx: new Int32Array(length), val: new Float64Array(length) }));
  const filled = new Int32Array(m);
  rows.forEach(({ idx, val }, r) => {
    for (let j = 0; j < idx.length; j++) {
      const t = idx[j]!;
      const at = filled[t]!++;
      out[t]!.idx[at] = r;
      out[t]!.val[at] = val[j]!;
    }
  });
  return out;
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

/**
 * Modified Gram-Schmidt, in place; a column that vanishes stays zero. Each pass takes one column's
 * projection off and sums the next one's dot product with what is left, the same operations in
 * the same order as a pass for each, in half the reads.
 */
function orthonormalise(cols: Float64Array[]): void {
  for (let j = 0; j < cols.length; j++) {
    const c = cols[j]!;
    let d = j > 0 ? dot(c, cols[0]!) : 0;
    for (let i = 0; i < j; i++) {
      const p = cols[i]!;
      const next = i + 1 < j ? cols[i + 1]! : null;
      let nextDot = 0;
      if (next) {
        for (let r = 0; r < c.length; r++) {
          const v = (c[r]! -= d * p[r]!);
          nextDot += v * next[r]!;
        }
      } else {
        for (let r = 0; r < c.length; r++) c[r]! -= d * p[r]!;
      }
      d = nextDot;
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
