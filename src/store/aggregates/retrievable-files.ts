// Which files a retrieval may draw from: a collection's ready files, narrowed by a filter and by
// what a reader's principals may read. The rule goes in as data (a validated filter clause, a list
// of principals); each engine compiles it into its own query.
import type { FilterClause } from '../../contract/filter.js';
import type { FileCounts } from './collections.js';
import type { VisibleFile } from './access-rules.js';

/** The files one retrieval may draw from, as data both stages take. */
export interface FileSelection {
  /** The selected files. */
  fileRids: readonly number[];
  /** Share of the collection's ready files selected (0..1): sizes the first candidate window. */
  selectivity: number;
}

/** What narrows a selection: a validated filter clause, the principals of an enforced reader, or both. */
export interface SelectionRule {
  filter: FilterClause | null;
  /** The principals whose readable files are kept; null keeps every file. */
  principals: readonly string[] | null;
}

export interface RetrievableFileReads {
  /** The ready files of a collection that a rule selects. */
  select(collectionRid: number, rule: SelectionRule): Promise<FileSelection>;
  /** The ready, living files of a collection in rid order; the same array while nothing is written. */
  live(collectionRid: number): Promise<readonly number[]>;
  /** File counts by status over the living files the principals may read. */
  countsFor(collectionRid: number, principals: readonly string[]): Promise<FileCounts>;
  /** The ready files the principals may read, in rid order, each with what changes when its indexed content does. */
  readyFor(collectionRid: number, principals: readonly string[]): Promise<VisibleFile[]>;
}
