// The MCP server (issue 14, item 2) through the SDK's own client, over both transports: Streamable
// HTTP at /mcp on a daemon, and stdio from `trove mcp` spawned against that daemon. One daemon
// (in-process) and one spawned `trove mcp` (plus one short `trove mcp` run that must refuse a bad key).
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type RunningDaemon } from '../daemon/main.js';
import { MCP_BODY_LIMIT } from '../src/mcp/http.js';
import { extractMarkdown } from '../src/domain/ingest/formats/markdown.js';
import { apiOf, BIN, cleanEnv, newClusterKey, ROOT, runCli } from './helpers/cli.js';
import { readmeBlock } from './helpers/readme-blocks.js';
import { waitFor } from './helpers/wait.js';

const GUIDE = ['# Limits', '', 'Every client has a rate limit of 100 requests per minute.', 'Bursts above the rate limit are refused with 429.', '', 'Other notes follow here.'].join('\n');
/** What `get` reads: the text trove extracted from GUIDE, in which evidence offsets count (test/mcp-get.test.ts). */
const GUIDE_TEXT = extractMarkdown(GUIDE).text;

let daemon: RunningDaemon;
let api: ReturnType<typeof apiOf>;
const keys: Record<'writer' | 'reader' | 'searcher', string> = { writer: '', reader: '', searcher: '' };

async function idle(ns: string, col: string): Promise<void> {
  await waitFor(`${ns}/${col} indexed`, async () => {
    const c = await api<{ file_counts: Record<string, number> }>('GET', `/namespaces/${ns}/collections/${col}`);
    return c.body.file_counts.pending! + c.body.file_counts.indexing! === 0;
  });
}

async function httpClient(key: string | null): Promise<Client> {
  const client = new Client({ name: 'trove-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const errorCode = (r: CallToolResult) => (r.structuredContent as { error?: { code: string } } | undefined)?.error?.code;

t.before(async () => {
  const clusterKey = newClusterKey();
  daemon = await startDaemon({ ephemeral: true, clusterKey, port: 0, operator: false, drainSeconds: 0 });
  api = apiOf({ url: daemon.url, key: clusterKey });
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'notes', processing: { semantic: false } });
  await api('POST', '/namespaces/demo/collections', { name: 'private', processing: { semantic: false }, access_control: 'enforced' });
  await api('POST', '/namespaces/demo/collections/notes/files', { path: '/guide/limits.md', source: { type: 'inline', text: GUIDE, content_type: 'text/markdown' } });
  await api('POST', '/namespaces/demo/collections/notes/files', { path: '/other.txt', source: { type: 'inline', text: 'Nothing about quotas in here, only penguins.' } });
  for (const [path, reader] of [['/alpha.md', 'alice'], ['/beta.md', 'bob']] as const) {
    await api('POST', '/namespaces/demo/collections/private/access-rules', { file: path, readers: [reader] });
    await api('POST', '/namespaces/demo/collections/private/files', { path, source: { type: 'inline', text: `The launch plan for ${reader}: rate limit reviews.` } });
  }
  const mint = async (name: string, scope: Record<string, unknown>) => (await api<{ secret: string }>('POST', '/keys', { name, scope })).body.secret;
  keys.writer = await mint('writer', { kind: 'namespace', namespace: 'demo', actions: ['read', 'write', 'search', 'query'] });
  keys.reader = await mint('reader', { kind: 'collection', namespace: 'demo', collections: ['notes'], actions: ['read', 'search'] });
  keys.searcher = await mint('searcher', { kind: 'collection', namespace: 'demo', collections: ['notes'], actions: ['search'] });
  await idle('demo', 'notes');
  await idle('demo', 'private');
});
t.teardown(() => daemon?.stop());

t.test('HTTP: tools follow the key, search returns evidence, get reads it back', async (t) => {
  const writer = await httpClient(keys.writer);
  t.teardown(() => writer.close());
  const writerTools = (await writer.listTools()).tools.map((tool) => tool.name).sort();
  t.same(writerTools, ['add_file', 'answer', 'get', 'list_collections', 'search', 'status'], 'a write key gets add_file');
  const search = (await writer.listTools()).tools.find((tool) => tool.name === 'search')!;
  t.match(search.inputSchema, { type: 'object', required: ['namespace', 'collection', 'query'] }, 'search takes namespace, collection and query');
  t.ok(search.description && search.description.length > 200, 'the description tells an agent what to do');

  const reader = await httpClient(keys.reader);
  t.teardown(() => reader.close());
  t.notOk((await reader.listTools()).tools.some((tool) => tool.name === 'add_file'), 'a key without write has no add_file');

  const found = await call(reader, 'search', { namespace: 'demo', collection: 'notes', query: 'rate limit', mode: 'keyword', result_unit: 'passage' });
  t.notOk(found.isError, textOf(found));
  const results = (found.structuredContent as { results: { path: string; file_id: string; score: number; evidence: { text: string; location: { char_start: number; char_end: number } }[] }[] }).results;
  t.equal(results[0]?.path, '/guide/limits.md');
  t.match(results[0], { file_id: /^fil_/, score: Number });
  const ev = results[0]!.evidence[0]!;
  t.match(ev.location, { char_start: Number, char_end: Number }, 'evidence has a char location');
  t.match(textOf(found), /\/guide\/limits\.md {2}score [0-9.]+ {2}fil_/, 'the text rendering names path, score and file id');
  t.match(textOf(found), /\[chars \d+-\d+\]/, 'and the evidence location');

  const whole = await call(reader, 'get', { namespace: 'demo', collection: 'notes', file: '/guide/limits.md' });
  t.notOk(whole.isError, textOf(whole));
  t.match(whole.structuredContent, { text: GUIDE_TEXT, total_chars: GUIDE_TEXT.length, total_lines: 6, truncated: false, range: { start_line: 1, end_line: 6 } });
  t.match(textOf(whole), /the whole file, 6 line\(s\)/);

  const lines = await call(reader, 'get', { namespace: 'demo', collection: 'notes', file: results[0]!.file_id, start_line: 3, end_line: 4 });
  t.match(lines.structuredContent, { path: '/guide/limits.md', text: GUIDE_TEXT.split('\n').slice(2, 4).join('\n') + '\n', range: { start_line: 3, end_line: 4 } }, 'a line range by file id');
  t.match(textOf(lines), /lines 3-4 \(chars \d+-\d+\) of 6 line\(s\), \d+ chars/);

  const around = await call(reader, 'get', { namespace: 'demo', collection: 'notes', file: '/guide/limits.md', start_char: ev.location.char_start, end_char: ev.location.char_end });
  t.equal((around.structuredContent as { text: string }).text, ev.text, 'an evidence char span reads back the snippet');

  const capped = await call(reader, 'get', { namespace: 'demo', collection: 'notes', file: '/guide/limits.md', max_chars: 20 });
  t.match(capped.structuredContent, { truncated: true, next: { start_char: 20 }, text: GUIDE_TEXT.slice(0, 20) });
  t.match(textOf(capped), /Cut at max_chars=20\. To read on, call get with the same file and \{"start_char":20\}/);

  const listed = await call(reader, 'list_collections', {});
  t.match(textOf(listed), /notes \(col_\w+\) {2}ready {2}files: 2 ready/);
  t.notMatch(textOf(listed), /private/, 'only the collections the key can see');

  const status = await call(reader, 'status', { namespace: 'demo', collection: 'notes' });
  t.match(textOf(status), /Key reader .*collections notes of namespace demo; actions read, search\. Tools it can use: status, search, get/);
  t.match(textOf(status), /Collection demo\/notes \(col_\w+\): ready; files 2 ready/);
});

t.test('HTTP: a key lacking an action, or out of scope, gets the contract error as a tool error', async (t) => {
  const reader = await httpClient(keys.reader);
  t.teardown(() => reader.close());
  // A tool the key cannot run is not offered (test/mcp-contract.test.ts); one it can run still meets
  // the routes' checks: status of a collection needs read.
  const searcher = await httpClient(keys.searcher);
  t.teardown(() => searcher.close());
  const status = await call(searcher, 'status', { namespace: 'demo', collection: 'notes' });
  t.equal(status.isError, true);
  t.equal(errorCode(status), 'forbidden', 'no read action: 403 forbidden');
  t.match(textOf(status), /^Error forbidden: This key lacks the 'read' action\.\nrequest_id: req_/);
  const elsewhere = await call(reader, 'search', { namespace: 'demo', collection: 'private', query: 'launch', principals: ['alice'] });
  t.equal(errorCode(elsewhere), 'not_found', 'a collection outside the key scope is 404');

  t.equal(errorCode(await call(reader, 'get', { namespace: 'demo', collection: 'notes', file: '/other.txt', start_line: 2, start_char: 1 })), 'invalid_request', 'lines and chars together');
});

t.test('HTTP: access rules filter results by principals; add_file indexes', async (t) => {
  const writer = await httpClient(keys.writer);
  t.teardown(() => writer.close());
  const paths = async (principals?: string[]) => {
    const r = await call(writer, 'search', { namespace: 'demo', collection: 'private', query: 'launch plan', mode: 'keyword', ...(principals ? { principals } : {}) });
    return r.isError ? errorCode(r) : (r.structuredContent as { results: { path: string }[] }).results.map((x) => x.path);
  };
  t.same(await paths(['alice']), ['/alpha.md'], 'alice sees her file only');
  t.same(await paths(['bob']), ['/beta.md'], 'bob his');
  t.same(await paths([]), [], 'no principal, nothing');
  t.equal(await paths(), 'invalid_request', 'an enforced collection needs principals');

  const added = await call(writer, 'add_file', { namespace: 'demo', collection: 'notes', path: '/new/penguins.md', text: 'Emperor penguins huddle against the cold.', content_type: 'text/markdown' });
  t.notOk(added.isError, textOf(added));
  t.match(added.structuredContent, { file: { path: '/new/penguins.md', status: 'ready' }, job: { status: 'succeeded' } });
  const found = await call(writer, 'search', { namespace: 'demo', collection: 'notes', query: 'huddle', mode: 'keyword' });
  t.equal((found.structuredContent as { results: { path: string }[] }).results[0]?.path, '/new/penguins.md', 'searchable at once');
  const answered = await call(writer, 'answer', { namespace: 'demo', collection: 'notes', query: 'What is the rate limit per minute?' });
  t.notOk(answered.isError, textOf(answered));
  t.match(textOf(answered), /\[\[SRC:\d+\]\][\s\S]*Sources \(marker/, 'the answer keeps its markers and lists the sources');
  t.match(answered.structuredContent, { sources: Object });
  const bothOrNone = await call(writer, 'add_file', { namespace: 'demo', collection: 'notes', path: '/x.md' });
  t.equal(errorCode(bothOrNone), 'invalid_request', 'text or uri is required');
});

t.test('GET /info names the calling key, without its secret (how a session picks its tools)', async (t) => {
  const res = await fetch(`${daemon.url}/info`, { headers: { authorization: `Bearer ${keys.reader}` } });
  const info = (await res.json()) as { key: Record<string, unknown> };
  t.match(info.key, { id: /^key_/, name: 'reader', prefix: String, scope: { kind: 'collection', namespace: 'demo', collections: ['notes'], actions: ['read', 'search'] } });
  t.notOk('secret' in info.key, 'never the secret');
});

t.test('HTTP: /mcp needs a key before any MCP processing', async (t) => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  const post = (headers: Record<string, string>) =>
    fetch(`${daemon.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) });
  for (const [what, headers] of [['no key', {}], ['a bad key', { authorization: 'Bearer trove_nope_0000000000000000000000' }]] as const) {
    const res = await post(headers);
    t.equal(res.status, 401, what);
    t.match(await res.json(), { error: { code: 'unauthenticated', request_id: String, retryable: false } }, `${what}: the contract's envelope`);
  }
  const okRes = await post({ authorization: `Bearer ${keys.reader}` });
  t.equal(okRes.status, 200);
  t.match(await okRes.json(), { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'trove' } } });
  const oversized = await fetch(`${daemon.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.reader}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ ...init, params: { ...init.params, pad: 'x'.repeat(MCP_BODY_LIMIT) } }),
  });
  t.equal(oversized.status, 413, 'a message over the body limit');
  t.match(await oversized.json(), { error: { code: 'request_too_large', details: { limit_bytes: MCP_BODY_LIMIT } } });
  // Found by a bad-input attack: a Host header that makes no URL was a 500 (now the Host check's 403,
  // test/mcp-origin.test.ts), and a tool's arguments nested 10,000 deep overflowed the SDK's
  // validation (an internal_error).
  for (const host of ['[bad', 'a b', 'evil.com:99999', '%%%']) {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const payload = JSON.stringify(init);
      const req = httpRequest(`${daemon.url}/mcp`, { method: 'POST', setHost: false, headers: { host, authorization: `Bearer ${keys.reader}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(payload) } }, (r) => {
        let text = '';
        r.on('data', (c) => (text += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(payload);
    });
    t.equal(res.status, 403, `Host ${JSON.stringify(host)}: refused, not a 500 (${res.body.slice(0, 80)})`);
    t.match(JSON.parse(res.body), { error: { code: 'forbidden', details: { reason: 'host_not_allowed' } } });
  }
  // Written out by hand: JSON.stringify itself overflows at this depth.
  const deep = `${'{"and":['.repeat(10_000)}{"field":"path","op":"eq","value":"/x"}${']}'.repeat(10_000)}`;
  const nested = await fetch(`${daemon.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.reader}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","filter":${deep}}}}`,
  });
  t.equal(nested.status, 400, 'arguments nested 10,000 deep: refused before validation');
  t.match(await nested.json(), { error: { code: 'invalid_request', message: /nested more than 512 levels/ } });
  const get = await fetch(`${daemon.url}/mcp`, { headers: { authorization: `Bearer ${keys.reader}`, accept: 'text/event-stream' } });
  t.equal(get.status, 405, 'stateless: no standalone SSE stream');
  t.equal(get.headers.get('allow'), 'POST');
  await t.rejects(httpClient(null), 'the SDK client cannot connect without a key');
  const openapi = await (await fetch(`${daemon.url}/openapi.json`)).json();
  t.notOk('/mcp' in (openapi as { paths: object }).paths, '/mcp is not a contract route');
});

t.test('stdio: `trove mcp` with TROVE_URL/TROVE_KEY, as the README configures it', async (t) => {
  // The README's config block, read as an agent would: `npx trove …` is this build's CLI
  // (test/package.test.ts proves `npx trove` from an installed tarball).
  const config = JSON.parse(readmeBlock('mcp-config')) as { mcpServers: Record<string, { command: string; args: string[] }> };
  const server = config.mcpServers.trove;
  t.match(server, { command: 'npx', args: ['trove', 'mcp'] }, 'the README starts `npx trove mcp`');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...(server?.args.slice(1) ?? [])],
    cwd: ROOT,
    env: cleanEnv({ TROVE_URL: daemon.url, TROVE_KEY: keys.reader }) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'trove-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
  t.same(tools, ['get', 'list_collections', 'search', 'status'], 'read and search key: no add_file, no answer');
  const found = await call(client, 'search', { namespace: 'demo', collection: 'notes', query: 'rate limit', mode: 'keyword' });
  t.equal((found.structuredContent as { results: { path: string }[] }).results[0]?.path, '/guide/limits.md');
  t.match((found.structuredContent as { results: { evidence: unknown[] }[] }).results[0]?.evidence[0], { text: /rate limit/, location: { char_start: Number } });
  const got = await call(client, 'get', { namespace: 'demo', collection: 'notes', file: '/guide/limits.md', start_line: 1, end_line: 1 });
  t.match(got.structuredContent, { text: `${GUIDE_TEXT.split('\n')[0]}\n`, range: { start_line: 1, end_line: 1 } });
  const refused = await call(client, 'search', { namespace: 'demo', collection: 'private', query: 'launch', principals: ['alice'] });
  t.equal(errorCode(refused), 'not_found', 'the same scope check as the HTTP route');
  t.match(stderr, /trove mcp: serving .* as key reader/, 'messages go to stderr');
});

t.test('stdio: a refused key exits before serving, with nothing on stdout', async (t) => {
  const run = await runCli(['mcp'], { env: { TROVE_URL: daemon.url, TROVE_KEY: 'trove_nope_0000000000000000000000' } });
  t.equal(run.code, 3, 'unauthenticated exits 3, as every command');
  t.equal(run.stdout, '', 'stdout stays clean');
  t.match(run.stderr, /unauthenticated/);
});
