// Validator wording as sentences (issue 14, "table stakes"): src/contract/issues.ts turns zod's
// issues into sentences naming the field, what is allowed and, when safe, what was received. One
// row per issue kind zod 4 produces, then the API's invalid_request errors built from it, whose
// code, status and envelope stay the contract's (retrieval-api.md "Errors").
import t from 'tap';
import { z } from 'zod';
import { describeIssues, formatPath, issuesSentence } from '../src/contract/issues.js';
import { ERROR_TABLE } from '../src/contract/errors.js';
import { seedCollection, startFixture } from './helpers/trove.js';

const Body = z.strictObject({
  query: z.string().min(1).max(10).optional(),
  limit: z.number().int().min(1).max(100).optional(),
  ratio: z.number().gt(0).optional(),
  mode: z.enum(['keyword', 'semantic']).optional(),
  kind: z.literal('file').optional(),
  tags: z.array(z.string()).min(1).max(2).optional(),
  email: z.email().optional(),
  since: z.iso.datetime().optional(),
  code: z.string().regex(/^[a-z]+$/).optional(),
  slug: z.string().regex(/^[a-z]+$/, 'must be lowercase letters').optional(),
  step: z.number().multipleOf(5).optional(),
  path: z.string().refine((p) => p.startsWith('/'), 'path must start with /').optional(),
  ok: z.string().refine((v) => v === 'yes', 'must be yes').optional(),
  note: z.string().refine((v) => v === 'yes', 'Say yes.').optional(),
  either: z.union([z.string(), z.number()]).optional(),
  scope: z.discriminatedUnion('kind', [z.object({ kind: z.literal('cluster') }), z.object({ kind: z.literal('namespace'), namespace: z.string() })]).optional(),
  filter: z.strictObject({ value: z.string() }).optional(),
  principals: z.array(z.string().max(5)).optional(),
  labels: z.record(z.string().regex(/^[a-z]+$/), z.string()).optional(),
  secret: z.string().min(20).optional(),
  name: z.string(),
});

/** The sentence for the first issue of parsing `input` (a valid `name` is added unless given). */
function sentenceFor(input: Record<string, unknown>): string {
  const body = 'name' in input ? input : { name: 'n', ...input };
  const parsed = Body.safeParse(body);
  if (parsed.success) throw new Error(`expected ${JSON.stringify(input)} to fail`);
  return describeIssues(parsed.error.issues, { schema: Body, input: body, root: 'the request body' })[0]!.message;
}

t.test('one sentence per issue kind', async (t) => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['invalid_type, missing', { name: undefined }, 'name is required.'],
    ['invalid_type, wrong type', { query: 3 }, 'query must be a string (got 3).'],
    ['invalid_type, int expected', { limit: 1.5 }, 'limit must be an integer from 1 to 100 (got 1.5).'],
    ['invalid_type, string for a number', { limit: '7' }, 'limit must be an integer from 1 to 100 (got the string "7").'],
    ['invalid_type, nested', { filter: { value: 3 } }, 'filter.value must be a string (got 3).'],
    ['invalid_type, array item', { principals: ['a', 'b', 7] }, 'principals[2] must be a string (got 7).'],
    ['too_big, number', { limit: 500 }, 'limit must be an integer from 1 to 100 (got 500).'],
    ['too_small, number', { limit: 0 }, 'limit must be an integer from 1 to 100 (got 0).'],
    ['too_small, exclusive', { ratio: 0 }, 'ratio must be a number greater than 0 (got 0).'],
    ['too_big, string', { query: 'x'.repeat(20) }, 'query must be 1 to 10 characters long (got 20).'],
    ['too_big, string in an array', { principals: ['a', 'toolong'] }, 'principals[1] must be at most 5 characters long (got 7).'],
    ['too_small, string (empty)', { query: '' }, 'query must be 1 to 10 characters long (got 0).'],
    ['too_big, array', { tags: ['a', 'b', 'c'] }, 'tags must have 1 to 2 items (got 3).'],
    ['too_small, array', { tags: [] }, 'tags must have 1 to 2 items (got 0).'],
    ['too_small, secret: only the length', { secret: 'hunter2' }, 'secret must be at least 20 characters long (got 7).'],
    ['invalid_value, enum', { mode: 'fuzzy' }, 'mode must be one of keyword, semantic (got "fuzzy").'],
    ['invalid_value, literal', { kind: 'folder' }, 'kind must be "file" (got "folder").'],
    ['invalid_value, long value not echoed', { mode: 'f'.repeat(200) }, 'mode must be one of keyword, semantic (got a string).'],
    ['unrecognized_keys', { colour: 'red' }, 'Unknown field "colour" in the request body.'],
    ['unrecognized_keys, nested', { filter: { value: 'x', op: 'eq' } }, 'Unknown field "op" in filter.'],
    ['invalid_format, email', { email: 'nope' }, 'email must be an email address (got "nope").'],
    ['invalid_format, datetime', { since: 'yesterday' }, 'since must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z (got "yesterday").'],
    ['invalid_format, regex', { code: 'ABC' }, 'code must match the pattern /^[a-z]+$/ (got "ABC").'],
    ['invalid_format, regex with its own message', { slug: 'ABC' }, 'slug must be lowercase letters (got "ABC").'],
    ['not_multiple_of', { step: 7 }, 'step must be a multiple of 5 (got 7).'],
    ['custom, names the field already', { path: 'a.md' }, 'path must start with /.'],
    ['custom, reads on after the name', { ok: 'no' }, 'ok must be yes.'],
    ['custom, a sentence of its own', { note: 'no' }, 'note: Say yes.'],
    ['invalid_union of types', { either: true }, 'either must be a string or a number (got true).'],
    ['invalid_union, discriminator', { scope: { kind: 'everything' } }, 'scope.kind must be one of cluster, namespace (got "everything").'],
    ['invalid_key of a record', { labels: { Big: 'x' } }, 'labels has a key "Big" that is not allowed: the key must match the pattern /^[a-z]+$/.'],
  ];
  for (const [kind, input, expected] of rows) t.equal(sentenceFor(input), expected, kind);

  t.equal(issuesSentence(Body.safeParse([]).error!.issues, { schema: Body, input: [], root: 'the request body' }), 'The request body must be an object (got an array).', 'the whole value');
  t.equal(issuesSentence(Body.safeParse({ limit: 500, mode: 'x' }).error!.issues, { schema: Body, input: { limit: 500, mode: 'x' } }), 'limit must be an integer from 1 to 100 (got 500). mode must be one of keyword, semantic (got "x"). name is required.', 'several issues, one sentence each');
  // Found by a bad-input attack: 2^53 + 1 fails two checks that read the same; the sentence is said once.
  const huge = { name: 'n', limit: 9007199254740993 };
  t.equal(issuesSentence(Body.safeParse(huge).error!.issues, { schema: Body, input: huge }), 'limit must be an integer from 1 to 100 (got 9007199254740992).', 'one sentence for one problem');
  // Without the input (the operator socket gets issues only), the sentence still names the field and the rule.
  t.equal(issuesSentence(Body.safeParse({ name: 'n', limit: 500 }).error!.issues), 'limit must be a number of at most 100.');
  t.equal(issuesSentence(Body.safeParse({ name: 3 }).error!.issues), 'name must be a string (got a number).');
  // A field named for a secret never has its value echoed.
  const Key = z.strictObject({ api_key: z.enum(['a', 'b']) });
  t.equal(issuesSentence(Key.safeParse({ api_key: 'sk-live-123' }).error!.issues, { input: { api_key: 'sk-live-123' } }), 'api_key must be one of a, b (got a string).');
  t.equal(formatPath(['filter', 'and', 2, 'value']), 'filter.and[2].value');
  t.equal(formatPath(['metadata', 'odd key']), 'metadata["odd key"]');
});

t.test('the API: sentences in the invalid_request envelope, nothing else changed', async (t) => {
  const f = await startFixture();
  t.teardown(() => f.close());
  const { base } = await seedCollection(f, 'demo', 'notes');

  const cases: [string, string, string, unknown, string, string[]][] = [
    ['bad limit', 'POST', `${base}:search`, { query: 'x', limit: 500 }, 'limit must be an integer from 1 to 100 (got 500).', ['body.limit']],
    ['bad mode', 'POST', `${base}:search`, { query: 'x', mode: 'fuzzy' }, 'mode must be one of keyword, semantic (got "fuzzy").', ['body.mode']],
    ['missing query', 'POST', `${base}:search`, { mode: 'keyword' }, 'query is required.', ['body.query']],
    ['unknown field', 'POST', `${base}:search`, { query: 'x', colour: 'red' }, 'Unknown field "colour" in the request body.', ['body']],
    ['wrong type in a nested object', 'POST', '/namespaces/demo/collections', { name: 'c2', processing: { chunk_tokens: 'big' } }, 'processing.chunk_tokens must be an integer from 64 to 2048 (got the string "big").', ['body.processing.chunk_tokens']],
    ['array item', 'POST', `${base}:search`, { query: 'x', sort: [{ field: 'path', order: 'up' }] }, 'sort[0].order must be one of asc, desc (got "up").', ['body.sort.0.order']],
  ];
  for (const [what, method, url, body, message, paths] of cases) {
    const r = await f.call(method, url, body);
    t.equal(r.status, ERROR_TABLE.invalid_request.status, `${what}: status`);
    t.same(Object.keys(r.body), ['error'], `${what}: the envelope`);
    t.same(Object.keys(r.body.error).sort(), ['code', 'details', 'message', 'request_id', 'retryable'], `${what}: the envelope's fields`);
    t.equal(r.body.error.code, 'invalid_request', `${what}: code`);
    t.equal(r.body.error.retryable, false, `${what}: retryable`);
    t.equal(r.body.error.message, message, `${what}: message`);
    t.same(r.body.error.details.issues.map((i: { path: string }) => i.path), paths, `${what}: details keep their paths`);
    t.equal(r.body.error.details.issues[0].message, message, `${what}: details carry the sentence`);
  }

  // A nested filter is checked by the filter validator (invalid_filter, retrieval-api.md "Filters"): its code is untouched.
  const filter = await f.call('POST', `${base}:search`, { query: 'x', mode: 'keyword', filter: { field: 'path', op: 'eq', value: { nested: true } } });
  t.equal(filter.status, 400);
  t.equal(filter.body.error.code, 'invalid_filter');
  t.match(filter.body.error.message, /^filter\.value: /, 'the filter error names the field');
});
