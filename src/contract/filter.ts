// Filter clauses of search, answer and research (retrieval-api.md "Filter clause" and "Limits"):
// validation into a clause tree with precise invalid_filter errors. Each storage engine compiles
// the tree into its own query (the SQLite engine's: src/store/sqlite/filter-sql.ts).

import * as z from 'zod';
import { TroveError } from './errors.js';

export const FILTER_LIMITS = { maxDepth: 8, maxClauses: 100, maxInValues: 100, maxMetadataKeyLength: 256 } as const;

export const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'prefix', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** The file columns a filter may name, by kind. */
export const COLUMN_FIELDS = {
  path: 'text',
  content_type: 'text',
  bytes: 'bytes',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  status: 'status',
} as const;
export type ColumnField = keyof typeof COLUMN_FIELDS;
type FieldKind = (typeof COLUMN_FIELDS)[ColumnField] | 'metadata';

export const METADATA_PREFIX = 'metadata.';
export type FilterField = ColumnField | `metadata.${string}`;

const OPS_BY_KIND: Record<FieldKind, readonly FilterOp[]> = {
  text: ['eq', 'neq', 'prefix', 'in'],
  bytes: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'],
  timestamp: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'],
  status: ['eq', 'neq', 'in'],
  metadata: FILTER_OPS,
};

const FILE_STATUSES: readonly string[] = ['pending', 'indexing', 'ready', 'failed', 'deleting'];

/** A JSON scalar; which scalars a comparison accepts depends on its field and op. */
export type FilterScalar = string | number | boolean | null;

export interface FilterComparison {
  field: FilterField;
  op: FilterOp;
  /** An array for `in`, a scalar otherwise. Timestamps are normalised to `Date#toISOString()`. */
  value: FilterScalar | FilterScalar[];
}
export interface FilterAll {
  and: FilterClause[];
}
export interface FilterAny {
  or: FilterClause[];
}
export interface FilterNegation {
  not: FilterClause;
}
export type FilterClause = FilterComparison | FilterAll | FilterAny | FilterNegation;

// ---------------------------------------------------------------------------------------------
// Schema for documentation (OpenAPI). It cannot express the depth, clause-count or per-field
// rules; validateFilter is the authority, so a request schema should not reject filters with it
// first (that would report invalid_request instead of invalid_filter).

const filterScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const filterComparisonSchema = z.strictObject({
  field: z
    .string()
    .regex(/^(?:path|content_type|bytes|created_at|updated_at|status|metadata\..{1,256})$/su)
    .describe('`path`, `content_type`, `bytes`, `created_at`, `updated_at`, `status`, or `metadata.<key>` (key 1-256 characters).'),
  op: z
    .enum(FILTER_OPS)
    .describe('Strings: eq, neq, prefix, in. bytes and timestamps: eq, neq, gt, gte, lt, lte, in. status: eq, neq, in. Metadata: all.'),
  value: z
    .union([filterScalarSchema, z.array(filterScalarSchema).min(1).max(FILTER_LIMITS.maxInValues)])
    .describe('An array of 1-100 values for `in`, otherwise one value. Timestamps are ISO 8601 date-times with a timezone.'),
});

export const FilterClauseSchema = z
  .union([
    filterComparisonSchema,
    z.strictObject({
      get and(): z.ZodArray<typeof FilterClauseSchema> {
        return z.array(FilterClauseSchema).min(1);
      },
    }),
    z.strictObject({
      get or(): z.ZodArray<typeof FilterClauseSchema> {
        return z.array(FilterClauseSchema).min(1);
      },
    }),
    z.strictObject({
      get not(): typeof FilterClauseSchema {
        return FilterClauseSchema;
      },
    }),
  ])
  .meta({
    id: 'FilterClause',
    description: 'Exactly one of {field, op, value}, {and: [clause, ...]}, {or: [clause, ...]}, {not: clause}. Limits: depth 8, 100 clauses.',
  });

// ---------------------------------------------------------------------------------------------
// Validation

const COMPARISON_KEYS = ['field', 'op', 'value'] as const;
const CLAUSE_KEYS: ReadonlySet<string> = new Set([...COMPARISON_KEYS, 'and', 'or', 'not']);
const CLAUSE_SHAPES = '{field, op, value}, {and: [...]}, {or: [...]} or {not: clause}';

/**
 * Checks a filter clause from a request and returns a clean copy (unknown keys cannot survive,
 * timestamps normalised). Every problem is a TroveError('invalid_filter') whose message starts
 * with the location, e.g. "filter.and[2].op: 'prefix' is not supported for field 'bytes' ...".
 */
export function validateFilter(input: unknown): FilterClause {
  return validateClause(input, 'filter', 1, { clauses: 0 });
}

function fail(path: string, problem: string): never {
  throw new TroveError('invalid_filter', `${path}: ${problem}`, { path });
}

function validateClause(input: unknown, path: string, depth: number, counter: { clauses: number }): FilterClause {
  if (!isPlainObject(input)) fail(path, `expected a clause object (${CLAUSE_SHAPES}), got ${describe(input)}`);
  if (depth > FILTER_LIMITS.maxDepth) fail(path, `filter is nested deeper than ${FILTER_LIMITS.maxDepth} levels`);
  counter.clauses += 1;
  if (counter.clauses > FILTER_LIMITS.maxClauses) fail(path, `filter has more than ${FILTER_LIMITS.maxClauses} clauses`);

  const keys = Object.keys(input);
  const unknownKey = keys.find((key) => !CLAUSE_KEYS.has(key));
  if (unknownKey !== undefined) fail(path, `unknown key ${show(unknownKey)}; a clause is ${CLAUSE_SHAPES}`);

  const forms: string[] = [];
  if (COMPARISON_KEYS.some((key) => Object.hasOwn(input, key))) forms.push('field/op/value');
  for (const key of ['and', 'or', 'not']) if (Object.hasOwn(input, key)) forms.push(key);
  if (forms.length === 0) fail(path, `empty clause; expected ${CLAUSE_SHAPES}`);
  if (forms.length > 1) fail(path, `a clause has exactly one form, got ${forms.map((form) => show(form)).join(' and ')}`);

  if (Object.hasOwn(input, 'and')) return { and: validateClauseList(input.and, `${path}.and`, depth, counter) };
  if (Object.hasOwn(input, 'or')) return { or: validateClauseList(input.or, `${path}.or`, depth, counter) };
  if (Object.hasOwn(input, 'not')) return { not: validateClause(input.not, `${path}.not`, depth + 1, counter) };
  return validateComparison(input, path);
}

function validateClauseList(input: unknown, path: string, depth: number, counter: { clauses: number }): FilterClause[] {
  if (!Array.isArray(input)) fail(path, `expected a non-empty array of clauses, got ${describe(input)}`);
  if (input.length === 0) fail(path, 'expected a non-empty array of clauses, got an empty array');
  const clauses: FilterClause[] = [];
  // Indexed loop rather than map: holes in a sparse array must be rejected, not skipped.
  for (let i = 0; i < input.length; i++) clauses.push(validateClause(input[i], `${path}[${i}]`, depth + 1, counter));
  return clauses;
}

function validateComparison(input: Record<string, unknown>, path: string): FilterComparison {
  for (const key of COMPARISON_KEYS) {
    if (!Object.hasOwn(input, key)) fail(path, `missing ${show(key)}; a comparison needs field, op and value`);
  }
  const { field, op } = input;
  if (typeof field !== 'string') fail(`${path}.field`, `expected a field name string, got ${describe(field)}`);
  const kind = fieldKind(field, `${path}.field`);
  if (typeof op !== 'string' || !(FILTER_OPS as readonly string[]).includes(op)) {
    fail(`${path}.op`, `unknown operator ${show(op)}; expected one of ${FILTER_OPS.join(', ')}`);
  }
  const allowed = OPS_BY_KIND[kind];
  if (!(allowed as readonly string[]).includes(op)) {
    fail(`${path}.op`, `${show(op)} is not supported for field ${show(field)}; use one of ${allowed.join(', ')}`);
  }
  const checkedOp = op as FilterOp;
  const value = validateValue(kind, checkedOp, input.value, `${path}.value`, field);
  return { field: field as FilterField, op: checkedOp, value };
}

function fieldKind(field: string, path: string): FieldKind {
  if (Object.hasOwn(COLUMN_FIELDS, field)) return COLUMN_FIELDS[field as ColumnField];
  if (field.startsWith(METADATA_PREFIX)) {
    const keyLength = codePointLength(field.slice(METADATA_PREFIX.length));
    if (keyLength === 0) fail(path, `metadata key is empty; use 'metadata.<key>'`);
    if (keyLength > FILTER_LIMITS.maxMetadataKeyLength) {
      fail(path, `metadata key is ${keyLength} characters; the limit is ${FILTER_LIMITS.maxMetadataKeyLength}`);
    }
    return 'metadata';
  }
  fail(path, `unknown field ${show(field)}; expected ${Object.keys(COLUMN_FIELDS).join(', ')} or metadata.<key>`);
}

function validateValue(kind: FieldKind, op: FilterOp, value: unknown, path: string, field: string): FilterScalar | FilterScalar[] {
  if (op !== 'in') return validateScalar(kind, op, value, path, field);
  if (!Array.isArray(value)) fail(path, `'in' needs an array of 1-${FILTER_LIMITS.maxInValues} values, got ${describe(value)}`);
  if (value.length === 0 || value.length > FILTER_LIMITS.maxInValues) {
    fail(path, `'in' needs 1-${FILTER_LIMITS.maxInValues} values, got ${value.length}`);
  }
  const values: FilterScalar[] = [];
  for (let i = 0; i < value.length; i++) values.push(validateScalar(kind, op, value[i], `${path}[${i}]`, field));
  return values;
}

function validateScalar(kind: FieldKind, op: FilterOp, value: unknown, path: string, field: string): FilterScalar {
  const wrong = (expected: string): never => fail(path, `${show(op)} on field ${show(field)} needs ${expected}, got ${describe(value)}`);
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? value : wrong('a string');
    case 'bytes':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : wrong('a non-negative integer');
    case 'status':
      return typeof value === 'string' && FILE_STATUSES.includes(value) ? value : wrong(`a file status (${FILE_STATUSES.join(', ')})`);
    case 'timestamp':
      if (typeof value !== 'string') return wrong('an ISO 8601 date-time string with a timezone');
      return normaliseTimestamp(value, path);
    case 'metadata':
      switch (op) {
        case 'prefix':
          return typeof value === 'string' ? value : wrong('a string');
        case 'gt':
        case 'gte':
        case 'lt':
        case 'lte':
          return typeof value === 'string' || isFiniteNumber(value) ? value : wrong('a number or a string');
        default:
          return value === null || typeof value === 'string' || typeof value === 'boolean' || isFiniteNumber(value)
            ? value
            : wrong('a string, number, boolean or null');
      }
  }
}

// RFC 3339 profile of ISO 8601: date, 'T', hours and minutes, optional seconds and fraction, and a
// mandatory 'Z' or ±hh:mm offset (a local time would depend on the server's timezone).
const TIMESTAMP_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/;

function normaliseTimestamp(value: string, path: string): string {
  const match = TIMESTAMP_PATTERN.exec(value);
  const invalid = (why: string): never =>
    fail(path, `${show(value)} ${why}; expected an ISO 8601 date-time with a timezone such as 2024-05-01T12:00:00Z or 2024-05-01T14:00:00+02:00`);
  if (match === null) {
    return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(value) ? invalid('has no timezone') : invalid('is not a date-time');
  }
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone = 'Z', offsetHour = '00', offsetMinute = '00'] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59 || Number(offsetHour) > 23 || Number(offsetMinute) > 59) {
    invalid('is not a valid date-time');
  }
  // This exact shape is the ECMAScript date-time string format, which Date parses the same everywhere.
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, '0').slice(0, 3)}${zone}`);
  const utcYear = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || utcYear < 0 || utcYear > 9999) invalid('is out of range');
  return date.toISOString();
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${show(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** Quotes a value for a message, shortened so a huge input cannot produce a huge error. */
export function show(value: unknown): string {
  const text = typeof value === 'string' ? value : describe(value);
  return `'${text.length > 60 ? `${text.slice(0, 57)}...` : text}'`;
}
