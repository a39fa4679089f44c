// JSON and NDJSON: every leaf value becomes a `key: value` line, a block of its own carrying its JSON path
// (evidence `json_path`).
import { jsonPathMember } from '../json-path.js';
import { type ExtractedDocument, IngestFailure } from '../types.js';
import type { TextFormat } from './format.js';
import { assemble, type RenderedBlock } from './rendered-blocks.js';

export const jsonFormat: TextFormat = {
  name: 'JSON',
  contentTypes: ['application/json'],
  aliases: { 'text/json': 'application/json' },
  extensions: ['.json'],
  evidence: ['json_path'],
  reads: 'text',
  extract: extractJson,
};

/** One JSON value per line (JSON Lines), read as if the file were one array. */
export const ndjsonFormat: TextFormat = {
  name: 'NDJSON',
  contentTypes: ['application/x-ndjson'],
  aliases: {
    'application/ndjson': 'application/x-ndjson',
    'application/jsonl': 'application/x-ndjson',
    'application/jsonlines': 'application/x-ndjson',
    'application/x-jsonlines': 'application/x-ndjson',
    'application/json-seq': 'application/x-ndjson',
    'text/x-ndjson': 'application/x-ndjson',
    'text/jsonl': 'application/x-ndjson',
  },
  extensions: ['.ndjson', '.jsonl'],
  evidence: ['json_path'],
  reads: 'text',
  extract: extractNdjson,
};

/** JSON documents stop contributing text after this many leaves, so one huge file cannot exhaust memory. */
export const MAX_JSON_LEAVES = 200_000;

/** Renders the leaves of JSON values as `key: value` lines, each its own block. */
class JsonLeafRenderer {
  readonly rendered: RenderedBlock[] = [];

  get full(): boolean {
    return this.rendered.length >= MAX_JSON_LEAVES;
  }

  /** Depth-first in document order, without recursion so deep nesting cannot overflow the stack. */
  add(root: unknown, rootPath: string): void {
    const pending: { value: unknown; path: string; key: string }[] = [{ value: root, path: rootPath, key: '' }];
    while (pending.length > 0 && !this.full) {
      const { value, path, key } = pending.pop() as { value: unknown; path: string; key: string };
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], path: `${path}[${i}]`, key });
      } else if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [childKey, child] = entries[i] as [string, unknown];
          pending.push({ value: child, path: path + jsonPathMember(childKey), key: childKey });
        }
      } else {
        this.addLeaf(value, path, key);
      }
    }
  }

  private addLeaf(value: unknown, path: string, key: string): void {
    let text: string;
    if (typeof value === 'string') {
      if (value.trim() === '') return;
      text = value;
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      text = String(value);
    } else {
      return;
    }
    // Array elements are labelled with the key of the array that holds them.
    this.rendered.push({ type: 'json', text: key === '' ? text : `${key}: ${text}`, jsonPath: path });
  }
}

export function extractJson(source: string): ExtractedDocument {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new IngestFailure('extraction_failed', `invalid JSON: ${errorMessage(error)}`, { cause: error });
  }
  const renderer = new JsonLeafRenderer();
  renderer.add(value, '$');
  return assemble(renderer.rendered, '\n');
}

/** Each non-blank line is one record; record i gets the path `$[i]`, as if the file were one array. */
export function extractNdjson(source: string): ExtractedDocument {
  const renderer = new JsonLeafRenderer();
  const lines = source.split('\n');
  let record = 0;
  for (let lineIndex = 0; lineIndex < lines.length && !renderer.full; lineIndex++) {
    const line = lines[lineIndex] ?? '';
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new IngestFailure('extraction_failed', `invalid JSON on line ${lineIndex + 1}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    renderer.add(value, `$[${record}]`);
    record++;
  }
  return assemble(renderer.rendered, '\n');
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
