// Access rules (retrieval-api.md, Access rule; PATCH .../access-rules/{rule_id}; decisions.md §2):
// create or replace, list, get, patch, delete and batch, and the apply_access_rule job that moves
// files to their new governing rule. Visibility at query time lives in ./visibility.ts.
import type { z } from 'zod';
import { TroveError } from '../../contract/errors.js';
import { hasPrefix, newId, nowIso } from '../../contract/ids.js';
import type { AccessRule, AccessRuleBatchRequest, CreateAccessRuleRequest, ListAccessRulesQuery, UpdateAccessRuleRequest } from '../../contract/schemas.js';
import type { AccessRuleRow, CollectionRow, JobRow, NamespaceRow, RuleTarget, Store, StoreReads, StoreTx } from '../../store/interface.js';
import type { Services } from '../context.js';
import { readCursor, requestBinding } from '../cursors.js';
import { enqueueCollectionJob } from '../jobs.js';
import type { AuthenticatedKey } from '../keys.js';
import { pageOf } from '../paging.js';
import { candidateTargets, governingRule, indexRules, targetKey } from '../../contract/governing-rule.js';

/** retrieval-api.md, Limits: access rule readers. */
export const MAX_READERS = 1024;

const shape = (r: AccessRuleRow) => ({ folder: r.folder, file: r.file, sealed: r.sealed });

export function presentRule(r: AccessRuleRow): AccessRule {
  return {
    id: r.id,
    folder: r.folder,
    file: r.file,
    readers: r.readers,
    sealed: r.sealed,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Duplicates collapse (principals match by exact string); the count limit applies to what is left. */
function checkedReaders(readers: readonly string[], where = 'body'): string[] {
  const unique = [...new Set(readers)];
  if (unique.length > MAX_READERS) {
    throw new TroveError('limit_exceeded', `${where}: an access rule holds at most ${MAX_READERS} readers; this change would leave ${unique.length}.`, {
      limit: MAX_READERS,
      readers: unique.length,
    });
  }
  return unique;
}

function requireEnforced(col: CollectionRow): void {
  if (col.access_control !== 'enforced') {
    throw new TroveError('invalid_request', 'Access rules require a collection with access_control "enforced"; PATCH the collection first.');
  }
}

function targetOf(folder: string | null | undefined, file: string | null | undefined, where: string): RuleTarget {
  const hasFolder = folder !== undefined && folder !== null;
  const hasFile = file !== undefined && file !== null;
  if (hasFolder === hasFile) throw new TroveError('invalid_request', `${where}: set exactly one of folder and file.`);
  return hasFolder ? { folder } : { file: file! };
}

const describeTarget = (t: RuleTarget) => (t.folder !== undefined ? `folder '${t.folder}'` : `file '${t.file}'`);

// ------------------------------------------------------------------ moving files

/** The files a rule on `target` can govern. */
const scopeOf = (t: RuleTarget) => (t.folder !== undefined ? { prefix: t.folder } : { path: t.file });

/**
 * After rule changes inside the caller's transaction: every file under the changed targets whose
 * governing rule is now another one is held (hidden from retrieval) for one apply_access_rule job,
 * which moves it (retrieval-api.md: "files under the rule stay hidden from retrieval until the job
 * succeeds"). No file moves, no job.
 */
async function holdMovedFiles(tx: StoreTx, ns: NamespaceRow, col: CollectionRow, changed: RuleTarget[]): Promise<JobRow | null> {
  if (changed.length === 0) return null;
  const index = indexRules((await tx.accessRules.ofCollection(col.rid)).map((r) => ({ ...shape(r), rid: r.rid })));
  const moved = new Set<number>();
  for (const target of changed) {
    for (const f of await tx.accessRules.filesUnder(col.rid, scopeOf(target))) {
      const now = governingRule(index, f.path)?.rid ?? null;
      if (now !== f.governing_rule_rid) moved.add(f.rid);
    }
  }
  if (moved.size === 0) return null;
  const job = await enqueueCollectionJob(tx, 'apply_access_rule', ns, col);
  await tx.accessRules.holdFiles([...moved], job.rid);
  return job;
}

/** The worker's half: each held file gets the rule that governs it now, and is visible again. */
export async function runApplyAccessRuleJob(store: Store, job: JobRow): Promise<void> {
  await store.write(async (tx) => {
    if ((await tx.jobs.status(job.rid)) !== 'running') return;
    if (job.collection_rid !== null) {
      const index = indexRules((await tx.accessRules.ofCollection(job.collection_rid)).map((r) => ({ ...shape(r), rid: r.rid })));
      for (const f of await tx.accessRules.filesHeldBy(job.rid)) await tx.accessRules.releaseFile(f.rid, governingRule(index, f.path)?.rid ?? null, job.rid);
    }
    await tx.jobs.finish(job.rid, 'succeeded', nowIso());
  });
}

/** The rule that governs a new file at `path`, from the rules as they stand (a rule may exist before its file). */
export async function governingRuleRidFor(store: StoreReads, collectionRid: number, path: string): Promise<number | null> {
  const rules = await store.accessRules.onTargets(collectionRid, candidateTargets(path));
  return governingRule(rules.map((r) => ({ ...shape(r), rid: r.rid })), path)?.rid ?? null;
}

// ------------------------------------------------------------------ routes

export type RuleWrite = { status: 200 | 201; rule: AccessRule; job: null } | { status: 202; rule: AccessRule; job: JobRow };

function afterWrite(s: Services, job: JobRow | null): void {
  if (job) s.notifyWork();
}

/** POST .../access-rules: creates or replaces the rule on its target (decisions.md §2). */
export async function putRule(s: Services, ns: NamespaceRow, col: CollectionRow, body: z.output<typeof CreateAccessRuleRequest>): Promise<RuleWrite> {
  requireEnforced(col);
  const target = targetOf(body.folder, body.file, 'body');
  const readers = checkedReaders(body.readers);
  const result = await s.store.write(async (tx) => {
    const { row, created } = await upsert(tx, col, { target, readers, sealed: body.sealed });
    const job = await holdMovedFiles(tx, ns, col, created || row.changedSeal ? [target] : []);
    return { rule: presentRule(row.rule), job, created };
  });
  afterWrite(s, result.job);
  if (result.job) return { status: 202, rule: result.rule, job: result.job };
  return { status: result.created ? 201 : 200, rule: result.rule, job: null };
}

/** `where` names the rule in an error: 'body', or the batch operation's path. */
async function upsert(
  tx: StoreTx,
  col: CollectionRow,
  { target, readers, sealed }: { target: RuleTarget; readers: string[]; sealed: boolean },
  where = 'body',
): Promise<{ row: { rule: AccessRuleRow; changedSeal: boolean }; created: boolean }> {
  if (sealed && target.file !== undefined) throw new TroveError('invalid_request', `${where}: only folder rules can be sealed.`);
  const now = nowIso();
  const existing = await tx.accessRules.findByTarget(col.rid, target);
  if (!existing) return { row: { rule: await tx.accessRules.insert({ id: newId('acr'), collection_rid: col.rid, target, readers, sealed, now }), changedSeal: false }, created: true };
  return { row: { rule: await tx.accessRules.update(existing.rid, { readers, sealed, now }), changedSeal: existing.sealed !== sealed }, created: false };
}

export async function listCollectionRules(s: Services, key: AuthenticatedKey, col: CollectionRow, query: z.output<typeof ListAccessRulesQuery>) {
  const target = query.folder !== undefined ? targetKey({ folder: query.folder }) : query.file !== undefined ? targetKey({ file: query.file }) : undefined;
  const binding = requestBinding([key.id, 'access-rules', col.id, target ?? null]);
  const after = query.cursor ? readCursor(s.cursorSecret, query.cursor, binding) : 0;
  const rows = await s.store.accessRules.list({ collectionRid: col.rid, afterRid: after, limit: query.limit + 1, target });
  return pageOf(s, rows, query.limit, binding, presentRule);
}

export async function resolveRule(store: StoreReads, col: CollectionRow, ruleId: string): Promise<AccessRuleRow> {
  if (!hasPrefix(ruleId, 'acr')) throw new TroveError('invalid_request', "An access rule is named by its 'acr_' ID.");
  const rule = await store.accessRules.findById(col.rid, ruleId);
  if (!rule) throw new TroveError('not_found', `Access rule '${ruleId}' not found.`);
  return rule;
}

type UpdateFields = {
  readers?: string[] | null | undefined;
  add_readers?: string[] | null | undefined;
  remove_readers?: string[] | null | undefined;
  sealed?: boolean | null | undefined;
};

/** The six rules of PATCH .../access-rules/{rule_id}; returns whether the seal changed. */
async function applyUpdate(tx: StoreTx, rule: AccessRuleRow, body: UpdateFields, where: string): Promise<{ rule: AccessRuleRow; changedSeal: boolean }> {
  const replacing = body.readers !== undefined && body.readers !== null;
  const adds = body.add_readers ?? [];
  const removes = body.remove_readers ?? [];
  // Rules 1 and 2 (also checked by the request schema; batch operations arrive here unchecked).
  if (replacing && (body.add_readers != null || body.remove_readers != null)) throw new TroveError('invalid_request', `${where}: readers cannot accompany add_readers or remove_readers.`);
  const both = adds.find((r) => removes.includes(r));
  if (both !== undefined) throw new TroveError('invalid_request', `${where}: the same principal cannot be both added and removed.`);
  // Rule 4.
  if (body.sealed === true && rule.file !== null) throw new TroveError('invalid_request', `${where}: only folder rules can be sealed.`);
  // Rule 3: removals before additions; removing an absent reader or adding a present one does nothing.
  let readers = [...rule.readers];
  if (replacing) readers = body.readers!;
  else {
    const removed = new Set(removes);
    readers = readers.filter((r) => !removed.has(r));
    for (const r of adds) if (!readers.includes(r)) readers.push(r);
  }
  const sealed = body.sealed ?? rule.sealed;
  const updated = await tx.accessRules.update(rule.rid, { readers: checkedReaders(readers, where), sealed, now: nowIso() });
  return { rule: updated, changedSeal: sealed !== rule.sealed };
}

const targetOfRow = (r: AccessRuleRow): RuleTarget => (r.folder !== null ? { folder: r.folder } : { file: r.file! });

/** Rules 5 and 6: a reader-only change is 200 and applies on the next request; a seal change that moves files is 202. */
export async function patchRule(s: Services, ns: NamespaceRow, col: CollectionRow, rule: AccessRuleRow, body: z.output<typeof UpdateAccessRuleRequest>): Promise<RuleWrite> {
  const result = await s.store.write(async (tx) => {
    const { rule: updated, changedSeal } = await applyUpdate(tx, rule, body, 'body');
    const job = await holdMovedFiles(tx, ns, col, changedSeal ? [targetOfRow(updated)] : []);
    return { rule: presentRule(updated), job };
  });
  afterWrite(s, result.job);
  return result.job ? { status: 202, rule: result.rule, job: result.job } : { status: 200, rule: result.rule, job: null };
}

/** DELETE .../access-rules/{rule_id}: 204, or 202 with the job when files move (decisions.md §2). */
export async function removeRule(s: Services, ns: NamespaceRow, col: CollectionRow, rule: AccessRuleRow): Promise<JobRow | null> {
  const job = await s.store.write(async (tx) => {
    await tx.accessRules.delete(rule.rid);
    return holdMovedFiles(tx, ns, col, [targetOfRow(rule)]);
  });
  afterWrite(s, job);
  return job;
}

/**
 * POST .../access-rules:batch: every operation or none (one transaction), one job for every file
 * that moves. `rules` holds what upsert and update left, in operation order.
 */
export async function batchRules(s: Services, ns: NamespaceRow, col: CollectionRow, body: z.output<typeof AccessRuleBatchRequest>): Promise<{ rules: AccessRule[]; job: JobRow | null }> {
  const result = await s.store.write(async (tx) => {
    const rules: AccessRuleRow[] = [];
    const changed: RuleTarget[] = [];
    for (const [i, op] of body.operations.entries()) {
      const where = `operations.${i}`;
      const target = targetOf(op.folder, op.file, where);
      if (op.op === 'upsert') {
        requireEnforced(col);
        if (op.add_readers != null || op.remove_readers != null) throw new TroveError('invalid_request', `${where}: upsert takes readers and sealed, not add_readers or remove_readers.`);
        if (op.readers == null) throw new TroveError('invalid_request', `${where}: upsert needs readers.`);
        const { row, created } = await upsert(tx, col, { target, readers: checkedReaders(op.readers, where), sealed: op.sealed ?? false }, where);
        rules.push(row.rule);
        if (created || row.changedSeal) changed.push(target);
      } else if (op.op === 'update') {
        const existing = await tx.accessRules.findByTarget(col.rid, target);
        if (!existing) throw new TroveError('not_found', `${where}: no access rule on ${describeTarget(target)}.`);
        const { rule, changedSeal } = await applyUpdate(tx, existing, op, where);
        rules.push(rule);
        if (changedSeal) changed.push(target);
      } else {
        if (op.readers != null || op.add_readers != null || op.remove_readers != null || op.sealed != null) {
          throw new TroveError('invalid_request', `${where}: delete takes only folder or file.`);
        }
        const existing = await tx.accessRules.findByTarget(col.rid, target);
        if (!existing) throw new TroveError('not_found', `${where}: no access rule on ${describeTarget(target)}.`);
        await tx.accessRules.delete(existing.rid);
        changed.push(target);
      }
    }
    // A rule upserted then deleted in the same batch is gone: report rules as they stand.
    const live: AccessRuleRow[] = [];
    for (const r of rules) {
      const now = await tx.accessRules.findById(col.rid, r.id);
      if (now) live.push(now);
    }
    return { rules: live.map(presentRule), job: await holdMovedFiles(tx, ns, col, changed) };
  });
  afterWrite(s, result.job);
  return result;
}
