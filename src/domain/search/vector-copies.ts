// In-memory int8 copies of a collection's vectors, one per shard, in the helper thread that scans
// it (src/domain/search/dense-worker.ts). The store serves the vectors and a version that changes
// with them; a copy is used only while its version is the stored one, so a stale copy never
// answers. Copies share a memory budget (src/domain/search/vector-memory.ts): the least recently
// used go first, and a shard whose copy alone would not fit gets none. A shard without a copy is
// scored exactly by the store, so the budget changes speed, never ranking.
import type { VectorReads } from '../../store/interface.js';
import { Int8Scanner } from './int8-scanner.js';

/** A copy is rebuilt once the vectors stopped changing for this long (or at once, the first time). */
const SETTLE_MS = 1000;

export interface VectorCopy {
  version: number;
  /** The passage rid of each scanner row. */
  rids: Float64Array;
  scanner: Int8Scanner;
  usedAt: number;
}

/** What a copy of `rows` vectors of `dimensions` costs in memory (its scanner and its rid index). */
const copyBytes = (rows: number, dimensions: number) => Int8Scanner.bytesFor(rows, dimensions) + rows * 8;

interface CopyState {
  copy?: VectorCopy;
  /** The latest version seen, and since when. */
  seenVersion?: number;
  seenSince?: number;
  /** A version whose copy exceeds the whole budget: not measured again (a full read) until the vectors or the budget change. */
  tooLarge?: { version: number; budgetBytes: number };
}

export interface RefreshOptions {
  /** Bytes all copies of this set may hold together. */
  budgetBytes: number;
  now?: number;
}

/** The copies one helper thread holds, over the store it reads. */
export class VectorCopies {
  private readonly states = new Map<string, CopyState>();
  /** One rebuild at a time: two would hold two shards' rows beyond what the budget made room for. */
  private rebuilding = false;

  constructor(private readonly vectors: VectorReads) {}

  private state(collectionRid: number, shard: number): CopyState {
    const key = `${collectionRid}:${shard}`;
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = {}));
    return state;
  }

  /** The copy of a shard if it matches the stored vectors now, else null (the store scores the shard). */
  async current(collectionRid: number, shard: number): Promise<VectorCopy | null> {
    const state = this.state(collectionRid, shard);
    if (!state.copy) return null;
    const copy = state.copy;
    if (copy.version !== (await this.vectors.version(collectionRid))) return null;
    copy.usedAt = Date.now();
    return copy;
  }

  /** Whether a shard is scanned from memory right now (tests and the bench report it). */
  async hasCurrent(collectionRid: number, shard: number): Promise<boolean> {
    return (await this.current(collectionRid, shard)) !== null;
  }

  /** Bytes the copies hold now. */
  bytes(): number {
    let total = 0;
    for (const state of this.states.values()) if (state.copy) total += copyBytes(state.copy.rids.length, state.copy.scanner.dimensions);
    return total;
  }

  /**
   * Brings a shard's copy up to date when that is worth it: at once if it never had one, otherwise
   * once the vectors have settled (an ingest in progress would make every rebuild stale at once).
   * The helper thread calls this after answering a query, so no query waits for a rebuild.
   */
  async refresh(collectionRid: number, shard: number, options: RefreshOptions): Promise<void> {
    const now = options.now ?? Date.now();
    const state = this.state(collectionRid, shard);
    const current = await this.vectors.version(collectionRid);
    if (state.copy?.version === current) return;
    if (state.tooLarge?.version === current && state.tooLarge.budgetBytes === options.budgetBytes) return;
    if (state.seenVersion !== current) {
      state.seenVersion = current;
      state.seenSince = now;
      if (state.copy) return;
    } else if (state.copy && now - state.seenSince! < SETTLE_MS) return;
    if (this.rebuilding) return; // the next query tries again
    this.rebuilding = true;
    try {
      delete state.copy;
      const building: { copy: VectorCopy | null } = { copy: null };
      let row = 0;
      await this.vectors.readShard(collectionRid, shard, {
        start: (shape) => {
          if (shape.rows === 0 || shape.dimensions <= 0) return false;
          const needed = copyBytes(shape.rows, shape.dimensions);
          if (needed > options.budgetBytes) {
            state.tooLarge = { version: shape.version, budgetBytes: options.budgetBytes };
            return false;
          }
          // Room first, so the old copies and the new one never exceed the budget together.
          this.evict(options.budgetBytes - needed);
          building.copy = { version: shape.version, rids: new Float64Array(shape.rows), scanner: new Int8Scanner(shape.rows, shape.dimensions), usedAt: now };
          return true;
        },
        row: (passageRid, embedding) => {
          if (row >= building.copy!.rids.length) throw new Error(`shard ${shard} of collection ${collectionRid} gave more rows than its shape said`);
          building.copy!.rids[row] = passageRid;
          building.copy!.scanner.setBytes(row++, embedding);
        },
      });
      if (building.copy && row !== building.copy.rids.length) throw new Error(`shard ${shard} of collection ${collectionRid} gave ${row} rows, its shape said ${building.copy.rids.length}`);
      if (building.copy) state.copy = building.copy;
    } finally {
      this.rebuilding = false;
    }
  }

  /** Drops the least recently used copies until the rest hold at most `budget` bytes. */
  private evict(budget: number): void {
    const held = [...this.states.values()].filter((s) => s.copy).sort((a, b) => b.copy!.usedAt - a.copy!.usedAt);
    let total = 0;
    for (const state of held) {
      total += copyBytes(state.copy!.rids.length, state.copy!.scanner.dimensions);
      if (total > budget) delete state.copy;
    }
  }
}
