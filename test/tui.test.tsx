// The TUI in-process: ink-testing-library renders <App> against a fake backend whose event stream
// the test drives, so every live update, key and failure is under the test's control.
import t, { type Test } from 'tap';
import { CliApiError, CliError } from '../src/cli/client.js';
import type { TuiBackend } from '../src/tui/backend.js';
import type { ChannelState, CollectionItem, CollectionRef, FileItem, JobItem, NamespaceItem, ResearchMode, ResearchRun, SearchRequest, SearchResponse, TroveEvent } from '../src/tui/types.js';
import { PATIENCE_MS } from './helpers/wait.js';

// Colours are part of what is tested (highlighted terms, the red status line): chalk decides
// whether to emit them when it is first loaded, so the flag goes in before Ink is.
process.env.FORCE_COLOR = '1';
// tap sets NO_COLOR for the tests it runs, and the TUI honours it: these tests see colours unless
// they say otherwise.
delete process.env.NO_COLOR;
const { render } = await import('ink-testing-library');
const { App } = await import('../src/tui/app.js');

const KEYS = { enter: '\r', escape: '\u001B', up: '\u001B[A', down: '\u001B[B', tab: '\t', shiftTab: '\u001B[Z' };

const ANSI = /\u001B\[[0-9;]*m/g;
const plain = (frame: string | undefined) => (frame ?? '').replace(ANSI, '');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const counts = (ready: number, indexing = 0, pending = 0, failed = 0) => ({ ready, indexing, pending, failed });

function collection(namespace: string, name: string, status: CollectionItem['status'], fileCounts = counts(0)): CollectionItem {
  return { id: `col_${namespace}_${name}`, namespace, name, status, file_counts: fileCounts };
}

function run(overrides: Partial<ResearchRun> = {}): ResearchRun {
  return {
    id: 'rsr_1',
    namespace: 'demo',
    collection: 'notes',
    status: 'queued',
    mode: 'ultra',
    progress: null,
    answer: null,
    sources: null,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

const CATS: SearchResponse = {
  results: [
    {
      file_id: 'fil_cats',
      path: '/animals/cats.md',
      rank: 1,
      score: 2.5,
      evidence: [
        { kind: 'text', text: 'Cats purr when content and when they are purring for food.', location: { char_start: 0, char_end: 58 } },
        { kind: 'text', text: 'A second passage about cats.', location: { char_start: 60, char_end: 88 } },
      ],
    },
    { file_id: 'fil_dogs', path: '/animals/dogs.md', rank: 2, score: 0.75, evidence: [{ kind: 'text', text: 'Dogs bark at cats.', location: { char_start: 0, char_end: 18 } }] },
  ],
  warnings: [],
  timing_ms: { total: 3 },
};

/** A backend the test fills and drives; it counts every call so a test can tell a poll from a push. */
class FakeBackend implements TuiBackend {
  url = 'http://fake.test:7410';
  namespaces: NamespaceItem[] = [{ id: 'ns_demo', name: 'demo' }];
  collections: Record<string, CollectionItem[]> = {
    demo: [collection('demo', 'notes', 'ready', counts(3)), collection('demo', 'formats', 'degraded', counts(5, 0, 0, 2))],
  };
  jobs: Record<string, JobItem[]> = {};
  searchResponse: SearchResponse = CATS;
  files: Record<string, FileItem> = {
    fil_cats: {
      id: 'fil_cats',
      path: '/animals/cats.md',
      status: 'ready',
      source: { type: 'inline', content_type: 'text/markdown', bytes: 1234 },
      metadata: { team: 'ops', year: 2024 },
    },
  };
  runs: Record<string, ResearchRun> = {};
  /** Errors the next call of a method throws (once). */
  failures: Partial<Record<keyof TuiBackend, unknown>> = {};

  calls = {
    listNamespaces: 0,
    listCollections: 0,
    listActiveJobs: 0,
    getCollection: [] as string[],
    search: [] as SearchRequest[],
    getFile: [] as string[],
    startResearch: [] as { ref: CollectionRef; question: string; mode: ResearchMode }[],
    getResearch: [] as string[],
  };
  private onEvent: ((event: TroveEvent) => void) | undefined;
  private onError: ((err: unknown) => void) | undefined;
  private onChannel: ((state: ChannelState) => void) | undefined;
  unsubscribed = false;
  /** false: the stream connects only when the test says so (streamBack). */
  connectAtOnce = true;
  private eventSeq = 0;

  private fail(method: keyof TuiBackend): void {
    if (method in this.failures) {
      const err = this.failures[method];
      delete this.failures[method];
      throw err;
    }
  }

  async listNamespaces() {
    this.calls.listNamespaces++;
    this.fail('listNamespaces');
    return this.namespaces;
  }
  async listCollections(namespace: string) {
    this.calls.listCollections++;
    return this.collections[namespace] ?? [];
  }
  async listActiveJobs(namespace: string) {
    this.calls.listActiveJobs++;
    return this.jobs[namespace] ?? [];
  }
  async getCollection(ref: CollectionRef) {
    this.calls.getCollection.push(`${ref.namespace}/${ref.collection}`);
    this.fail('getCollection');
    return this.collections[ref.namespace]?.find((c) => c.name === ref.collection) ?? null;
  }
  async search(_ref: CollectionRef, request: SearchRequest) {
    this.calls.search.push(request);
    this.fail('search');
    // As the API does: the mode asked for, or its default (semantic, on a collection that has it).
    return { ...this.searchResponse, execution: { mode: request.mode ?? 'semantic' } };
  }
  async getFile(_ref: CollectionRef, fileId: string) {
    this.calls.getFile.push(fileId);
    const file = this.files[fileId];
    if (!file) throw new CliApiError('not_found', `File '${fileId}' not found.`, 'req_file', 404);
    return file;
  }
  async startResearch(ref: CollectionRef, question: string, mode: ResearchMode) {
    this.calls.startResearch.push({ ref, question, mode });
    this.fail('startResearch');
    const started = run({ namespace: ref.namespace, collection: ref.collection, mode });
    this.runs[started.id] = started;
    return started;
  }
  async getResearch(ref: CollectionRef, runId: string) {
    this.calls.getResearch.push(`${ref.namespace}/${ref.collection}:${runId}`);
    const found = this.runs[runId];
    if (!found || found.namespace !== ref.namespace || found.collection !== ref.collection) {
      throw new CliApiError('not_found', `Research run '${runId}' not found.`, 'req_run', 404);
    }
    return found;
  }
  subscribe(onEvent: (event: TroveEvent) => void, onError: (err: unknown) => void, onChannel?: (state: ChannelState) => void) {
    this.onEvent = onEvent;
    this.onError = onError;
    this.onChannel = onChannel;
    if (this.connectAtOnce) onChannel?.({ channel: 'operator', connected: true });
    return () => {
      this.unsubscribed = true;
      this.onEvent = undefined;
    };
  }

  emit(type: string, data: Record<string, unknown>): void {
    this.onEvent?.({ id: `evt_${++this.eventSeq}`, type, timestamp: new Date().toISOString(), data });
  }
  streamFails(err: unknown): void {
    this.onChannel?.({ channel: 'operator', connected: false });
    this.onError?.(err);
  }
  streamBack(): void {
    this.onChannel?.({ channel: 'operator', connected: true });
  }
  setCounts(namespace: string, name: string, status: CollectionItem['status'], fileCounts: ReturnType<typeof counts>): void {
    this.collections[namespace] = (this.collections[namespace] ?? []).filter((c) => c.name !== name).concat(collection(namespace, name, status, fileCounts));
  }
}

async function waitFor(check: () => boolean, what: string, timeoutMs = PATIENCE_MS): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

async function start(backend: FakeBackend, size?: { columns: number; rows: number }, initial?: CollectionRef) {
  const instance = render(<App backend={backend} refetchDelayMs={20} {...(initial ? { initial } : {})} />);
  if (size) {
    // The test terminal is 100 columns with no rows: resize it the way a real one announces it.
    Object.defineProperty(instance.stdout, 'columns', { get: () => size.columns });
    Object.defineProperty(instance.stdout, 'rows', { get: () => size.rows });
    await delay(20);
    instance.stdout.emit('resize');
  }
  const frame = () => plain(instance.lastFrame());
  const raw = () => instance.lastFrame() ?? '';
  const until = (text: string | RegExp, what = String(text)) => waitFor(() => (typeof text === 'string' ? frame().includes(text) : text.test(frame())), `${what} in:\n${frame()}`);
  // Keys go in one at a time, each after Ink has had a turn to render and re-arm its handlers.
  const press = async (...keys: string[]) => {
    for (const key of keys) {
      instance.stdin.write(key);
      await delay(25);
    }
  };
  return { instance, frame, raw, until, press };
}

/** Starts the UI and opens the search of demo/notes (formats is first in name order: one down from it). */
async function openNotesSearch(t: Test, backend: FakeBackend) {
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.down, KEYS.enter);
  await ui.until('Search demo/notes');
  return ui;
}

t.test('the collections view shows each collection with its counts and jobs', async (t) => {
  const backend = new FakeBackend();
  backend.jobs.demo = [{ id: 'job_1', type: 'index_file', status: 'running', namespace: 'demo', collection: 'formats', file_id: 'fil_x' }];
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  const text = ui.frame();
  t.match(text, /demo/, 'the namespace heading');
  t.match(text, /notes\s+ready\s+3\s+0\s+0\s+0\s+—/, 'notes: ready, 3 ready, no jobs');
  t.match(text, /formats\s+degraded\s+5\s+0\s+0\s+2\s+1 running/, 'formats: degraded, 5 ready, 2 failed, its running job');
  t.match(text, /live: operator socket/, 'the header says where live events come from');
  t.match(text, /Enter search .* q quit/, 'the key help line');
  t.ok(text.indexOf('formats') < text.indexOf('notes'), 'collections in name order');
});

t.test('events update the counts in place by re-fetching only the named collection, never by polling', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  t.equal(backend.calls.listNamespaces, 1);
  t.equal(backend.calls.listCollections, 1);

  // A file added to notes: its job is queued, the collection starts indexing.
  backend.setCounts('demo', 'notes', 'indexing', counts(3, 0, 1));
  backend.emit('job.updated', { id: 'job_a', type: 'index_file', status: 'queued', namespace: 'demo', collection: 'notes', file_id: 'fil_new' });
  backend.emit('file.updated', { id: 'fil_new', path: '/new.md', status: 'pending' });
  backend.emit('collection.updated', { id: 'col_demo_notes', namespace: 'demo', name: 'notes', status: 'indexing', file_counts: counts(3, 0, 1) });
  await ui.until(/notes\s+indexing\s+3\s+0\s+1\s+0\s+1 queued/, 'notes indexing with a queued job');
  t.same(backend.calls.getCollection, ['demo/notes'], 'one burst of events, one GET of that collection');

  backend.setCounts('demo', 'notes', 'ready', counts(4));
  backend.emit('job.updated', { id: 'job_a', type: 'index_file', status: 'succeeded', namespace: 'demo', collection: 'notes', file_id: 'fil_new' });
  backend.emit('file.ready', { id: 'fil_new', path: '/new.md', status: 'ready' });
  await ui.until(/notes\s+ready\s+4\s+0\s+0\s+0\s+—/, 'notes ready with 4 files and no jobs');
  t.same(backend.calls.getCollection, ['demo/notes', 'demo/notes']);

  // A file event alone is traced to its collection through the job that named the file.
  backend.setCounts('demo', 'notes', 'ready', counts(3));
  backend.emit('file.deleted', { id: 'fil_new', path: '/new.md', status: 'deleting' });
  await ui.until(/notes\s+ready\s+3\s/, 'notes back to 3 files');

  // object.* events name the collection by ID.
  backend.setCounts('demo', 'formats', 'ready', counts(7));
  backend.emit('object.indexed', { workspaceId: 'ns_demo', bucketId: 'col_demo_formats', key: '/x.pdf', versionId: 'v1', fileId: 'fil_x' });
  await ui.until(/formats\s+ready\s+7\s+0\s+0\s+0/, 'formats re-fetched after object.indexed');

  // A collection created elsewhere appears; one deleted goes.
  backend.collections.demo!.push(collection('demo', 'archive', 'empty'));
  backend.emit('collection.updated', { id: 'col_demo_archive', namespace: 'demo', name: 'archive', status: 'empty' });
  await ui.until(/archive\s+empty/, 'the new collection');
  backend.collections.demo = backend.collections.demo!.filter((c) => c.name !== 'formats');
  backend.emit('collection.updated', { id: 'col_demo_formats', namespace: 'demo', name: 'formats', status: 'deleting' });
  await waitFor(() => !ui.frame().includes('formats'), 'the deleted collection to go');

  // Events about research runs or webhooks touch no collection.
  const fetched = backend.calls.getCollection.length;
  backend.emit('webhook.test', { id: 'wh_1' });
  await delay(150);
  t.equal(backend.calls.getCollection.length, fetched, 'no re-fetch for an event that names no collection');
  t.equal(backend.calls.listNamespaces, 1, 'the lists were read once, at start');
  t.equal(backend.calls.listCollections, 1, 'and never again on a timer');
});

t.test('a failed re-fetch shows in the status line and the next event recovers', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  backend.failures.getCollection = new CliError('No daemon at http://fake.test:7410: start one with `trove daemon start`.', 1, 'daemon_unreachable');
  backend.emit('collection.updated', { id: 'col_demo_notes', namespace: 'demo', name: 'notes', status: 'ready' });
  await ui.until('No daemon at http://fake.test:7410');
  t.match(ui.raw(), /\u001B\[31m[^\n]*No daemon at/, 'in red');
  backend.setCounts('demo', 'notes', 'ready', counts(9));
  backend.emit('collection.updated', { id: 'col_demo_notes', namespace: 'demo', name: 'notes', status: 'ready' });
  await ui.until(/notes\s+ready\s+9/, 'the count after the daemon is back');
});

t.test('search: type a query, see results with the terms highlighted, open details, go back', async (t) => {
  const backend = new FakeBackend();
  const ui = await openNotesSearch(t, backend);
  await ui.press('cats purr');
  await ui.until('Query › cats purr');
  await ui.press(KEYS.enter);
  await ui.until('/animals/cats.md');
  // No mode until Tab chooses one: the API's default applies, as in the CLI.
  t.same(backend.calls.search, [{ query: 'cats purr', mode: undefined, unit: 'file', limit: 20 }], 'a search in the default mode for whole files');
  t.notOk('mode' in backend.calls.search[0]! && backend.calls.search[0]!.mode !== undefined, 'no mode is sent');
  const text = ui.frame();
  t.match(text, /1\.\s+\/animals\/cats\.md\s+2\.50/, 'rank, path and score');
  t.match(text, /2\.\s+\/animals\/dogs\.md\s+0\.750/, 'the second result');
  t.match(text, /chars 0-58\s+Cats purr when content/, 'the evidence with its location');
  t.match(text, /2 results for “cats purr” \(semantic, file\)/, 'the mode the API says it used');
  // Each marked word is wrapped in bold (1) and yellow (33) codes; words that are not terms are not.
  const raw = ui.raw();
  for (const word of ['Cats', 'purr', 'purring']) t.match(raw, new RegExp(`(\\u001B\\[(1|33)m){2}${word}\\u001B\\[`), `"${word}" is highlighted`);
  t.notMatch(raw, /(\u001B\[(1|33)m){2}content/, '"content" is not');

  // Tab switches to the other mode than the one used and searches again; Shift-Tab the unit.
  await ui.press(KEYS.tab);
  await ui.until('(keyword, file)');
  await ui.press(KEYS.shiftTab);
  await ui.until('(keyword, passage)');
  await ui.press(KEYS.tab);
  await ui.until('(semantic, passage)');
  t.same(
    backend.calls.search.map((s) => [s.mode, s.unit]),
    [
      [undefined, 'file'],
      ['keyword', 'file'],
      ['keyword', 'passage'],
      ['semantic', 'passage'],
    ],
  );

  // Down to the second result and back up, then Enter opens the first one's details.
  await ui.press(KEYS.down);
  await ui.until(/▸\s+2\.\s+\/animals\/dogs\.md/, 'the second result selected');
  await ui.press(KEYS.up, KEYS.enter);
  await ui.until('team: ops');
  const details = ui.frame();
  t.match(details, /\/animals\/cats\.md/);
  t.match(details, /type text\/markdown · status ready · size 1\.2 KiB · source inline/, 'content type, status and size');
  t.match(details, /year: 2024/, 'every metadata entry');
  t.match(details, /evidence \(2\)/);
  t.match(details, /chars 60-88 \(text\)/, 'each evidence with its location');
  t.match(details, /A second passage about cats\./);
  t.same(backend.calls.getFile, ['fil_cats']);

  await ui.press(KEYS.escape);
  await ui.until('results for');
  t.notMatch(ui.frame(), /team: ops/, 'Esc closes the details');
  await ui.press(KEYS.escape);
  await ui.until('COLLECTION');
  t.notMatch(ui.frame(), /Query ›/, 'Esc again goes back to the collections');
});

t.test('a failing search shows the red status line and the app keeps running', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.enter);
  await ui.until('Search demo/formats');
  backend.failures.search = new CliApiError('unauthenticated', 'The API key is not valid.', 'req_401', 401);
  await ui.press('tables', KEYS.enter);
  await ui.until('unauthenticated: The API key is not valid. Check --key / TROVE_KEY. (request req_401)');
  t.match(ui.raw(), /\u001B\[31m✗ unauthenticated/, 'in red');
  // Still alive: the same query goes through once the failure is gone, and the error is cleared.
  await ui.press(KEYS.enter);
  await ui.until('/animals/cats.md');
  t.notMatch(ui.frame(), /unauthenticated/, 'the error line is cleared by a search that worked');
});

t.test('a daemon that is down at start is reported, and g reloads once it is up', async (t) => {
  const backend = new FakeBackend();
  backend.failures.listNamespaces = new CliError('No daemon at http://fake.test:7410: start one with `trove daemon start`.', 1, 'daemon_unreachable');
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('No daemon at');
  t.notMatch(ui.frame(), /notes/);
  await ui.press('g');
  await ui.until('notes');
  t.notMatch(ui.frame(), /No daemon/, 'the error is gone once the load worked');
});

t.test('a broken event stream is shown, and its return reloads the view once', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  backend.streamFails(new CliError('The event stream broke off: ECONNRESET.', 1, 'daemon_unreachable'));
  await ui.until('live events: The event stream broke off');
  t.match(ui.frame(), /live: operator socket disconnected, retrying/);
  backend.setCounts('demo', 'notes', 'ready', counts(6));
  backend.streamBack();
  await ui.until(/notes\s+ready\s+6/, 'reloaded after the reconnection');
  t.notMatch(ui.frame(), /live events:/, 'the stream error is cleared');
  t.equal(backend.calls.listNamespaces, 2, 'one load at start, one after the reconnection');
});

t.test('research: start a run, watch its stages live, then read the answer with footnotes', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.down, 'r');
  await ui.until('Research demo/notes (standard)');
  await ui.press('why do cats purr?', KEYS.tab);
  await ui.until('Research demo/notes (ultra)');
  await ui.press(KEYS.enter);
  await ui.until('Research demo/notes · rsr_1');
  t.same(backend.calls.startResearch, [{ ref: { namespace: 'demo', collection: 'notes' }, question: 'why do cats purr?', mode: 'ultra' }]);
  t.match(ui.frame(), /Q: why do cats purr\?/);
  t.match(ui.frame(), /· 1\/5 Planning the queries/, 'every stage pending while queued');

  const at = (second: number) => `2026-01-01T00:00:0${second}.000Z`;
  backend.emit('research.updated', { ...run({ status: 'running', updated_at: at(1) }) });
  backend.emit('research.progress', { ...run({ status: 'running', progress: { stage: 'plan', label: 'Planning the queries', step: 1, total_steps: 5 }, updated_at: at(2) }) });
  backend.emit('research.progress', { ...run({ status: 'running', progress: { stage: 'retrieve', label: 'Searching the collection', step: 2, total_steps: 5 }, updated_at: at(3) }) });
  await ui.until('▸ 2/5 Searching the collection');
  t.match(ui.frame(), /✓ 1\/5 Planning the queries/);
  t.match(ui.frame(), /· 3\/5 Reading and ranking the evidence/);
  t.match(ui.frame(), /running/);
  // A stale copy (older updated_at) arriving late does not move the view back.
  backend.emit('research.progress', { ...run({ status: 'running', progress: { stage: 'plan', label: 'Planning the queries', step: 1, total_steps: 5 }, updated_at: at(2) }) });
  await delay(60);
  t.match(ui.frame(), /▸ 2\/5 Searching the collection/);

  backend.emit('research.updated', {
    ...run({
      status: 'succeeded',
      progress: { stage: 'verify', label: 'Checking every citation', step: 5, total_steps: 5 },
      answer: 'Cats purr when content. [[SRC:0002]] They also purr when hurt [[SRC:0001]][[SRC:0002]].',
      sources: {
        'SRC:0001': { file_id: 'fil_vet', path: '/vet/notes.md', score: 1, is_cited: true, evidence: [] },
        'SRC:0002': { file_id: 'fil_cats', path: '/animals/cats.md', score: 2, is_cited: true, evidence: [] },
        'SRC:0003': { file_id: 'fil_dogs', path: '/animals/dogs.md', score: 0.5, is_cited: false, evidence: [] },
      },
      updated_at: at(5),
    }),
  });
  await ui.until('Sources');
  const text = ui.frame();
  t.match(text, /Cats purr when content\.\[1\] They also purr when hurt\[2\]\[1\]\./, 'markers become footnote numbers in order of first citation');
  t.match(text, /\[1\] \/animals\/cats\.md/);
  t.match(text, /\[2\] \/vet\/notes\.md/);
  t.match(text, /– \/animals\/dogs\.md \(not cited\)/);
  t.match(text, /✓ 5\/5 Checking every citation/);
  t.match(text, /succeeded/);
  t.notMatch(text, /SRC:/, 'no raw marker is left');

  await ui.press(KEYS.escape);
  await ui.until('COLLECTION');
});

t.test('o opens an existing run by ID, looking through the collections', async (t) => {
  const backend = new FakeBackend();
  backend.runs.rsr_9 = run({ id: 'rsr_9', namespace: 'demo', collection: 'notes', status: 'failed', mode: 'standard', progress: { stage: 'read', label: 'Reading and ranking the evidence', step: 2, total_steps: 3 }, error: { code: 'deadline_exceeded', message: 'The run took too long.', retryable: true } });
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  // formats is selected; the run lives in notes.
  await ui.press('o');
  await ui.until('Open run in demo/formats');
  await ui.press('rsr_9', KEYS.enter);
  await ui.until('Research demo/notes · rsr_9');
  t.same(backend.calls.getResearch.slice(0, 2), ['demo/formats:rsr_9', 'demo/notes:rsr_9'], 'the selected collection first, then the others');
  t.match(ui.frame(), /✓ 1\/3 Searching the collection/);
  t.match(ui.frame(), /✗ 2\/3 Reading and ranking the evidence/);
  t.match(ui.frame(), /deadline_exceeded: The run took too long\./);

  await ui.press(KEYS.escape, 'o', 'rsr_missing', KEYS.enter);
  await ui.until("No research run 'rsr_missing' in any collection");
  t.match(ui.frame(), /COLLECTION/, 'still on the collections view');
});

t.test('q quits (and closes the event stream); inside a text field q is just a letter', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.enter, 'q');
  await ui.until('Query › q');
  t.notOk(backend.unsubscribed, 'typing q in the query does not quit');
  await ui.press(KEYS.escape, 'q');
  await waitFor(() => backend.unsubscribed, 'the app to exit');
  t.pass('q on the collections view ended the app');
});

t.test('an 80x24 terminal gets a frame that fits, with long names cut instead of wrapped', async (t) => {
  const backend = new FakeBackend();
  const long = 'a-very-long-collection-name-that-goes-on-and-on-past-any-reasonable-column';
  backend.collections.demo = [collection('demo', long, 'indexing', counts(123456, 12, 345, 6))];
  backend.jobs.demo = Array.from({ length: 40 }, (_, i) => ({ id: `job_${i}`, type: 'index_file', status: i < 2 ? 'running' : 'queued', namespace: 'demo', collection: long }));
  for (let i = 0; i < 30; i++) backend.collections.demo.push(collection('demo', `c${String(i).padStart(2, '0')}`, 'ready', counts(i)));
  backend.searchResponse = {
    results: Array.from({ length: 20 }, (_, i) => ({
      file_id: `fil_${i}`,
      path: `/deeply/nested/folder/structure/that/keeps/going/and/going/file-${i}.md`,
      rank: i + 1,
      score: 1 / (i + 1),
      evidence: [{ kind: 'text', text: 'word '.repeat(200) + 'needle at the very end', location: { char_start: 0, char_end: 1000 } }],
    })),
    warnings: [],
  };
  const ui = await start(backend, { columns: 80, rows: 24 });
  t.teardown(() => ui.instance.unmount());
  const fits = (what: string) => {
    const lines = ui.frame().split('\n');
    t.ok(lines.length <= 23, `${what}: ${lines.length} lines fit in 24 rows`);
    const widest = Math.max(...lines.map((l) => [...l].length));
    t.ok(widest <= 80, `${what}: the widest line has ${widest} columns`);
  };
  await ui.until('a-very-long');
  fits('collections');
  t.match(ui.frame(), /a-very-long-co…\s+indexing\s+123456\s+12\s+345\s+6\s+2 running, 38 que…/, 'name and jobs cut with an ellipsis');
  await ui.press(KEYS.enter, 'needle', KEYS.enter);
  await ui.until('20 results');
  fits('search results');
  t.match(ui.frame(), /chars 0-1000  …(word )+needle at the very end/, 'the snippet starts near the matched word');
  await ui.press(KEYS.enter);
  await ui.until('evidence (1)');
  fits('file details');
  await ui.press(KEYS.escape, KEYS.escape, 'r', 'a question long enough to run past the edge of an eighty column terminal for sure', KEYS.enter);
  await ui.until('Research demo/');
  fits('research');
});

t.test('a response of an unexpected shape fails only its view: Esc goes back', async (t) => {
  const backend = new FakeBackend();
  backend.searchResponse = { results: [{ file_id: 'fil_x', path: '/x.md', rank: 1, score: 1, evidence: null as never }], warnings: [] };
  const logged: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  t.teardown(() => {
    console.error = original;
  });
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.enter, 'x', KEYS.enter);
  await ui.until('This view failed');
  t.match(ui.raw(), /\u001B\[31m✗ This view failed/, 'in red');
  await ui.press(KEYS.escape);
  await ui.until('COLLECTION');
  t.notOk(backend.unsubscribed, 'the app is still running');
});

t.test('no results, and warnings, are said in the summary line', async (t) => {
  const backend = new FakeBackend();
  backend.searchResponse = { results: [], warnings: [{ code: 'indexing_in_progress', message: 'Some files are still being indexed.' }] };
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.enter, 'zebra', KEYS.enter);
  await ui.until('No results for “zebra” (semantic, file) · indexing_in_progress');
  // With nothing to move to, the query keeps the keys.
  await ui.press(KEYS.down, 's');
  await ui.until('Query › zebras');
});

t.test('a stream that connects after the first load makes the view read the lists once more', async (t) => {
  const backend = new FakeBackend();
  backend.connectAtOnce = false;
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  t.match(ui.frame(), /live: connecting…/);
  t.equal(backend.calls.listNamespaces, 1, 'loaded at once, without waiting for the stream');
  // What changed before the stream started is not replayed by it: the second read catches it.
  backend.setCounts('demo', 'notes', 'ready', counts(8));
  backend.streamBack();
  await ui.until(/notes\s+ready\s+8/, 'the count read after the stream started');
  t.equal(backend.calls.listNamespaces, 2);
  await delay(100);
  t.equal(backend.calls.listNamespaces, 2, 'and only once');
});

t.test('with a saved default (trove init), the UI opens on the search of that collection', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend, undefined, { namespace: 'demo', collection: 'notes' });
  t.teardown(() => ui.instance.unmount());
  await ui.until('Search demo/notes');
  // The collections still load behind it (Esc needs them).
  await ui.until('live: operator socket');
  await ui.press('cats purr');
  await ui.until('Query › cats purr');
  await ui.press(KEYS.enter);
  await ui.until('/animals/cats.md');
  // Esc goes to the list with the saved collection selected (not formats, the first): Enter opens it again.
  await ui.press(KEYS.escape);
  await ui.until('formats');
  await ui.press(KEYS.enter);
  await ui.until('Search demo/notes');
});

// Colour codes (foreground, background, 256/true colour), as opposed to bold, dim and inverse.
const COLOUR_SGR = /\u001B\[(?:3[0-9]|9[0-7]|4[0-9]|10[0-7])(?:;[0-9]+)*m/;

t.test('several keys in one read are all applied, in order', async (t) => {
  const backend = new FakeBackend();
  const ui = await start(backend);
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  // Each write below is one read for the app, as a paste or fast typing delivers it.
  ui.instance.stdin.write(`${KEYS.down}${KEYS.enter}cats purr${KEYS.enter}`);
  await ui.until('/animals/cats.md');
  t.same(backend.calls.search, [{ query: 'cats purr', mode: undefined, unit: 'file', limit: 20 }], 'the query typed and submitted in the same read (no mode: the API default)');
  ui.instance.stdin.write('jkj');
  await ui.until(/▸\s+2\. \/animals\/dogs\.md/, 'the second result selected');
  // Into the query field, clear it, type a new query and run it: one read.
  ui.instance.stdin.write('/\u0015dogs\r');
  await waitFor(() => backend.calls.search.length === 2, 'a second search');
  t.equal(backend.calls.search[1]!.query, 'dogs', 'focus moved, the line was cleared and retyped within one read');
  ui.instance.stdin.write(`${KEYS.escape}`);
  await ui.until('COLLECTION');
  // A field opened by a key takes the keys after it in the same read.
  ui.instance.stdin.write(`rwhy do cats purr?${KEYS.tab}${KEYS.enter}`);
  await waitFor(() => backend.calls.startResearch.length === 1, 'a research run');
  t.same(backend.calls.startResearch[0], { ref: { namespace: 'demo', collection: 'notes' }, question: 'why do cats purr?', mode: 'ultra' });
});

t.test('Ctrl-U clears the input line, Ctrl-W a word', async (t) => {
  const backend = new FakeBackend();
  const ui = await openNotesSearch(t, backend);
  await ui.press('something long');
  await ui.until('Query › something long');
  await ui.press('\u0017');
  await ui.until(/Query › something \s*$/m, 'the last word gone');
  await ui.press('\u0015');
  await waitFor(() => /Query › \s*$/m.test(ui.frame()), 'an empty query line');
  t.notMatch(ui.frame(), /Query › \S/, 'nothing left, and no "u" typed');
  await ui.press('cats', KEYS.enter);
  await ui.until('/animals/cats.md');
  t.equal(backend.calls.search[0]!.query, 'cats');
});

t.test('NO_COLOR: no colour at all, with bold and inverse still marking matches and selection', async (t) => {
  const backend = new FakeBackend();
  process.env.NO_COLOR = '1';
  const ui = await start(backend);
  delete process.env.NO_COLOR;
  t.teardown(() => ui.instance.unmount());
  await ui.until('notes');
  await ui.press(KEYS.down, KEYS.enter, 'cats', KEYS.enter);
  await ui.until('/animals/cats.md');
  t.notMatch(ui.raw(), COLOUR_SGR, 'no colour code in the frame');
  t.match(ui.raw(), /\u001B\[1mCats\u001B\[22m/, 'the matched word is still bold');
  t.match(ui.raw(), /\u001B\[7m/, 'the selected row is still inverse');

  // The same screen with colour allowed does carry colour: the check above can fail.
  const coloured = await start(new FakeBackend());
  t.teardown(() => coloured.instance.unmount());
  await coloured.until('notes');
  await coloured.press(KEYS.down, KEYS.enter, 'cats', KEYS.enter);
  await coloured.until('/animals/cats.md');
  t.match(coloured.raw(), COLOUR_SGR);
});

t.test('a 40-column terminal keeps the columns that matter', async (t) => {
  const backend = new FakeBackend();
  backend.collections.demo = [collection('demo', 'engineering-notes', 'ready', counts(12, 3, 4, 2))];
  backend.jobs.demo = [{ id: 'job_1', type: 'index_file', status: 'running', namespace: 'demo', collection: 'engineering-notes' }];
  backend.searchResponse = {
    results: [0, 1].map((i) => ({
      file_id: `fil_${i}`,
      path: `/deeply/nested/folder/structure/that/keeps/going/report-${i}.md`,
      rank: i + 1,
      score: i === 0 ? 12.5 : 0.75,
      evidence: [{ kind: 'text', text: 'word '.repeat(50) + 'needle here', location: { char_start: 0, char_end: 261 } }],
    })),
    warnings: [],
  };
  const ui = await start(backend, { columns: 40, rows: 12 });
  t.teardown(() => ui.instance.unmount());
  const fits = (what: string) => {
    const widest = Math.max(...ui.frame().split('\n').map((l) => [...l].length));
    t.ok(widest <= 40, `${what}: the widest line has ${widest} columns`);
  };
  await ui.until('engineering-notes');
  fits('collections');
  t.match(ui.frame(), /▸ engineering-notes\s+ready\s+2\s*$/m, 'the whole name, the status and the failed count');
  t.notMatch(ui.frame(), /JOBS|running|READY|INDEXING|PENDING/, 'the other columns give way');
  await ui.press(KEYS.enter, 'needle', KEYS.enter);
  await ui.until('2 results');
  fits('search');
  t.match(ui.frame(), /1\. …[^\n]*\/report-0\.md\s+12\.5/, "the path's end (the file name) and the score stay");
  t.match(ui.frame(), /2\. …[^\n]*\/report-1\.md\s+0\.750/);
});

t.test('a daemon that is down says how to start it, and the view recovers by itself when it is up', async (t) => {
  const backend = new FakeBackend();
  let up = false;
  const list = backend.listNamespaces.bind(backend);
  backend.listNamespaces = async () => {
    if (!up) {
      backend.calls.listNamespaces++;
      throw new CliError(`No daemon at ${backend.url}: start one with \`trove daemon start\` (or pass --url / set TROVE_URL).`, 1, 'daemon_unreachable');
    }
    return list();
  };
  const instance = render(<App backend={backend} refetchDelayMs={20} retryDelayMs={30} />);
  t.teardown(() => instance.unmount());
  const frame = () => plain(instance.lastFrame());
  await waitFor(() => frame().includes('trove daemon start'), `the advice in:\n${frame()}`);
  t.match(frame(), /No daemon at http:\/\/fake\.test:7410/, 'the URL it tried');
  t.match(frame(), /Start one with:\s+trove daemon start/);
  t.match(frame(), /again every 30 ms; g tries now/);
  t.notMatch(frame(), /Loading…/, 'not "Loading…"');
  const attempts = backend.calls.listNamespaces;
  await waitFor(() => backend.calls.listNamespaces > attempts + 1, 'it keeps trying');
  up = true;
  await waitFor(() => frame().includes('notes'), `recovered without a key in:\n${frame()}`);
  t.notMatch(frame(), /No daemon|trove daemon start/, 'the advice is gone');
});
