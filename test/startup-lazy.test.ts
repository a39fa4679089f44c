// Issue 15, "start-up that loads only what the first request needs": a daemon that has started,
// answered /health and indexed a text file has not loaded any format library (pdf.js, tesseract.js,
// exceljs, jszip, utif2, @napi-rs/canvas); the first PDF and XLSX load theirs and index.
// The daemon runs in a child process with a module-load hook (node:module register) that records
// every module URL either of its threads loads, so the check does not depend on timing.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../../', import.meta.url));
const formats = join(root, 'fixtures', 'formats');
const HEAVY = ['tesseract.js', 'unpdf', 'exceljs', 'jszip', 'utif2', '@napi-rs/canvas', 'csv-parse', 'htmlparser2', 'webvtt-parser'];
const key = 'startup-lazy-cluster-key-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'trove-startup-lazy-'));
const log = join(dir, 'loaded.txt');
const hooks = join(dir, 'hooks.mjs');
writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, context);\n}\n`);
const recorder = join(dir, 'record.mjs');
// ESM loads go through the hook; CommonJS ones (the CSV, HTML and WebVTT parsers are required
// synchronously) through Module._load, recorded the same way.
writeFileSync(
  recorder,
  `import Module, { register } from 'node:module';\nimport { appendFileSync } from 'node:fs';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
    `const load = Module._load;\nModule._load = function (request, parent, isMain) {\n  try { appendFileSync(${JSON.stringify(log)}, Module._resolveFilename(request, parent, isMain) + '\\n'); } catch {}\n  return load.apply(this, arguments);\n};\n`,
);
writeFileSync(log, '');

const loadedPackages = () => {
  const pkgs = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) pkgs.add(m[1]!);
  }
  return pkgs;
};

let child: ChildProcess | undefined;
t.teardown(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

t.test('start-up loads no format library; the first PDF and XLSX load theirs', async (t) => {
  child = spawn(process.execPath, ['--import', pathToFileURL(recorder).href, join(root, 'bin', 'trove'), 'daemon', 'start', '--ephemeral', '--port', '0', '--json', '--allow-file-root', formats], {
    env: { ...process.env, TROVE_CLUSTER_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child!.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child!.once('exit', (code) => reject(new Error(`daemon exited with ${code}: ${stderr}`)));
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const waitJob = async (id: string) => {
    for (;;) {
      const job = await call('GET', `/jobs/${id}`);
      if (job.status !== 'queued' && job.status !== 'running') return job;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const health = await fetch(url + '/health');
  t.equal(health.status, 200, '/health answers');
  await call('POST', '/namespaces', { name: 'lazy' });
  await call('POST', '/namespaces/lazy/collections', { name: 'c' });
  // A text file goes through the indexing worker: both threads have loaded all they load at start-up.
  const text = await call('POST', '/namespaces/lazy/collections/c/files', { path: '/notes.txt', source: { type: 'inline', text: 'the lighthouse lamp was checked on monday' } });
  t.equal((await waitJob(text.job.id)).status, 'succeeded', 'a text file indexes');
  const atStart = loadedPackages();
  t.ok(atStart.has('better-sqlite3'), 'the hook records package loads (better-sqlite3 seen)');
  for (const pkg of HEAVY) t.notOk(atStart.has(pkg), `${pkg} is not loaded before a file of its format arrives`);
  // bin/trove runs the bundle (scripts/build.mjs): our code and the packages on the request paths come
  // from a few files in dist/bundle, not from hundreds of modules (zod alone is 95).
  const urls = readFileSync(log, 'utf8').split('\n');
  t.same(urls.filter((u) => u.includes('/dist/src/') || u.includes('/dist/daemon/')), [], 'no tsc-built module is loaded: the daemon and its worker run from dist/bundle');
  for (const pkg of ['zod', '@trpc/server', 'ws', 'commander', 'yaml']) t.notOk(atStart.has(pkg), `${pkg} is bundled, not loaded from node_modules`);
  const bundleFiles = new Set(urls.filter((u) => u.includes('/dist/bundle/')));
  t.ok(bundleFiles.size > 0 && bundleFiles.size < 60, `both threads load ${bundleFiles.size} bundle files`);

  const pdf = await call('POST', '/namespaces/lazy/collections/c/files', { path: '/report.pdf', source: { type: 'uri', uri: pathToFileURL(join(formats, 'report.pdf')).href } });
  t.equal((await waitJob(pdf.job.id)).status, 'succeeded', 'a PDF indexes');
  const xlsx = await call('POST', '/namespaces/lazy/collections/c/files', { path: '/budget.xlsx', source: { type: 'uri', uri: pathToFileURL(join(formats, 'budget.xlsx')).href } });
  t.equal((await waitJob(xlsx.job.id)).status, 'succeeded', 'an XLSX indexes');
  const csv = await call('POST', '/namespaces/lazy/collections/c/files', { path: '/table.csv', source: { type: 'inline', content_type: 'text/csv', text: 'port,lamp\nnorth,checked\n' } });
  t.equal((await waitJob(csv.job.id)).status, 'succeeded', 'a CSV indexes');
  const html = await call('POST', '/namespaces/lazy/collections/c/files', { path: '/page.html', source: { type: 'inline', content_type: 'text/html', text: '<h1>Lamp</h1><p>checked</p>' } });
  t.equal((await waitJob(html.job.id)).status, 'succeeded', 'an HTML page indexes');
  const after = loadedPackages();
  t.ok(after.has('csv-parse'), 'the CSV loaded csv-parse (a CommonJS require, recorded too)');
  t.ok(after.has('htmlparser2'), 'the HTML page loaded htmlparser2');
  t.ok(after.has('unpdf'), 'the PDF loaded unpdf');
  t.ok(after.has('exceljs'), 'the XLSX loaded exceljs');
  const hits = await call('POST', '/namespaces/lazy/collections/c:search', { query: 'quarterly aurora budget', mode: 'keyword', limit: 5 });
  t.ok(JSON.stringify(hits).includes('report.pdf'), 'the PDF is searchable');
});
