// How much memory the dense stage's in-memory vector copies may hold together (src/domain/search/vector-copies.ts):
// config.json's vectors.memory, overridden by TROVE_VECTOR_MEMORY (daemon/config.ts). A number
// of bytes, a size ("512MB", "1.5GiB"; K/M/G/T count in 1024s) or a share of the machine's RAM
// ("25%"); "0" keeps no copies. Read once at start; a bad value stops the start with its reason.
import { totalmem } from 'node:os';

/**
 * The default share of RAM. A copy costs about 128 bytes a 100-dimension vector (int8 padded to
 * 112, a scale, a score slot and a rid), so a quarter of even an 8 GB machine holds some 16 million
 * passages; the rest is left
 * to what the copies save reading from: SQLite's page cache and the OS file cache over the FTS5
 * index and the vectors table (re-scoring and a shard without a copy read it), the indexing
 * worker's model and batches, and the other programs of a machine trove shares.
 */
export const DEFAULT_VECTOR_MEMORY = '25%';

export interface VectorMemory {
  /** As written (or the default), for GET /info and config.get. */
  setting: string;
  bytes: number;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** Bytes for a vectors.memory setting, or an Error saying what is wrong with it. */
export function parseVectorMemory(value: unknown, machineBytes = totalmem()): number | Error {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : null;
  const wrong = (why: string) => new Error(`vectors.memory (TROVE_VECTOR_MEMORY) ${why}: give bytes (536870912), a size (512MB, 2GiB) or a share of RAM (25%).`);
  if (text === null || text === '') return wrong(`must be a size, got ${JSON.stringify(value)}`);
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
  if (percent) {
    const share = Number(percent[1]);
    if (share > 100) return wrong(`is ${text}, more than all of the machine's memory`);
    return Math.floor((machineBytes * share) / 100);
  }
  const size = /^(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|(b)?)$/i.exec(text);
  if (!size) return wrong(`'${text}' is not a size`);
  const bytes = Math.floor(Number(size[1]) * UNITS[(size[2] ?? size[3] ?? '').toLowerCase()]!);
  if (!Number.isSafeInteger(bytes)) return wrong(`'${text}' is too large`);
  return bytes;
}

/** The budget a setting gives on this machine; throws the reason a bad setting is refused. */
export function resolveVectorMemory(setting: unknown = DEFAULT_VECTOR_MEMORY, machineBytes = totalmem()): VectorMemory {
  const bytes = parseVectorMemory(setting, machineBytes);
  if (bytes instanceof Error) throw bytes;
  return { setting: String(setting), bytes };
}
