// The MCP `get` tool reads the text search's evidence offsets count in: the extracted text, not the
// file's bytes. For HTML (tags), Markdown (link URLs dropped: the project README drifted by tens of
// characters), PDF (page evidence, which carries its char span too) and DOCX (a zip), the text
// `get` returns for an evidence span equals the evidence snippet.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { apiOf, newClusterKey, ROOT } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

interface Evidence {
  kind: string;
  text: string;
  location: { char_start?: number; char_end?: number; page?: number } | null;
}

const FILES = [
  { path: '/page.html', fixture: 'fixtures/formats/page.html', type: 'text/html', queries: ['ferries leave from pier two', 'harbour'] },
  { path: '/notes.md', fixture: 'fixtures/formats/notes.md', type: 'text/markdown', queries: ['lighthouse lamp checked monday'] },
  { path: '/README.md', fixture: 'README.md', type: 'text/markdown', queries: ['layering test', 'operator channel socket', 'where to change what', 'benchmark'] },
  { path: '/report.pdf', fixture: 'fixtures/formats/report.pdf', type: 'application/pdf', queries: ['quarterly aurora budget'] },
  { path: '/handbook.docx', fixture: 'fixtures/formats/handbook.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', queries: ['vacation accrual policy'] },
];

let daemon: RunningDaemon;
let client: Client;

const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

t.before(async () => {
  const clusterKey = newClusterKey();
  daemon = await startDaemon({ ephemeral: true, clusterKey, port: 0, operator: false, drainSeconds: 0 });
  const api = apiOf({ url: daemon.url, key: clusterKey });
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'docs', processing: { semantic: false } });
  for (const f of FILES) {
    const bytes = readFileSync(`${ROOT}/${f.fixture}`);
    const added = await api<{ upload: { url: string } }>('POST', '/namespaces/demo/collections/docs/files', { path: f.path, source: { type: 'upload', content_type: f.type, bytes: bytes.length } });
    const put = await fetch(added.body.upload.url, { method: 'PUT', headers: { 'content-type': f.type }, body: bytes });
    if (put.status >= 300) throw new Error(`upload of ${f.path}: ${put.status} ${await put.text()}`);
  }
  await waitFor('indexed', async () => {
    const c = await api<{ file_counts: Record<string, number> }>('GET', '/namespaces/demo/collections/docs');
    return c.body.file_counts.ready === FILES.length || (c.body.file_counts.failed! > 0 ? Promise.reject(new Error(JSON.stringify(c.body.file_counts))) : false);
  }, 120_000);
  const reader = (await api<{ secret: string }>('POST', '/keys', { name: 'reader', scope: { kind: 'namespace', namespace: 'demo', actions: ['read', 'search'] } })).body.secret;
  client = new Client({ name: 'trove-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${reader}` } } }));
});
t.teardown(async () => {
  await client?.close();
  await daemon?.stop();
});

for (const f of FILES) {
  t.test(`${f.path}: get over an evidence span returns the evidence snippet`, async (t) => {
    let checked = 0;
    for (const query of f.queries) {
      const found = await call('search', { namespace: 'demo', collection: 'docs', query, mode: 'keyword', result_unit: 'passage', limit: 5, filter: { field: 'path', op: 'eq', value: f.path } });
      t.notOk(found.isError, textOf(found));
      const results = (found.structuredContent as { results: { evidence: Evidence[] }[] }).results;
      t.ok(results.length > 0, `'${query}' finds ${f.path}`);
      for (const ev of results.flatMap((r) => r.evidence)) {
        const { char_start: start, char_end: end } = ev.location ?? {};
        if (f.type === 'application/pdf') t.equal(typeof ev.location?.page, 'number', 'PDF evidence keeps its page');
        t.ok(Number.isInteger(start) && Number.isInteger(end), `the evidence has a char span (${JSON.stringify(ev.location)})`);
        const got = await call('get', { namespace: 'demo', collection: 'docs', file: f.path, start_char: start, end_char: end });
        t.notOk(got.isError, textOf(got));
        t.equal((got.structuredContent as { text: string }).text, ev.text, `chars ${start}-${end}: the snippet ${JSON.stringify(ev.text.slice(0, 40))}`);
        checked++;
      }
    }
    t.ok(checked > 0, `${checked} evidence spans read back`);
  });
}

t.test('the whole HTML file is its text, without tags', async (t) => {
  const whole = await call('get', { namespace: 'demo', collection: 'docs', file: '/page.html' });
  t.notOk(whole.isError, textOf(whole));
  const text = (whole.structuredContent as { text: string }).text;
  t.match(text, /ferries leave from pier two/i);
  t.notMatch(text, /<\/?[a-z][^>]*>/i, 'no tag soup');
});
