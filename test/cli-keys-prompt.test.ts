// `trove keys create` without scope flags asks for the scope on a terminal (scripted prompts here),
// and without a terminal refuses, naming the flags (cli-e2e.test.ts checks that exit 2 end to end).
import t from 'tap';
import { runKeysCreate, type ScopePrompts } from '../src/cli/commands/keys.js';
import { startDaemonProcess } from './helpers/cli.js';

const daemon = await startDaemonProcess();
t.teardown(() => daemon.kill());
const global = { url: daemon.url, key: daemon.key };
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(daemon.url + path, { method, headers: { authorization: `Bearer ${daemon.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as any;
};
await api('POST', '/namespaces', { name: 'demo' });
await api('POST', '/namespaces/demo/collections', { name: 'docs' });

/** Scripted answers, in order; records every question asked. */
function scripted(answers: unknown[]): ScopePrompts & { asked: string[] } {
  const asked: string[] = [];
  const next = async (config: { message: string; validate?: (v: string) => boolean | string }) => {
    asked.push(config.message);
    if (answers.length === 0) throw new Error(`unexpected question: ${config.message}`);
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    if (typeof answer === 'string' && config.validate) {
      const verdict = config.validate(answer);
      if (verdict !== true) throw new Error(`scripted answer '${answer}' refused: ${verdict}`);
    }
    return answer as never;
  };
  return { asked, select: next, input: next, checkbox: next };
}

async function quietly<T>(run: () => Promise<T>): Promise<{ result: T; out: string; err: string }> {
  let out = '';
  let err = '';
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((err += chunk), true)) as typeof process.stderr.write;
  try {
    return { result: await run(), out, err };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

t.test('a collection key from the prompts', async (t) => {
  const prompts = scripted(['collection', 'demo', 'docs', ['search', 'read']]);
  const { result, out } = await quietly(() => runKeysCreate('asked', global, {}, { prompts, interactive: true }));
  t.equal(result, 0);
  t.same(prompts.asked, ['What may the key reach?', 'Namespace', 'Collections (comma-separated)', 'Actions']);
  t.match(out, /secret \(shown once/);
  const keys = (await api('GET', '/keys?limit=100')).items as { name: string; scope: unknown }[];
  t.same(keys.find((k) => k.name === 'asked')?.scope, { kind: 'collection', namespace: 'demo', collections: ['docs'], actions: ['search', 'read'] });
});

t.test('a cluster key asks nothing more', async (t) => {
  const prompts = scripted(['cluster']);
  const { result } = await quietly(() => runKeysCreate('asked-cluster', global, {}, { prompts, interactive: true }));
  t.equal(result, 0);
  t.same(prompts.asked, ['What may the key reach?']);
});

t.test('flags skip the prompts; no terminal refuses with the flags named', async (t) => {
  const never = scripted([]);
  const flagged = await quietly(() => runKeysCreate('flagged', global, { namespace: 'demo', actions: 'search' }, { prompts: never, interactive: true }));
  t.equal(flagged.result, 0);
  t.same(never.asked, []);
  const refused = await quietly(() => runKeysCreate('no-tty', global, {}, { prompts: never, interactive: false }));
  t.equal(refused.result, 2);
  t.match(refused.err, /--namespace.*--actions.*--cluster/);
  t.same(never.asked, []);
});

t.test('Ctrl-C cancels and creates nothing', async (t) => {
  const abort = Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
  const { result, err } = await quietly(() => runKeysCreate('canceled', global, {}, { prompts: scripted(['namespace', abort]), interactive: true }));
  t.equal(result, 1);
  t.match(err, /Canceled; no key was created/);
  const keys = (await api('GET', '/keys?limit=100')).items as { name: string }[];
  t.notOk(keys.some((k) => k.name === 'canceled'));
});
