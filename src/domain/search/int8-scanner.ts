// Approximate dot products of one query against many int8 vectors, in WebAssembly SIMD. The
// dense stage keeps each collection's vectors in memory (src/domain/search/vector-copies.ts) and scans them here:
// a brute-force scan of 100,000 100-dimension vectors takes a few ms this way, against 20-27 ms
// for sqlite-vec's scan on the same machine (bench: semantic-scale). Rows are int8 with one float
// scale each (a quarter of float32's memory, so a million passages need about 128 MB, not 400);
// the scan only shortlists, and `errorBound` says by how much its scores can be off, so the
// caller can re-score a shortlist that provably holds the exact top-k (src/domain/search/vector-scan.ts).
//
// The module is a few dozen instructions, assembled below rather than shipped as a binary, so
// what runs is readable in this file. Its one function:
//   scan(data, query, scales, out, rows, stride):
//     out[r] = scales[r] * Σ_j int8(data[r*stride + j]) * query[j], j < stride
// with byte offsets into its own memory, `stride` a multiple of 16 and query float32.
// Node has WebAssembly; the TypeScript lib set here (ES2024, no DOM) does not declare it.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object) => { exports: Record<string, unknown> } } })
  .WebAssembly;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
};
const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];
const name = (s: string) => [...leb(s.length), ...Buffer.from(s, 'utf8')];

// Locals: params 0-5 (data, query, scales, out, rows, stride), then r, j, p (i32), acc, v, w (v128).
const [DATA, QUERY, SCALES, OUT, ROWS, STRIDE, R, J, P, ACC, V, W] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] as const;
const get = (l: number) => [0x20, l];
const set = (l: number) => [0x21, l];
const i32 = (n: number) => [0x41, ...leb(n)];
const simd = (op: number) => [0xfd, ...leb(op)];
const I32_ADD = 0x6a;
const I32_SHL = 0x74;
const I32_GE_U = 0x4f;
const F32_ADD = 0x92;
const F32_MUL = 0x94;
const F32_LOAD = [0x2a, 2, 0];
const F32_STORE = [0x38, 2, 0];
const v128Load = (offset: number) => [...simd(0), 0, ...leb(offset)];
const V128_ZERO = [...simd(12), ...new Array<number>(16).fill(0)];
const I16X8_EXTEND_LOW_I8X16_S = simd(0x87);
const I16X8_EXTEND_HIGH_I8X16_S = simd(0x88);
const I32X4_EXTEND_LOW_I16X8_S = simd(0xa7);
const I32X4_EXTEND_HIGH_I16X8_S = simd(0xa8);
const F32X4_CONVERT_I32X4_S = simd(0xfa);
const F32X4_ADD = simd(228);
const F32X4_MUL = simd(230);
const lane = (i: number) => [...simd(31), i];
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = 0x0b;
const BR = (depth: number) => [0x0c, depth];
const BR_IF = (depth: number) => [0x0d, depth];
const times4 = (l: number) => [...get(l), ...i32(2), I32_SHL];
// acc += float(four int8 lanes of w, sign-extended) * query[j + 4*quarter .. +4]
const accumulate = (widen: number[], quarter: number) => [
  ...get(ACC),
  ...get(W), ...widen, ...F32X4_CONVERT_I32X4_S,
  ...get(QUERY), ...times4(J), I32_ADD, ...v128Load(quarter * 16),
  ...F32X4_MUL, ...F32X4_ADD, ...set(ACC),
];

const body = [
  2, 3, 0x7f, 3, 0x7b,
  ...get(DATA), ...set(P),
  ...BLOCK, ...LOOP,
  ...get(R), ...get(ROWS), I32_GE_U, ...BR_IF(1),
  ...V128_ZERO, ...set(ACC),
  ...i32(0), ...set(J),
  ...BLOCK, ...LOOP,
  ...get(J), ...get(STRIDE), I32_GE_U, ...BR_IF(1),
  // Sixteen int8 values: widened to 16 bits, then to 32, then converted to float.
  ...get(P), ...get(J), I32_ADD, ...v128Load(0), ...set(V),
  ...get(V), ...I16X8_EXTEND_LOW_I8X16_S, ...set(W),
  ...accumulate(I32X4_EXTEND_LOW_I16X8_S, 0),
  ...accumulate(I32X4_EXTEND_HIGH_I16X8_S, 1),
  ...get(V), ...I16X8_EXTEND_HIGH_I8X16_S, ...set(W),
  ...accumulate(I32X4_EXTEND_LOW_I16X8_S, 2),
  ...accumulate(I32X4_EXTEND_HIGH_I16X8_S, 3),
  ...get(J), ...i32(16), I32_ADD, ...set(J),
  ...BR(0),
  END, END,
  ...get(OUT), ...times4(R), I32_ADD,
  ...get(ACC), ...lane(0),
  ...get(ACC), ...lane(1), F32_ADD,
  ...get(ACC), ...lane(2), F32_ADD,
  ...get(ACC), ...lane(3), F32_ADD,
  ...get(SCALES), ...times4(R), I32_ADD, ...F32_LOAD, F32_MUL,
  ...F32_STORE,
  ...get(P), ...get(STRIDE), I32_ADD, ...set(P),
  ...get(R), ...i32(1), I32_ADD, ...set(R),
  ...BR(0),
  END, END,
  END,
];

const MODULE = new Wasm.Module(
  new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 6, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [2, ...name('scan'), 0, 0, ...name('memory'), 2, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]),
);

const PAGE = 65536;
const F32_EPSILON = 2 ** -23;

/** A fixed set of vectors in WebAssembly memory as int8 with a scale per row, scanned against one query at a time. */
export class Int8Scanner {
  readonly rows: number;
  readonly dimensions: number;
  private readonly stride: number;
  private readonly scanFn: (data: number, query: number, scales: number, out: number, rows: number, stride: number) => void;
  private readonly memory: WasmMemory;
  private readonly queryOffset: number;
  private readonly scalesOffset: number;
  private readonly outOffset: number;
  /** The largest ‖v − v̂‖ over rows: how far a row's int8 form (scale included) is from its float32 vector. */
  private maxRowError = 0;
  private scanCount = 0;

  constructor(rows: number, dimensions: number) {
    this.rows = rows;
    this.dimensions = dimensions;
    this.stride = Math.ceil(dimensions / 16) * 16;
    this.queryOffset = rows * this.stride;
    this.scalesOffset = this.queryOffset + this.stride * 4;
    this.outOffset = this.scalesOffset + rows * 4;
    const bytes = this.outOffset + rows * 4;
    const instance = new Wasm.Instance(MODULE);
    this.memory = instance.exports.memory as WasmMemory;
    this.memory.grow(Math.max(0, Math.ceil(bytes / PAGE) - 1));
    this.scanFn = instance.exports.scan as Int8Scanner['scanFn'];
  }

  /** Bytes a scanner of this shape holds (what the memory budget counts before building one). */
  static bytesFor(rows: number, dimensions: number): number {
    const stride = Math.ceil(dimensions / 16) * 16;
    return Math.max(PAGE, Math.ceil((rows * stride + stride * 4 + rows * 8) / PAGE) * PAGE);
  }

  /** Bytes this scanner holds. */
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * Sets row `row` from a float32 vector (the bytes as stored): each value becomes round(x / s)
   * with s = max|x| / 127, so the largest value keeps full int8 range.
   */
  setBytes(row: number, bytes: Uint8Array): void {
    if (bytes.byteLength !== this.dimensions * 4) throw new Error(`vector of ${bytes.byteLength} bytes, expected ${this.dimensions * 4}`);
    const v = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    let max = 0;
    for (const x of v) max = Math.max(max, Math.abs(x));
    // The scale as the kernel will see it (float32), so the error below is the one it makes.
    const scale = Math.fround(max / 127);
    const out = new Int8Array(this.memory.buffer, row * this.stride, this.dimensions);
    let err2 = 0;
    for (let j = 0; j < v.length; j++) {
      const q = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(v[j]! / scale)));
      out[j] = q;
      err2 += (v[j]! - q * scale) ** 2;
    }
    new Float32Array(this.memory.buffer, this.scalesOffset + row * 4, 1)[0] = scale;
    this.maxRowError = Math.max(this.maxRowError, Math.sqrt(err2));
  }

  /**
   * How far any row's scan score can be from the exact dot product of the float32 vectors, as
   * the store's exact score gives it (1 - d²/2 from a float32 L2 distance, sqlite-vec's in SQLite):
   * ‖q‖·max‖v − v̂‖ by Cauchy-Schwarz, plus float32 rounding of the kernel's sum and of the
   * store's, each bounded by (terms + a few) · ε · (the sum of absolute terms ≤ √d·‖q‖ for unit rows, ≤ 4 for d²).
   */
  errorBound(query: Float32Array): number {
    let q2 = 0;
    for (const x of query) q2 += x * x;
    const qNorm = Math.sqrt(q2);
    const rounding = (this.stride + 8) * F32_EPSILON * (Math.sqrt(this.dimensions) * qNorm + 4);
    return qNorm * this.maxRowError + rounding;
  }

  /** Scans run so far: a view `scan` returned holds its scores while this has not moved. */
  get scans(): number {
    return this.scanCount;
  }

  /** The approximate dot product of `query` with every row (a view, valid until the next scan). */
  scan(query: Float32Array): Float32Array {
    if (query.length !== this.dimensions) throw new Error(`query of ${query.length} dimensions, expected ${this.dimensions}`);
    this.scanCount++;
    const q = new Float32Array(this.memory.buffer, this.queryOffset, this.stride);
    q.fill(0);
    q.set(query);
    this.scanFn(0, this.queryOffset, this.scalesOffset, this.outOffset, this.rows, this.stride);
    return new Float32Array(this.memory.buffer, this.outOffset, this.rows);
  }
}
