// The TUI's pure parts: how events change the collections state, term highlighting, footnotes,
// research stages, text fitting and the SSE parser.
import t from 'tap';
import {
  applyCollection,
  applyEvent,
  collectionOrder,
  emptyCollectionsState,
  findCollection,
  jobSummary,
  loadedState,
  namespaceJobsKey,
  type CollectionsState,
} from '../src/tui/collections-state.js';
import { footnoteSegments, renderFootnotes } from '../src/tui/footnotes.js';
import { fit, formatBytes, formatLocation, truncate, wrapText } from '../src/tui/format.js';
import { highlightSegments, queryTerms, snippet, stem } from '../src/tui/highlight.js';
import { newerRun, researchStages, runFromEvent } from '../src/tui/research-state.js';
import { SseParser } from '../src/cli/event-stream.js';
import { eventFromMessage } from '../src/tui/sse.js';
import type { CollectionItem, ResearchRun, SourceEntry, TroveEvent } from '../src/tui/types.js';

const counts = (ready: number, indexing = 0, pending = 0, failed = 0) => ({ ready, indexing, pending, failed });
const col = (namespace: string, name: string, status: CollectionItem['status'] = 'ready', fileCounts = counts(1)): CollectionItem => ({ id: `col_${name}`, namespace, name, status, file_counts: fileCounts });
let seq = 0;
const event = (type: string, data: Record<string, unknown>): TroveEvent => ({ id: `evt_${++seq}`, type, timestamp: '2026-01-01T00:00:00.000Z', data });

function base(): CollectionsState {
  return loadedState([
    { namespace: { id: 'ns_b', name: 'beta' }, collections: [col('beta', 'x')], jobs: [] },
    {
      namespace: { id: 'ns_a', name: 'alpha' },
      collections: [col('alpha', 'notes'), col('alpha', 'docs'), col('alpha', 'gone', 'deleting')],
      jobs: [
        { id: 'job_1', type: 'index_file', status: 'running', namespace: 'alpha', collection: 'docs', file_id: 'fil_1' },
        { id: 'job_2', type: 'index_file', status: 'queued', namespace: 'alpha', collection: 'docs', file_id: 'fil_2' },
        { id: 'job_ns', type: 'delete_namespace', status: 'queued', namespace: 'alpha', collection: null },
      ],
    },
  ]);
}

t.test('loadedState sorts, drops deleting collections and files the active jobs', async (t) => {
  const state = base();
  t.same(
    collectionOrder(state).map((r) => `${r.namespace}/${r.collection}`),
    ['alpha/docs', 'alpha/notes', 'beta/x'],
  );
  t.same(jobSummary(state, 'alpha/docs'), { running: 1, queued: 1 });
  t.same(jobSummary(state, 'alpha/notes'), { running: 0, queued: 0 });
  t.same(jobSummary(state, namespaceJobsKey('alpha')), { running: 0, queued: 1 }, 'a namespace job is kept on the namespace');
  t.same(state.fileOwners, { fil_1: 'alpha/docs', fil_2: 'alpha/docs' }, 'file IDs from jobs point at their collection');
});

t.test('applyEvent: each kind of event names the collection to re-fetch', async (t) => {
  const state = base();
  const job = applyEvent(state, event('job.updated', { id: 'job_1', type: 'index_file', status: 'succeeded', namespace: 'alpha', collection: 'docs', file_id: 'fil_1' }));
  t.same(job.refetch, { namespace: 'alpha', collection: 'docs' });
  t.same(jobSummary(job.state, 'alpha/docs'), { running: 0, queued: 1 }, 'a finished job leaves the list');
  t.equal(findCollection(job.state, { namespace: 'alpha', collection: 'docs' })?.file_counts.ready, 1, 'counts are not guessed from the event');

  const queued = applyEvent(state, event('job.updated', { id: 'job_3', type: 'index_file', status: 'queued', namespace: 'alpha', collection: 'notes', file_id: 'fil_3' }));
  t.same(jobSummary(queued.state, 'alpha/notes'), { running: 0, queued: 1 });
  t.equal(queued.state.fileOwners.fil_3, 'alpha/notes');
  const running = applyEvent(queued.state, event('job.updated', { id: 'job_3', type: 'index_file', status: 'running', namespace: 'alpha', collection: 'notes', file_id: 'fil_3' }));
  t.same(jobSummary(running.state, 'alpha/notes'), { running: 1, queued: 0 }, 'the same job moves from queued to running');

  const unloaded = applyEvent(state, event('job.updated', { id: 'job_9', type: 'index_file', status: 'queued', namespace: 'gamma', collection: 'new', file_id: 'fil_9' }));
  t.same(jobSummary(unloaded.state, 'gamma/new'), { running: 0, queued: 1 }, 'a job of a collection not loaded yet is kept for it');
  t.same(unloaded.refetch, { namespace: 'gamma', collection: 'new' });

  const nsJob = applyEvent(state, event('job.updated', { id: 'job_ns', type: 'delete_namespace', status: 'succeeded', namespace: 'alpha', collection: null }));
  t.same(nsJob.refetch, null, 'a namespace job names no collection');
  t.same(jobSummary(nsJob.state, namespaceJobsKey('alpha')), { running: 0, queued: 0 });

  t.same(applyEvent(state, event('collection.updated', { id: 'col_notes', namespace: 'alpha', name: 'notes', status: 'indexing' })).refetch, { namespace: 'alpha', collection: 'notes' });
  t.same(applyEvent(state, event('object.indexed', { workspaceId: 'ns_b', bucketId: 'col_x', key: '/a', versionId: 'v', fileId: 'fil_7' })).refetch, { namespace: 'beta', collection: 'x' });
  const obj = applyEvent(state, event('object.indexing_failed', { workspaceId: 'ns_b', bucketId: 'col_x', key: '/a', versionId: 'v', fileId: 'fil_7' }));
  t.equal(obj.state.fileOwners.fil_7, 'beta/x', 'object events also teach which collection a file is in');
  t.same(applyEvent(state, event('object.indexed', { bucketId: 'col_unknown', fileId: 'fil_8' })).refetch, null, 'an unknown bucket is left to its collection.updated event');

  t.same(applyEvent(state, event('file.ready', { id: 'fil_2', path: '/b', status: 'ready' })).refetch, { namespace: 'alpha', collection: 'docs' });
  t.same(applyEvent(state, event('file.updated', { id: 'fil_unknown', path: '/c', status: 'pending' })).refetch, null, 'a file of unknown home waits for its job event');

  for (const type of ['research.updated', 'research.progress', 'webhook.test', 'something.new']) {
    const other = applyEvent(state, event(type, { id: 'x', namespace: 'alpha', collection: 'notes' }));
    t.equal(other.refetch, null, `${type} re-fetches nothing`);
    t.equal(other.state, state, `${type} leaves the state as it was`);
  }
  t.same(applyEvent(state, event('job.updated', { status: 'queued' })).refetch, null, 'a malformed event is ignored');
});

t.test('applyCollection puts a re-fetched collection in place, adds new ones, drops gone ones', async (t) => {
  const state = base();
  const updated = applyCollection(state, { namespace: 'alpha', collection: 'notes' }, col('alpha', 'notes', 'indexing', counts(1, 2, 3, 4)));
  t.same(findCollection(updated, { namespace: 'alpha', collection: 'notes' })?.file_counts, counts(1, 2, 3, 4));
  t.same(jobSummary(updated, 'alpha/docs'), { running: 1, queued: 1 }, 'jobs survive a re-fetch');

  const added = applyCollection(state, { namespace: 'alpha', collection: 'archive' }, col('alpha', 'archive', 'empty', counts(0)));
  t.same(
    collectionOrder(added).map((r) => r.collection),
    ['archive', 'docs', 'notes', 'x'],
  );
  const newNamespace = applyCollection(state, { namespace: 'aaa', collection: 'first' }, col('aaa', 'first'));
  t.same(
    newNamespace.namespaces.map((n) => n.name),
    ['aaa', 'alpha', 'beta'],
    'a collection of an unseen namespace brings the namespace',
  );

  const removed = applyCollection(state, { namespace: 'alpha', collection: 'docs' }, null);
  t.notOk(findCollection(removed, { namespace: 'alpha', collection: 'docs' }), '404 removes it');
  const deleting = applyCollection(state, { namespace: 'alpha', collection: 'notes' }, col('alpha', 'notes', 'deleting'));
  t.notOk(findCollection(deleting, { namespace: 'alpha', collection: 'notes' }), 'deleting removes it');
  t.equal(applyCollection(emptyCollectionsState, { namespace: 'a', collection: 'b' }, null), emptyCollectionsState, 'removing the unknown changes nothing');
});

t.test('highlighting: terms, stems, diacritics and stopwords', async (t) => {
  t.same(queryTerms('Why do the cats PURR?'), ['cats', 'purr'], 'stopwords go, case folds');
  t.same(queryTerms('the and'), ['the', 'and'], 'a query of stopwords keeps them');
  t.same(queryTerms('café Café'), ['cafe'], 'diacritics fold and duplicates go');
  t.equal(stem('purring'), stem('purr'));
  t.equal(stem('cats'), stem('cat'));
  t.equal(stem('studies'), stem('study'));
  t.not(stem('cat'), stem('catalog'));

  const marked = (text: string, query: string) =>
    highlightSegments(text, queryTerms(query))
      .filter((s) => s.match)
      .map((s) => s.text);
  t.same(marked('Cats purr; a cat is purring. Catalogs are not cats.', 'cat purr'), ['Cats', 'purr', 'cat', 'purring', 'cats']);
  t.same(marked('Le café est ouvert.', 'cafe'), ['café']);
  t.same(marked('nothing here', 'absent'), []);
  const segments = highlightSegments('a cat sat', ['cat']);
  t.same(segments, [
    { text: 'a ', match: false },
    { text: 'cat', match: true },
    { text: ' sat', match: false },
  ]);
  t.equal(segments.map((s) => s.text).join(''), 'a cat sat', 'segments keep every character');
  t.same(highlightSegments('', ['x']), []);
  t.same(highlightSegments('text', []), [{ text: 'text', match: false }]);

  t.equal(snippet('short text', ['text'], 40), 'short text');
  const long = 'lorem ipsum dolor '.repeat(10) + 'the needle sits here';
  const cut = snippet(long, ['needle'], 40);
  t.ok([...cut].length <= 40, 'fits the width');
  t.ok(cut.startsWith('…') && cut.includes('needle'), `starts near the match: ${cut}`);
  t.equal(snippet('the needle is early in a long ' + 'text '.repeat(30), ['needle'], 30).startsWith('the needle'), true, 'an early match keeps the start');
});

t.test('footnotes: markers numbered by first citation, sources listed', async (t) => {
  const source = (path: string, cited: boolean): SourceEntry => ({ file_id: `fil_${path}`, path, score: 1, is_cited: cited, evidence: [] });
  const sources = { 'SRC:0001': source('/a.md', true), 'SRC:0002': source('/b.md', true), 'SRC:0003': source('/c.md', false), 'SRC:0004': source('/d.md', true) };
  const rendered = renderFootnotes('First [[SRC:0002]]. Second [[SRC:0001]][[SRC:0002]]. Third [[SRC:0009]].', sources);
  t.equal(rendered.text, 'First[1]. Second[2][1]. Third.', 'numbers follow first appearance; unknown markers vanish');
  t.same(
    rendered.footnotes.map((f) => [f.number, f.path]),
    [
      [1, '/b.md'],
      [2, '/a.md'],
    ],
  );
  t.same(
    rendered.sources.map((s) => [s.number, s.path, s.cited]),
    [
      [1, '/b.md', true],
      [2, '/a.md', true],
      [null, '/c.md', false],
      [null, '/d.md', true],
    ],
    'uncited sources (and cited ones whose marker went) follow, without a number',
  );
  t.same(renderFootnotes('No markers.', null), { text: 'No markers.', footnotes: [], sources: [] });
  t.same(footnoteSegments('a[1] b[12]'), [
    { text: 'a', footnote: false },
    { text: '[1]', footnote: true },
    { text: ' b', footnote: false },
    { text: '[12]', footnote: true },
  ]);
});

t.test('research stages follow progress and status', async (t) => {
  const run = (o: Partial<ResearchRun>): ResearchRun => ({
    id: 'rsr_1',
    namespace: 'a',
    collection: 'b',
    status: 'running',
    mode: 'ultra',
    progress: null,
    answer: null,
    sources: null,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...o,
  });
  const states = (r: ResearchRun) => researchStages(r).map((s) => `${s.stage}:${s.state}`);
  t.same(states(run({ status: 'queued' })), ['plan:pending', 'retrieve:pending', 'read:pending', 'synthesize:pending', 'verify:pending']);
  t.same(states(run({ mode: 'standard', status: 'queued' })), ['retrieve:pending', 'read:pending', 'synthesize:pending'], 'standard has three stages');
  t.same(states(run({ progress: { stage: 'read', label: 'Reading', step: 3, total_steps: 5 } })), ['plan:done', 'retrieve:done', 'read:active', 'synthesize:pending', 'verify:pending']);
  t.equal(researchStages(run({ progress: { stage: 'read', label: 'Reading (custom)', step: 3, total_steps: 5 } }))[2]!.label, 'Reading (custom)', 'the label the daemon sent wins');
  t.same(states(run({ status: 'failed', progress: { stage: 'retrieve', label: 'x', step: 2, total_steps: 5 } })), ['plan:done', 'retrieve:failed', 'read:pending', 'synthesize:pending', 'verify:pending']);
  t.same(states(run({ status: 'succeeded', progress: { stage: 'synthesize', label: 'x', step: 4, total_steps: 5 } })), ['plan:done', 'retrieve:done', 'read:done', 'synthesize:done', 'verify:done']);

  const older = run({ updated_at: '2026-01-01T00:00:01.000Z', status: 'running' });
  const newer = run({ updated_at: '2026-01-01T00:00:02.000Z', status: 'succeeded' });
  t.equal(newerRun(newer, older), newer, 'an older copy does not replace a newer one');
  t.equal(newerRun(older, newer), newer);
  t.equal(newerRun(undefined, older), older);
  t.same(runFromEvent(event('research.progress', { ...newer })), newer);
  t.equal(runFromEvent(event('job.updated', { ...newer })), undefined);
  t.equal(runFromEvent(event('research.updated', { id: 'rsr_1' })), undefined, 'an incomplete run is ignored');
});

t.test('text fitting', async (t) => {
  t.equal(truncate('abcdef', 4), 'abc…');
  t.equal(truncate('abc', 4), 'abc');
  t.equal(truncate('abc', 0), '');
  t.equal(fit('ab', 4), 'ab  ');
  t.equal(fit('abcdef', 4), 'abc…');
  t.same(wrapText('one two three four', 9), ['one two', 'three', 'four']);
  t.same(wrapText('abcdefghij', 4), ['abcd', 'efgh', 'ij'], 'a long word is cut hard');
  t.same(wrapText('a\n\nb', 10), ['a', '', 'b'], 'blank lines stay');
  t.equal(formatBytes(1234), '1.2 KiB');
  t.equal(formatBytes(12), '12 B');
  t.equal(formatBytes(undefined), 'unknown');
  t.equal(formatLocation({ kind: 'text', text: '', location: { char_start: 1, char_end: 5 } }), 'chars 1-5');
  t.equal(formatLocation({ kind: 'page', text: '', location: { page: 3, bbox: [1.2, 2, 3, 4.6] } }), 'page 3 [1,2,3,5]');
  t.equal(formatLocation({ kind: 'transcript', text: '', location: { start_ms: 1500, end_ms: 3000 } }), '1.5s-3.0s');
  t.equal(formatLocation({ kind: 'json_path', text: '', location: { json_path: '$.a' } }), '$.a');
  t.equal(formatLocation({ kind: 'ocr', text: '' }), 'ocr');
});

t.test('the SSE parser handles split chunks, CRLF, comments and multi-line data', async (t) => {
  const parser = new SseParser();
  t.same(parser.push(': trove events\n\nid: evt_1\nevent: file.updated\nda'), [], 'nothing complete yet');
  t.same(parser.push('ta: {"a":1}\n\n'), [{ id: 'evt_1', event: 'file.updated', data: '{"a":1}' }]);
  t.same(parser.push('data: one\r\ndata: two\r'), [], 'a trailing CR may be half of CRLF');
  t.same(parser.push('\n\r\n'), [{ id: 'evt_1', data: 'one\ntwo' }], 'the last id carries over, as the SSE spec says');
  t.same(parser.push(': keep-alive\n\n'), [], 'comments make no message');

  const record = { id: 'evt_2', type: 'job.updated', timestamp: 't', data: { id: 'job_1' } };
  t.same(eventFromMessage({ data: JSON.stringify(record) }), record);
  t.equal(eventFromMessage({ data: 'not json' }), undefined);
  t.equal(eventFromMessage({ data: '{"id":"evt_3"}' }), undefined, 'a record without type and data is not an event');
});
