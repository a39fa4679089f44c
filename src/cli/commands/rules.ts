// `trove rules set|list|rm|explain`: access rules of a collection from the terminal.
import type { z } from 'zod';
import type { Collection, Job } from '../../client/index.js';
import { governingRule } from '../../contract/governing-rule.js';
import type { AccessRule, CreateAccessRuleRequest } from '../../contract/schemas.js';
import { ApiClient, CliApiError, CliError, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { collectionTarget, type CollectionFlags } from './resource-common.js';
import { out } from '../io.js';

interface Common extends CollectionFlags {
  json?: boolean;
}

const targetOf = (r: AccessRule) => (r.folder !== null ? `folder ${r.folder}` : `file ${r.file}`);
const line = (r: AccessRule) => `${r.id}  ${targetOf(r)}${r.sealed ? ' (sealed)' : ''}  readers: ${r.readers.length ? r.readers.join(', ') : '(nobody)'}`;

/** `[collection] <…>`: the collection may be left to -c or the saved default (resource-common.ts). */
async function connect(args: readonly (string | undefined)[], trailing: readonly string[], example: string, globalOpts: GlobalOptions, opts: Common) {
  const target = await collectionTarget(args, trailing, opts, example);
  return { client: ApiClient.of(await resolveConnection(globalOpts)), base: collectionPath(target.namespace, target.collection), rest: target.rest, target };
}

/**
 * The daemon names the body's fields (`sealed: only folder rules can be sealed`, `readers[0]: …`);
 * the person typed flags and a path, so a field problem is told in those words.
 */
function inFlagWords(err: unknown, path: string, readers: readonly string[]): unknown {
  if (!(err instanceof CliApiError) || err.code !== 'invalid_request') return err;
  const issues = Array.isArray(err.details.issues) ? (err.details.issues as { path?: unknown; message?: unknown }[]) : [];
  const lines = issues.map((issue) => {
    const field = typeof issue.path === 'string' ? issue.path.replace(/^body\./, '') : '';
    const text = (typeof issue.message === 'string' ? issue.message : '').replace(/^[\w.[\]]+: /, '').replace(/^(folder|file) /, '');
    if (field === 'sealed') return `--sealed: ${text}`;
    if (field === 'folder' || field === 'file') return `the path '${path}': ${text}`;
    const reader = /^readers\.(\d+)$/.exec(field);
    if (reader) return `--reader '${readers[Number(reader[1])] ?? ''}': ${text.replace(/^each reader /, '')}`;
    if (field === 'readers') return `--reader: ${text}`;
    return null;
  });
  if (lines.length === 0 || lines.some((line) => line === null)) return err;
  return new CliApiError(err.code, lines.join('; '), err.requestId, err.status, err.retryable, err.details);
}

/** A folder ends with '/', anything else names a file. */
function targetBody(path: string): { folder: string } | { file: string } {
  if (!path.startsWith('/')) throw new CliError(`'${path}' is not a path: folders look like /team/ and files like /team/plan.md.`, 2);
  return path.endsWith('/') ? { folder: path } : { file: path };
}

export async function runRulesSet(collection: string | undefined, pathArg: string | undefined, globalOpts: GlobalOptions, opts: Common & { reader?: string[]; sealed?: boolean }): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base, rest, target } = await connect([collection, pathArg], ['path'], 'trove rules set [collection] <path> --reader <principal>', globalOpts, opts);
    const path = rest[0]!;
    const body = { ...targetBody(path), readers: opts.reader ?? [], sealed: Boolean(opts.sealed) } satisfies z.input<typeof CreateAccessRuleRequest>;
    // Asked first, so that the answer names the command that turns rules on rather than the API's PATCH.
    const current = await client.request<Collection>('GET', base);
    if (current.access_control !== 'enforced') {
      const ref = `${target.namespace}/${target.collection}`;
      throw new CliError(`${ref} does not enforce access rules (access control is off): run \`trove collections update ${ref} --access-control enforced\` first, then set its rules.`, 2);
    }
    const res = await client
      .request<AccessRule | { rule: AccessRule; job: Job }>('POST', `${base}/access-rules`, body)
      .catch((err: unknown) => {
        throw inFlagWords(err, path, body.readers);
      });
    const rule = 'rule' in res ? res.rule : res;
    if (json) out().write(JSON.stringify(res) + '\n');
    else out().write(`${line(rule)}${'job' in res ? `\nfiles move under it: job ${res.job.id} (they stay hidden until it finishes)` : ''}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runRulesList(collection: string | undefined, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base } = await connect([collection], [], 'trove rules list <collection>', globalOpts, opts);
    const rules = await client.listAll<AccessRule>(`${base}/access-rules`);
    out().write(json ? JSON.stringify(rules) + '\n' : rules.length ? rules.map(line).join('\n') + '\n' : 'No access rules.\n');
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runRulesRemove(collection: string | undefined, idArg: string | undefined, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base, rest } = await connect([collection, idArg], ['acr_ ID'], 'trove rules rm [collection] <id>', globalOpts, opts);
    const id = rest[0]!;
    const res = await client.request<{ job: Job } | null>('DELETE', `${base}/access-rules/${encodeURIComponent(id)}`);
    if (json) out().write(JSON.stringify(res ?? { deleted: id }) + '\n');
    else out().write(res ? `deleted ${id}; files move: job ${res.job.id}\n` : `deleted ${id}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** Which rule governs a path (the same rule the daemon applies) and who may read it. */
export async function runRulesExplain(collection: string | undefined, pathArg: string | undefined, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base, rest } = await connect([collection, pathArg], ['path'], 'trove rules explain [collection] <path>', globalOpts, opts);
    const path = rest[0]!;
    if (!path.startsWith('/') || path.endsWith('/')) throw new CliError(`'${path}' is not a file path (it starts with / and does not end with /).`, 2);
    const rules = await client.listAll<AccessRule>(`${base}/access-rules`);
    const rule = governingRule(rules, path);
    if (json) out().write(JSON.stringify({ path, governing_rule: rule, readers: rule?.readers ?? [] }) + '\n');
    else if (!rule) out().write(`${path}: no rule governs it, so nobody can retrieve it (in an enforced collection).\n`);
    else out().write(`${path}: governed by ${line(rule)}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
