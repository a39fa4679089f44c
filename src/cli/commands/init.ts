// `trove init`: the first run. Asks (on a terminal) or takes from flags a namespace, a collection, a
// folder, whether to search semantically and whether to keep watching; creates what is missing,
// records the choice in the CLI config, and runs the first ingest of the folder.
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { confirm as inquirerConfirm, input as inquirerInput } from '@inquirer/prompts';
import type { z } from 'zod';
import type { Collection, CreateCollectionInput, CreateNamespaceInput } from '../../client/index.js';
import { ResourceName, type UpdateCollectionRequest } from '../../contract/schemas.js';
import { readCliConfig, updateCliConfig } from '../cli-config.js';
import { ApiClient, CliApiError, CliError, collectionPath, namespacePath, NO_DAEMON_EXIT, reportError } from '../client.js';
import { resolveKeyWithSource, resolveUrl, type GlobalOptions } from '../connection.js';
import { DEFAULT_NAMESPACE, savedExcludes } from '../defaults.js';
import { isInteractive } from '../prompt.js';
import { cliCwd, cliEnv, out, promptContext } from '../io.js';
import { EXIT_FILES_FAILED, runIngest } from './ingest.js';

export interface InitOptions {
  namespace?: string;
  collection?: string;
  folder?: string;
  /** --semantic / --no-semantic; undefined when neither was given. */
  semantic?: boolean;
  /** --watch / --no-watch; undefined when neither was given. */
  watch?: boolean;
  /** Take the default of every value no flag gave, without asking. */
  yes?: boolean;
  debounce?: string;
  /** Patterns every later `trove ingest` leaves out (saved in the CLI config). */
  exclude?: string[];
  json?: boolean;
}

/** The two prompt shapes init uses; tests pass scripted ones. */
export interface InitPrompts {
  input(config: { message: string; default?: string; validate?: (value: string) => boolean | string | Promise<boolean | string> }): Promise<string>;
  confirm(config: { message: string; default?: boolean }): Promise<boolean>;
}

export const inquirerPrompts: InitPrompts = {
  input: (config) => inquirerInput(config, promptContext()),
  confirm: (config) => inquirerConfirm(config, promptContext()),
};

export interface InitDependencies {
  prompts?: InitPrompts;
  /** Whether a person can answer prompts; by default, whether stdin and stdout are terminals. */
  interactive?: boolean;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

interface Answers {
  namespace: string;
  collection: string;
  folder: string;
  semantic: boolean;
  watch: boolean;
}

/** The questions in the order they are asked, each with the flag that answers it instead. */
const QUESTIONS = [
  { key: 'namespace', flag: '--namespace <name>' },
  { key: 'collection', flag: '--collection <name>' },
  { key: 'folder', flag: '--folder <dir>' },
  { key: 'semantic', flag: '--semantic or --no-semantic' },
  { key: 'watch', flag: '--watch or --no-watch' },
] as const;

/** What to try once init is done: a search of the saved collection, which needs no more arguments. */
export const NEXT_COMMAND = 'trove search "<words to find>"';

/** init creates what it names, so it takes names only (an ID-shaped name is refused by ResourceName too). */
function nameProblem(value: string): string | null {
  const parsed = ResourceName.safeParse(value);
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'not a valid name');
}

/** A collection name made from a folder's name ("My Notes" → "my-notes"), or "docs" when nothing usable is left. */
export function collectionNameFor(folder: string): string {
  const slug = basename(resolve(folder))
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-]+$/g, '')
    .slice(0, 63)
    .replace(/[-]+$/g, '');
  return slug && nameProblem(slug) === null ? slug : 'docs';
}

async function folderProblem(path: string): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  return info?.isDirectory() ? null : `${path} is not a folder`;
}

export async function runInit(globalOpts: GlobalOptions, opts: InitOptions, deps: InitDependencies = {}): Promise<number> {
  const json = Boolean(opts.json);
  const env = deps.env ?? cliEnv();
  const cwd = deps.cwd ?? cliCwd();
  const print = (line: string) => {
    if (!json) out().write(line + '\n');
  };
  try {
    // Flags are checked first: a wrong one is a usage error whether or not a daemon runs.
    if (opts.namespace !== undefined) {
      const problem = nameProblem(opts.namespace);
      if (problem) throw new CliError(`The namespace name '${opts.namespace}' is invalid: ${problem}.`, 2);
    }
    if (opts.collection !== undefined) {
      const problem = nameProblem(opts.collection);
      if (problem) throw new CliError(`The collection name '${opts.collection}' is invalid: ${problem}.`, 2);
    }
    if (opts.folder !== undefined) {
      const problem = await folderProblem(resolve(cwd, opts.folder));
      if (problem) throw new CliError(`--folder: ${problem}.`, 2);
    }
    const missing = QUESTIONS.filter(({ key }) => opts[key] === undefined);
    const interactive = deps.interactive ?? isInteractive();
    if (missing.length > 0 && !opts.yes && !interactive) {
      throw new CliError(
        `trove init: stdin is not a terminal, so trove will not prompt; pass ${missing.map((q) => q.flag).join(', ')} (or --yes to take the defaults).`,
        2,
      );
    }

    const url = resolveUrl(globalOpts, env);
    await requireDaemon(url);
    const { key, source } = await resolveKeyWithSource(globalOpts, env);
    const client = new ApiClient(url, key, source);

    const answers = await ask(opts, cwd, opts.yes || !interactive ? null : (deps.prompts ?? inquirerPrompts));
    const created = await ensureResources(client, answers);
    const configFile = await updateCliConfig(
      { namespace: answers.namespace, collection: answers.collection, folder: answers.folder, url, ...(opts.exclude?.length ? { exclude: opts.exclude } : {}) },
      env,
    );

    if (json) {
      out().write(
        JSON.stringify({
          event: 'init',
          namespace: answers.namespace,
          collection: answers.collection,
          folder: answers.folder,
          semantic: answers.semantic,
          watch: answers.watch,
          created_namespace: created.namespace,
          created_collection: created.collection,
          semantic_changed: created.semanticChanged,
          config_file: configFile,
          next_command: NEXT_COMMAND,
        }) + '\n',
      );
    } else {
      print(`namespace ${answers.namespace}: ${created.namespace ? 'created' : 'already there'}`);
      const semanticNote = created.semanticChanged ? `; semantic search turned ${answers.semantic ? 'on (reindexing)' : 'off'}` : '';
      print(`collection ${answers.namespace}/${answers.collection}: ${created.collection ? 'created' : 'already there'}${semanticNote} (semantic search ${answers.semantic ? 'on' : 'off'})`);
      print(`defaults saved in ${configFile}`);
      print(`ingesting ${answers.folder}${answers.watch ? ', then watching it (Ctrl-C stops)' : ''}`);
      // A watch does not end on its own: the hint goes first, for another terminal.
      if (answers.watch) print(`Next, in another terminal: ${NEXT_COMMAND}`);
    }

    const code = await runIngest(answers.folder, globalOpts, {
      namespace: answers.namespace,
      collection: answers.collection,
      json,
      watch: answers.watch,
      // The saved patterns when none are given: a second `trove init` keeps leaving out what the first was told to.
      exclude: opts.exclude?.length ? opts.exclude : savedExcludes(await readCliConfig(env)),
      ...(opts.debounce === undefined ? {} : { debounce: opts.debounce }),
    });
    // Also after an ingest where some files failed (exit 8): the others are searchable.
    if (!answers.watch && (code === 0 || code === EXIT_FILES_FAILED)) print(`Next: ${NEXT_COMMAND}`);
    return code;
  } catch (err) {
    if (err instanceof Error && err.name === 'ExitPromptError') {
      // Ctrl-C at a question: nothing has been created yet.
      return reportError(new CliError('Canceled; nothing was changed.', 1, 'canceled'), json);
    }
    return reportError(err, json);
  }
}

/** Fills every value no flag gave: from the prompts, or (prompts null: --yes, or no terminal) from the defaults. */
async function ask(opts: InitOptions, cwd: string, prompts: InitPrompts | null): Promise<Answers> {
  const namespace =
    opts.namespace ??
    (prompts
      ? await prompts.input({ message: 'Namespace', default: DEFAULT_NAMESPACE, validate: (value) => nameProblem(value.trim()) ?? true })
      : DEFAULT_NAMESPACE);
  const collectionDefault = collectionNameFor(opts.folder !== undefined ? resolve(cwd, opts.folder) : cwd);
  const collection =
    opts.collection ??
    (prompts ? await prompts.input({ message: 'Collection', default: collectionDefault, validate: (value) => nameProblem(value.trim()) ?? true }) : collectionDefault);
  const folder =
    opts.folder ??
    (prompts
      ? await prompts.input({ message: 'Folder to ingest', default: cwd, validate: async (value) => (await folderProblem(resolve(cwd, value.trim()))) ?? true })
      : cwd);
  const semantic = opts.semantic ?? (prompts ? await prompts.confirm({ message: 'Enable semantic search (meaning, not only keywords)?', default: true }) : true);
  const watch = opts.watch ?? (prompts ? await prompts.confirm({ message: 'Keep watching the folder for changes after the first ingest?', default: false }) : false);
  const answers = { namespace: namespace.trim(), collection: collection.trim(), folder: resolve(cwd, folder.trim()), semantic, watch };
  // Scripted or odd prompt implementations may skip validation; the API would refuse a bad name later, less clearly.
  const problem = nameProblem(answers.namespace) ?? nameProblem(answers.collection) ?? (await folderProblem(answers.folder));
  if (problem) throw new CliError(`Cannot initialise: ${problem}.`, 2);
  return answers;
}

async function requireDaemon(url: string): Promise<void> {
  try {
    await new ApiClient(url).request('GET', '/ready', undefined, { auth: false });
  } catch (err) {
    if (err instanceof CliError && err.code === 'daemon_unreachable') {
      throw new CliError(
        `No trove daemon answers at ${url}. Start it with \`trove daemon start\` (in another terminal, or as a service), then run \`trove init\` again.`,
        NO_DAEMON_EXIT,
        'daemon_unreachable',
      );
    }
    throw err;
  }
}

/** Creates the namespace and the collection when missing; an existing collection gets the semantic choice. */
async function ensureResources(client: ApiClient, answers: Answers): Promise<{ namespace: boolean; collection: boolean; semanticChanged: boolean }> {
  const result = { namespace: false, collection: false, semanticChanged: false };
  if ((await find(client, namespacePath(answers.namespace))) === null) {
    await client.request('POST', '/namespaces', { name: answers.namespace, exist_ok: true } satisfies CreateNamespaceInput);
    result.namespace = true;
  }
  const colPath = collectionPath(answers.namespace, answers.collection);
  const existing = await find<Pick<Collection, 'processing'>>(client, colPath);
  if (existing === null) {
    await client.request('POST', `${namespacePath(answers.namespace)}/collections`, {
      name: answers.collection,
      exist_ok: true,
      processing: { semantic: answers.semantic },
    } satisfies CreateCollectionInput);
    result.collection = true;
  } else if (existing.processing.semantic !== answers.semantic) {
    // PATCH replaces the whole processing profile, so the other settings are sent back as they are.
    await client.request('PATCH', colPath, { processing: { ...existing.processing, semantic: answers.semantic } } satisfies z.input<typeof UpdateCollectionRequest>);
    result.semanticChanged = true;
  }
  return result;
}

async function find<T = unknown>(client: ApiClient, path: string): Promise<T | null> {
  try {
    return await client.request<T>('GET', path);
  } catch (err) {
    if (err instanceof CliApiError && err.code === 'not_found') return null;
    throw err;
  }
}
