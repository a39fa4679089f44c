// "Did you mean" for namespace and collection names (src/contract/suggest.ts, wired into ApiClient).
import t from 'tap';
import { ApiClient, CliApiError } from '../src/cli/client.js';
import { closest, editDistance, namesInPath, notFoundMessage } from '../src/contract/suggest.js';
import { apiOf, runCli, startDaemonProcess } from './helpers/cli.js';


t.test('edit distance and the closest name', async (t) => {
  t.equal(editDistance('notse', 'notes'), 2);
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.equal(closest('notse', ['todo', 'notes', 'nothing']), 'notes');
  t.equal(closest('zzzzzz', ['notes', 'todo']), undefined, 'nothing close: no guess');
  t.equal(notFoundMessage('collection', 'notse', ['notes', 'todo'], 'demo'), "No collection 'notse' in namespace 'demo'. Did you mean 'notes'? Collections this key can see there: 'notes', 'todo'.");
  t.equal(notFoundMessage('namespace', 'x', []), "No namespace 'x'. This key sees no namespaces.");
  t.same(namesInPath('/namespaces/demo/collections/my%20c/files?limit=1'), { namespace: 'demo', collection: 'my c' });
  t.same(namesInPath('/namespaces/demo/collections/notes:search'), { namespace: 'demo', collection: 'notes' }, 'an action suffix is not part of the name');
  t.equal(namesInPath('/jobs/job_1'), null);
});

t.test('every command gets the suggestion from the API client', async (t) => {
  const daemon = await startDaemonProcess();
  t.teardown(() => daemon.kill());
  const api = apiOf(daemon);
  await api('POST', '/namespaces', { name: 'demo' });
  await api('POST', '/namespaces/demo/collections', { name: 'notes' });
  await api('POST', '/namespaces/demo/collections', { name: 'todo' });
  const client = new ApiClient(daemon.url, daemon.key);

  await t.rejects(client.request('GET', '/namespaces/demo/collections/notse'), {
    code: 'not_found',
    message: "No collection 'notse' in namespace 'demo'. Did you mean 'notes'? Collections this key can see there: 'notes', 'todo'.",
  });
  await t.rejects(client.request('GET', '/namespaces/dmeo/collections/notes/files'), { code: 'not_found', message: /^No namespace 'dmeo'\. Did you mean 'demo'\?/ });
  const fileMissing = await client.request('GET', '/namespaces/demo/collections/notes/files/fil_nope').catch((err: unknown) => err);
  t.ok(fileMissing instanceof CliApiError && !/Did you mean/.test(fileMissing.message), 'a missing file keeps the API message');
  await t.rejects(client.request('GET', '/namespaces/demo/collections/notse', undefined, { suggest: false }), { message: /^(?!No collection)/ });

  const run = await runCli(['--url', daemon.url, '--key', daemon.key, 'search', 'demo/notse', 'anything']);
  t.equal(run.code, 5, run.stderr);
  t.match(run.stderr, "No collection 'notse' in namespace 'demo'. Did you mean 'notes'?");
});
