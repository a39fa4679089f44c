// Access rules and the per-file governing rule they produce.

/** A rule as stored: its readers in the order given. */
export interface AccessRuleRow {
  rid: number;
  id: string;
  collection_rid: number;
  folder: string | null;
  file: string | null;
  /** The target as one string (`d<folder>` or `f<file>`): one rule per folder or file. */
  target: string;
  readers: string[];
  sealed: boolean;
  created_at: string;
  updated_at: string;
}

export type RuleTarget = { folder: string; file?: undefined } | { file: string; folder?: undefined };

/** A living file as a rule change sees it. */
export interface GovernedFile {
  rid: number;
  path: string;
  governing_rule_rid: number | null;
  access_job_rid: number | null;
}

/** What changes when a readable file's indexed content does. */
export interface VisibleFile {
  id: string;
  indexed_version_id: string | null;
  updated_at: string;
}

export interface AccessRuleReads {
  findByTarget(collectionRid: number, target: RuleTarget): Promise<AccessRuleRow | undefined>;
  findById(collectionRid: number, id: string): Promise<AccessRuleRow | undefined>;
  byRids(rids: readonly number[]): Promise<AccessRuleRow[]>;
  /** Every rule of a collection, in creation order. */
  ofCollection(collectionRid: number): Promise<AccessRuleRow[]>;
  /** The rules on these targets (`d<folder>`, `f<file>`): those that can govern one path. */
  onTargets(collectionRid: number, targets: readonly string[]): Promise<AccessRuleRow[]>;
  /** In creation order after `afterRid`; `target` narrows to one. */
  list(opts: { collectionRid: number; afterRid: number; limit: number; target?: string | undefined }): Promise<AccessRuleRow[]>;
  /** Living files whose path equals `path` or starts with `prefix`: the files a rule can govern. */
  filesUnder(collectionRid: number, scope: { prefix: string } | { path: string }): Promise<GovernedFile[]>;
  /** The files an apply_access_rule job holds. */
  filesHeldBy(jobRid: number): Promise<GovernedFile[]>;
}

export interface AccessRuleWrites {
  insert(row: { id: string; collection_rid: number; target: RuleTarget; readers: string[]; sealed: boolean; now: string }): Promise<AccessRuleRow>;
  update(rid: number, fields: { readers: string[]; sealed: boolean; now: string }): Promise<AccessRuleRow>;
  delete(rid: number): Promise<void>;
  /** Hidden from retrieval until the job releases them. */
  holdFiles(fileRids: readonly number[], jobRid: number): Promise<void>;
  /** The job's outcome for one file: its governing rule, and visible again unless a later job holds it. */
  releaseFile(fileRid: number, governingRuleRid: number | null, jobRid: number): Promise<void>;
}
