// `trove rules set|list|rm|explain`: access rules of a collection from the terminal.
import type { z } from 'zod';
import type { Job } from '../../client/index.js';
import { governingRule } from '../../contract/governing-rule.js';
import type { AccessRule, CreateAccessRuleRequest } from '../../contract/schemas.js';
import { ApiClient, CliError, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { parseTarget } from '../defaults.js';
import { out } from '../io.js';

interface Common {
  namespace?: string;
  json?: boolean;
}

const targetOf = (r: AccessRule) => (r.folder !== null ? `folder ${r.folder}` : `file ${r.file}`);
const line = (r: AccessRule) => `${r.id}  ${targetOf(r)}${r.sealed ? ' (sealed)' : ''}  readers: ${r.readers.length ? r.readers.join(', ') : '(nobody)'}`;

async function connect(collection: string, globalOpts: GlobalOptions, opts: Common) {
  const target = parseTarget(collection, opts.namespace);
  return { client: ApiClient.of(await resolveConnection(globalOpts)), base: collectionPath(target.namespace, target.collection) };
}

/** A folder ends with '/', anything else names a file. */
function targetBody(path: string): { folder: string } | { file: string } {
  if (!path.startsWith('/')) throw new CliError(`'${path}' is not a path: folders look like /team/ and files like /team/plan.md.`, 2);
  return path.endsWith('/') ? { folder: path } : { file: path };
}

export async function runRulesSet(collection: string, path: string, globalOpts: GlobalOptions, opts: Common & { reader?: string[]; sealed?: boolean }): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base } = await connect(collection, globalOpts, opts);
    const res = await client.request<AccessRule | { rule: AccessRule; job: Job }>('POST', `${base}/access-rules`, {
      ...targetBody(path),
      readers: opts.reader ?? [],
      sealed: Boolean(opts.sealed),
    } satisfies z.input<typeof CreateAccessRuleRequest>);
    const rule = 'rule' in res ? res.rule : res;
    if (json) out().write(JSON.stringify(res) + '\n');
    else out().write(`${line(rule)}${'job' in res ? `\nfiles move under it: job ${res.job.id} (they stay hidden until it finishes)` : ''}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runRulesList(collection: string, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base } = await connect(collection, globalOpts, opts);
    const rules = await client.listAll<AccessRule>(`${base}/access-rules`);
    out().write(json ? JSON.stringify(rules) + '\n' : rules.length ? rules.map(line).join('\n') + '\n' : 'No access rules.\n');
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runRulesRemove(collection: string, id: string, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const { client, base } = await connect(collection, globalOpts, opts);
    const res = await client.request<{ job: Job } | null>('DELETE', `${base}/access-rules/${encodeURIComponent(id)}`);
    if (json) out().write(JSON.stringify(res ?? { deleted: id }) + '\n');
    else out().write(res ? `deleted ${id}; files move: job ${res.job.id}\n` : `deleted ${id}\n`);
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** Which rule governs a path (the same rule the daemon applies) and who may read it. */
export async function runRulesExplain(collection: string, path: string, globalOpts: GlobalOptions, opts: Common): Promise<number> {
  const json = Boolean(opts.json);
  try {
    if (!path.startsWith('/') || path.endsWith('/')) throw new CliError(`'${path}' is not a file path (it starts with / and does not end with /).`, 2);
    const { client, base } = await connect(collection, globalOpts, opts);
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
