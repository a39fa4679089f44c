// The request schemas of both documents reject what the contract rejects.
import t from 'tap';
import * as S from '../src/contract/schemas.js';

const ok = (schema: { safeParse(v: unknown): { success: boolean } }, v: unknown) => schema.safeParse(v).success;

t.test('access rule requests follow the six rules of the contract', async (t) => {
  t.ok(ok(S.CreateAccessRuleRequest, { folder: '/team/', readers: ['u1'] }));
  t.ok(ok(S.CreateAccessRuleRequest, { file: '/team/a.md', readers: [] }), 'an empty list denies');
  t.notOk(ok(S.CreateAccessRuleRequest, { folder: '/team/', file: '/a', readers: [] }), 'never both folder and file');
  t.notOk(ok(S.CreateAccessRuleRequest, { readers: [] }), 'one of them is required');
  t.notOk(ok(S.CreateAccessRuleRequest, { file: '/a.md', readers: [], sealed: true }), 'only folder rules can be sealed');
  t.notOk(ok(S.CreateAccessRuleRequest, { folder: '/team', readers: [] }), 'a folder ends with /');
  // More than 1,024 readers is limit_exceeded, decided on the resulting list (test/access-rules.test.ts).
  t.ok(ok(S.CreateAccessRuleRequest, { folder: '/', readers: Array.from({ length: 1025 }, (_, i) => `u${i}`) }), 'the reader count is not a schema rule');
  t.notOk(ok(S.CreateAccessRuleRequest, { folder: '/', readers: [''] }), 'a reader is not empty');
  t.notOk(ok(S.CreateAccessRuleRequest, { folder: '/', readers: ['x'.repeat(257)] }), 'readers of at most 256 bytes');
  t.notOk(ok(S.UpdateAccessRuleRequest, { readers: ['a'], add_readers: ['b'] }), 'readers cannot accompany incremental lists');
  t.notOk(ok(S.UpdateAccessRuleRequest, { add_readers: ['a'], remove_readers: ['a'] }), 'not in both incremental lists');
  t.ok(ok(S.UpdateAccessRuleRequest, { add_readers: ['a'], remove_readers: ['b'], sealed: null }));
  t.ok(ok(S.AccessRuleBatchRequest, { operations: [{ op: 'delete', file: '/a' }] }));
  t.notOk(ok(S.AccessRuleBatchRequest, { operations: [{ op: 'rename' }] }));
});

t.test('keys, answers and research requests', async (t) => {
  t.ok(ok(S.CreateKeyRequest, { name: 'app', scope: { kind: 'namespace', namespace: 'demo', actions: ['read', 'search'] } }));
  t.notOk(ok(S.CreateKeyRequest, { name: 'app', scope: { kind: 'namespace', namespace: 'demo', actions: [] } }), 'actions are non-empty');
  t.notOk(ok(S.CreateKeyRequest, { name: 'app', scope: { kind: 'collection', namespace: 'demo', collections: [], actions: ['read'] } }), 'at least one collection');
  t.notOk(ok(S.CreateKeyRequest, { name: 'app', scope: { kind: 'cluster', actions: ['read'] } }), 'a cluster scope has no other fields');
  t.ok(ok(S.AnswerRequest, { query: 'why?', history: [{ role: 'user', content: 'hi' }] }));
  t.notOk(ok(S.AnswerRequest, { query: 'why?', history: Array.from({ length: 33 }, () => ({ role: 'user', content: 'x' })) }), 'at most 32 history items');
  t.notOk(ok(S.AnswerRequest, { query: 'why?', query_image: { data: 'abc', media_type: 'image/gif' } }), 'png, jpeg or webp');
  t.notOk(ok(S.AnswerRequest, { query: 'why?', web_search: 'always' }));
});

t.test('workspace API requests', async (t) => {
  t.ok(ok(S.PatchWorkspaceApiKeyRequest, { role: 'editor', bucketScope: { mode: 'selected', bucketIds: ['col_x'] } }));
  t.notOk(ok(S.PatchWorkspaceApiKeyRequest, { kind: 'storage' }), 'kind cannot be changed');
  t.ok(ok(S.RotateWebhookSecretRequest, { previousSecretExpiresInSeconds: 604800 }));
  t.notOk(ok(S.RotateWebhookSecretRequest, { previousSecretExpiresInSeconds: 604801 }), 'at most 7 days of overlap');
  t.notOk(ok(S.CreateWebhookRequest, { name: 'w', url: 'https://x', owner: 'team' }));
});
