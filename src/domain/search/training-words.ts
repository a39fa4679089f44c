// The words of the files the indexing worker committed, kept for the collection model's next
// training (collection-topics.ts trainAndRefold). A bulk ingest trains once, after its last upload,
// when nothing else is left to do: without these it read and split every file again there
// (SciFact: about 0.25 s of splitting, a third of it on the worker while the rest ran on a helper
// thread beside the training, slowing it). Splitting as each batch is indexed costs the same CPU
// while the uploads still arrive, and the worker usually keeps up with them.
//
// An entry is the words of what the store holds for that file: it is put only once the file's
// passages are committed, and forgotten when they are replaced without words (a failed file, a
// collection without a model) or deleted. A training asks by file and version, and splits what
// it does not find (after the worker restarted, or what did not fit), the same words either way.
// The helper thread (model-helper-thread.ts) holds the words of the files it prepares for one
// training in one of these too.
/** Words held at most (4 bytes each, 16 MB): a collection of 20,000 files of 200 words. */
export const MAX_HELD_WORDS = 4_000_000;
/**
 * Distinct words numbered at most (about 64 bytes each with its map entry, 20 MB); beyond, everything
 * is dropped and numbering starts again. The dictionary is not trimmed as files are forgotten.
 */
export const MAX_DICTIONARY = 300_000;

interface Entry {
  versionId: string;
  ids: Int32Array;
}

export class TrainingWords {
  private dictionary = new Map<string, number>();
  private words: string[] = [];
  /** In the order put, so that the oldest go first when too many words are held. */
  private readonly files = new Map<number, Entry>();
  private held = 0;

  constructor(private readonly maxWords = MAX_HELD_WORDS) {}

  /** Keeps the words of a file's committed version, in place of any it had. */
  put(fileRid: number, versionId: string, terms: readonly string[]): void {
    this.forget(fileRid);
    // A file that alone would fill the budget, or the dictionary, is split again when it is needed.
    if (terms.length > this.maxWords || terms.length > MAX_DICTIONARY) return;
    if (this.dictionary.size + terms.length > MAX_DICTIONARY) this.clear();
    const ids = new Int32Array(terms.length);
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      let id = this.dictionary.get(term);
      if (id === undefined) {
        id = this.words.length;
        this.dictionary.set(term, id);
        this.words.push(term);
      }
      ids[i] = id;
    }
    this.files.set(fileRid, { versionId, ids });
    this.held += ids.length;
    for (const [rid, entry] of this.files) {
      if (this.held <= this.maxWords) break;
      this.files.delete(rid);
      this.held -= entry.ids.length;
    }
  }

  forget(fileRid: number): void {
    const entry = this.files.get(fileRid);
    if (!entry) return;
    this.files.delete(fileRid);
    this.held -= entry.ids.length;
  }

  /** The file's words as numbers of this cache's dictionary, or null when not held for that version. */
  ids(fileRid: number, versionId: string | undefined): Int32Array | null {
    const entry = this.files.get(fileRid);
    return entry && entry.versionId === versionId ? entry.ids : null;
  }

  /** The words behind `ids`. */
  terms(ids: Int32Array): string[] {
    return Array.from(ids, (id) => this.words[id]!);
  }

  /** Each dictionary number's row in a model, from its termIndex (-1: not a term of it), for embedTermIds. */
  rowsIn(index: ReadonlyMap<string, number>): Int32Array {
    return Int32Array.from(this.words, (word) => index.get(word) ?? -1);
  }

  /** Words held now (for tests). */
  get size(): number {
    return this.held;
  }

  private clear(): void {
    this.dictionary = new Map();
    this.words = [];
    this.files.clear();
    this.held = 0;
  }
}
