import t from 'tap';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import * as z from 'zod';
import { TroveError } from '../../src/contract/errors.js';
import { FilterClauseSchema, validateFilter, type FilterClause, type FilterOp, type FilterScalar } from '../../src/contract/filter.js';
import { compileFilter } from '../../src/store/sqlite/filter-sql.js';

type TestContext = Parameters<Parameters<typeof t.test>[0]>[0];

// ---------------------------------------------------------------------------------------------
// Fixture: a files table with the columns the compiled SQL expects.

interface FileRow {
  id: number;
  path: string;
  content_type: string;
  bytes: number | null;
  created_at: string;
  updated_at: string;
  status: string;
  /** Stored as written (raw JSON text), so `1.0` stays a JSON real in SQLite. */
  metadata: string;
}

const LONG_KEY = 'k'.repeat(256);

const ROWS: FileRow[] = [
  { id: 1, path: 'docs/readme.md', content_type: 'text/markdown', bytes: 120, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-02T00:00:00.000Z', status: 'ready', metadata: '{"team":"search","n":1,"flag":true,"v":"1","tags":["a","b"]}' },
  { id: 2, path: 'docs/100%_done.md', content_type: 'text/markdown', bytes: 0, created_at: '2024-02-01T12:00:00.000Z', updated_at: '2024-03-01T00:00:00.000Z', status: 'ready', metadata: '{"team":"ingest","n":2.5,"flag":false,"v":1,"nil":null}' },
  { id: 3, path: 'docs/100xxdone.md', content_type: 'text/markdown', bytes: null, created_at: '2024-02-01T12:00:00.000Z', updated_at: '2024-02-01T12:00:00.000Z', status: 'pending', metadata: '{"n":10,"v":true,"p":"50%_off"}' },
  { id: 4, path: 'docs/a_b.txt', content_type: 'text/plain', bytes: 5000, created_at: '2023-12-31T23:59:59.999Z', updated_at: '2024-01-01T00:00:00.000Z', status: 'failed', metadata: '{"team":"Search","v":null,"he said \\"hi\\"":"quoted","p":"50xxoff"}' },
  { id: 5, path: 'docs/aXb.txt', content_type: 'text/plain', bytes: 5000, created_at: '2024-03-15T08:30:00.000Z', updated_at: '2024-03-15T08:30:00.000Z', status: 'indexing', metadata: `{"a.b":"dotted","x[0]":"bracket","it's":1,"$.n":3}` },
  { id: 6, path: 'src/main.ts', content_type: 'text/x-typescript', bytes: 123456, created_at: '2024-01-15T10:00:00.000Z', updated_at: '2024-04-01T00:00:00.000Z', status: 'deleting', metadata: '{"n":-3,"score":0.5,"obj":{"team":"search"},"a":{"b":"dotted"}}' },
  { id: 7, path: 'src/util.ts', content_type: 'text/x-typescript', bytes: null, created_at: '2024-01-15T10:00:00.000Z', updated_at: '2024-01-16T00:00:00.000Z', status: 'ready', metadata: '{}' },
  { id: 8, path: 'images/logo.png', content_type: 'image/png', bytes: 2048, created_at: '2024-02-29T00:00:00.000Z', updated_at: '2024-02-29T00:00:00.000Z', status: 'ready', metadata: '{"team":"design","n":1.0,"score":1e2}' },
  { id: 9, path: 'notes/ünïcødé.md', content_type: 'text/markdown', bytes: 77, created_at: '2023-06-01T00:00:00.000Z', updated_at: '2023-06-01T00:00:00.000Z', status: 'failed', metadata: JSON.stringify({ team: 'ünï', v: '01', k: 'x', [LONG_KEY]: 'long' }) },
  { id: 10, path: 'docs/Readme.md', content_type: 'text/markdown', bytes: 1, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z', status: 'ready', metadata: '{"flag":1,"v":1.5,"team":"search-infra"}' },
];
const ALL_IDS = ROWS.map((row) => row.id);
const except = (...ids: number[]) => ALL_IDS.filter((id) => !ids.includes(id));

const db = new Database(':memory:');
db.exec(`CREATE TABLE files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  content_type TEXT NOT NULL,
  bytes INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status TEXT NOT NULL,
  metadata TEXT NOT NULL
)`);
const insert = db.prepare('INSERT INTO files VALUES (@id, @path, @content_type, @bytes, @created_at, @updated_at, @status, @metadata)');
for (const row of ROWS) insert.run(row);
t.teardown(() => db.close());

/** Runs a validated, compiled filter; also checks the predicate is 0 or 1 (never NULL) on every row. */
function matchingIds(clause: FilterClause, alias = 'f'): number[] {
  const { sql, params } = compileFilter(clause, alias);
  const rows = db.prepare(`SELECT id, ${sql} AS hit FROM files ${alias} ORDER BY id`).all(...params) as { id: number; hit: unknown }[];
  for (const row of rows) assert.ok(row.hit === 0 || row.hit === 1, `predicate is two-valued, got ${String(row.hit)} for row ${row.id}: ${sql}`);
  return rows.filter((row) => row.hit === 1).map((row) => row.id);
}

function expectIds(t: TestContext, filter: unknown, expected: number[], why?: string): void {
  const name = [...JSON.stringify(filter)].slice(0, 160).join('');
  t.same(matchingIds(validateFilter(filter)), expected, why === undefined ? name : `${name}: ${why}`);
}

function expectRejected(t: TestContext, filter: unknown, path: string, message?: RegExp): void {
  try {
    validateFilter(filter);
    t.fail(`accepted ${JSON.stringify(filter)?.slice(0, 200)}`);
  } catch (err) {
    if (!(err instanceof TroveError)) throw err;
    t.equal(err.code, 'invalid_filter', `code for ${err.message}`);
    t.equal(err.details.path, path, `path for ${err.message}`);
    t.ok(err.message.startsWith(`${path}: `), `message starts with its location: ${err.message}`);
    if (message !== undefined) t.match(err.message, message);
  }
}

const cmp = (field: unknown, op: unknown, value: unknown) => ({ field, op, value });

// ---------------------------------------------------------------------------------------------
// Structure

t.test('clause forms and combinations', async (t) => {
  expectIds(t, cmp('status', 'eq', 'ready'), [1, 2, 7, 8, 10]);
  expectIds(t, { and: [cmp('status', 'eq', 'ready'), cmp('content_type', 'eq', 'text/markdown')] }, [1, 2, 10]);
  expectIds(t, { or: [cmp('status', 'eq', 'pending'), cmp('path', 'prefix', 'images/')] }, [3, 8]);
  expectIds(t, { not: cmp('status', 'eq', 'ready') }, [3, 4, 5, 6, 9]);
  expectIds(t, { not: { not: cmp('status', 'eq', 'ready') } }, [1, 2, 7, 8, 10]);
  expectIds(t, { and: [cmp('path', 'prefix', 'docs/'), { not: { or: [cmp('bytes', 'gt', 100), cmp('metadata.v', 'eq', true)] } }] }, [2, 10]);
  expectIds(t, { or: [{ and: [cmp('bytes', 'eq', 5000), cmp('status', 'eq', 'failed')] }, { not: cmp('metadata.team', 'neq', 'design') }] }, [4, 8]);
  expectIds(t, { and: [cmp('status', 'eq', 'ready')] }, [1, 2, 7, 8, 10]);
  expectIds(t, { or: [cmp('path', 'eq', 'nope')] }, []);
});

t.test('malformed clauses are rejected with their location', async (t) => {
  expectRejected(t, null, 'filter', /expected a clause object/);
  expectRejected(t, [], 'filter', /got an array/);
  expectRejected(t, 'status = ready', 'filter', /got the string/);
  expectRejected(t, 42, 'filter', /got number 42/);
  expectRejected(t, new Date(), 'filter', /expected a clause object/);
  expectRejected(t, {}, 'filter', /empty clause/);
  expectRejected(t, { ...cmp('path', 'eq', 'x'), extra: 1 }, 'filter', /unknown key 'extra'/);
  expectRejected(t, { and: [cmp('path', 'eq', 'x')], filter: 1 }, 'filter', /unknown key 'filter'/);
  expectRejected(t, JSON.parse('{"__proto__": {"field": "path"}}'), 'filter', /unknown key '__proto__'/);
  expectRejected(t, { ...cmp('path', 'eq', 'x'), and: [cmp('path', 'eq', 'y')] }, 'filter', /exactly one form, got 'field\/op\/value' and 'and'/);
  expectRejected(t, { and: [cmp('path', 'eq', 'x')], or: [cmp('path', 'eq', 'y')] }, 'filter', /'and' and 'or'/);
  expectRejected(t, { or: [cmp('path', 'eq', 'x')], not: cmp('path', 'eq', 'y') }, 'filter', /'or' and 'not'/);
  expectRejected(t, { field: 'path', op: 'eq' }, 'filter', /missing 'value'/);
  expectRejected(t, { field: 'path', value: 'x' }, 'filter', /missing 'op'/);
  expectRejected(t, { op: 'eq', value: 'x' }, 'filter', /missing 'field'/);
  expectRejected(t, { and: [] }, 'filter.and', /non-empty array/);
  expectRejected(t, { or: [] }, 'filter.or', /non-empty array/);
  expectRejected(t, { and: cmp('path', 'eq', 'x') }, 'filter.and', /got an object/);
  expectRejected(t, { not: [cmp('path', 'eq', 'x')] }, 'filter.not', /got an array/);
  expectRejected(t, { not: null }, 'filter.not', /got null/);
  // The hole at [1] is the point: JSON cannot carry one, a JavaScript caller can.
  expectRejected(t, { or: [cmp('path', 'eq', 'x'), , cmp('path', 'eq', 'y')] }, 'filter.or[1]', /got undefined/);
  expectRejected(t, { and: [cmp('path', 'eq', 'x'), { or: [cmp('path', 'eq', 'y'), { not: { nope: 1 } }] }] }, 'filter.and[1].or[1].not', /unknown key 'nope'/);
  expectRejected(t, cmp('Path', 'eq', 'x'), 'filter.field', /unknown field 'Path'/);
  expectRejected(t, cmp('metadata', 'eq', 'x'), 'filter.field', /unknown field 'metadata'/);
  expectRejected(t, cmp('id', 'eq', 'x'), 'filter.field', /unknown field 'id'/);
  expectRejected(t, cmp(['path'], 'eq', 'x'), 'filter.field', /expected a field name string/);
  expectRejected(t, cmp('path', 'EQ', 'x'), 'filter.op', /unknown operator 'EQ'/);
  expectRejected(t, cmp('path', 'like', 'x%'), 'filter.op', /unknown operator 'like'/);
  expectRejected(t, cmp('path', null, 'x'), 'filter.op', /unknown operator 'null'/);
});

t.test('validateFilter returns a clean copy', async (t) => {
  const input = { and: [cmp('created_at', 'gte', '2024-01-01T02:00:00+02:00'), { not: cmp('metadata.team', 'in', ['a', 1, null]) }] };
  const clause = validateFilter(input);
  t.same(clause, { and: [cmp('created_at', 'gte', '2024-01-01T00:00:00.000Z'), { not: cmp('metadata.team', 'in', ['a', 1, null]) }] });
  t.not(clause, input);
  t.same(validateFilter(clause), clause, 'validating a validated clause changes nothing');
});

// ---------------------------------------------------------------------------------------------
// Fields and operators

t.test('path and content_type: eq, neq, prefix, in', async (t) => {
  expectIds(t, cmp('path', 'eq', 'docs/readme.md'), [1]);
  expectIds(t, cmp('path', 'neq', 'docs/readme.md'), except(1));
  expectIds(t, cmp('path', 'prefix', 'docs/'), [1, 2, 3, 4, 5, 10]);
  expectIds(t, cmp('path', 'prefix', 'DOCS/'), [], 'prefix is case-sensitive');
  expectIds(t, cmp('path', 'prefix', ''), ALL_IDS);
  expectIds(t, cmp('path', 'prefix', 'notes/ünï'), [9]);
  expectIds(t, cmp('path', 'prefix', 'docs/readme.md.bak'), []);
  expectIds(t, cmp('path', 'in', ['src/main.ts', 'images/logo.png', 'nope']), [6, 8]);
  expectIds(t, cmp('content_type', 'eq', 'text/plain'), [4, 5]);
  expectIds(t, cmp('content_type', 'neq', 'text/markdown'), [4, 5, 6, 7, 8]);
  expectIds(t, cmp('content_type', 'prefix', 'text/'), except(8));
  expectIds(t, cmp('content_type', 'in', ['image/png', 'text/plain']), [4, 5, 8]);
  for (const field of ['path', 'content_type']) {
    for (const op of ['gt', 'gte', 'lt', 'lte']) expectRejected(t, cmp(field, op, 'a'), 'filter.op', new RegExp(`'${op}' is not supported for field '${field}'; use one of eq, neq, prefix, in`));
    expectRejected(t, cmp(field, 'eq', 1), 'filter.value', /needs a string, got number 1/);
    expectRejected(t, cmp(field, 'prefix', null), 'filter.value', /needs a string, got null/);
    expectRejected(t, cmp(field, 'in', ['a', 2]), 'filter.value[1]', /needs a string/);
  }
});

t.test('prefix treats LIKE wildcards literally', async (t) => {
  expectIds(t, cmp('path', 'prefix', 'docs/100%'), [2]);
  expectIds(t, cmp('path', 'prefix', 'docs/100%_'), [2]);
  expectIds(t, cmp('path', 'prefix', 'docs/a_'), [4]);
  expectIds(t, cmp('path', 'prefix', '%'), []);
  expectIds(t, cmp('path', 'prefix', '_'), []);
  expectIds(t, cmp('metadata.p', 'prefix', '50%'), [3]);
  expectIds(t, cmp('metadata.p', 'prefix', '50_'), []);
});

t.test('bytes: numeric comparisons, in, unknown size', async (t) => {
  expectIds(t, cmp('bytes', 'eq', 5000), [4, 5]);
  expectIds(t, cmp('bytes', 'eq', 0), [2]);
  expectIds(t, cmp('bytes', 'neq', 5000), [1, 2, 3, 6, 7, 8, 9, 10]);
  expectIds(t, cmp('bytes', 'gt', 120), [4, 5, 6, 8]);
  expectIds(t, cmp('bytes', 'gte', 120), [1, 4, 5, 6, 8]);
  expectIds(t, cmp('bytes', 'lt', 120), [2, 9, 10]);
  expectIds(t, cmp('bytes', 'lte', 120), [1, 2, 9, 10]);
  expectIds(t, cmp('bytes', 'in', [0, 77, 9]), [2, 9]);
  expectIds(t, cmp('bytes', 'gte', 0), except(3, 7));
  expectIds(t, { not: cmp('bytes', 'gte', 0) }, [3, 7]);
  expectIds(t, { not: cmp('bytes', 'in', [120, 0]) }, [3, 4, 5, 6, 7, 8, 9, 10]);
  expectRejected(t, cmp('bytes', 'prefix', '12'), 'filter.op', /'prefix' is not supported for field 'bytes'/);
  for (const bad of [-1, 1.5, '5000', null, true, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    expectRejected(t, cmp('bytes', 'gt', bad), 'filter.value', /needs a non-negative integer/);
  }
  expectRejected(t, cmp('bytes', 'in', [1, -2]), 'filter.value[1]', /non-negative integer/);
});

t.test('timestamps: comparisons with a timezone, normalised to UTC', async (t) => {
  expectIds(t, cmp('created_at', 'eq', '2024-01-01T01:00:00+01:00'), [1, 10]);
  expectIds(t, cmp('created_at', 'eq', '2024-01-01T00:00Z'), [1, 10]);
  expectIds(t, cmp('created_at', 'eq', '2024-02-01T07:00:00.000-05:00'), [2, 3]);
  expectIds(t, cmp('created_at', 'neq', '2024-01-01T00:00:00Z'), except(1, 10));
  expectIds(t, cmp('created_at', 'gt', '2024-01-15T10:00:00Z'), [2, 3, 5, 8]);
  expectIds(t, cmp('created_at', 'gte', '2024-01-15T10:00:00Z'), [2, 3, 5, 6, 7, 8]);
  expectIds(t, cmp('created_at', 'lt', '2024-01-01T00:00:00Z'), [4, 9]);
  expectIds(t, cmp('created_at', 'lte', '2024-01-01T00:00:00Z'), [1, 4, 9, 10]);
  expectIds(t, cmp('created_at', 'lt', '2023-12-31T23:59:59.999Z'), [9]);
  expectIds(t, cmp('created_at', 'in', ['2024-02-29T01:00:00+01:00', '2023-06-01T00:00:00Z']), [8, 9]);
  expectIds(t, cmp('updated_at', 'eq', '2024-01-01T00:00:00.000Z'), [4, 10]);
  expectIds(t, cmp('updated_at', 'neq', '2024-01-01T00:00:00.000Z'), except(4, 10));
  expectIds(t, cmp('updated_at', 'gt', '2024-02-29T00:00:00Z'), [2, 5, 6]);
  expectIds(t, cmp('updated_at', 'gte', '2024-02-29T00:00:00Z'), [2, 5, 6, 8]);
  expectIds(t, cmp('updated_at', 'lt', '2024-01-02T00:00:00Z'), [4, 9, 10]);
  expectIds(t, cmp('updated_at', 'lte', '2024-01-02T00:00:00Z'), [1, 4, 9, 10]);
  expectIds(t, cmp('updated_at', 'in', ['2024-04-01T02:00:00+02:00']), [6]);

  t.same(validateFilter(cmp('updated_at', 'lt', '2024-01-01T01:00:00.5+01:00')), cmp('updated_at', 'lt', '2024-01-01T00:00:00.500Z'));
  t.same(validateFilter(cmp('updated_at', 'lt', '2024-01-01T00:00:00.123456789Z')), cmp('updated_at', 'lt', '2024-01-01T00:00:00.123Z'));
  t.same(validateFilter(cmp('updated_at', 'lt', '2024-02-29T23:30:00-01:00')), cmp('updated_at', 'lt', '2024-03-01T00:30:00.000Z'), 'leap day, offset crosses the month');

  for (const field of ['created_at', 'updated_at']) expectRejected(t, cmp(field, 'prefix', '2024-'), 'filter.op', new RegExp(`'prefix' is not supported for field '${field}'`));
  for (const local of ['2024-01-01T00:00:00', '2024-01-01T00:00', '2024-01-01T00:00:00.000']) {
    expectRejected(t, cmp('created_at', 'gt', local), 'filter.value', /has no timezone/);
  }
  for (const bad of ['2024-01-01', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00+0100', '2024-01-01T00:00:00 Z', '20240101T000000Z', 'yesterday', '', '2024-01-01T00:00:00z']) {
    expectRejected(t, cmp('created_at', 'gt', bad), 'filter.value', /is not a date-time/);
  }
  const impossibleDates = [
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:60Z',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00+01:60',
  ];
  for (const impossible of impossibleDates) {
    expectRejected(t, cmp('updated_at', 'eq', impossible), 'filter.value', /is not a valid date-time/);
  }
  expectRejected(t, cmp('created_at', 'lt', '0000-01-01T00:00:00+01:00'), 'filter.value', /out of range/);
  expectRejected(t, cmp('created_at', 'gt', 1704067200000), 'filter.value', /needs an ISO 8601 date-time string/);
  expectRejected(t, cmp('created_at', 'in', ['2024-01-01T00:00:00Z', '2024-01-01']), 'filter.value[1]', /not a date-time/);
});

t.test('status: eq, neq, in over file states', async (t) => {
  expectIds(t, cmp('status', 'eq', 'ready'), [1, 2, 7, 8, 10]);
  expectIds(t, cmp('status', 'neq', 'ready'), [3, 4, 5, 6, 9]);
  expectIds(t, cmp('status', 'in', ['failed', 'pending']), [3, 4, 9]);
  expectIds(t, cmp('status', 'in', ['pending', 'indexing', 'ready', 'failed', 'deleting']), ALL_IDS);
  for (const op of ['gt', 'gte', 'lt', 'lte', 'prefix']) expectRejected(t, cmp('status', op, 'ready'), 'filter.op', /is not supported for field 'status'; use one of eq, neq, in/);
  expectRejected(t, cmp('status', 'eq', 'READY'), 'filter.value', /needs a file status \(pending, indexing, ready, failed, deleting\)/);
  expectRejected(t, cmp('status', 'eq', 'succeeded'), 'filter.value', /file status/);
  expectRejected(t, cmp('status', 'in', ['ready', 'done']), 'filter.value[1]', /file status/);
});

t.test('metadata: equality is exact on JSON type', async (t) => {
  expectIds(t, cmp('metadata.team', 'eq', 'search'), [1]);
  expectIds(t, cmp('metadata.team', 'neq', 'search'), except(1));
  expectIds(t, cmp('metadata.v', 'eq', '1'), [1], 'string "1" is not number 1');
  expectIds(t, cmp('metadata.v', 'eq', 1), [2], 'number 1 is not string "1" nor true');
  expectIds(t, cmp('metadata.v', 'eq', true), [3], 'true is not number 1');
  expectIds(t, cmp('metadata.v', 'eq', null), [4], 'null matches JSON null only, not a missing key');
  expectIds(t, cmp('metadata.v', 'eq', false), []);
  expectIds(t, cmp('metadata.v', 'neq', null), except(4));
  expectIds(t, cmp('metadata.flag', 'eq', true), [1], 'true does not match number 1');
  expectIds(t, cmp('metadata.flag', 'eq', 1), [10], 'number 1 does not match true');
  expectIds(t, cmp('metadata.flag', 'eq', false), [2]);
  expectIds(t, cmp('metadata.n', 'eq', 1), [1, 8], 'integer 1 and real 1.0 are equal');
  expectIds(t, cmp('metadata.n', 'eq', 1.0), [1, 8]);
  expectIds(t, cmp('metadata.n', 'eq', 2.5), [2]);
  expectIds(t, cmp('metadata.score', 'eq', 100), [8], 'real written as 1e2');
  expectIds(t, cmp('metadata.nil', 'eq', null), [2]);
  expectIds(t, cmp('metadata.nil', 'neq', null), except(2));
  expectIds(t, cmp('metadata.tags', 'eq', 'a'), [], 'arrays never equal a scalar');
  expectIds(t, cmp('metadata.tags', 'neq', 'a'), ALL_IDS);
  expectIds(t, cmp('metadata.obj', 'eq', null), [], 'objects are not null');
  expectIds(t, cmp('metadata.missing', 'eq', null), []);
});

t.test('metadata: missing keys', async (t) => {
  expectIds(t, cmp('metadata.missing', 'neq', 'x'), ALL_IDS, 'neq on a missing key is true');
  expectIds(t, cmp('metadata.missing', 'neq', null), ALL_IDS);
  expectIds(t, { not: cmp('metadata.missing', 'eq', 'x') }, ALL_IDS, 'not of eq on a missing key is true');
  for (const op of ['eq', 'gt', 'gte', 'lt', 'lte', 'prefix']) {
    expectIds(t, cmp('metadata.missing', op, op === 'eq' ? 1 : '0'), []);
    expectIds(t, { not: cmp('metadata.missing', op, op === 'eq' ? 1 : '0') }, ALL_IDS);
  }
  expectIds(t, cmp('metadata.missing', 'in', ['x', 1, true, null]), []);
  expectIds(t, cmp('metadata.team', 'eq', 'search'), [1], 'a nested obj.team is not a top-level team');
});

t.test('metadata: ordering compares like with like', async (t) => {
  expectIds(t, cmp('metadata.n', 'gt', 1), [2, 3]);
  expectIds(t, cmp('metadata.n', 'gte', 1), [1, 2, 3, 8]);
  expectIds(t, cmp('metadata.n', 'lt', 2.5), [1, 6, 8]);
  expectIds(t, cmp('metadata.n', 'lte', 2.5), [1, 2, 6, 8]);
  expectIds(t, cmp('metadata.n', 'gt', '0'), [], 'numbers are not compared with strings');
  expectIds(t, cmp('metadata.v', 'gt', 1), [10], 'only the JSON numbers 1 and 1.5 take part');
  expectIds(t, cmp('metadata.v', 'gt', '0'), [1, 9], 'only the JSON strings "1" and "01" take part');
  expectIds(t, cmp('metadata.v', 'lt', '1'), [9]);
  expectIds(t, cmp('metadata.team', 'gt', 'search'), [9, 10], 'binary order: "ünï" and "search-infra" sort after "search"');
  expectIds(t, cmp('metadata.team', 'gte', 'search'), [1, 9, 10]);
  expectIds(t, cmp('metadata.team', 'lt', 'search'), [2, 4, 8], 'uppercase sorts first');
  expectIds(t, cmp('metadata.team', 'lte', 'search'), [1, 2, 4, 8]);
  expectIds(t, cmp('metadata.score', 'lte', 0.5), [6]);
  expectIds(t, cmp('metadata.team', 'prefix', 'search'), [1, 10]);
  expectIds(t, cmp('metadata.team', 'prefix', 'Search'), [4]);
  expectIds(t, cmp('metadata.v', 'prefix', '1'), [1], 'prefix never matches numbers');
});

t.test('metadata: in mixes JSON types exactly', async (t) => {
  expectIds(t, cmp('metadata.team', 'in', ['ingest', 'design']), [2, 8]);
  expectIds(t, cmp('metadata.v', 'in', ['1', true]), [1, 3]);
  expectIds(t, cmp('metadata.v', 'in', [1, null]), [2, 4]);
  expectIds(t, cmp('metadata.v', 'in', [1.5, '01']), [9, 10]);
  expectIds(t, cmp('metadata.v', 'in', [false, 'true', 0]), []);
  expectIds(t, cmp('metadata.flag', 'in', [true, false]), [1, 2]);
  expectIds(t, { not: cmp('metadata.v', 'in', ['1', 1, true, null]) }, [5, 6, 7, 8, 9, 10]);
});

t.test('metadata: value types per operator', async (t) => {
  expectRejected(t, cmp('metadata.team', 'eq', { a: 1 }), 'filter.value', /needs a string, number, boolean or null, got an object/);
  expectRejected(t, cmp('metadata.team', 'neq', ['a']), 'filter.value', /got an array/);
  expectRejected(t, cmp('metadata.team', 'eq', Number.NaN), 'filter.value', /needs a string, number, boolean or null/);
  for (const op of ['gt', 'gte', 'lt', 'lte']) {
    expectRejected(t, cmp('metadata.n', op, true), 'filter.value', /needs a number or a string, got boolean true/);
    expectRejected(t, cmp('metadata.n', op, null), 'filter.value', /needs a number or a string, got null/);
  }
  expectRejected(t, cmp('metadata.team', 'prefix', 1), 'filter.value', /needs a string, got number 1/);
  expectRejected(t, cmp('metadata.team', 'in', ['a', { b: 1 }]), 'filter.value[1]', /string, number, boolean or null/);
  expectRejected(t, cmp('metadata.team', 'in', ['a', [1]]), 'filter.value[1]', /got an array/);
});

t.test('metadata keys are matched literally, quotes and path syntax included', async (t) => {
  expectIds(t, cmp('metadata.he said "hi"', 'eq', 'quoted'), [4]);
  expectIds(t, cmp("metadata.it's", 'eq', 1), [5]);
  expectIds(t, cmp('metadata.a.b', 'eq', 'dotted'), [5], 'the key "a.b", not the path a → b');
  expectIds(t, cmp('metadata.a', 'eq', 'dotted'), []);
  expectIds(t, cmp('metadata.x[0]', 'eq', 'bracket'), [5]);
  expectIds(t, cmp('metadata.$.n', 'eq', 3), [5]);
  expectIds(t, cmp('metadata.tags[0]', 'eq', 'a'), []);
  expectIds(t, cmp("metadata.team') OR 1=1 --", 'neq', 'x'), ALL_IDS);
  expectIds(t, cmp("metadata.team') OR 1=1 --", 'eq', 'x'), []);
  expectIds(t, cmp('path', 'eq', "' OR '1'='1"), []);
  const { sql } = compileFilter(validateFilter(cmp("metadata.it's", 'eq', "x' OR 1=1")));
  t.notMatch(sql, /it's|OR 1=1/, 'keys and values travel as parameters');
});

// ---------------------------------------------------------------------------------------------
// Limits

function nestNots(depth: number): unknown {
  let clause: unknown = cmp('status', 'eq', 'ready');
  for (let level = 1; level < depth; level++) clause = { not: clause };
  return clause;
}

function nestAnds(depth: number): unknown {
  let clause: unknown = cmp('bytes', 'gte', 0);
  for (let level = 1; level < depth; level++) clause = { and: [cmp('path', 'prefix', ''), clause] };
  return clause;
}

t.test('depth: 8 levels accepted, 9 rejected', async (t) => {
  expectIds(t, nestNots(8), [3, 4, 5, 6, 9], 'seven nots over a comparison');
  expectIds(t, nestAnds(8), except(3, 7));
  expectIds(t, nestNots(1), [1, 2, 7, 8, 10]);
  expectRejected(t, nestNots(9), `filter${'.not'.repeat(8)}`, /nested deeper than 8 levels/);
  expectRejected(t, nestAnds(9), `filter${'.and[1]'.repeat(7)}.and[0]`, /nested deeper than 8 levels/);
  expectRejected(t, nestNots(10_000), `filter${'.not'.repeat(8)}`, /nested deeper than 8 levels/);
});

t.test('clauses: 100 accepted, 101 rejected (compound clauses count)', async (t) => {
  const comparisons = (count: number) => Array.from({ length: count }, (_, i) => cmp('bytes', 'neq', i));
  expectIds(t, { and: comparisons(99) }, [1, 3, 4, 5, 6, 7, 8]);
  expectRejected(t, { and: comparisons(100) }, 'filter.and[99]', /more than 100 clauses/);
  expectIds(t, { or: [{ and: comparisons(49) }, { and: comparisons(48) }] }, [1, 3, 4, 5, 6, 7, 8, 9]);
  expectRejected(t, { or: [{ and: comparisons(49) }, { and: comparisons(49) }] }, 'filter.or[1].and[48]', /more than 100 clauses/);
  expectRejected(t, { or: new Array(1_000_000).fill(cmp('path', 'eq', 'x')) }, 'filter.or[99]', /more than 100 clauses/);
});

t.test('in: 1-100 values', async (t) => {
  const numbers = (count: number) => Array.from({ length: count }, (_, i) => 5000 - i * 50);
  expectIds(t, cmp('bytes', 'in', numbers(100)), [4, 5]);
  expectIds(t, cmp('bytes', 'in', [120]), [1]);
  expectIds(t, cmp('metadata.n', 'in', [...numbers(98), 10, 'x']), [3]);
  expectIds(t, cmp('path', 'in', Array.from({ length: 100 }, (_, i) => (i === 99 ? 'src/util.ts' : `p${i}`))), [7]);
  expectRejected(t, cmp('bytes', 'in', numbers(101)), 'filter.value', /'in' needs 1-100 values, got 101/);
  expectRejected(t, cmp('metadata.n', 'in', []), 'filter.value', /'in' needs 1-100 values, got 0/);
  expectRejected(t, cmp('path', 'in', 'docs/readme.md'), 'filter.value', /'in' needs an array of 1-100 values, got the string/);
  expectRejected(t, cmp('status', 'in', null), 'filter.value', /'in' needs an array/);
});

t.test('metadata key: 1-256 characters', async (t) => {
  expectIds(t, cmp(`metadata.${LONG_KEY}`, 'eq', 'long'), [9]);
  expectIds(t, cmp(`metadata.${'😀'.repeat(256)}`, 'neq', 'x'), ALL_IDS, '256 characters of two UTF-16 units each');
  expectRejected(t, cmp(`metadata.${LONG_KEY}k`, 'eq', 'long'), 'filter.field', /metadata key is 257 characters; the limit is 256/);
  expectRejected(t, cmp(`metadata.${'😀'.repeat(257)}`, 'eq', 'x'), 'filter.field', /257 characters/);
  expectRejected(t, cmp('metadata.', 'eq', 'x'), 'filter.field', /metadata key is empty/);
  try {
    validateFilter(cmp(`metadata.${'x'.repeat(100_000)}`, 'eq', 'x'));
  } catch (err) {
    t.ok(err instanceof TroveError && err.message.length < 300, 'a huge field name does not make a huge message');
  }
});

// ---------------------------------------------------------------------------------------------
// Compilation details and the documentation schema

t.test('compileFilter', async (t) => {
  const clause = validateFilter({ and: [cmp('bytes', 'gt', 100), cmp('metadata.team', 'eq', 'search')] });
  t.same(matchingIds(clause, 'files_1'), [1], 'another alias');
  const { sql, params } = compileFilter(clause);
  t.same(params, [100, 'team', 'search']);
  t.notMatch(sql, /LIKE/i);
  for (const alias of ['', 'f; DROP TABLE files', '1f', 'json_each']) t.throws(() => compileFilter(clause, alias), /unusable table alias/);
});

t.test('FilterClauseSchema documents the clause shape', async (t) => {
  t.ok(FilterClauseSchema.safeParse({ and: [cmp('path', 'eq', 'x'), { not: { or: [cmp('bytes', 'in', [1, 2])] } }] }).success);
  t.ok(FilterClauseSchema.safeParse(cmp('metadata.a"b', 'eq', null)).success);
  t.notOk(FilterClauseSchema.safeParse({ and: [] }).success, 'empty and');
  t.notOk(FilterClauseSchema.safeParse({ or: [] }).success, 'empty or');
  t.notOk(FilterClauseSchema.safeParse({ ...cmp('path', 'eq', 'x'), extra: 1 }).success, 'unknown key');
  t.notOk(FilterClauseSchema.safeParse({ and: [cmp('path', 'eq', 'x')], or: [cmp('path', 'eq', 'x')] }).success, 'two forms');
  t.notOk(FilterClauseSchema.safeParse({ not: { and: [{ field: 'path', op: 'eq' }] } }).success, 'nested comparison without value');
  t.notOk(FilterClauseSchema.safeParse(cmp('size', 'eq', 1)).success, 'unknown field');
  t.notOk(FilterClauseSchema.safeParse(cmp('path', 'like', 'x')).success, 'unknown op');
  const jsonSchema = JSON.stringify(z.toJSONSchema(FilterClauseSchema));
  t.match(jsonSchema, /"\$ref":"#\/\$defs\/FilterClause"/, 'recursion is expressed with a reference');
});

// ---------------------------------------------------------------------------------------------
// Property tests: SQL against a reference evaluator, and junk input.

type ParsedRow = Omit<FileRow, 'metadata'> & { metadata: Record<string, unknown> };
const PARSED_ROWS: ParsedRow[] = ROWS.map((row) => ({ ...row, metadata: JSON.parse(row.metadata) as Record<string, unknown> }));

/** SQLite's BINARY collation compares UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function ordered(op: FilterOp, difference: number): boolean {
  switch (op) {
    case 'gt':
      return difference > 0;
    case 'gte':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'lte':
      return difference <= 0;
    default:
      throw new Error(`not an ordering: ${op}`);
  }
}

/** The contract's semantics, written independently of the SQL (timestamps compared as instants). */
function referenceMatches(clause: FilterClause, row: ParsedRow): boolean {
  if ('and' in clause) return clause.and.every((part) => referenceMatches(part, row));
  if ('or' in clause) return clause.or.some((part) => referenceMatches(part, row));
  if ('not' in clause) return !referenceMatches(clause.not, row);
  const { field, op, value } = clause;
  const values = Array.isArray(value) ? value : [value];

  if (field.startsWith('metadata.')) {
    const key = field.slice('metadata.'.length);
    if (!Object.hasOwn(row.metadata, key)) return op === 'neq';
    const actual = row.metadata[key];
    switch (op) {
      case 'eq':
        return actual === value;
      case 'neq':
        return actual !== value;
      case 'in':
        return values.includes(actual as FilterScalar);
      case 'prefix':
        return typeof actual === 'string' && actual.startsWith(value as string);
      default:
        if (typeof value === 'number') return typeof actual === 'number' && ordered(op, actual - value);
        return typeof actual === 'string' && ordered(op, byteOrder(actual, value as string));
    }
  }

  const actual = row[field as keyof Omit<ParsedRow, 'metadata' | 'id'>];
  if (actual === null) return op === 'neq';
  const isTimestamp = field === 'created_at' || field === 'updated_at';
  const same = (expected: FilterScalar) => (isTimestamp ? Date.parse(actual as string) === Date.parse(expected as string) : actual === expected);
  switch (op) {
    case 'eq':
      return same(value as FilterScalar);
    case 'neq':
      return !same(value as FilterScalar);
    case 'in':
      return values.some(same);
    case 'prefix':
      return (actual as string).startsWith(value as string);
    default:
      if (isTimestamp) return ordered(op, Date.parse(actual as string) - Date.parse(value as string));
      return ordered(op, (actual as number) - (value as number));
  }
}

function countClauses(clause: FilterClause): number {
  if ('and' in clause) return 1 + clause.and.reduce((sum, part) => sum + countClauses(part), 0);
  if ('or' in clause) return 1 + clause.or.reduce((sum, part) => sum + countClauses(part), 0);
  if ('not' in clause) return 1 + countClauses(clause.not);
  return 1;
}

function clauseDepth(clause: FilterClause): number {
  if ('and' in clause) return 1 + Math.max(...clause.and.map(clauseDepth));
  if ('or' in clause) return 1 + Math.max(...clause.or.map(clauseDepth));
  if ('not' in clause) return 1 + clauseDepth(clause.not);
  return 1;
}

/** `ms` written in the local time of a UTC offset, e.g. 2024-01-01T02:00:00.000+02:00. */
function withOffset(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const magnitude = Math.abs(offsetMinutes);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${local}${sign}${pad(Math.floor(magnitude / 60))}:${pad(magnitude % 60)}`;
}

const smallString = fc.string({ unit: fc.constantFrom('a', 'b', 'S', 's', 'e', '1', '0', '%', '_', '/', '.', 'ü', '😀'), maxLength: 6 });
const inList = <T>(arb: fc.Arbitrary<T>) => fc.array(arb, { minLength: 1, maxLength: 5 });

const pathValue = fc.oneof(fc.constantFrom(...ROWS.map((row) => row.path), 'nope'), smallString);
const pathPrefix = fc.oneof(fc.constantFrom('', 'docs/', 'docs/100%', 'docs/100', 'docs/a_', 'docs/a', 'src/', 'notes/ü', 'DOCS/'), smallString);
const contentTypeValue = fc.constantFrom('text/markdown', 'text/plain', 'text/x-typescript', 'image/png', 'text/', 'image/', 'text', '');
const bytesValue = fc.oneof(fc.constantFrom(0, 1, 77, 120, 2048, 5000, 123456), fc.nat(200_000));
const timestampValue = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...ROWS.flatMap((row) => [Date.parse(row.created_at), Date.parse(row.updated_at)])),
      fc.integer({ min: Date.parse('2023-05-01T00:00:00Z'), max: Date.parse('2024-05-01T00:00:00Z') }),
    ),
    fc.integer({ min: -14 * 60, max: 14 * 60 }),
  )
  .map(([ms, offset]) => withOffset(ms, offset));
const statusValue = fc.constantFrom('pending', 'indexing', 'ready', 'failed', 'deleting');
const metadataKey = fc.constantFrom('team', 'n', 'v', 'flag', 'nil', 'tags', 'score', 'obj', 'p', 'a', 'a.b', 'he said "hi"', "it's", '$.n', 'x[0]', 'k', 'missing', LONG_KEY);
const metadataNumber = fc.oneof(fc.constantFrom(1, 2.5, 10, -3, 0.5, 100, 1.5, 3, 0), fc.integer({ min: -5, max: 20 }), fc.double({ min: -20, max: 200, noNaN: true }));
const metadataString = fc.oneof(fc.constantFrom('search', 'Search', 'ingest', 'design', 'search-infra', 'ünï', '1', '01', 'dotted', 'quoted', 'bracket', '50%', 'x'), smallString);
const metadataScalar: fc.Arbitrary<FilterScalar> = fc.oneof(metadataString, metadataNumber, fc.constantFrom(true, false, null));

function comparisonArb(field: fc.Arbitrary<string>, valuesByOp: Partial<Record<FilterOp, fc.Arbitrary<FilterScalar | FilterScalar[]>>>): fc.Arbitrary<FilterClause> {
  const ops = Object.keys(valuesByOp) as FilterOp[];
  return fc.tuple(field, fc.constantFrom(...ops)).chain(([name, op]) => valuesByOp[op]!.map((value) => ({ field: name, op, value }) as FilterClause));
}

const comparison: fc.Arbitrary<FilterClause> = fc.oneof(
  comparisonArb(fc.constant('path'), { eq: pathValue, neq: pathValue, prefix: pathPrefix, in: inList(pathValue) }),
  comparisonArb(fc.constant('content_type'), { eq: contentTypeValue, neq: contentTypeValue, prefix: contentTypeValue, in: inList(contentTypeValue) }),
  comparisonArb(fc.constant('bytes'), { eq: bytesValue, neq: bytesValue, gt: bytesValue, gte: bytesValue, lt: bytesValue, lte: bytesValue, in: inList(bytesValue) }),
  comparisonArb(fc.constantFrom('created_at', 'updated_at'), { eq: timestampValue, neq: timestampValue, gt: timestampValue, gte: timestampValue, lt: timestampValue, lte: timestampValue, in: inList(timestampValue) }),
  comparisonArb(fc.constant('status'), { eq: statusValue, neq: statusValue, in: inList(statusValue) }),
  comparisonArb(
    metadataKey.map((key) => `metadata.${key}`),
    {
      eq: metadataScalar,
      neq: metadataScalar,
      gt: fc.oneof(metadataNumber, metadataString),
      gte: fc.oneof(metadataNumber, metadataString),
      lt: fc.oneof(metadataNumber, metadataString),
      lte: fc.oneof(metadataNumber, metadataString),
      prefix: metadataString,
      in: inList(metadataScalar),
    },
  ),
);

const validClause = fc
  .letrec<{ clause: FilterClause }>((tie) => ({
    clause: fc.oneof(
      { maxDepth: 6, depthSize: 'small', withCrossShrink: true },
      comparison,
      fc.record({ and: fc.array(tie('clause'), { minLength: 1, maxLength: 4 }) }),
      fc.record({ or: fc.array(tie('clause'), { minLength: 1, maxLength: 4 }) }),
      fc.record({ not: tie('clause') }),
    ),
  }))
  .clause.filter((clause) => clauseDepth(clause) <= 8 && countClauses(clause) <= 100);

t.test('property: compiled SQL agrees with a reference evaluator', async (t) => {
  fc.assert(
    fc.property(validClause, (clause) => {
      const validated = validateFilter(clause);
      assert.deepStrictEqual(validateFilter(validated), validated);
      const expected = PARSED_ROWS.filter((row) => referenceMatches(clause, row)).map((row) => row.id);
      assert.deepStrictEqual(matchingIds(validated), expected);
    }),
    { numRuns: 1500 },
  );
  t.pass('1500 random filters matched the reference');
});

const junkLeaf = fc.oneof(
  fc.anything({
    maxDepth: 2,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
  }),
  fc.constantFrom<unknown>('path', 'bytes', 'status', 'created_at', 'metadata.', 'metadata.team', 'metadata', 'eq', 'neq', 'gt', 'prefix', 'in'),
  fc.constantFrom<unknown>('ready', '2024-01-01T00:00:00', '2024-01-01T00:00:00Z', -1, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1e300),
  fc.constantFrom<unknown>([], [1], ['ready'], new Array(101).fill(1), null, true),
  metadataScalar,
);

const junk = fc.letrec<{ clause: unknown }>((tie) => ({
  clause: fc.oneof(
    { maxDepth: 4, depthSize: 'small' },
    junkLeaf,
    fc.dictionary(
      fc.constantFrom('field', 'op', 'value', 'and', 'or', 'not', 'extra', '__proto__'),
      fc.oneof(junkLeaf, tie('clause'), fc.array(tie('clause'), { maxLength: 3 })),
      { maxKeys: 4 },
    ),
    fc.record({ field: junkLeaf, op: junkLeaf, value: junkLeaf }),
    fc.record({ and: fc.array(tie('clause'), { maxLength: 3 }) }),
    fc.record({ not: tie('clause') }),
    validClause,
  ),
})).clause;

t.test('property: junk input is either a usable filter or invalid_filter', async (t) => {
  let accepted = 0;
  fc.assert(
    fc.property(junk, (input) => {
      let clause: FilterClause;
      try {
        clause = validateFilter(input);
      } catch (err) {
        assert.ok(err instanceof TroveError, `unexpected ${String(err)}`);
        assert.equal(err.code, 'invalid_filter');
        assert.equal(typeof err.details.path, 'string');
        assert.ok(err.message.startsWith(`${String(err.details.path)}: `));
        return;
      }
      accepted++;
      matchingIds(clause);
    }),
    { numRuns: 3000 },
  );
  t.ok(accepted > 0, `some junk was a valid filter (${accepted})`);
});
