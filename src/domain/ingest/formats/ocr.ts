// The shared OCR engine: one tesseract.js worker, created on first use, reused, and stopped by shutdownOcr().
// Everything is offline: the language data comes from @tesseract.js-data/eng in node_modules and the engine
// from tesseract.js-core; nothing is fetched and nothing is written to a cache.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type Tesseract from 'tesseract.js';
import { lazyImport } from '../lazy.js';
import { IngestFailure, type Block, type EvidenceKind } from '../types.js';

/** A box `[x0, y0, x1, y1]`, origin top-left. */
export type Box = [number, number, number, number];

export interface OcrLine {
  text: string;
  /** In pixels of the image OCR read. */
  bbox: Box;
  /** 0-100, the mean confidence of the words kept. */
  confidence: number;
}

export interface OcrParagraph {
  lines: OcrLine[];
  bbox: Box;
}

export interface OcrResult {
  /** Paragraphs in reading order, noise removed. */
  paragraphs: OcrParagraph[];
  /** All kept lines, in order. */
  lines: OcrLine[];
}

export interface RecognizeOptions {
  /** Epoch ms after which recognition is abandoned (the engine is then stopped) with `extraction_failed`. */
  deadline: number;
  /** The image's resolution when known (rendered PDF pages), so tesseract need not guess it. */
  dpi?: number;
}

// Clear text reads at 85-96; shapes, photos and textures read as short "words" at 0-50.
/** Words below this confidence are dropped when they carry no letters or digits, or are 1-2 characters long. */
const MIN_WEAK_WORD_CONFIDENCE = 70;
/** Words below this confidence are dropped outright. */
const MIN_WORD_CONFIDENCE = 40;
/** Lines whose kept words average below this confidence are dropped as noise. */
const MIN_LINE_CONFIDENCE = 60;
/** The English LSTM model is megabytes; anything much smaller is not a usable .traineddata file. */
const MIN_TRAINEDDATA_BYTES = 500_000;
/** How long starting the engine may take before OCR is reported unavailable, whatever the deadline. */
const START_TIMEOUT_MS = 60_000;

const ALNUM = /[\p{L}\p{N}]/u;

type Worker = Tesseract.Worker;

/** A started engine, and a promise that rejects when its thread dies (out of memory, crash, terminate). */
interface Engine {
  worker: Worker;
  died: Promise<never>;
}

/** The start of the message of a failure to decode the image given to recognize(). */
export const OCR_UNREADABLE_PREFIX = 'OCR could not read the image:';

let enginePromise: Promise<Engine> | undefined;
/**
 * tesseract.js loads when the first image is read, not when this module does: the daemon and the
 * indexing worker import this module at start-up (issue 15, "start-up that loads only what the
 * first request needs").
 */
const loadTesseract = lazyImport(async (): Promise<typeof Tesseract> => (await import('tesseract.js')).default);
/** Jobs run one at a time on the one worker; each waits for the previous one to settle. */
let queue: Promise<void> = Promise.resolve();

/**
 * Reads the text in an image (PNG, JPEG, WebP, TIFF with the compressions leptonica reads, PNM).
 * Jobs are queued on one shared worker. Fails with `extraction_failed` when the image cannot be decoded,
 * the engine cannot start, or the deadline passes (the engine is then stopped and restarted on next use).
 */
export function recognize(image: Uint8Array, options: RecognizeOptions): Promise<OcrResult> {
  const job = queue.then(() => recognizeNow(image, options));
  queue = job.then(
    () => undefined,
    () => undefined,
  );
  return job;
}

/** Stops the OCR worker, if one was started (the indexing thread calls it before it exits). */
export async function shutdownOcr(): Promise<void> {
  const pending = enginePromise;
  enginePromise = undefined;
  if (pending !== undefined) await stopEngine(pending);
}

async function recognizeNow(image: Uint8Array, options: RecognizeOptions): Promise<OcrResult> {
  if (Date.now() >= options.deadline) throw timeLimitFailure();
  const starting = getEngine();
  const engine = await withTimeout(starting, Math.min(msUntil(options.deadline), START_TIMEOUT_MS), () => {
    // Starting took too long: forget this engine (stopping it if it ever starts) so the next job retries.
    void stopEngine(starting);
    return Date.now() >= options.deadline ? timeLimitFailure() : new IngestFailure('extraction_failed', 'the OCR engine did not start in time');
  });

  const params: Record<string, string> = {};
  if (options.dpi !== undefined) params.user_defined_dpi = String(Math.round(options.dpi));
  // tesseract.js copies the bytes to its thread; a Buffer is what its loader expects.
  const bytes = Buffer.isBuffer(image) ? image : Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  const job = engine.worker.recognize(bytes, params, { text: false, blocks: true }).catch((error: unknown) => {
    throw new IngestFailure('extraction_failed', `${OCR_UNREADABLE_PREFIX} ${describe(error)}`, { cause: error });
  });
  const result = await withTimeout(Promise.race([job, engine.died]), msUntil(options.deadline), () => {
    // The engine is busy with this image and cannot be interrupted: stop it; the next job starts a new one.
    void stopEngine(starting);
    return timeLimitFailure();
  });
  return readResult(result.data.blocks ?? []);
}

function getEngine(): Promise<Engine> {
  if (enginePromise === undefined) {
    const starting = startEngine();
    enginePromise = starting;
    starting.then(
      (engine) => {
        // A thread that dies is forgotten, so the next job starts a new one.
        engine.died.catch(() => {
          if (enginePromise === starting) enginePromise = undefined;
        });
      },
      () => {
        if (enginePromise === starting) enginePromise = undefined;
      },
    );
  }
  return enginePromise;
}

async function stopEngine(which: Promise<Engine>): Promise<void> {
  if (enginePromise === which) enginePromise = undefined;
  try {
    const engine = await withTimeout(which, START_TIMEOUT_MS, () => undefined);
    await engine?.worker.terminate();
  } catch {
    // It never started, or is already gone.
  }
}

async function startEngine(): Promise<Engine> {
  const langPath = await findLanguageData();
  // tesseract.js reports a failure to load the language data or initialise only to errorHandler (its
  // createWorker promise then never settles): such an error fails the start at once.
  let failStart: ((error: unknown) => void) | undefined;
  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });
  startFailed.catch(() => undefined);
  let worker: Worker;
  try {
    const Tesseract = await loadTesseract();
    worker = await Promise.race([
      Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
        langPath,
        gzip: true,
        // No cache: the data is read from node_modules each time a worker starts, never written anywhere.
        cacheMethod: 'none',
        logger: () => undefined,
        // Without a handler tesseract.js rethrows job errors from its message listener, crashing the thread.
        // Job errors also reject the job's own promise, so after the start they need nothing more.
        errorHandler: (error: unknown) => failStart?.(error),
      }),
      startFailed,
    ]);
  } catch (error) {
    throw new IngestFailure('extraction_failed', `the OCR engine could not start: ${describe(error)}`, { cause: error });
  } finally {
    failStart = undefined;
  }
  // tesseract.js keeps its node:worker_threads Worker as `worker`; its own `onerror` hook is never called in Node.
  const thread = (worker as Worker & { worker?: EventEmitter | null }).worker;
  const died = new Promise<never>((_, reject) => {
    const fail = (reason: string) => () => reject(new IngestFailure('extraction_failed', `the OCR engine stopped: ${reason}`));
    thread?.on('error', fail('its thread failed'));
    thread?.on('exit', fail('its thread exited'));
  });
  died.catch(() => undefined);
  // Tesseract's warnings ("Invalid resolution", "Estimating resolution") go nowhere instead of stderr.
  await worker.setParameters({ debug_file: '/dev/null' }).catch(() => undefined);
  return { worker, died };
}

let languageData: Promise<string> | undefined;

/**
 * The directory holding eng.traineddata.gz; the LSTM-only "best_int" data is preferred (smaller, what OEM 1
 * uses). The file is checked once per process: tesseract.js 7.0.0 crashes its host thread (a TypeError
 * thrown from its message listener) when initialisation fails on damaged data, so that must not happen.
 */
function findLanguageData(): Promise<string> {
  languageData ??= locateLanguageData();
  languageData.catch(() => {
    languageData = undefined;
  });
  return languageData;
}

async function locateLanguageData(): Promise<string> {
  const require = createRequire(import.meta.url);
  let root: string;
  try {
    root = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
  } catch (error) {
    throw new IngestFailure('extraction_failed', 'the OCR language data (@tesseract.js-data/eng) is not installed', { cause: error });
  }
  const problems: string[] = [];
  for (const dir of ['4.0.0_best_int', '4.0.0']) {
    const file = path.join(root, dir, 'eng.traineddata.gz');
    try {
      const data = gunzipSync(await readFile(file));
      if (data.length < MIN_TRAINEDDATA_BYTES) throw new Error(`only ${data.length} bytes`);
      return path.dirname(file);
    } catch (error) {
      problems.push(`${file}: ${describe(error)}`);
    }
  }
  throw new IngestFailure('extraction_failed', `the OCR language data is missing or damaged (${problems.join('; ')})`);
}

/** Rebuilds paragraphs and lines from tesseract's words, dropping low-confidence noise. */
function readResult(blocks: readonly Tesseract.Block[]): OcrResult {
  const paragraphs: OcrParagraph[] = [];
  const lines: OcrLine[] = [];
  for (const block of blocks) {
    for (const paragraph of block.paragraphs ?? []) {
      const kept: OcrLine[] = [];
      for (const line of paragraph.lines ?? []) {
        const read = readLine(line);
        if (read !== undefined) kept.push(read);
      }
      if (kept.length === 0) continue;
      paragraphs.push({ lines: kept, bbox: unionBoxes(kept.map((l) => l.bbox)) });
      lines.push(...kept);
    }
  }
  return { paragraphs, lines };
}

function readLine(line: Tesseract.Line): OcrLine | undefined {
  const words = (line.words ?? []).filter((word) => {
    const text = word.text.trim();
    if (text === '' || word.confidence < MIN_WORD_CONFIDENCE) return false;
    const weak = !ALNUM.test(text) || text.length <= 2;
    return !weak || word.confidence >= MIN_WEAK_WORD_CONFIDENCE;
  });
  if (words.length === 0) return undefined;
  const confidence = words.reduce((sum, word) => sum + word.confidence, 0) / words.length;
  const text = words.map((word) => word.text.trim()).join(' ');
  if (confidence < MIN_LINE_CONFIDENCE || !ALNUM.test(text)) return undefined;
  return { text, bbox: unionBoxes(words.map((word) => toBox(word.bbox))), confidence: Math.round(confidence * 10) / 10 };
}

function toBox(bbox: Tesseract.Bbox): Box {
  return [bbox.x0, bbox.y0, bbox.x1, bbox.y1];
}

export function unionBoxes(boxes: readonly Box[]): Box {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const box of boxes) {
    x0 = Math.min(x0, box[0]);
    y0 = Math.min(y0, box[1]);
    x1 = Math.max(x1, box[2]);
    y1 = Math.max(y1, box[3]);
  }
  return Number.isFinite(x0) ? [x0, y0, x1, y1] : [0, 0, 0, 0];
}

// ---------------------------------------------------------------------------------------------------------
// Assembling page text (shared by the PDF and image extractors)

/** Collects blocks of text, one per paragraph, with their location, into one document text. */
export class PageTextBuilder {
  private readonly parts: string[] = [];
  private offset = 0;
  readonly blocks: Block[] = [];

  /** Adds one paragraph (already trimmed, non-empty) with its location. */
  add(text: string, kind: EvidenceKind, page: number, bbox: Box): void {
    if (text === '') return;
    if (this.parts.length > 0) {
      this.parts.push('\n\n');
      this.offset += 2;
    }
    this.parts.push(text);
    this.blocks.push({
      type: 'paragraph',
      charStart: this.offset,
      charEnd: this.offset + text.length,
      location: { page, bbox: bbox.map(roundCoordinate) },
      evidenceKind: kind,
    });
    this.offset += text.length;
  }

  /** Adds OCR paragraphs; `scale` converts the OCR image's pixels to the page's units (1 for images). */
  addOcr(result: OcrResult, kind: EvidenceKind, page: number, scale = 1): number {
    const before = this.blocks.length;
    for (const paragraph of result.paragraphs) {
      const box = paragraph.bbox.map((value) => value / scale) as Box;
      this.add(paragraph.lines.map((line) => line.text).join('\n'), kind, page, box);
    }
    return this.blocks.length - before;
  }

  get text(): string {
    return this.parts.join('');
  }
}

function roundCoordinate(value: number): number {
  return Math.round(value * 100) / 100;
}

// ---------------------------------------------------------------------------------------------------------
// Time limits

export function timeLimitFailure(): IngestFailure {
  return new IngestFailure('extraction_failed', 'extraction did not finish within the time limit');
}

export function msUntil(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}

/**
 * Settles like `promise`, unless `ms` pass first: then rejects with `onTimeout()`'s error (the promise keeps
 * running; callers stop what they can). The timer does not keep the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error | undefined): Promise<T> {
  if (!Number.isFinite(ms)) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        const error = onTimeout();
        if (error === undefined) resolve(undefined as T);
        else reject(error);
      },
      Math.min(ms, 2_147_483_647),
    );
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // tesseract.js rejects with strings such as "Error: Error attempting to read image."
  return message.replace(/^(?:Error:\s*)+/, '').trim() || 'unknown error';
}
