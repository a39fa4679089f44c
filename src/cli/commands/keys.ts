// `trove keys create|list|revoke`: API keys from the terminal. Every choice is a flag; on a terminal,
// `keys create` without scope flags asks for the scope instead.
import { checkbox as inquirerCheckbox, input as inquirerInput, select as inquirerSelect } from '@inquirer/prompts';
import type { CreateKeyInput, Key } from '../../client/index.js';
import type { Action } from '../../contract/schemas.js';
import { ApiClient, CliError, reportError } from '../client.js';
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
  if (unknown.length > 0) throw new CliError(`Unknown action(s) ${unknown.join(', ')}; use ${ACTIONS.join(', ')}.`, 2);
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
    const created = await ApiClient.of(await resolveConnection(globalOpts)).request<Key>('POST', '/keys', { name, scope } satisfies CreateKeyInput);
    if (json) out().write(JSON.stringify(created) + '\n');
    else out().write(`created ${created.id} (${describe(created)})\nsecret (shown once, store it now): ${created.secret}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
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
