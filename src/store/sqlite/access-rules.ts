// Access rules and the per-file governing rule they produce (retrieval-api.md, Access rule).
import type { AccessRuleReads, AccessRuleRow, AccessRuleWrites, GovernedFile, RuleTarget, VisibleFile } from '../aggregates/access-rules.js';
import { targetKey } from '../../contract/governing-rule.js';
import type { Db } from './db.js';
import { stmt } from './statements.js';

/** access_rules as stored: readers as JSON, sealed as 0/1. */
interface StoredRule extends Omit<AccessRuleRow, 'readers' | 'sealed'> {
  readers: string;
  sealed: number;
}

const ruleOf = (r: StoredRule): AccessRuleRow => ({ ...r, readers: JSON.parse(r.readers) as string[], sealed: r.sealed === 1 });
const maybeRule = (r: unknown): AccessRuleRow | undefined => (r === undefined ? undefined : ruleOf(r as StoredRule));

export function sqliteAccessRules(db: Db): AccessRuleReads & AccessRuleWrites {
  return {
    findByTarget: async (collectionRid, target) => findRuleByTarget(db, collectionRid, target),
    findById: async (collectionRid, id) => findRuleById(db, collectionRid, id),
    byRids: async (rids) => getRulesByRid(db, rids),
    ofCollection: async (collectionRid) => collectionRules(db, collectionRid),
    onTargets: async (collectionRid, targets) => rulesAbovePath(db, collectionRid, targets),
    list: async (opts) => listRules(db, opts),
    filesUnder: async (collectionRid, scope) => filesUnder(db, collectionRid, scope),
    filesHeldBy: async (jobRid) => filesAwaitingJob(db, jobRid),
    insert: async (row) => insertRule(db, row),
    update: async (rid, fields) => updateRule(db, rid, fields),
    delete: async (rid) => deleteRule(db, rid),
    holdFiles: async (fileRids, jobRid) => holdFilesForJob(db, fileRids, jobRid),
    releaseFile: async (fileRid, governingRuleRid, jobRid) => releaseFile(db, fileRid, governingRuleRid, jobRid),
  };
}

export type { AccessRuleRow, GovernedFile, RuleTarget, VisibleFile } from '../aggregates/access-rules.js';


export function findRuleByTarget(db: Db, collectionRid: number, target: RuleTarget): AccessRuleRow | undefined {
  return maybeRule(stmt(db, 'SELECT * FROM access_rules WHERE collection_rid = ? AND target = ?').get(collectionRid, targetKey(target)));
}

export function findRuleById(db: Db, collectionRid: number, id: string): AccessRuleRow | undefined {
  return maybeRule(stmt(db, 'SELECT * FROM access_rules WHERE collection_rid = ? AND id = ?').get(collectionRid, id));
}

export function getRulesByRid(db: Db, rids: readonly number[]): AccessRuleRow[] {
  if (rids.length === 0) return [];
  return (stmt(db, 'SELECT * FROM access_rules WHERE rid IN (SELECT value FROM json_each(?))').all(JSON.stringify(rids)) as StoredRule[]).map(ruleOf);
}

export function collectionRules(db: Db, collectionRid: number): AccessRuleRow[] {
  return (stmt(db, 'SELECT * FROM access_rules WHERE collection_rid = ? ORDER BY rid').all(collectionRid) as StoredRule[]).map(ruleOf);
}

/** The rules that can govern `path`: folder rules on its ancestors and a file rule on it. */
export function rulesAbovePath(db: Db, collectionRid: number, targets: readonly string[]): AccessRuleRow[] {
  return (stmt(db, 'SELECT * FROM access_rules WHERE collection_rid = ? AND target IN (SELECT value FROM json_each(?))').all(collectionRid, JSON.stringify(targets)) as StoredRule[]).map(ruleOf);
}

export function listRules(db: Db, opts: { collectionRid: number; afterRid: number; limit: number; target?: string | undefined }): AccessRuleRow[] {
  return (stmt(
    db,
    `SELECT * FROM access_rules WHERE collection_rid = @c AND rid > @after AND (@target IS NULL OR target = @target) ORDER BY rid LIMIT @limit`,
  ).all({ c: opts.collectionRid, after: opts.afterRid, limit: opts.limit, target: opts.target ?? null }) as StoredRule[]).map(ruleOf);
}

function writeReaders(db: Db, ruleRid: number, readers: string[]): void {
  stmt(db, 'DELETE FROM access_rule_readers WHERE rule_rid = ?').run(ruleRid);
  const insert = stmt(db, 'INSERT OR IGNORE INTO access_rule_readers (rule_rid, principal) VALUES (?, ?)');
  for (const r of readers) insert.run(ruleRid, r);
}

export function insertRule(
  db: Db,
  row: { id: string; collection_rid: number; target: RuleTarget; readers: string[]; sealed: boolean; now: string },
): AccessRuleRow {
  const created = stmt(
    db,
    `INSERT INTO access_rules (id, collection_rid, folder, file, target, readers, sealed, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
  ).get(row.id, row.collection_rid, row.target.folder ?? null, row.target.file ?? null, targetKey(row.target), JSON.stringify(row.readers), row.sealed ? 1 : 0, row.now, row.now) as StoredRule;
  writeReaders(db, created.rid, row.readers);
  return ruleOf(created);
}

export function updateRule(db: Db, rid: number, fields: { readers: string[]; sealed: boolean; now: string }): AccessRuleRow {
  const updated = stmt(db, 'UPDATE access_rules SET readers = ?, sealed = ?, updated_at = ? WHERE rid = ? RETURNING *').get(
    JSON.stringify(fields.readers),
    fields.sealed ? 1 : 0,
    fields.now,
    rid,
  ) as StoredRule;
  writeReaders(db, rid, fields.readers);
  return ruleOf(updated);
}

export function deleteRule(db: Db, rid: number): void {
  stmt(db, 'DELETE FROM access_rule_readers WHERE rule_rid = ?').run(rid);
  stmt(db, 'DELETE FROM access_rules WHERE rid = ?').run(rid);
}

// ------------------------------------------------------------------ files and their governing rule

/** Living files whose path equals `path` or starts with `prefix`: the files a rule can govern. */
export function filesUnder(db: Db, collectionRid: number, scope: { prefix: string } | { path: string }): GovernedFile[] {
  if ('path' in scope) {
    return stmt(db, 'SELECT rid, path, governing_rule_rid, access_job_rid FROM files WHERE collection_rid = ? AND path = ? AND deleted_at IS NULL').all(collectionRid, scope.path) as GovernedFile[];
  }
  return stmt(
    db,
    'SELECT rid, path, governing_rule_rid, access_job_rid FROM files WHERE collection_rid = ? AND substr(path, 1, length(?)) = ? AND deleted_at IS NULL',
  ).all(collectionRid, scope.prefix, scope.prefix) as GovernedFile[];
}

export function filesAwaitingJob(db: Db, jobRid: number): GovernedFile[] {
  return stmt(db, 'SELECT rid, path, governing_rule_rid, access_job_rid FROM files WHERE access_job_rid = ?').all(jobRid) as GovernedFile[];
}

export function holdFilesForJob(db: Db, fileRids: readonly number[], jobRid: number): void {
  stmt(db, 'UPDATE files SET access_job_rid = ? WHERE rid IN (SELECT value FROM json_each(?))').run(jobRid, JSON.stringify(fileRids));
}

/** The job's outcome for one file: its new governing rule, and no longer hidden (unless a later job holds it). */
export function releaseFile(db: Db, fileRid: number, governingRuleRid: number | null, jobRid: number): void {
  stmt(db, 'UPDATE files SET governing_rule_rid = ?, access_job_rid = NULL WHERE rid = ? AND access_job_rid = ?').run(governingRuleRid, fileRid, jobRid);
}

/**
 * The visibility predicate over a files table aliased `f`: the file is not held by an unfinished
 * apply_access_rule job, and one of the principals reads its governing rule. A file no rule governs
 * matches nothing.
 */
export function visibleToPrincipalsSql(): string {
  return `f.access_job_rid IS NULL AND f.governing_rule_rid IN (SELECT rule_rid FROM access_rule_readers WHERE principal IN (SELECT value FROM json_each(?)))`;
}

/** The ready files the principals may read, each with what changes when its indexed content does. */
export function visibleReadyFiles(db: Db, collectionRid: number, principals: readonly string[]): VisibleFile[] {
  return stmt(
    db,
    `SELECT f.id, f.indexed_version_id, f.updated_at FROM files f
     WHERE f.collection_rid = ? AND f.status = 'ready' AND f.deleted_at IS NULL AND ${visibleToPrincipalsSql()} ORDER BY f.rid`,
  ).all(collectionRid, JSON.stringify(principals)) as VisibleFile[];
}

/** File counts by status over the files the principals may read (search warnings must not count others). */
export function visibleFileCounts(db: Db, collectionRid: number, principals: readonly string[]): Record<string, number> {
  const rows = stmt(
    db,
    `SELECT f.status AS status, count(*) AS n FROM files f WHERE f.collection_rid = ? AND f.deleted_at IS NULL AND ${visibleToPrincipalsSql()} GROUP BY f.status`,
  ).all(collectionRid, JSON.stringify(principals)) as { status: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
