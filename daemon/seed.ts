// `trove daemon start --seed <file>` (docs/fixture-mode.md): reading a seed file, and applying it to
// an opened runtime before the daemon says it is listening. Everything goes through the in-process
// app with the cluster key (keys with a chosen secret through their domain function), so a seed
// meets every rule and validation a client of the API meets.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { TroveError } from '../src/contract/errors.js';
import { describeIssue as sentenceOf } from '../src/contract/issues.js';
import { SeedSchema, type Seed } from '../src/contract/seed.js';
import { UserError } from './user-error.js';
import { createKeyWithSecret } from '../src/domain/key-admin.js';
import { authenticate, chosenSecretProblem, secretMatches, type AuthenticatedKey } from '../src/domain/keys.js';
import { contentTypeFromPath } from '../src/contract/content-types.js';
import type { App } from '../src/http/app.js';
import type { Runtime } from './runtime.js';

/** A seed that passed every check that needs no daemon, with what its errors should point at. */
export interface LoadedSeed {
  seed: Seed;
  /** The seed file as the user named it (for messages). */
  name: string;
  /** Where relative `file` entries are read from: the seed file's folder. */
  baseDir: string;
}

/** A seed that cannot be applied (exit 2); `problems` holds one line per problem, each naming its place. */
export class SeedError extends UserError {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message, 2);
    this.name = 'SeedError';
  }
}

type Path = readonly (string | number)[];

/** `keys[0].scope.collections[1]`: the place of a value in the document, as a user reads it. */
export function formatPath(path: Path): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('') || '(the document)';
}

function displayName(file: string): string {
  const fromCwd = relative(process.cwd(), file);
  return fromCwd && !fromCwd.startsWith('..') && !isAbsolute(fromCwd) ? fromCwd : file;
}

export function loadSeedFile(file: string): LoadedSeed {
  const absolute = resolve(file);
  const name = displayName(absolute);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new SeedError(`Cannot read the seed file ${name}: ${reason}.`);
  }
  const json = /\.json$/i.test(absolute) || (!/\.ya?ml$/i.test(absolute) && /^\s*[{[]/.test(text));
  return parseSeedText(text, { name, baseDir: dirname(absolute), format: json ? 'json' : 'yaml' });
}

/** Parses and checks a seed document (YAML, or JSON: strict JSON when `format` says so). */
export function parseSeedText(text: string, origin: { name: string; baseDir: string; format?: 'json' | 'yaml' }): LoadedSeed {
  const lines = new LineCounter();
  // YAML 1.2 reads JSON too, so the same document gives positions for either format.
  const doc = parseDocument(text, { lineCounter: lines, merge: true, prettyErrors: false });
  const at = (offset: number | undefined) => {
    if (offset === undefined) return origin.name;
    const { line, col } = lines.linePos(offset);
    return `${origin.name}:${line}:${col}`;
  };
  let value: unknown;
  if (origin.format === 'json') {
    try {
      value = JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      const position = /position (\d+)/.exec(message)?.[1];
      throw invalid(origin.name, [`${at(position === undefined ? undefined : Number(position))}: not valid JSON: ${message}`]);
    }
  } else {
    if (doc.errors.length > 0) {
      throw invalid(origin.name, doc.errors.map((e) => `${at(e.pos[0])}: not valid YAML: ${firstLine(e.message)}`));
    }
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      throw invalid(origin.name, [`${origin.name}: ${(err as Error).message}`]);
    }
  }
  if (value === null || value === undefined) throw invalid(origin.name, [`${origin.name}: the seed is empty; it needs at least one of namespaces, collections, keys, rules and files`]);

  const place = (path: Path) => `${at(offsetOf(doc, path))}: ${formatPath(path)}`;
  const parsed = SeedSchema.safeParse(value);
  if (!parsed.success) {
    // In document order, as a reader fixes them.
    const locate = (path: Path) => ({ offset: offsetOf(doc, path) ?? -1, at: at(offsetOf(doc, path)), text: place(path) });
    const issues = parsed.error.issues.flatMap((issue) => describeIssue(issue, value, locate));
    issues.sort((a, b) => a.offset - b.offset);
    throw invalid(origin.name, issues.map((issue) => issue.text));
  }

  const problems: string[] = [];
  const seed = parsed.data;
  seed.keys.forEach((key, i) => {
    const problem = chosenSecretProblem(key.secret);
    if (problem) problems.push(`${place(['keys', i, 'secret'])}: the secret ${problem}`);
  });
  seed.files.forEach((file, i) => {
    if (file.file === undefined) return;
    const local = resolve(origin.baseDir, file.file);
    let isFile = false;
    try {
      isFile = statSync(local).isFile();
    } catch {
      // Reported below as missing.
    }
    if (!isFile) problems.push(`${place(['files', i, 'file'])}: no file at ${local} (a relative path is read from the seed file's folder)`);
  });
  if (problems.length > 0) throw invalid(origin.name, problems);
  return { seed, name: origin.name, baseDir: origin.baseDir };
}

function invalid(name: string, problems: string[]): SeedError {
  return new SeedError(`The seed ${name} is invalid:\n  ${problems.join('\n  ')}`, problems);
}

const firstLine = (text: string) => text.split('\n', 1)[0] ?? text;

/** One line per problem: where it is, then the sentence src/contract/issues.ts makes of it (which names the field). */
function describeIssue(issue: z.core.$ZodIssue, input: unknown, locate: (path: Path) => { offset: number; at: string; text: string }): { offset: number; text: string }[] {
  const path = issue.path as (string | number)[];
  const problem = (where: Path, what: string) => {
    const { offset, text } = locate(where);
    return { offset, text: `${text}: ${what}` };
  };
  // Each unknown key at its own line, so the reader's editor jumps to it.
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => problem([...path, key], 'unknown field'));
  const { offset, at } = locate(path);
  return [{ offset, text: `${at}: ${stripStop(sentenceOf(issue, { schema: SeedSchema, input, root: 'the seed' }))}` }];
}

const stripStop = (text: string) => text.replace(/\.$/, '');

/** Where a field's key (or a list item) starts in the document; the nearest ancestor's when it is absent. */
function offsetOf(doc: Document, path: Path): number | undefined {
  for (let depth = path.length; depth > 0; depth--) {
    const parent = doc.getIn(path.slice(0, depth - 1), true);
    const step = path[depth - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === step);
      if (pair && isScalar(pair.key) && pair.key.range) return pair.key.range[0];
    } else if (isSeq(parent) && typeof step === 'number') {
      const item = parent.items[step];
      if (isNode(item) && item.range) return item.range[0];
    }
  }
  return isNode(doc.contents) ? doc.contents.range?.[0] : undefined;
}

// ------------------------------------------------------------------ applying

export interface SeedCounts {
  created: number;
  existing: number;
}

export interface SeedReport {
  namespaces: SeedCounts;
  collections: SeedCounts;
  keys: SeedCounts;
  rules: SeedCounts;
  files: SeedCounts;
  /** Whether start-up waited for every seeded file to be indexed. */
  waited: boolean;
}

interface Reply {
  status: number;
  body: any;
}

const collectionUrl = (namespace: string, collection: string) => `/namespaces/${encodeURIComponent(namespace)}/collections/${encodeURIComponent(collection)}`;

/**
 * Creates what the seed lists and is not there yet: something that exists is left as it is, a key
 * whose stored hash matches its secret counts as existing, and a key name held by another secret is
 * an error. With `wait`, returns once every seeded file is indexed (an error if one failed).
 */
export async function applySeed(runtime: Runtime, loaded: LoadedSeed, options: { signal?: AbortSignal } = {}): Promise<SeedReport> {
  const { seed, name } = loaded;
  const signal = options.signal;
  const clusterSecret = readFileSync(runtime.clusterKeyFile, 'utf8').trim();
  let caller: AuthenticatedKey;
  try {
    caller = await authenticate(runtime.services.store, clusterSecret);
  } catch {
    throw new SeedError(`Seeding from ${name} failed: the cluster key in ${runtime.clusterKeyFile} is not this daemon's; delete the file to mint a new one, or start with TROVE_CLUSTER_KEY.`);
  }
  const fail = (where: string, problem: string) => new SeedError(`Seeding from ${name} failed: ${where}: ${problem}`, [`${where}: ${problem}`]);
  const send = (method: string, url: string, body?: { json: unknown } | { bytes: Buffer; contentType: string }) => callApp(runtime.app, clusterSecret, method, url, body);
  const expect = (where: string, method: string, url: string, reply: Reply, ok: number[]): Reply => {
    if (ok.includes(reply.status)) return reply;
    const error = reply.body?.error;
    const what = error ? `${error.code}: ${error.message}` : `HTTP ${reply.status}`;
    throw fail(where, `${method} ${url} was refused (${what})`);
  };
  const counts = (): SeedCounts => ({ created: 0, existing: 0 });
  const report: SeedReport = { namespaces: counts(), collections: counts(), keys: counts(), rules: counts(), files: counts(), waited: seed.wait };
  const tally = (c: SeedCounts, created: boolean) => (created ? c.created++ : c.existing++);

  for (const [i, ns] of seed.namespaces.entries()) {
    signal?.throwIfAborted();
    const body = { name: ns.name, exist_ok: true, ...(ns.display_name !== undefined ? { display_name: ns.display_name } : {}) };
    const reply = expect(`namespaces[${i}] (${ns.name})`, 'POST', '/namespaces', await send('POST', '/namespaces', { json: body }), [200, 201]);
    tally(report.namespaces, reply.status === 201);
  }

  for (const [i, col] of seed.collections.entries()) {
    signal?.throwIfAborted();
    const url = `/namespaces/${encodeURIComponent(col.namespace)}/collections`;
    const body: Record<string, unknown> = { name: col.name, exist_ok: true };
    for (const field of ['display_name', 'access_control', 'processing'] as const) if (col[field] !== undefined) body[field] = col[field];
    const reply = expect(`collections[${i}] (${col.namespace}/${col.name})`, 'POST', url, await send('POST', url, { json: body }), [200, 201]);
    tally(report.collections, reply.status === 201);
  }

  for (const [i, key] of seed.keys.entries()) {
    signal?.throwIfAborted();
    const where = `keys[${i}] (${key.name})`;
    // Key names are unique within a namespace (or among cluster keys).
    const namespaceId = key.scope.kind === 'cluster' ? null : ((await runtime.services.store.namespaces.find(key.scope.namespace))?.id ?? '');
    const existing = await runtime.services.store.keys.byName(namespaceId, key.name);
    if (existing) {
      if (!secretMatches(existing.secret_hash, key.secret)) throw fail(where, `a key named '${key.name}' already exists with another secret; revoke it or use another name`);
      if (existing.revoked_at) throw fail(where, `the key '${key.name}' was revoked at ${existing.revoked_at}; use another name`);
      tally(report.keys, false);
      continue;
    }
    try {
      await createKeyWithSecret(runtime.services, caller, { name: key.name, scope: key.scope }, key.secret);
    } catch (err) {
      if (err instanceof TroveError) throw fail(where, `${err.code}: ${err.message}`);
      throw err;
    }
    tally(report.keys, true);
  }

  for (const [i, rule] of seed.rules.entries()) {
    signal?.throwIfAborted();
    const url = `${collectionUrl(rule.namespace, rule.collection)}/access-rules`;
    const target: Record<string, string> = rule.folder !== undefined ? { folder: rule.folder } : { file: rule.file! };
    const where = `rules[${i}] (${rule.folder ?? rule.file} in ${rule.namespace}/${rule.collection})`;
    const listUrl = `${url}?${new URLSearchParams(target)}`;
    const found = expect(where, 'GET', listUrl, await send('GET', listUrl), [200]);
    if ((found.body.items as unknown[]).length > 0) {
      tally(report.rules, false);
      continue;
    }
    expect(where, 'POST', url, await send('POST', url, { json: { ...target, readers: rule.readers, sealed: rule.sealed ?? false } }), [200, 201, 202]);
    tally(report.rules, true);
  }

  for (const [i, file] of seed.files.entries()) {
    signal?.throwIfAborted();
    const where = `files[${i}] (${file.path} in ${file.namespace}/${file.collection})`;
    const filesUrl = `${collectionUrl(file.namespace, file.collection)}/files`;
    const fileUrl = `${filesUrl}/${encodeURIComponent(file.path)}`;
    const found = expect(where, 'GET', fileUrl, await send('GET', fileUrl), [200, 404]);
    if (found.status === 200) {
      tally(report.files, false);
      continue;
    }
    const metadata = file.metadata ?? {};
    const contentType = file.content_type ?? contentTypeFromPath(file.file ?? file.path) ?? (file.text !== undefined ? 'text/plain' : 'application/octet-stream');
    if (file.text !== undefined) {
      expect(where, 'POST', filesUrl, await send('POST', filesUrl, { json: { path: file.path, source: { type: 'inline', text: file.text, content_type: contentType }, metadata } }), [202]);
    } else if (file.uri !== undefined) {
      const source = { type: 'uri', uri: file.uri, ...(file.content_type !== undefined ? { content_type: file.content_type } : {}) };
      expect(where, 'POST', filesUrl, await send('POST', filesUrl, { json: { path: file.path, source, metadata } }), [202]);
    } else {
      const local = resolve(loaded.baseDir, file.file!);
      let bytes: Buffer;
      try {
        bytes = readFileSync(local);
      } catch (err) {
        throw fail(where, `cannot read ${local}: ${(err as Error).message}`);
      }
      const checksum = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      const source = { type: 'upload', content_type: contentType, bytes: bytes.length, checksum };
      const added = expect(where, 'POST', filesUrl, await send('POST', filesUrl, { json: { path: file.path, source, metadata } }), [202]);
      const uploadPath = new URL(added.body.upload.url as string).pathname;
      expect(where, 'PUT', '(its upload URL)', await send('PUT', uploadPath, { bytes, contentType }), [200]);
    }
    tally(report.files, true);
  }

  if (seed.wait && seed.files.length > 0) await waitForSeededFiles(loaded, send, signal);
  return report;
}

/** Waits until no seeded collection has a file pending or indexing, then checks every seeded file is ready. */
async function waitForSeededFiles({ seed, name }: LoadedSeed, send: (method: string, url: string) => Promise<Reply>, signal: AbortSignal | undefined): Promise<void> {
  const unsettled = new Set(seed.files.map((f) => collectionUrl(f.namespace, f.collection)));
  while (unsettled.size > 0) {
    for (const url of [...unsettled]) {
      const reply = await send('GET', url);
      const counts = reply.body?.file_counts as { pending: number; indexing: number } | undefined;
      if (reply.status !== 200 || !counts) throw new SeedError(`Seeding from ${name} failed: GET ${url} answered HTTP ${reply.status} while waiting for indexing.`);
      if (counts.pending + counts.indexing === 0) unsettled.delete(url);
    }
    if (unsettled.size > 0) await sleep(25, undefined, { signal });
  }
  const failures: string[] = [];
  for (const [i, file] of seed.files.entries()) {
    const reply = await send('GET', `${collectionUrl(file.namespace, file.collection)}/files/${encodeURIComponent(file.path)}`);
    if (reply.status === 200 && reply.body.status === 'ready') continue;
    const error = reply.body?.error as { code: string; message: string } | undefined;
    const why = reply.status !== 200 ? `HTTP ${reply.status}` : error ? `${error.code}: ${error.message}` : `status ${reply.body.status}`;
    failures.push(`files[${i}] (${file.path} in ${file.namespace}/${file.collection}): not indexed (${why})`);
  }
  if (failures.length > 0) throw new SeedError(`Seeding from ${name} failed: ${failures.length === 1 ? 'a seeded file' : 'seeded files'} did not index:\n  ${failures.join('\n  ')}`, failures);
}

async function callApp(app: App, secret: string, method: string, url: string, body?: { json: unknown } | { bytes: Buffer; contentType: string }): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
  let bytes: Buffer | null = null;
  if (body && 'json' in body) {
    bytes = Buffer.from(JSON.stringify(body.json));
    headers['content-type'] = 'application/json';
  } else if (body) {
    bytes = body.bytes;
    headers['content-type'] = body.contentType;
    headers['content-length'] = String(body.bytes.length);
  }
  const res = await app.handle({ method, url, headers, body: bytes });
  const text = res.body === null ? '' : res.body.toString();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}
