// Answers decline what the collection cannot answer (docs/decisions.md, Answers): the twenty
// questions of fixtures/answers/unanswerable.jsonl, asked of a 78-abstract SciFact sample that holds
// their loosely related passages (each question's three best keyword matches in the whole
// collection) and the relevant abstracts of twenty answerable claims (fixtures/answers/README.md).
// A declined answer is 200 with no marker, no source and a `no_supporting_evidence` warning;
// an answerable claim still answers with markers.
import t from 'tap';
import { jsonlFixtures } from './helpers/jsonl.js';
import { seedCollection, startFixture } from './helpers/trove.js';

const jsonl = jsonlFixtures('answers');
const corpus = jsonl<{ id: string; title: string; text: string }>('corpus.jsonl');
const unanswerable = jsonl<{ id: string; text: string }>('unanswerable.jsonl');
const answerable = jsonl<{ id: string; text: string; relevant: string[] }>('answerable.jsonl');

/**
 * Floors a question or two below what the calibrated support gives on this sample when the test was
 * written (declined 3 of 20; answerable 18 of 20 with markers, 17 citing a relevant abstract), so
 * they catch a breakage, not noise. On a collection this small every word is rare, so fewer of the
 * twenty are declined than on the whole of SciFact (7 of 20, docs/ranking.md).
 */
const FLOORS = { declined: 2, withMarkers: 17, citing: 16 };

t.test('questions the collection cannot answer are declined; answerable ones still cite', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'decline', 'scifact');
  for (const doc of corpus) {
    const r = await f.call('POST', `${base}/files`, { path: `/docs/${doc.id}.md`, source: { type: 'inline', content_type: 'text/markdown', text: `# ${doc.title}\n\n${doc.text}` } });
    if (r.status !== 202) throw new Error(`add ${doc.id}: ${r.status} ${r.text}`);
  }
  await f.waitForIdle('decline', 'scifact', 120_000);

  let declined = 0;
  for (const q of unanswerable) {
    const r = await f.call('POST', `${base}:answer`, { query: q.text });
    t.equal(r.status, 200, `${q.id} answers 200`);
    if (/\[\[SRC:\d+\]\]/.test(r.body.answer)) continue;
    declined++;
    t.same(r.body.sources, {}, `${q.id}: a declined answer lists no source`);
    t.equal(r.body.warnings?.[0]?.code, 'no_supporting_evidence', `${q.id}: and says why`);
  }
  let withMarkers = 0;
  let citing = 0;
  for (const q of answerable) {
    const r = await f.call('POST', `${base}:answer`, { query: q.text });
    t.equal(r.status, 200, `${q.id} answers 200`);
    if (/\[\[SRC:\d+\]\]/.test(r.body.answer)) withMarkers++;
    const cited = Object.values(r.body.sources as Record<string, { is_cited: boolean; path: string }>).filter((s) => s.is_cited);
    if (cited.some((s) => q.relevant.includes(s.path.slice('/docs/'.length, -'.md'.length)))) citing++;
  }
  t.comment(`declined ${declined} of ${unanswerable.length}; answerable with markers ${withMarkers}, citing a relevant abstract ${citing} of ${answerable.length}`);
  t.ok(declined >= FLOORS.declined, `declined ${declined} of ${unanswerable.length}`);
  t.ok(withMarkers >= FLOORS.withMarkers, `answerable claims answered with markers: ${withMarkers} of ${answerable.length}`);
  t.ok(citing >= FLOORS.citing, `citing a relevant abstract: ${citing} of ${answerable.length}`);
});
