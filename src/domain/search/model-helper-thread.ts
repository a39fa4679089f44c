// A second thread for training a collection's model (collection-topics.ts trainAndRefold), with
// its own read connection. Training ends a bulk ingest on one core while the other waits: the SVD
// is sequential, but splitting texts into words and folding the files outside the sample into the
// model are not. So, while the indexing worker trains, this thread splits part of the sample
// (handed back as words) and reads and splits the files outside it; once the model comes, it gives
// each of those its vector. The functions are the worker's own, so the vectors are the same bits.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../store/sqlite/db.js';
import { passagesOfFiles } from '../../store/sqlite/passages.js';
import { embedTermIds, embedTerms, encodeTopic, modelTerms, modelText, termIndex, type CollectionModel } from './collection-model.js';
import { TrainingWords } from './training-words.js';

export interface ModelHelperData {
  dbFile: string;
}

export type ModelHelperRequest =
  /** The words of these files (as modelTerms splits their model text), in order. */
  | { type: 'terms'; id: number; rids: number[] }
  /** Start reading and splitting these files; `fold` gives their vectors. */
  | { type: 'prepare'; id: number; rids: number[] }
  /** The vectors of the files of `prepare`, in the model. */
  | { type: 'fold'; id: number; model: CollectionModel }
  | { type: 'close' };

export type ModelHelperReply =
  /** Each file's words joined by spaces (a word has none), files joined by newlines. */
  | { id: number; terms: string }
  /** Per file of `prepare`, in order: `has` 1 and its int8 vector at `topics[i·k…]`, or 0 (no kept word). */
  | { id: number; topics: Int8Array; has: Uint8Array }
  | { id: number; error: string };

/** Files read from the store at a time. */
const PAGE = 1000;
/**
 * Words held as numbers before the model comes (4 bytes each): a collection of 100,000 long files
 * would otherwise hold all its words at once. The files beyond are read once the model is there.
 */
const PREPARED_WORDS = 4_000_000;

const { dbFile } = workerData as ModelHelperData;
const db = openDatabase(dbFile, { readonly: true });
const port = parentPort!;

function textsOf(rids: readonly number[]): string[] {
  const passages = passagesOfFiles(db, rids);
  return rids.map((rid) => modelText(passages.get(rid) ?? []));
}

/** The files of the last `prepare`, and the words of those read so far (the rest are read at `fold`). */
let prepared: { rids: number[]; held: TrainingWords } | null = null;
/** The version the held words are put under: they live for one training, so any one name does. */
const PREPARED = 'prepared';

function prepare(rids: number[]): void {
  const held = new TrainingWords(Infinity);
  for (let from = 0; from < rids.length && held.size < PREPARED_WORDS; from += PAGE) {
    const page = rids.slice(from, from + PAGE);
    textsOf(page).forEach((text, j) => held.put(page[j]!, PREPARED, modelTerms(text)));
  }
  prepared = { rids, held };
}

function fold(model: CollectionModel): { topics: Int8Array; has: Uint8Array } {
  if (!prepared) throw new Error('fold before prepare');
  const { rids, held } = prepared;
  prepared = null;
  const k = model.dimensions;
  const topics = new Int8Array(rids.length * k);
  const has = new Uint8Array(rids.length);
  const index = termIndex(model);
  const rowOf = held.rowsIn(index);
  const put = (i: number, v: Float32Array | null) => {
    if (!v) return;
    topics.set(encodeTopic(v), i * k);
    has[i] = 1;
  };
  const unread: number[] = [];
  rids.forEach((rid, i) => {
    const ids = held.ids(rid, PREPARED);
    if (ids) put(i, embedTermIds(model, ids, rowOf));
    else unread.push(i);
  });
  for (let from = 0; from < unread.length; from += PAGE) {
    const at = unread.slice(from, from + PAGE);
    textsOf(at.map((i) => rids[i]!)).forEach((text, j) => put(at[j]!, embedTerms(model, modelTerms(text), index)));
  }
  return { topics, has };
}

port.on('message', (msg: ModelHelperRequest) => {
  if (msg.type === 'close') {
    db.close();
    // Ends this thread only; loaders injected by a host (test runners) could otherwise keep it up.
    process.exit(0);
  }
  try {
    if (msg.type === 'terms') port.postMessage({ id: msg.id, terms: textsOf(msg.rids).map((text) => modelTerms(text).join(' ')).join('\n') } satisfies ModelHelperReply);
    else if (msg.type === 'prepare') prepare(msg.rids);
    else {
      const { topics, has } = fold(msg.model);
      port.postMessage({ id: msg.id, topics, has } satisfies ModelHelperReply, [topics.buffer as ArrayBuffer, has.buffer as ArrayBuffer]);
    }
  } catch (err) {
    port.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) } satisfies ModelHelperReply);
  }
});
