// Small MCP contract points: a key is offered only the tools it can run; a not_found names the
// nearest names the key can see (as the CLI does); and no reply passes the size budget (UTF-8 bytes
// ÷ 4 over the text and structured forms together), a cut reply saying so in both forms and its
// cursor (search) or next arguments (get) returning exactly the rest.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { apiOf, newClusterKey } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

const BUDGET_TOKENS = 1000;
const WORDS = ['harbour', 'ferry', 'pier', 'tide', 'beacon', 'keeper', 'storm', 'rope', 'anchor', 'gull'];
/** A file of some 700 characters where 'lighthouse' occurs once or more, differently per file. */
const fileText = (i: number) =>
  Array.from({ length: 12 }, (_, j) => `${WORDS[(i + j) % WORDS.length]} ${WORDS[(i * 3 + j) % WORDS.length]} ${j % (1 + (i % 4)) === 0 ? 'lighthouse' : 'lamp'} number ${i}-${j} stands here.`).join(' ');
const LONG = Array.from({ length: 400 }, (_, i) => `Line ${i + 1}: the lighthouse log records wind, tide and visibility for this watch; é ü 灯台.`).join('\n');

let daemon: RunningDaemon;
let api: ReturnType<typeof apiOf>;
const keys: Record<string, string> = {};

async function client(key: string): Promise<Client> {
  const c = new Client({ name: 'trove-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return c;
}
const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const bytesOf = (r: CallToolResult) => r.content.reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text, 'utf8') : 0), 0) + Buffer.byteLength(JSON.stringify(r.structuredContent ?? null), 'utf8');

t.before(async () => {
  const clusterKey = newClusterKey();
  daemon = await startDaemon({ ephemeral: true, clusterKey, port: 0, operator: false, drainSeconds: 0, mcp: { replyBudgetTokens: BUDGET_TOKENS } });
  api = apiOf({ url: daemon.url, key: clusterKey });
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'notes', processing: { semantic: false } });
  for (let i = 0; i < 30; i++) await api('POST', '/namespaces/demo/collections/notes/files', { path: `/log/${String(i).padStart(2, '0')}.txt`, source: { type: 'inline', text: fileText(i) } });
  await api('POST', '/namespaces/demo/collections/notes/files', { path: '/long.txt', source: { type: 'inline', text: LONG } });
  await waitFor('indexed', async () => {
    const c = await api<{ file_counts: Record<string, number> }>('GET', '/namespaces/demo/collections/notes');
    return c.body.file_counts.ready === 31;
  });
  const mint = async (name: string, actions: string[]) => (await api<{ secret: string }>('POST', '/keys', { name, scope: { kind: 'namespace', namespace: 'demo', actions } })).body.secret;
  keys.all = await mint('all', ['read', 'write', 'search', 'query']);
  keys.reader = await mint('reader', ['read', 'search']);
  keys.searcher = await mint('searcher', ['search']);
  keys.asker = await mint('asker', ['query']);
});
t.teardown(() => daemon?.stop());

t.test('tools/list offers a key only the tools its actions can run', async (t) => {
  const expected: Record<string, string[]> = {
    all: ['add_file', 'answer', 'get', 'list_collections', 'search', 'status'],
    reader: ['get', 'list_collections', 'search', 'status'],
    searcher: ['list_collections', 'search', 'status'],
    asker: ['answer', 'list_collections', 'status'],
  };
  for (const [name, tools] of Object.entries(expected)) {
    const c = await client(keys[name]!);
    t.teardown(() => c.close());
    t.same((await c.listTools()).tools.map((tool) => tool.name).sort(), tools, `${name}`);
    t.match(textOf(await call(c, 'status', {})), new RegExp(`Tools it can use: ${tools.includes('search') ? '.*search' : ''}`), `status names the same tools (${name})`);
    if (!tools.includes('answer')) t.equal((await call(c, 'answer', { namespace: 'demo', collection: 'notes', query: 'lighthouse?' })).isError, true, `${name}: answer is not there to call`);
  }
});

t.test('not_found names the nearest namespace or collection the key can see', async (t) => {
  const c = await client(keys.reader!);
  t.teardown(() => c.close());
  const col = await call(c, 'search', { namespace: 'demo', collection: 'notse', query: 'lighthouse', mode: 'keyword' });
  t.equal(col.isError, true);
  t.match(col.structuredContent, { error: { code: 'not_found', message: "No collection 'notse' in namespace 'demo'. Did you mean 'notes'? Collections this key can see there: 'notes'." } });
  t.match(textOf(col), /Did you mean 'notes'\?/);
  const ns = await call(c, 'get', { namespace: 'dmeo', collection: 'notes', file: '/long.txt' });
  t.match(ns.structuredContent, { error: { code: 'not_found', message: /^No namespace 'dmeo'\. Did you mean 'demo'\?/ } });
  const file = await call(c, 'get', { namespace: 'demo', collection: 'notes', file: '/nope.txt' });
  t.match(file.structuredContent, { error: { code: 'not_found' } }, 'a missing file under existing names keeps the API message');
  t.notMatch(textOf(file), /Did you mean/);
});

t.test('search: a reply past the budget is cut, says so, and its cursor returns exactly the rest', async (t) => {
  const args = { namespace: 'demo', collection: 'notes', query: 'lighthouse', mode: 'keyword', result_unit: 'passage', limit: 40 };
  // Every page over HTTP: the MCP replies go through the API's pages, cutting each to the budget.
  const whole = { body: { results: [] as { file_id: string; rank: number; evidence: unknown[] }[] } };
  for (let page: string | null = null, first = true; first || page; first = false) {
    const res: { body: { results: typeof whole.body.results; next_cursor: string | null } } = await api<{ results: typeof whole.body.results; next_cursor: string | null }>('POST', '/namespaces/demo/collections/notes:search', { query: 'lighthouse', mode: 'keyword', result_unit: 'passage', limit: 40, ...(page ? { cursor: page } : {}) });
    whole.body.results.push(...res.body.results);
    page = res.body.next_cursor;
  }
  t.ok(whole.body.results.length > 40, `${whole.body.results.length} results over HTTP`);
  let cuts = 0;
  const c = await client(keys.reader!);
  t.teardown(() => c.close());
  const seen: typeof whole.body.results = [];
  let cursor: string | undefined;
  let replies = 0;
  do {
    const reply = await call(c, 'search', { ...args, ...(cursor ? { cursor } : {}) });
    t.notOk(reply.isError, textOf(reply));
    replies++;
    t.ok(bytesOf(reply) <= BUDGET_TOKENS * 4, `reply ${replies}: ${bytesOf(reply)} bytes, within ${BUDGET_TOKENS * 4}`);
    const body = reply.structuredContent as { results: typeof seen; next_cursor: string | null; cut?: { reason: string; shown: number; omitted: number } };
    seen.push(...body.results);
    if (body.cut) {
      cuts++;
      t.match(body.cut, { reason: 'reply_budget', budget_tokens: BUDGET_TOKENS, shown: body.results.length }, 'the structured form says it was cut');
      t.match(textOf(reply), new RegExp(`Cut to fit the reply budget of ${BUDGET_TOKENS} tokens: ${body.results.length} of this page's \\d+ results shown`), 'and so does the text');
      t.match(textOf(reply), `cursor "${body.next_cursor}"`, 'the text gives the cursor');
    }
    cursor = body.next_cursor ?? undefined;
  } while (cursor && replies < 50);
  t.ok(cuts > 2, `${replies} replies, ${cuts} of them cut`);
  t.same(seen, whole.body.results, 'every result once, in rank order, with its evidence, as the API gives them');

  const damaged = await call(c, 'search', { ...args, cursor: 'mcp1.!!!' });
  t.match(damaged.structuredContent, { error: { code: 'invalid_cursor' } }, 'a damaged cursor is refused');
});

t.test('get: a file past the budget is cut at what fits, and the next arguments read the rest', async (t) => {
  const c = await client(keys.reader!);
  t.teardown(() => c.close());
  let text = '';
  let next: Record<string, number> | null = {};
  let replies = 0;
  while (next && replies < 100) {
    const reply = await call(c, 'get', { namespace: 'demo', collection: 'notes', file: '/long.txt', ...next });
    t.notOk(reply.isError, textOf(reply));
    replies++;
    t.ok(bytesOf(reply) <= BUDGET_TOKENS * 4, `reply ${replies}: ${bytesOf(reply)} bytes`);
    const body = reply.structuredContent as { text: string; next: Record<string, number> | null; cut?: unknown };
    if (body.next) {
      t.match(body.cut, { reason: 'reply_budget', budget_tokens: BUDGET_TOKENS, shown: body.text.length });
      t.match(textOf(reply), `[Cut to fit the reply budget of ${BUDGET_TOKENS} tokens. To read on, call get with the same file and ${JSON.stringify(body.next)}.]`);
    }
    text += body.text;
    next = body.next;
  }
  t.ok(replies > 5, `${replies} replies`);
  t.equal(text, LONG, 'the pieces make the whole file');
});
