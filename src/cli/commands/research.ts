// `trove research start|get|watch|cancel`: asynchronous research runs of a collection.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AnswerInput, ResearchRun } from '../../client/index.js';
import { ERROR_TABLE, isErrorCode } from '../../contract/errors.js';
import { ApiClient, CliApiError, CliError, collectionPath, type RequestBody } from '../client.js';
import type { Connection, GlobalOptions } from '../connection.js';
import { keyValues, write, writeJson, type Cell } from '../output.js';
import { openEventStream } from '../event-stream.js';
import { fromCwd } from '../io.js';
import { connect, parseJsonFlag, runCommand, seg, sleep, type JsonOption } from './resource-common.js';
import { parseTarget } from '../defaults.js';
import { formatLocation, oneLine, parseFilter } from './search.js';

type Source = NonNullable<ResearchRun['sources']>[string];

/** The answer body's fields, with those a flag fills passed on as typed (the daemon checks them). */
type ResearchBody = RequestBody<AnswerInput, 'mode' | 'history'>;
type QueryImage = NonNullable<AnswerInput['query_image']>;

interface Scoped extends JsonOption {
  namespace?: string;
}

export interface ResearchStartOptions extends Scoped {
  mode?: string;
  filter?: string;
  principal?: string[];
  history?: string;
  /** Commander's `--no-sources` sets this to false. */
  sources?: boolean;
  webSearch?: boolean;
  image?: string;
  idempotencyKey?: string;
  watch?: boolean;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const IMAGE_TYPES: Record<string, QueryImage['media_type']> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };
const HISTORY_EXAMPLE = '[{"role":"user","content":"…"},{"role":"assistant","content":"…"}]';

const runPath = (base: string, id: string) => `${base}/research/${seg(id)}`;

const progressText = (p: ResearchRun['progress']) => (p ? `${p.step}/${p.total_steps} ${p.stage}: ${p.label}` : undefined);

export function runText(run: ResearchRun): string {
  const pairs: [string, Cell][] = [
    ['id', run.id],
    ['collection', `${run.namespace}/${run.collection}`],
    ['status', run.status],
    ['mode', run.mode],
    ['progress', progressText(run.progress)],
    ['error', run.error ? `${run.error.code}: ${run.error.message}${run.error.retryable ? ' (retryable)' : ''}` : undefined],
    ['credits', run.usage?.credits],
    ['created', run.created_at],
    ['completed', run.completed_at ?? undefined],
  ];
  let text = keyValues(pairs);
  if (run.image_description) text += `\nimage read as: ${run.image_description}\n`;
  if (run.answer !== null) text += `\n${run.answer}\n`;
  if (run.sources) text += sourcesText(run.sources);
  return text;
}

function sourcesText(sources: Record<string, Source>): string {
  const entries = Object.entries(sources);
  if (entries.length === 0) return '';
  const lines = ['', 'sources:'];
  for (const [marker, source] of entries) {
    lines.push(`  [${marker}] ${source.path}  (${source.file_id}${source.is_cited ? ', cited' : ''})`);
    const first = source.evidence[0];
    if (first) lines.push(`      ${formatLocation(first)}  ${oneLine(first.text)}`);
  }
  return lines.join('\n') + '\n';
}

async function scoped(ref: string, globalOpts: GlobalOptions, opts: Scoped): Promise<{ client: ApiClient; conn: Connection; base: string }> {
  const target = parseTarget(ref, opts.namespace);
  const { client, conn } = await connect(globalOpts);
  return { client, conn, base: collectionPath(target.namespace, target.collection) };
}

async function queryImage(file: string): Promise<QueryImage> {
  const mediaType = IMAGE_TYPES[path.extname(file).toLowerCase()];
  if (!mediaType) throw new CliError(`--image takes a .png, .jpg, .jpeg or .webp file, got '${file}'.`, 2);
  const bytes = await readFile(fromCwd(file)).catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`--image ${file} cannot be read (${err.code ?? err.message}).`, 2);
  });
  return { data: bytes.toString('base64'), media_type: mediaType };
}

export function runResearchStart(ref: string, query: string, globalOpts: GlobalOptions, opts: ResearchStartOptions): Promise<number> {
  return runCommand(opts, async (json) => {
    const body: ResearchBody = { query };
    if (opts.mode !== undefined) body.mode = opts.mode;
    if (opts.filter !== undefined) body.filter = parseFilter(opts.filter);
    if (opts.principal !== undefined) body.principals = opts.principal;
    if (opts.history !== undefined) {
      const history = parseJsonFlag(opts.history, '--history', HISTORY_EXAMPLE);
      if (!Array.isArray(history)) throw new CliError(`--history must be a JSON array of messages. Example: --history '${HISTORY_EXAMPLE}'`, 2);
      body.history = history;
    }
    if (opts.sources === false) body.return_sources = false;
    if (opts.webSearch) body.web_search = 'use_if_needed';
    if (opts.image !== undefined) body.query_image = await queryImage(opts.image);
    const idempotencyKey = opts.idempotencyKey ?? `cli-${randomUUID()}`;
    const { client, conn, base } = await scoped(ref, globalOpts, opts);
    const run = await client.request<ResearchRun>('POST', `${base}/research`, body, { headers: { 'idempotency-key': idempotencyKey } });
    if (opts.watch) {
      if (!json) write(`started ${run.id} (idempotency key ${idempotencyKey})\n`);
      return watch(client, conn, base, run, json);
    }
    if (json) writeJson(run);
    else write(`${runText(run)}idempotency key: ${idempotencyKey} (pass it again with --idempotency-key to retry safely)\nfollow it: trove research watch ${run.namespace}/${run.collection} ${run.id}\n`);
  });
}

export function runResearchGet(ref: string, id: string, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, base } = await scoped(ref, globalOpts, opts);
    const run = await client.request<ResearchRun>('GET', runPath(base, id));
    if (json) writeJson(run);
    else write(runText(run));
  });
}

export function runResearchCancel(ref: string, id: string, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, base } = await scoped(ref, globalOpts, opts);
    const run = await client.request<ResearchRun>('POST', `${runPath(base, id)}:cancel`);
    if (json) writeJson(run);
    else write(runText(run));
  });
}

export function runResearchWatch(ref: string, id: string, globalOpts: GlobalOptions, opts: Scoped): Promise<number> {
  return runCommand(opts, async (json) => {
    const { client, conn, base } = await scoped(ref, globalOpts, opts);
    const run = await client.request<ResearchRun>('GET', runPath(base, id));
    return watch(client, conn, base, run, json);
  });
}

/**
 * Follows a run to its end: each new status or stage is printed (with --json, one JSON line
 * `{"event":"progress",…}` each), then the final run. Progress comes from the /events stream
 * filtered to this run; where the stream is refused (a collection key) or drops, GET is polled.
 */
async function watch(client: ApiClient, conn: Connection, base: string, initial: ResearchRun, json: boolean): Promise<number> {
  let seen = '';
  const report = (run: ResearchRun) => {
    const state = `${run.status}|${run.progress?.step ?? 0}|${run.progress?.stage ?? ''}`;
    if (state === seen) return;
    seen = state;
    if (json) writeJson({ event: 'progress', id: run.id, status: run.status, progress: run.progress });
    else write(`${run.status}${run.progress ? `  [${progressText(run.progress)}]` : ''}\n`);
  };
  report(initial);
  if (!TERMINAL.has(initial.status)) {
    const viaStream = await followStream(client, conn, base, initial.id, report);
    if (!viaStream) await poll(client, base, initial.id, report);
  }
  const final = await client.request<ResearchRun>('GET', runPath(base, initial.id));
  report(final);
  if (json) writeJson(final);
  else write(`\n${runText(final)}`);
  if (final.status === 'succeeded') return 0;
  return final.error && isErrorCode(final.error.code) ? ERROR_TABLE[final.error.code].exitCode : 1;
}

/** True when the stream saw the run end; false when it could not be used (the caller polls then). */
async function followStream(client: ApiClient, conn: Connection, base: string, id: string, report: (run: ResearchRun) => void): Promise<boolean> {
  const controller = new AbortController();
  try {
    for await (const message of openEventStream(conn, { signal: controller.signal })) {
      if (message.kind === 'open') {
        // The stream is open from here on: whatever happened before it is read once with GET.
        const now = await client.request<ResearchRun>('GET', runPath(base, id));
        report(now);
        if (TERMINAL.has(now.status)) return true;
        continue;
      }
      if (!message.event?.startsWith('research.')) continue;
      const event = JSON.parse(message.data) as { data: ResearchRun };
      if (event.data.id !== id) continue;
      report(event.data);
      if (TERMINAL.has(event.data.status)) return true;
    }
    return false;
  } catch (err) {
    if (err instanceof CliApiError && (err.code === 'forbidden' || err.code === 'not_found')) return false;
    throw err;
  } finally {
    controller.abort();
  }
}

async function poll(client: ApiClient, base: string, id: string, report: (run: ResearchRun) => void): Promise<void> {
  let delay = 200;
  for (;;) {
    const run = await client.request<ResearchRun>('GET', runPath(base, id));
    report(run);
    if (TERMINAL.has(run.status)) return;
    await sleep(delay);
    delay = Math.min(delay * 1.5, 2000);
  }
}
