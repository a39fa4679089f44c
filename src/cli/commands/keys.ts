// `trove keys create|list|revoke`: API keys from the terminal. Every choice is a flag; on a terminal,
// `keys create` without scope flags asks for the scope instead.
import { checkbox as inquirerCheckbox, input as inquirerInput, select as inquirerSelect } from '@inquirer/prompts';
import type { CreateKeyInput, Key } from '../../client/index.js';
import type { Action } from '../../contract/schemas.js';
import { ApiClient, CliApiError, CliError, namespacePath, reportError } from '../client.js';
import { closest, notFoundMessage } from '../../contract/suggest.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { isInteractive } from '../prompt.js';
import { out, promptContext } from '../io.js';

export interface CreateKeyOptions {
  namespace?: string;
  collection?: string[];
  actions?: string;
  cluster?: boolean;
  json?: boolean;
}

const ACTIONS: readonly Action[] = ['read', 'write', 'search', 'query'];
const isAction = (name: string): name is Action => (ACTIONS as readonly string[]).includes(name);

/** The scope the flags describe: --cluster, or --namespace [--collection …] with --actions. */
export function scopeFromFlags(opts: CreateKeyOptions): Key['scope'] {
  if (opts.cluster) {
    if (opts.namespace || opts.collection || opts.actions) throw new CliError('--cluster takes no --namespace, --collection or --actions.', 2);
    return { kind: 'cluster' };
  }
  if (!opts.namespace) throw new CliError('Say what the key may reach: --namespace <name> [--collection <name>...] --actions read,search, or --cluster.', 2);
  const named = (opts.actions ?? '').split(',').map((a) => a.trim()).filter(Boolean);
  if (named.length === 0) throw new CliError(`--actions is required: a comma-separated list of ${ACTIONS.join(', ')}.`, 2);
  const unknown = named.filter((a) => !isAction(a));
  if (unknown.length > 0) {
    const guesses = unknown.map((a) => closest(a, ACTIONS)).filter((guess): guess is Action => guess !== undefined);
    const guess = guesses.length === unknown.length ? ` Did you mean ${guesses.map((g) => `'${g}'`).join(', ')}?` : '';
    throw new CliError(`Unknown action${unknown.length === 1 ? '' : 's'} ${unknown.map((a) => `'${a}'`).join(', ')}.${guess} Actions are ${ACTIONS.join(', ')}.`, 2);
  }
  const actions = named.filter(isAction);
  return opts.collection?.length ? { kind: 'collection', namespace: opts.namespace, collections: opts.collection, actions } : { kind: 'namespace', namespace: opts.namespace, actions };
}

const describe = ({ scope }: Key) =>
  scope.kind === 'cluster' ? 'cluster' : `${scope.kind} ${scope.namespace}${scope.kind === 'collection' ? `/${scope.collections.join(',')}` : ''} [${scope.actions.join(',')}]`;

/** The prompts `keys create` may show (tests pass scripted ones). */
export interface ScopePrompts {
  select(config: { message: string; choices: { name: string; value: string; description?: string }[] }): Promise<string>;
  input(config: { message: string; validate?: (value: string) => boolean | string }): Promise<string>;
  checkbox(config: { message: string; choices: { name: string; value: string; checked?: boolean }[]; required?: boolean }): Promise<string[]>;
}

const inquirerPrompts: ScopePrompts = {
  select: (config) => inquirerSelect(config, promptContext()),
  input: (config) => inquirerInput(config, promptContext()),
  checkbox: (config) => inquirerCheckbox(config, promptContext()),
};

const noScopeFlags = (opts: CreateKeyOptions) => !opts.cluster && !opts.namespace && !opts.collection?.length && !opts.actions;

/** Ctrl-C in a prompt (inquirer's ExitPromptError) cancels the command. */
const canceled = (err: unknown): never => {
  if (err instanceof Error && /PromptError$/.test(err.name)) throw new CliError('Canceled; no key was created.', 1, 'canceled');
  throw err;
};

/** Asks for the scope the flags would give: kind, namespace, collections and actions. */
export async function askScope(prompts: ScopePrompts): Promise<Key['scope']> {
  const kind = await prompts.select({
    message: 'What may the key reach?',
    choices: [
      { name: 'some collections of a namespace', value: 'collection', description: 'like --namespace N --collection C' },
      { name: 'a whole namespace', value: 'namespace', description: 'like --namespace N' },
      { name: 'everything (a cluster key)', value: 'cluster', description: 'like --cluster' },
    ],
  });
  if (kind === 'cluster') return { kind: 'cluster' };
  const namespace = (await prompts.input({ message: 'Namespace', validate: (v) => v.trim().length > 0 || 'a namespace name' })).trim();
  const collections =
    kind === 'collection'
      ? (await prompts.input({ message: 'Collections (comma-separated)', validate: (v) => v.split(',').some((c) => c.trim()) || 'at least one collection' }))
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean)
      : [];
  const actions = await prompts.checkbox({
    message: 'Actions',
    choices: ACTIONS.map((a) => ({ name: a, value: a, checked: a === 'search' || a === 'query' })),
    required: true,
  });
  return scopeFromFlags({ namespace, ...(collections.length ? { collection: collections } : {}), actions: actions.join(',') });
}

export async function runKeysCreate(
  name: string,
  globalOpts: GlobalOptions,
  opts: CreateKeyOptions,
  deps: { prompts?: ScopePrompts; interactive?: boolean } = {},
): Promise<number> {
  const json = Boolean(opts.json);
  try {
    // No scope flag on a terminal: ask. Without a terminal scopeFromFlags names the flags to pass.
    const ask = noScopeFlags(opts) && !json && (deps.interactive ?? isInteractive());
    const scope = ask ? await askScope(deps.prompts ?? inquirerPrompts).catch(canceled) : scopeFromFlags(opts);
    const client = ApiClient.of(await resolveConnection(globalOpts));
    const created = await client.request<Key>('POST', '/keys', { name, scope } satisfies CreateKeyInput).catch((err: unknown) => scopeNotFound(client, scope, err));
    if (json) out().write(JSON.stringify(created) + '\n');
    else out().write(`created ${created.id} (${describe(created)})\nsecret (shown once, store it now): ${created.secret}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/**
 * A scope naming a namespace or collection the daemon does not know answers not_found on POST /keys,
 * a path that names neither, so the client's own "did you mean" cannot help: look the names up here.
 */
async function scopeNotFound(client: ApiClient, scope: Key['scope'], err: unknown): Promise<never> {
  if (!(err instanceof CliApiError) || err.code !== 'not_found' || scope.kind === 'cluster') throw err;
  const names = async (path: string) => (await client.listAll<{ name: string }>(path, {}, { suggest: false })).map((item) => item.name);
  const namespaces = await names('/namespaces').catch(() => null);
  if (namespaces === null) throw err;
  let message: string | null = null;
  if (!namespaces.includes(scope.namespace)) message = notFoundMessage('namespace', scope.namespace, namespaces);
  else if (scope.kind === 'collection') {
    const collections = await names(`${namespacePath(scope.namespace)}/collections`).catch(() => null);
    const missing = collections === null ? undefined : scope.collections.find((name) => !collections.includes(name));
    if (collections !== null && missing !== undefined) message = notFoundMessage('collection', missing, collections, scope.namespace);
  }
  throw message === null ? err : new CliApiError(err.code, message, err.requestId, err.status, err.retryable, err.details);
}

export async function runKeysList(globalOpts: GlobalOptions, opts: { json?: boolean }): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const keys = await ApiClient.of(await resolveConnection(globalOpts)).listAll<Key>('/keys');
    if (json) out().write(JSON.stringify(keys) + '\n');
    else for (const k of keys) out().write(`${k.id}  ${k.name.padEnd(24)} ${describe(k)}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runKeysRevoke(id: string, globalOpts: GlobalOptions, opts: { json?: boolean }): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const revoked = await ApiClient.of(await resolveConnection(globalOpts)).request<Key>('POST', `/keys/${encodeURIComponent(id)}:revoke`);
    out().write(json ? JSON.stringify(revoked) + '\n' : `revoked ${revoked.id} at ${revoked.revoked_at}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
