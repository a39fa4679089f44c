// The outbox's contract, step by step (issue 15, item 2): every change of a job, file, collection or
// research run writes the same events, in the same order, with the same data and columns, whoever
// writes them (once triggers over JSON views, now the store functions that make the change). Each
// step's events are compared with test/golden/events-outbox.json, recorded from the trigger
// implementation (ids and timestamps normalized); TROVE_WRITE_GOLDEN=1 records it again. One
// change since, on purpose: an indexing transaction bumps its collection's generation once, after
// its files and jobs (it was once per file), so that `collection.updated` now follows `job.updated`.
// And a file event's data is the file as GET shows it (src/store/sqlite/file-resource.ts): no `error: null`.
import { readFileSync, writeFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { restoreWorkspace } from '../src/domain/restore.js';
import type { EventRow } from '../src/store/sqlite/events.js';
import { claimJobs, requeueInterruptedJobs } from '../src/store/sqlite/jobs.js';
import { resetInterruptedFiles, setFileStatus } from '../src/store/sqlite/files.js';
import { addInline, seedCollection, startFixture, type Fixture } from './helpers/trove.js';

const GOLDEN = new URL('../../test/golden/events-outbox.json', import.meta.url);
const writing = process.env.TROVE_WRITE_GOLDEN === '1';
const golden: Record<string, string[]> = writing ? {} : (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, string[]>);
const recorded: Record<string, string[]> = {};

/** An outbox row as the table holds it (the store's EventRow joins the collection's ID in). */
type Row = Omit<EventRow, 'collection_id'>;

/** Reads the events a step wrote and names each ID by its order of appearance, so runs compare. */
class Recorder {
  private last = 0;
  private names = new Map<string, string>();
  constructor(private f: Fixture, private prefix: string) {
    this.last = this.maxRid();
  }
  private maxRid(): number {
    return (this.f.rt.db.prepare('SELECT coalesce(max(rid), 0) AS r FROM events').get() as { r: number }).r;
  }
  private norm(s: string): string {
    return s
      .replace(/\b(acr|col|dlv|evt|fil|job|key|ns|rsr|ver|whk)_[0-9a-zA-Z]+/g, (id, p: string) => {
        let name = this.names.get(id);
        if (!name) this.names.set(id, (name = `${p}#${[...this.names.keys()].filter((k) => k.startsWith(`${p}_`)).length + 1}`));
        return name;
      })
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<ts>')
      .replace(/"(latency_ms|duration_ms|elapsed_ms)":\d+/g, '"$1":<n>');
  }
  /** The events since the last call, as golden lines; checks the id and created_at formats on the way. */
  take(t: Test): Row[] {
    const rows = this.f.rt.db.prepare('SELECT * FROM events WHERE rid > ? ORDER BY rid').all(this.last) as Row[];
    for (const r of rows) {
      if (!/^evt_[0-9a-f]{20}$/.test(r.id)) t.fail(`event id ${r.id}`);
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.created_at)) t.fail(`created_at ${r.created_at}`);
      JSON.parse(r.data);
    }
    if (rows.length > 0) this.last = rows.at(-1)!.rid;
    return rows;
  }
  step(t: Test, name: string): Row[] {
    const rows = this.take(t);
    const lines = rows.map((r) => `${r.type} ns=${r.namespace_rid} col=${r.collection_rid} owner=${r.owner_key_id === null ? '-' : this.norm(r.owner_key_id)} ${this.norm(r.data)}`);
    const key = `${this.prefix}: ${name}`;
    recorded[key] = lines;
    if (!writing) t.same(lines, golden[key], key);
    return rows;
  }
}

const types = (rows: Row[]) => rows.map((r) => r.type);
const statusOf = (r: Row) => (JSON.parse(r.data) as { status?: string }).status;

async function quiet(f: Fixture): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    const busy = f.rt.db.prepare("SELECT (SELECT count(*) FROM jobs WHERE status IN ('queued','running') AND runnable = 1) + (SELECT count(*) FROM research_runs WHERE status IN ('queued','running')) AS n").get() as { n: number };
    if (busy.n === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('still busy');
}

t.test('the main flows write the same events as before', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const rec = new Recorder(f, 'indexer');

  const { ns, col, base } = await seedCollection(f, 'ob', 'docs');
  let rows = rec.step(t, 'create namespace and collection');
  t.same(types(rows), ['collection.updated']);
  t.match(JSON.parse(rows[0]!.data), { status: 'empty', file_counts: { pending: 0, indexing: 0, ready: 0, failed: 0 }, index_generation: null });

  const a = await addInline(f, base, '/a.md', '# A\n\nhello outbox');
  rec.step(t, 'add /a.md (request)');
  await f.waitForIdle(ns, col);
  await quiet(f);
  rows = rec.step(t, 'index /a.md');
  t.same(types(rows).filter((x) => !x.startsWith('job.')).slice(-4), ['file.updated', 'file.ready', 'object.indexed', 'collection.updated']);

  await addInline(f, base, '/bad.json', '{"x": ', 'application/json');
  await f.waitForIdle(ns, col);
  await quiet(f);
  rows = rec.step(t, 'add and fail /bad.json');
  t.ok(types(rows).includes('file.failed') && types(rows).includes('object.indexing_failed'));
  t.equal(statusOf(rows.filter((r) => r.type === 'collection.updated').at(-1)!), 'degraded');

  await f.call('PATCH', base, { display_name: 'Docs' });
  rec.step(t, 'rename the collection');
  await f.call('PATCH', base, { display_name: 'Docs' });
  t.same(rec.step(t, 'rename to the same name'), [], 'no change, no event');

  await f.call('PATCH', `${base}/files/${a.body.file.id}`, { metadata: { k: 1 } });
  rec.step(t, 'edit a file\'s metadata');

  await addInline(f, base, '/a.md', '# A\n\nhello again outbox');
  await f.waitForIdle(ns, col);
  await quiet(f);
  rec.step(t, 'a new version of /a.md');

  await f.call('DELETE', `${base}/files/${a.body.file.id}`);
  await quiet(f);
  rows = rec.step(t, 'delete /a.md');
  t.ok(types(rows).includes('file.deleted'));

  await addInline(f, base, '/c.md', '# C\n\nthird file');
  await f.waitForIdle(ns, col);
  await quiet(f);
  rec.step(t, 'add /c.md');

  const reindex = await f.call('POST', `${base}:reindex`);
  t.equal(reindex.status, 202, reindex.text);
  await quiet(f);
  rows = rec.step(t, 'reindex the collection');
  t.same(types(rows), ['job.updated', 'job.updated', 'collection.updated', 'job.updated'], 'files that stay ready or failed report nothing; the new generation does');

  await f.call('DELETE', base);
  await quiet(f);
  rec.step(t, 'delete the collection');
  await f.call('POST', `/v1/workspaces/${ns}/buckets/${col}/restore`);
  await quiet(f);
  rows = rec.step(t, 'restore the collection');
  t.match(JSON.parse(rows[0]!.data), { status: 'degraded', file_counts: { pending: 0, indexing: 0, ready: 1, failed: 1 } });

  const run = await f.call('POST', `${base}/research`, { query: 'what is the third file?', mode: 'ultra' }, { 'idempotency-key': 'ob1' });
  t.equal(run.status, 202);
  await quiet(f);
  rows = rec.step(t, 'a research run');
  t.same(
    rows.map((r) => `${r.type}:${statusOf(r)}`),
    ['research.updated:queued', 'research.updated:running', ...[1, 2, 3, 4, 5].map(() => 'research.progress:running'), 'research.updated:succeeded'],
  );
  t.ok(rows.every((r) => r.owner_key_id !== null), 'research events carry their owner');

  await f.call('DELETE', `/namespaces/${ns}`, { force: true });
  await quiet(f);
  rec.step(t, 'delete the namespace');
  await restoreWorkspace(f.rt.services, ns);
  await quiet(f);
  rec.step(t, 'restore the namespace');
});

t.test('cancel, supersede and recover without the indexer', async (t) => {
  const f = await startFixture({ indexer: false });
  t.teardown(() => f.close());
  const rec = new Recorder(f, 'no indexer');
  const { base } = await seedCollection(f, 'ob2', 'docs');
  rec.step(t, 'create');

  const q = await addInline(f, base, '/q.md', 'queued');
  rec.step(t, 'add /q.md');
  await f.call('POST', `/jobs/${q.body.job.id}:cancel`);
  let rows = rec.step(t, 'cancel its job');
  t.same(
    rows.map((r) => `${r.type}:${statusOf(r) ?? ''}`),
    ['job.updated:canceled', 'collection.updated:failed', 'file.updated:failed', 'file.failed:failed', 'object.indexing_failed:'],
  );

  await addInline(f, base, '/r.md', 'first');
  rec.step(t, 'add /r.md');
  await addInline(f, base, '/r.md', 'second');
  rec.step(t, 'replace /r.md while queued');
  await addInline(f, base, '/q.md', 'again');
  rec.step(t, 'replace the failed /q.md');

  // A daemon died mid-indexing: its jobs running, its files indexing; start-up puts them back.
  const db = f.rt.db;
  await f.rt.write(() => {
    const now = new Date().toISOString();
    for (const job of claimJobs(db, 10, now)) if (job.file_rid !== null) setFileStatus(db, job.file_rid, 'indexing', now);
  });
  rec.step(t, 'claim and start indexing');
  await f.rt.write(() => {
    const now = new Date().toISOString();
    requeueInterruptedJobs(db, now);
    resetInterruptedFiles(db, now);
  });
  rec.step(t, 'recover at start-up');

  await f.call('DELETE', base);
  rec.step(t, 'delete the collection with queued files');
  await f.rt.write(() => db.prepare("UPDATE jobs SET status = 'canceled' WHERE type = 'index_file' AND status = 'queued'").run());
  rec.take(t);
  await f.call('POST', '/v1/workspaces/ob2/buckets/docs/restore');
  rows = rec.step(t, 'restore it: its files are queued again');
  t.same(types(rows), ['collection.updated', 'job.updated', 'job.updated']);
});

t.teardown(() => {
  if (writing) writeFileSync(GOLDEN, `${JSON.stringify(recorded, null, 2)}\n`);
});
