// The SQLite engine's compilation of a validated filter clause (src/contract/filter.ts) into a
// parameterised predicate over a files table.
import { TroveError } from '../../contract/errors.js';
import { COLUMN_FIELDS, METADATA_PREFIX, type FilterClause, type FilterComparison, type FilterOp, type FilterScalar, show } from '../../contract/filter.js';

const SQL_COMPARISON: Record<'gt' | 'gte' | 'lt' | 'lte', string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };
const SAFE_ALIAS = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface CompiledFilter {
  /** A parenthesised boolean expression that is 0 or 1 for every row, never NULL. */
  sql: string;
  /** Values for the `?` parameters of `sql`, in order. */
  params: unknown[];
}

/**
 * Compiles a clause returned by validateFilter into a WHERE predicate over a files table aliased
 * `alias` (columns path, content_type, bytes, created_at, updated_at, status, metadata).
 * Values only ever travel as `?` parameters.
 */
export function compileFilter(clause: FilterClause, alias = 'f'): CompiledFilter {
  // The alias is interpolated, so it must be an identifier; json_each would shadow it in subqueries.
  if (!SAFE_ALIAS.test(alias) || alias.toLowerCase() === 'json_each') throw new Error(`compileFilter: unusable table alias ${JSON.stringify(alias)}`);
  const params: unknown[] = [];
  const sql = compileClause(clause, alias, params);
  return { sql, params };
}

function compileClause(clause: FilterClause, alias: string, params: unknown[]): string {
  if ('and' in clause) return `(${clause.and.map((part) => compileClause(part, alias, params)).join(' AND ')})`;
  if ('or' in clause) return `(${clause.or.map((part) => compileClause(part, alias, params)).join(' OR ')})`;
  if ('not' in clause) return `(NOT ${compileClause(clause.not, alias, params)})`;
  if (clause.field.startsWith(METADATA_PREFIX)) return compileMetadataComparison(clause, alias, params);
  if (Object.hasOwn(COLUMN_FIELDS, clause.field)) return compileColumnComparison(clause, `${alias}.${clause.field}`, params);
  throw new TroveError('invalid_filter', `filter: unknown field ${show(clause.field)}`, { path: 'filter' });
}

// bytes may be NULL (unknown size): `IS`/`IS NOT` give 0 or 1 for it, and `AND col IS NOT NULL`
// turns the NULL of any other comparison into 0, so NOT over these stays two-valued.
function compileColumnComparison({ op, value }: FilterComparison, column: string, params: unknown[]): string {
  switch (op) {
    case 'eq':
      params.push(value);
      return `(${column} IS ?)`;
    case 'neq':
      params.push(value);
      return `(${column} IS NOT ?)`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      params.push(value);
      return `(${column} ${SQL_COMPARISON[op]} ? AND ${column} IS NOT NULL)`;
    case 'prefix':
      // instr rather than LIKE so '%' and '_' are literal; it also compares bytes exactly.
      params.push(value);
      return `(instr(${column}, ?) = 1 AND ${column} IS NOT NULL)`;
    case 'in': {
      const values = asList(value);
      params.push(...values);
      return `(${column} IN (${parameterMarks(values.length)}) AND ${column} IS NOT NULL)`;
    }
  }
}

// Keys are matched as values of json_each.key, never spliced into a JSON path, so any key is safe.
// json_each.type keeps JSON types apart: text '1' never equals number 1, and true is not 1.
function compileMetadataComparison({ field, op, value }: FilterComparison, alias: string, params: unknown[]): string {
  params.push(field.slice(METADATA_PREFIX.length));
  const condition = metadataCondition(op === 'neq' ? 'eq' : op, value, params);
  const exists = `EXISTS (SELECT 1 FROM json_each(${alias}.metadata) WHERE json_each.key = ? AND ${condition})`;
  return op === 'neq' ? `(NOT ${exists})` : `(${exists})`;
}

function metadataCondition(op: FilterOp, value: FilterScalar | FilterScalar[], params: unknown[]): string {
  switch (op) {
    case 'eq':
    case 'neq':
      return jsonEquals(value as FilterScalar, params);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      params.push(value);
      return `(${typeof value === 'number' ? NUMBER_TYPES : TEXT_TYPE} AND json_each.atom ${SQL_COMPARISON[op]} ?)`;
    case 'prefix':
      params.push(value);
      return `(${TEXT_TYPE} AND instr(json_each.atom, ?) = 1)`;
    case 'in':
      return jsonIn(asList(value), params);
  }
}

const TEXT_TYPE = `json_each.type = 'text'`;
const NUMBER_TYPES = `json_each.type IN ('integer', 'real')`;
const LITERAL_TYPES = new Map<FilterScalar, string>([
  [null, 'null'],
  [true, 'true'],
  [false, 'false'],
]);

function jsonEquals(value: FilterScalar, params: unknown[]): string {
  const literalType = LITERAL_TYPES.get(value);
  if (literalType !== undefined) return `(json_each.type = '${literalType}')`;
  params.push(value);
  return `(${typeof value === 'number' ? NUMBER_TYPES : TEXT_TYPE} AND json_each.atom = ?)`;
}

function jsonIn(values: FilterScalar[], params: unknown[]): string {
  const strings = values.filter((value) => typeof value === 'string');
  const numbers = values.filter((value) => typeof value === 'number');
  const literalTypes = [...new Set(values.flatMap((value) => LITERAL_TYPES.get(value) ?? []))];
  const alternatives: string[] = [];
  if (strings.length > 0) {
    alternatives.push(`(${TEXT_TYPE} AND json_each.atom IN (${parameterMarks(strings.length)}))`);
    params.push(...strings);
  }
  if (numbers.length > 0) {
    alternatives.push(`(${NUMBER_TYPES} AND json_each.atom IN (${parameterMarks(numbers.length)}))`);
    params.push(...numbers);
  }
  if (literalTypes.length > 0) alternatives.push(`json_each.type IN (${literalTypes.map((type) => `'${type}'`).join(', ')})`);
  return `(${alternatives.join(' OR ')})`;
}

function asList(value: FilterScalar | FilterScalar[]): FilterScalar[] {
  return Array.isArray(value) ? value : [value];
}

function parameterMarks(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
