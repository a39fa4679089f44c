// `trove rules batch <collection> <file>`: applies a file of access-rule operations through
// `…/access-rules:batch`, all in one transaction (all or none).
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { Job } from '../../client/index.js';
import type { AccessRule } from '../../contract/schemas.js';
import { CliError, collectionPath } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { table, write, writeJson } from '../output.js';
import { cliStdin, fromCwd } from '../io.js';
import { collectionTarget, connect, jobText, runCommand, type CollectionFlags, type JsonOption } from './resource-common.js';

export interface RulesBatchOptions extends CollectionFlags, JsonOption {
  namespace?: string;
}

const EXAMPLE = `operations:
  - { op: upsert, folder: /, readers: [group:staff] }
  - { op: update, file: /plan.md, add_readers: [user:ana] }
  - { op: delete, folder: /old/ }`;

async function readSource(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of cliStdin()) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(fromCwd(file), 'utf8');
  } catch (err) {
    throw new CliError(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, 2);
  }
}

/** The file holds `{operations: [...]}` or just the list; JSON is YAML too, so one parser reads both. */
export function parseOperations(text: string, file: string): { operations: unknown[] } {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new CliError(`${file} is neither JSON nor YAML (${(err as Error).message.split('\n')[0]}). Example:\n${EXAMPLE}`, 2);
  }
  const operations = Array.isArray(doc) ? doc : doc !== null && typeof doc === 'object' ? (doc as { operations?: unknown }).operations : undefined;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new CliError(`${file} must hold a non-empty list of operations, or an object with one under "operations". Example:\n${EXAMPLE}`, 2);
  }
  const extra = Array.isArray(doc) ? [] : Object.keys(doc as object).filter((k) => k !== 'operations');
  if (extra.length > 0) throw new CliError(`${file}: unknown top-level field(s) ${extra.join(', ')}; only "operations" is read.`, 2);
  return { operations };
}

export function runRulesBatch(collection: string | undefined, fileArg: string | undefined, globalOpts: GlobalOptions, opts: RulesBatchOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const target = await collectionTarget([collection, fileArg], ['operations file'], opts, 'trove rules batch [collection] <file>');
    const file = target.rest[0]!;
    const body = parseOperations(await readSource(file), file === '-' ? 'stdin' : file);
    const { client } = await connect(globalOpts);
    const res = await client.request<{ rules: AccessRule[]; job: Job | null }>('POST', `${collectionPath(target.namespace, target.collection)}/access-rules:batch`, body);
    if (json) {
      writeJson(res);
      return;
    }
    write(`applied ${body.operations.length} operation(s)\n`);
    if (res.rules.length > 0) {
      write(table(['id', 'target', 'sealed', 'readers'], res.rules.map((r) => [r.id, r.folder ?? r.file, r.sealed ? 'yes' : 'no', r.readers.length ? r.readers.join(', ') : '(nobody)'])));
    }
    write(res.job ? `files move under the new rules (hidden until the job ends):\n${jobText(res.job)}` : 'no file changes its governing rule\n');
  });
}
