// `trove ingest` decides at plan time what the collection can index (src/cli/readable-plan.ts over
// src/contract/readable-types.ts): archives, binaries and images in a collection without OCR are
// skipped with one grouped line instead of being uploaded to fail one by one, unless
// --include-unsupported; `--exclude GLOB` (repeatable, and the saved defaults' `exclude`) leaves
// paths out, in a one-shot ingest and in watch mode.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { EXTENSION_TYPES } from '../src/contract/content-types.js';
import { CLI_EXIT_CODES } from '../src/contract/errors.js';
import { OCR_CONTENT_TYPES, unreadableReason } from '../src/contract/readable-types.js';
import { FORMATS, formatFor } from '../src/domain/ingest/formats/registry.js';
import { partitionReadable, unreadableSummary } from '../src/cli/readable-plan.js';
import { sniffContentType } from '../src/cli/walk.js';
import { apiOf, BIN, cleanEnv, parseJson, runCli, startDaemonProcess } from './helpers/cli.js';

t.setTimeout(900_000);

t.test("the contract's readable types agree with the daemon's formats", async (t) => {
  for (const type of new Set([...Object.values(EXTENSION_TYPES), ...FORMATS.flatMap((f) => f.contentTypes)])) {
    // A type the contract calls readable that no format reads would be uploaded to fail; the one
    // exception the formats' conformance test allows (an extension mapped but not read yet) is
    // reported by the daemon, as before.
    if (formatFor(type) !== undefined) t.equal(unreadableReason(type, { ocr: true }), null, `${type} is readable`);
  }
  for (const type of ['application/gzip', 'application/zip', 'application/octet-stream', 'application/x-sqlite3', 'audio/mpeg', 'video/mp4']) {
    t.equal(formatFor(type), undefined, `${type}: no format reads it`);
    t.equal(unreadableReason(type), 'unsupported_type', `${type} is skipped`);
  }
  for (const type of OCR_CONTENT_TYPES) {
    t.equal(formatFor(type)?.name, 'image', `${type} is read by OCR`);
    t.equal(unreadableReason(type, { ocr: false }), 'ocr_off', `${type} is skipped when OCR is off`);
    t.equal(unreadableReason(type, { ocr: true }), null, `${type} is sent when OCR is on`);
  }
  t.equal(unreadableReason('text/x-whatever; charset=utf-8'), null, 'any text type is readable');
});

t.test('one grouped line, the largest group first', async (t) => {
  const files = [
    ...Array.from({ length: 9 }, (_, i) => ({ path: `/a/${i}.gz`, contentType: 'application/gzip' })),
    ...Array.from({ length: 5 }, (_, i) => ({ path: `/b${i}.BIN`, contentType: 'application/octet-stream' })),
    { path: '/scan.png', contentType: 'image/png' },
    { path: '/notes.md', contentType: 'text/markdown' },
    { path: '/core', contentType: 'application/x-elf' },
  ];
  const { readable, unreadable } = partitionReadable(files, { ocr: false });
  t.same(readable.map((f) => f.path), ['/notes.md']);
  t.equal(
    unreadableSummary(unreadable),
    'skipped 16 files the collection cannot index: 9 .gz, 5 .bin, 1 .png (OCR is off for this collection), 1 application/x-elf; --include-unsupported to send them anyway',
  );
  t.equal(partitionReadable(files, { ocr: false, includeUnsupported: true }).readable.length, files.length, '--include-unsupported sends everything');
  t.equal(partitionReadable(files, { ocr: true }).readable.length, 2, 'with OCR on the image is sent');
});

t.test('a name without a known extension is sniffed as the daemon would judge it', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-sniff-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cases: [string, Buffer, string][] = [
    ['text', Buffer.from('plain words\twith a tab\r\n'), 'text/plain'],
    ['utf16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi there', 'utf16le')]), 'text/plain'],
    ['latin1', Buffer.from('caf\xe9 cr\xe8me', 'latin1'), 'text/plain'],
    ['noise', Buffer.from([0x41, 0x01, 0x02, 0xfe, 0x42]), 'application/octet-stream'],
    ['gz', gzipSync('x'), 'application/gzip'],
    ['pdf', Buffer.from('%PDF-1.7\n%\x00\x01binary\n', 'latin1'), 'application/pdf'],
  ];
  for (const [name, bytes, type] of cases) {
    await writeFile(path.join(dir, name), bytes);
    t.equal(await sniffContentType(path.join(dir, name)), type, name);
  }
});

interface Summary {
  added: number;
  failed: number;
  ready: number;
  unsupported: { path: string; reason: string }[];
  excluded: { path: string; kind: string }[];
}

t.test('ingest against a real daemon', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const api = apiOf(daemon);
  const work = await mkdtemp(path.join(os.tmpdir(), 'trove-unsupported-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const configHome = path.join(work, 'config');
  const folder = path.join(work, 'docs');
  await mkdir(path.join(folder, 'drafts'), { recursive: true });
  await writeFile(path.join(folder, 'guide.md'), '# Guide\n\nHow to rotate the tokens.\n');
  await writeFile(path.join(folder, 'data'), 'plain text without an extension\n');
  for (const name of ['a.gz', 'b.gz', 'c.gz']) await writeFile(path.join(folder, name), gzipSync(`archive ${name}`));
  for (const name of ['x.bin', 'y.bin']) await writeFile(path.join(folder, name), Buffer.from([0, 1, 2, 3, 0, 255, 254, 0]));
  await writeFile(path.join(folder, 'blob'), gzipSync('a gzip without its extension'));
  // Binary without a NUL in it: control characters no text holds.
  await writeFile(path.join(folder, 'noise'), Buffer.from([0x41, 0x01, 0x02, 0xfe, 0x42, 0x7f, 0x03]));
  await writeFile(path.join(folder, 'scan.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  await writeFile(path.join(folder, 'build.log'), 'a log line\n');
  await writeFile(path.join(folder, 'drafts', 'wip.md'), '# Work in progress\n');
  t.equal((await api('POST', '/namespaces', { name: 'u' })).status, 201);
  t.equal((await api('POST', '/namespaces/u/collections', { name: 'noocr', processing: { ocr: false } })).status, 201);
  const conn = ['--url', daemon.url, '--key', daemon.key];
  const env = { TROVE_CONFIG_HOME: configHome };

  await t.test('unsupported files are skipped with one line; the collection ends ready', async (t) => {
    const run = await runCli([...conn, 'ingest', folder, '-n', 'u', '-c', 'noocr', '--exclude', '*.log', '--exclude', 'drafts/', '--json'], { env });
    t.equal(run.code, 0, run.stderr);
    const summary = parseJson<Summary>(run);
    t.equal(summary.added, 2, 'guide.md and the extensionless text file');
    t.equal(summary.failed, 0, 'nothing was sent only to fail');
    t.same(summary.unsupported.map((f) => f.path).sort(), ['/a.gz', '/b.gz', '/blob', '/c.gz', '/noise', '/scan.png', '/x.bin', '/y.bin']);
    t.same(summary.excluded.map((e) => [e.path, e.kind]), [['/build.log', 'pattern'], ['/drafts', 'pattern']]);
    const collection = await api<{ status: string; file_counts: { failed: number } }>('GET', '/namespaces/u/collections/noocr');
    t.equal(collection.body.status, 'ready', 'not degraded');

    const human = await runCli([...conn, 'ingest', folder, '-n', 'u', '-c', 'noocr', '--exclude', '*.log', '--exclude', 'drafts/'], { env });
    t.equal(human.code, 0, human.stderr);
    const lines = human.stderr.split('\n').filter((line) => line.startsWith('skipped'));
    t.same(lines, [
      'skipped 8 files the collection cannot index: 3 .gz, 2 .bin, 1 .png (OCR is off for this collection), 1 application/gzip, 1 application/octet-stream; --include-unsupported to send them anyway',
    ]);
    t.match(human.stderr, /left out 2 files or folders matching --exclude/);
  });

  await t.test('--include-unsupported sends them, and the daemon refuses each', async (t) => {
    const run = await runCli([...conn, 'ingest', folder, '-n', 'u', '-c', 'noocr', '--include-unsupported', '--exclude', '*.log', '--exclude', 'drafts/', '--json'], { env });
    t.equal(run.code, CLI_EXIT_CODES.files_failed, 'files failed');
    const summary = parseJson<Summary>(run);
    t.equal(summary.added, 8);
    t.equal(summary.failed, 8);
    t.same(summary.unsupported, []);
  });

  await t.test('the saved defaults\' exclude applies to every ingest', async (t) => {
    await mkdir(configHome, { recursive: true });
    await writeFile(path.join(configHome, 'cli.json'), JSON.stringify({ namespace: 'u', collection: 'saved', folder, exclude: ['*.log', 'drafts/'] }));
    const run = await runCli([...conn, 'ingest', '--json', '--no-wait', '--exclude', 'data'], { env });
    t.equal(run.code, 0, run.stderr);
    const summary = parseJson<Summary>(run);
    t.same(summary.excluded.map((e) => e.path).sort(), ['/build.log', '/data', '/drafts'], 'saved patterns and the flag together');
    t.equal(summary.added, 2, 'guide.md and scan.png (OCR is on in a new collection)');

    await writeFile(path.join(configHome, 'cli.json'), JSON.stringify({ namespace: 'u', collection: 'saved', folder, exclude: '*.log' }));
    const bad = await runCli([...conn, 'ingest'], { env });
    t.equal(bad.code, 2);
    t.match(bad.stderr, /"exclude" must be a list of patterns/);
  });

  await t.test('watch mode skips unsupported and excluded files too', async (t) => {
    const watched = path.join(work, 'watched');
    await mkdir(watched);
    await writeFile(path.join(watched, 'one.md'), '# One\n');
    await writeFile(path.join(watched, 'one.gz'), gzipSync('one'));
    const child = spawn(process.execPath, [BIN, ...conn, 'ingest', watched, '-n', 'u', '-c', 'w', '--watch', '--debounce', '50', '--exclude', '*.tmp', '--json'], {
      // A config of its own: the one above was left invalid on purpose.
      env: cleanEnv({ TROVE_CONFIG_HOME: path.join(work, 'config-watch') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let waiter: (() => void) | null = null;
    let exitedEarly = false;
    const exited = new Promise((resolve) => child.on('exit', resolve));
    void exited.then(() => {
      exitedEarly = true;
      waiter?.();
    });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const lines: { paths: { added: string[] }; unsupported: { path: string }[]; failed: number }[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(JSON.parse(line));
      waiter?.();
    });
    const nextLine = async (n: number) => {
      while (lines.length < n) {
        if (exitedEarly) throw new Error('the watcher exited before its sync line');
        await new Promise<void>((resolve) => (waiter = resolve));
      }
      return lines[n - 1]!;
    };
    const first = await nextLine(1);
    t.same(first.paths.added, ['/one.md']);
    t.same(first.unsupported.map((f) => f.path), ['/one.gz']);
    await writeFile(path.join(watched, 'two.gz'), gzipSync('two'));
    await writeFile(path.join(watched, 'scratch.tmp'), 'scratch');
    await writeFile(path.join(watched, 'two.md'), '# Two\n');
    let line = await nextLine(2);
    // Events may split across syncs; wait for the one that holds two.md.
    for (let n = 3; !line.paths.added.includes('/two.md'); n++) line = await nextLine(n);
    const added = lines.slice(1).flatMap((l) => l.paths.added);
    t.same(added, ['/two.md'], 'neither the archive nor the excluded file was sent');
    t.equal(line.failed, 0);
    child.kill('SIGTERM');
    await exited;
  });
});
