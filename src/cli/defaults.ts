// Which namespace and collection (and, for ingest, which folder) a command works on: its arguments
// and flags, else the defaults `trove init` saved in the CLI config (src/cli/cli-config.ts), else the
// namespace "default". Pure (no I/O): every rule of precedence is here, in one place, and tested
// table by table (test/cli-defaults.test.ts).
import { isAbsolute, resolve } from 'node:path';
import { CliError } from './client.js';
import type { CliConfig } from './cli-config.js';

export const DEFAULT_NAMESPACE = 'default';

export interface TargetInput {
  /** The collection argument: `col`, `ns/col`, or undefined when the command was given none. */
  collection?: string | undefined;
  /** -n / --namespace. */
  namespaceFlag?: string | undefined;
  /** -c / --collection. */
  collectionFlag?: string | undefined;
}

export interface Target {
  namespace: string;
  collection: string;
}

/** The usage line named in errors, e.g. `trove search <collection> "<query>"`. */
export type Usage = string;

const usage = (message: string) => new CliError(message, 2);

/**
 * Precedence, field by field: the argument (`ns/col` names both), then the flag, then the saved
 * default; a namespace named nowhere is "default". Two sources naming different values in one
 * command line (`ns/col` with another -n, a collection argument and -c) are a usage error rather
 * than a silent pick.
 */
export function resolveTarget(input: TargetInput, saved: CliConfig, example: Usage): Target {
  const { namespaceFlag, collectionFlag } = input;
  const arg = input.collection === undefined ? undefined : splitCollectionRef(input.collection, namespaceFlag);
  if (arg !== undefined && !arg.collection) throw usage(`The collection argument is empty: use <collection> or <namespace>/<collection>.`);
  const argNamespace = arg?.namespace;
  const argCollection = arg?.collection;
  if (argCollection !== undefined && collectionFlag !== undefined && collectionFlag !== argCollection) {
    throw usage(`The collection is given twice ('${input.collection}' and --collection '${collectionFlag}'): give one of them.`);
  }
  const collection = argCollection ?? collectionFlag ?? savedString(saved.collection);
  if (collection === undefined) {
    throw usage(`No collection given and no default saved: name one (${example}, or -c <collection>), or run \`trove init\` to save a default.`);
  }
  const namespace = argNamespace ?? namespaceFlag ?? savedString(saved.namespace) ?? DEFAULT_NAMESPACE;
  return { namespace, collection };
}

/**
 * A collection argument, `col` or `ns/col`, split in two (a bare name has no namespace). A namespace
 * that contradicts --namespace is a usage error rather than a silent pick.
 */
function splitCollectionRef(ref: string, namespaceFlag: string | undefined): { namespace?: string; collection: string } {
  const slash = ref.indexOf('/');
  if (slash < 0) return { collection: ref };
  const namespace = ref.slice(0, slash);
  const collection = ref.slice(slash + 1);
  if (!namespace || !collection || collection.includes('/')) throw usage(`'${ref}' is not a collection: use <collection> or <namespace>/<collection>.`);
  if (namespaceFlag !== undefined && namespaceFlag !== namespace) {
    throw usage(`'${ref}' names namespace '${namespace}' but --namespace says '${namespaceFlag}': give one of them.`);
  }
  return { namespace, collection };
}

/** A collection named on the command line alone (no saved defaults): `ns/col` names both; a bare name uses --namespace or "default". */
export function parseTarget(collection: string, namespaceOption: string | undefined): Target {
  const ref = splitCollectionRef(collection, namespaceOption);
  return { namespace: ref.namespace ?? namespaceOption ?? DEFAULT_NAMESPACE, collection: ref.collection };
}

/**
 * The saved namespace and collection alone (the TUI opens on them), or null when no collection is
 * saved, or when they were saved for another daemon than `url`: with two daemons running, a
 * collection of the same name on the other one is not the one `trove init` chose.
 */
export function savedTarget(saved: CliConfig, url?: string): Target | null {
  const savedUrl = savedString(saved.url);
  if (url !== undefined && savedUrl !== undefined && !sameDaemonUrl(savedUrl, url)) return null;
  const collection = savedString(saved.collection);
  return collection === undefined ? null : { namespace: savedString(saved.namespace) ?? DEFAULT_NAMESPACE, collection };
}

/**
 * The positional arguments of a command whose collection argument may be left out
 * (`trove files get [collection] <file>`): `trailing` arguments always follow the collection, so
 * only more than that many means the first one names the collection. Fewer than `trailing` is a
 * usage error naming what is missing.
 */
export function splitOptionalCollection(
  args: readonly (string | undefined)[],
  trailing: readonly string[],
  example: Usage,
): { collection?: string; rest: string[] } {
  const given = args.filter((arg): arg is string => arg !== undefined);
  if (given.length > trailing.length) return { collection: given[0]!, rest: given.slice(1) };
  if (given.length < trailing.length) throw usage(`Missing the ${trailing[given.length]}: ${example}.`);
  return { rest: given };
}

/**
 * `trove search [collection] <query>`: one argument is the query (the collection comes from flags or
 * the saved defaults), two are the collection and the query.
 */
export function splitQueryArgs(first: string | undefined, second: string | undefined, what: string, example: Usage): { collection?: string; query: string } {
  if (first === undefined) throw usage(`Missing the ${what}: ${example}.`);
  if (second === undefined) return { query: first };
  return { collection: first, query: second };
}

export interface IngestTarget extends Target {
  /** Absolute. */
  folder: string;
  /** True when the folder came from the saved defaults (the command named none). */
  savedFolder: boolean;
}

/**
 * `trove ingest [folder] [-n NS] [-c COL]`. With no folder, the saved folder goes into the saved
 * collection (a re-sync after `trove init`). A folder that is not the saved one needs -c: ingest
 * mirrors the folder, so pairing another folder with the saved collection would delete that
 * collection's files. No namespace anywhere is an error, as it was before defaults were saved:
 * ingest creates what it names, and should not quietly fill "default".
 */
export function resolveIngestTarget(
  input: { folder?: string | undefined; namespaceFlag?: string | undefined; collectionFlag?: string | undefined },
  saved: CliConfig,
  cwd: string,
): IngestTarget {
  const savedFolder = savedString(saved.folder);
  const folder = input.folder !== undefined ? resolve(cwd, input.folder) : savedFolder !== undefined && isAbsolute(savedFolder) ? savedFolder : undefined;
  if (folder === undefined) {
    throw usage('No folder given and no default saved: run `trove ingest <folder> -n <namespace> -c <collection>`, or `trove init` to save a default.');
  }
  const isSavedFolder = savedFolder !== undefined && resolve(savedFolder) === folder;
  let collection = input.collectionFlag;
  if (collection === undefined) {
    if (isSavedFolder) collection = savedString(saved.collection);
    else if (savedString(saved.collection) !== undefined) {
      throw usage(
        `${folder} is not the saved folder (${savedFolder}), so name its collection with -c <collection>: ingest mirrors the folder, and the saved collection '${saved.collection}' would lose the files that are not in it.`,
      );
    }
  }
  if (collection === undefined) throw usage('No collection given and no default saved: pass -c <collection>, or run `trove init` to save a default.');
  const namespace = input.namespaceFlag ?? savedString(saved.namespace);
  if (namespace === undefined) throw usage('No namespace given and no default saved: pass -n <namespace>, or run `trove init` to save a default.');
  return { folder, namespace, collection, savedFolder: input.folder === undefined };
}

/**
 * The saved `exclude` patterns (cli.json), which every `trove ingest` leaves out along with its own
 * --exclude. A value that is not a list of strings is a usage error naming the file's key, not
 * silently ignored: a pattern meant to keep files out that is dropped would send them.
 */
export function savedExcludes(saved: CliConfig): string[] {
  const value = saved.exclude;
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw usage('The CLI config\'s "exclude" must be a list of patterns, e.g. ["*.log", "build/"]; fix it or run `trove init --exclude <glob>` again.');
  }
  return value;
}

/** Whether two daemon URLs name the same daemon (scheme, host and port; `localhost` is not resolved). */
export function sameDaemonUrl(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return x.origin === y.origin && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '');
  } catch {
    return a === b;
  }
}

/** A saved value is used only when it is a non-empty string: the file is user-editable. */
function savedString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
