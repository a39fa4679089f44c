// resolveWebhook (src/cli/commands/webhooks.ts): every `trove webhooks` command that takes a webhook
// takes its ID or its name. An ID is used as is; a name is looked up in every page of the list; no
// match is not_found (exit 5) with the closest name, a shared name a usage error (exit 2) with the IDs.
import t from 'tap';
import { CliApiError, CliError, type ApiClient } from '../src/cli/client.js';
import { resolveWebhook, type Webhook } from '../src/cli/commands/webhooks.js';

const hook = (id: string, name: string) => ({ id, name }) as Webhook;

/** An ApiClient that serves the webhook list in pages of two and records what was asked. */
function fakeApi(hooks: Webhook[]): { api: ApiClient; requests: string[] } {
  const requests: string[] = [];
  const api = {
    async request(method: string, path: string) {
      requests.push(`${method} ${path}`);
      const url = new URL(path, 'http://x');
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const items = hooks.slice(start, start + 2);
      return { items, next_cursor: start + 2 < hooks.length ? String(start + 2) : null };
    },
  } as unknown as ApiClient;
  return { api, requests };
}

const hooks = [hook('whk_a1', 'deploys'), hook('whk_b2', 'audit'), hook('whk_c3', 'ci'), hook('whk_d4', 'ci'), hook('whk_e5', 'alerts')];

t.test('an ID is used as is, without listing', async (t) => {
  const { api, requests } = fakeApi(hooks);
  t.same(await resolveWebhook(api, 'ops', 'whk_zz9'), { id: 'whk_zz9' });
  t.same(requests, []);
});

t.test('a name is found on any page', async (t) => {
  const { api, requests } = fakeApi(hooks);
  t.match(await resolveWebhook(api, 'ops', 'alerts'), { id: 'whk_e5', webhook: { name: 'alerts' } });
  t.equal(requests.length, 3, 'every page was read');
  t.match(requests[0], /^GET \/v1\/workspaces\/ops\/webhooks\?limit=100$/);
  t.match(await resolveWebhook(fakeApi(hooks).api, undefined, 'audit'), { id: 'whk_b2' }, 'the default workspace');
  t.match(fakeApi(hooks).requests, []);
});

t.test('a name that looks like another kind of ID is still a name', async (t) => {
  const { api } = fakeApi([hook('whk_q1', 'key_rotation')]);
  t.match(await resolveWebhook(api, 'ops', 'key_rotation'), { id: 'whk_q1' });
});

t.test('an unknown name: not_found naming what exists and the closest', async (t) => {
  const err = await resolveWebhook(fakeApi(hooks).api, 'ops', 'deploy').catch((e: unknown) => e);
  t.ok(err instanceof CliApiError);
  const e = err as CliApiError;
  t.equal(e.code, 'not_found');
  t.equal(e.exitCode, 5);
  t.equal(e.message, "No webhook named 'deploy' in workspace 'ops'. Did you mean 'deploys'? Webhooks this key can see there: 'deploys', 'audit', 'ci', 'alerts'.");
  const none = (await resolveWebhook(fakeApi([]).api, 'ops', 'x').catch((e: unknown) => e)) as CliApiError;
  t.equal(none.message, "No webhook named 'x' in workspace 'ops'. This key sees no webhooks there.");
});

t.test('a shared name: exit 2 listing the IDs', async (t) => {
  const err = await resolveWebhook(fakeApi(hooks).api, 'ops', 'ci').catch((e: unknown) => e);
  t.ok(err instanceof CliError);
  t.equal((err as CliError).exitCode, 2);
  t.equal((err as CliError).code, 'ambiguous_name');
  t.equal((err as CliError).message, "2 webhooks in workspace 'ops' are named 'ci': whk_c3, whk_d4. Give the ID of the one you mean.");
});
