// `trove completion bash|zsh|fish`: scripts generated from the commander tree.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashScript, fishScript, zshScript } from '../src/cli/commands/completion.js';
import { buildProgram } from '../src/cli/main.js';
import { runCli, runCliInProcess } from './helpers/cli.js';

const hasShell = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

t.test('each script names every top-level command and parses', async (t) => {
  const program = buildProgram();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-completion-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const scripts = { bash: bashScript(program), zsh: zshScript(program), fish: fishScript(program) };
  for (const [shell, script] of Object.entries(scripts)) {
    for (const command of program.commands) t.match(script, new RegExp(`\\b${command.name()}\\b`), `${shell} mentions ${command.name()}`);
    const file = path.join(dir, `trove.${shell}`);
    await writeFile(file, script);
    if (shell === 'bash' || hasShell(shell)) {
      const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
      t.equal(check.status, 0, `${shell} -n accepts it (${check.stderr})`);
    }
  }
  const complete = (words: string[]) =>
    spawnSync('bash', ['-c', `source ${path.join(dir, 'trove.bash')}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _trove; echo "\${COMPREPLY[@]}"`], { encoding: 'utf8' }).stdout.trim().split(' ');
  t.same(complete(['trove', 'web']), ['webhooks'], 'a command');
  t.ok(complete(['trove', 'webhooks', '']).includes('rotate'), 'its subcommands');
  t.ok(complete(['trove', '--url', 'x', 'ingest', '--h']).includes('--hidden'), "a subcommand's options, after a global one");
});

t.test('the built CLI prints it, and refuses an unknown shell', async (t) => {
  // The real entry prints it; the refusal runs in-process (runCliInProcess).
  const [bash, bad] = await Promise.all([runCli(['completion', 'bash']), runCliInProcess(['completion', 'tcsh'])]);
  t.equal(bash.code, 0, bash.stderr);
  t.equal(bash.stderr, '');
  t.match(bash.stdout, /complete -o default -F _trove trove/);
  t.equal(bad.code, 2);
  t.match(bad.stderr, "trove completion takes bash, zsh or fish, got 'tcsh'.");
});
