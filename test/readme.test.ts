// The README's first screen is proven, not just written: its first-search block runs line by line
// against a real daemon, with no --url and no --key (the CLI must find both through the data dir,
// as in a new user's shell), from the repository root, where `./docs` is the repo's own docs.
// The MCP config block is started by test/mcp.test.ts and the fixture block is type-checked and
// run in a fresh project by test/package.test.ts (readme-blocks.ts extracts them for all three).
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newClusterKey, ROOT, runCli, startDaemonProcess } from './helpers/cli.js';
import { readmeBlock } from './helpers/readme-blocks.js';


const work = await mkdtemp(path.join(os.tmpdir(), 'trove-readme-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const dataDir = path.join(work, 'data');
const daemon = await startDaemonProcess({ key: newClusterKey(), args: ['--data-dir', dataDir] });
t.teardown(() => daemon.kill());
const env = { TROVE_DATA_DIR: dataDir, TROVE_CONFIG_HOME: path.join(work, 'config') };

t.test('the first-search block runs as written', async (t) => {
  const commands = readmeBlock('first-search')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('trove '));
  t.same(
    commands.map((c) => c.split(' ')[1]),
    ['init', 'search', 'answer'],
    'init, then a search and an answer',
  );
  const outputs: string[] = [];
  for (const command of commands) {
    const run = await runCli(shellWords(command).slice(1), { env, cwd: ROOT });
    t.equal(run.code, 0, `${command}\n${run.stderr}`);
    outputs.push(run.stdout);
  }
  t.match(outputs[0], /Next: trove search/, 'init says what to try next');
  t.match(outputs[1], /semantic search\)/, 'the search used the API default, semantic');
  t.match(outputs[1], /\/spec\/decisions\.md/, 'and found the document about the data dir lock');
  t.match(outputs[2], /\[\d+\]|SRC|decisions\.md/, 'the answer cites its sources');
});

/** Splits a command line on spaces, keeping "double-quoted" words whole (all the README uses). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}
