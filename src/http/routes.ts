// Every data-plane route: retrieval-api.md's listed endpoints plus decisions.md §2's table.
import { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import * as S from '../contract/schemas.js';
import { createCollection, deleteCollection, listVisibleCollections, patchCollection, reindexCollection } from '../domain/collections.js';
import { addFile, deleteFile, fileContentUrl, listCollectionFiles, openDownload, patchFile, receiveUpload } from '../domain/files.js';
import { cancelJob, resolveJob } from '../domain/jobs.js';
import { createNamespace, deleteNamespace, listVisibleNamespaces, presentNamespaceTo, renameNamespaceLabel } from '../domain/namespaces.js';
import { presentCollection, presentFile, presentJob } from '../domain/present.js';
import { resolveFile } from '../domain/resolve.js';
import { search } from '../domain/search/search.js';
import { FilterClauseSchema } from '../contract/filter.js';
import { listNamespaceJobs } from '../domain/job-lists.js';
import { infoDocument } from '../domain/info.js';
import { downloadHeaders } from './downloads.js';
import { route, yieldToReads, type RouteDef } from './router.js';
import type { JobRow } from '../store/interface.js';
import { Readable } from 'node:stream';
import { batchRules, listCollectionRules, patchRule, presentRule, putRule, removeRule, resolveRule, type RuleWrite } from '../domain/access/rules.js';
import { createKey, listAdministeredKeys, presentCaller, presentKey, resolveKey, revokeKey } from '../domain/key-admin.js';
import type { Reply } from './router.js';
import { listEvents, streamEvents } from '../domain/events.js';
import { ANSWER_BODY_LIMIT, SEARCH_BODY_LIMIT } from '../domain/limits.js';
import { answer } from '../domain/answer/answer.js';
import { cancelRun, createResearch, listRuns, presentRun, resolveRun } from '../domain/answer/research.js';

function ruleReply(w: RuleWrite): Reply {
  return w.status === 202 ? { status: 202, body: { rule: w.rule, job: presentJob(w.job) } } : { status: w.status, body: w.rule };
}

const NS = '/namespaces/{namespace}';
const COL = `${NS}/collections/{collection}`;
const read = { kind: 'action', action: 'read' } as const;
const write = { kind: 'action', action: 'write' } as const;
const keyAdmin = { kind: 'namespace_or_cluster' } as const;

const err = (description: string) => ({ description, schema: S.ErrorEnvelope });
const common = { 400: err('invalid_request'), 401: err('unauthenticated'), 403: err('forbidden'), 404: err('not_found') };
const JobEnvelope = z.object({ job: S.JobSchema });
const RuleWithJob = z.object({ rule: S.AccessRuleSchema, job: S.JobSchema });
const BatchReply = z.object({ rules: z.array(S.AccessRuleSchema), job: S.JobSchema.nullable() });
const FileWithJob = z.object({ file: S.FileSchema, job: S.JobSchema, upload: S.UploadInstructions.optional() });


export function dataPlaneRoutes(): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/health',
      summary: 'Liveness',
      permission: { kind: 'none' },
      responses: { 200: { description: 'alive', schema: S.HealthResponse } },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'GET',
      path: '/ready',
      summary: 'Readiness (decisions.md §2)',
      permission: { kind: 'none' },
      responses: { 200: { description: 'ready', schema: S.HealthResponse }, 503: err('temporarily_unavailable') },
      handler: ({ s }) => {
        if (!s.ready()) throw new TroveError('temporarily_unavailable', 'The store is not ready.');
        if (!s.indexerAlive()) throw new TroveError('temporarily_unavailable', 'The indexing worker is restarting.');
        return { status: 200, body: { status: 'ready' } };
      },
    }),
    route({
      method: 'GET',
      path: '/info',
      summary: 'Cluster capabilities',
      permission: { kind: 'any_key' },
      responses: { 200: { description: 'info', schema: S.InfoResponse }, 401: err('unauthenticated') },
      // `key`: the calling key itself, a response field the versioning rules allow (retrieval-api.md
      // "Versioning" 3); see docs/decisions.md §3.
      handler: async ({ s, key }) => ({ status: 200, body: { ...infoDocument(s), key: await presentCaller(s, key) } }),
    }),

    // ------------------------------------------------------------ namespaces
    route({
      method: 'POST',
      path: '/namespaces',
      summary: 'Create a namespace',
      permission: { kind: 'cluster' },
      body: S.CreateNamespaceRequest,
      responses: { 201: { description: 'created', schema: S.NamespaceSchema }, 200: { description: 'exists (exist_ok)', schema: S.NamespaceSchema }, 409: err('already_exists'), ...common },
      handler: async ({ s, body }) => {
        const { created, namespace } = await createNamespace(s, body);
        return created ? { status: 201, body: namespace, headers: { location: `/namespaces/${namespace.id}` } } : { status: 200, body: namespace };
      },
    }),
    route({
      method: 'GET',
      path: '/namespaces',
      summary: 'List the namespaces the key can see',
      permission: { kind: 'any_key' },
      query: S.ListQuery,
      responses: { 200: { description: 'page', schema: S.page(S.NamespaceSchema) }, ...common },
      handler: async ({ s, key, query }) => ({ status: 200, body: await listVisibleNamespaces(s, key, query) }),
    }),
    route({
      method: 'GET',
      path: NS,
      summary: 'Get a namespace',
      permission: read,
      responses: { 200: { description: 'namespace', schema: S.NamespaceSchema }, ...common },
      handler: async ({ s, key, ns }) => ({ status: 200, body: await presentNamespaceTo(s, key, ns) }),
    }),
    route({
      method: 'PATCH',
      path: NS,
      summary: 'Change a namespace display name',
      permission: { kind: 'cluster' },
      body: S.UpdateNamespaceRequest,
      responses: { 200: { description: 'namespace', schema: S.NamespaceSchema }, ...common },
      handler: async ({ s, ns, body }) => ({ status: 200, body: await renameNamespaceLabel(s, ns, body.display_name) }),
    }),
    route({
      method: 'DELETE',
      path: NS,
      summary: 'Delete a namespace (force deletes its collections)',
      permission: { kind: 'cluster' },
      body: S.DeleteNamespaceRequest,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: async ({ s, ns, body }) => ({ status: 202, body: { job: presentJob(await deleteNamespace(s, ns, body.force)) } }),
    }),
    route({
      method: 'GET',
      path: `${NS}/jobs`,
      summary: 'List jobs of a namespace',
      permission: read,
      query: S.ListJobsQuery,
      responses: { 200: { description: 'page', schema: S.page(S.JobSchema) }, ...common },
      handler: async ({ s, key, ns, query }) => ({ status: 200, body: await listNamespaceJobs(s, key, ns, query) }),
    }),

    // ------------------------------------------------------------ collections
    route({
      method: 'POST',
      path: `${NS}/collections`,
      summary: 'Create a collection',
      permission: { kind: 'action', action: 'write', denyCollectionKeys: true },
      body: S.CreateCollectionRequest,
      responses: { 201: { description: 'created', schema: S.CollectionSchema }, 200: { description: 'exists (exist_ok)', schema: S.CollectionSchema }, 409: err('already_exists'), ...common },
      handler: async ({ s, ns, body }) => {
        const { created, collection } = await createCollection(s, ns, body);
        return created
          ? { status: 201, body: collection, headers: { location: `/namespaces/${ns.id}/collections/${collection.id}` } }
          : { status: 200, body: collection };
      },
    }),
    route({
      method: 'GET',
      path: `${NS}/collections`,
      summary: 'List collections',
      permission: read,
      query: S.ListQuery,
      responses: { 200: { description: 'page', schema: S.page(S.CollectionSchema) }, ...common },
      handler: async ({ s, key, ns, query }) => ({ status: 200, body: await listVisibleCollections(s, key, ns, query) }),
    }),
    route({
      method: 'GET',
      path: COL,
      summary: 'Get a collection',
      permission: read,
      responses: { 200: { description: 'collection', schema: S.CollectionSchema }, ...common },
      handler: async ({ s, ns, col }) => ({ status: 200, body: await presentCollection(s.store, col, ns.name) }),
    }),
    route({
      method: 'PATCH',
      path: COL,
      summary: 'Update a collection',
      permission: write,
      body: S.UpdateCollectionRequest,
      responses: {
        200: { description: 'collection', schema: S.CollectionSchema },
        202: { description: 'reindex needed', schema: z.object({ collection: S.CollectionSchema, job: S.JobSchema }) },
        ...common,
      },
      handler: async ({ s, ns, col, body }) => {
        const { collection, job } = await patchCollection(s, ns, col, body);
        return job ? { status: 202, body: { collection, job: presentJob(job) } } : { status: 200, body: collection };
      },
    }),
    route({
      method: 'DELETE',
      path: COL,
      summary: 'Delete a collection',
      permission: { kind: 'action', action: 'write', denyCollectionKeys: true },
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: async ({ s, ns, col }) => ({ status: 202, body: { job: presentJob(await deleteCollection(s, ns, col)) } }),
    }),
    route({
      method: 'POST',
      path: `${COL}:reindex`,
      summary: 'Reindex every file of a collection',
      permission: write,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: async ({ s, ns, col }) => ({ status: 202, body: { job: presentJob(await reindexCollection(s, ns, col)) } }),
    }),
    route({
      method: 'POST',
      path: `${COL}:search`,
      summary: 'Search a collection',
      permission: { kind: 'action', action: 'search' },
      body: S.SearchRequest,
      // The filter is validated on its own so its errors are invalid_filter; the document shows its shape.
      docBody: S.SearchRequest.extend({ filter: FilterClauseSchema.nullable().optional() }),
      bodyLimit: SEARCH_BODY_LIMIT,
      responses: { 200: { description: 'results', schema: S.SearchResponse }, 409: err('collection_not_ready'), 413: err('request_too_large'), ...common },
      handler: async ({ s, key, col, body, requestId }) => ({ status: 200, body: await search(s, key, col, body, requestId) }),
    }),

    route({
      method: 'POST',
      path: `${COL}:answer`,
      summary: 'Answer a question from the collection, with citations',
      permission: { kind: 'action', action: 'query' },
      body: S.AnswerRequest,
      docBody: S.AnswerRequest.extend({ filter: FilterClauseSchema.nullable().optional() }),
      bodyLimit: ANSWER_BODY_LIMIT,
      responses: { 200: { description: 'answer', schema: S.AnswerResponse }, 409: err('collection_empty or collection_not_ready'), 413: err('request_too_large'), 503: err('temporarily_unavailable (deadline_exceeded)'), ...common },
      handler: async ({ s, key, col, body, requestId }) => ({ status: 200, body: await answer(s, key, col, body, requestId) }),
    }),

    // ------------------------------------------------------------ research
    route({
      method: 'POST',
      path: `${COL}/research`,
      summary: 'Start a research run (Idempotency-Key header required)',
      permission: { kind: 'action', action: 'query' },
      body: S.AnswerRequest,
      docBody: S.AnswerRequest.extend({ filter: FilterClauseSchema.nullable().optional() }),
      bodyLimit: ANSWER_BODY_LIMIT,
      responses: { 202: { description: 'run accepted', schema: S.ResearchRunSchema }, 409: err('idempotency_conflict, collection_empty or collection_not_ready'), 413: err('request_too_large'), ...common },
      handler: async ({ s, key, ns, col, body, req }) => ({ status: 202, body: await createResearch(s, key, ns, col, body, req.headers['idempotency-key']) }),
    }),
    route({
      method: 'GET',
      path: `${COL}/research`,
      summary: "List research runs, newest first (a cluster key sees all, another key its own)",
      permission: { kind: 'action', action: 'query' },
      query: S.ListQuery,
      responses: { 200: { description: 'page', schema: S.page(S.ResearchRunSchema) }, ...common },
      handler: async ({ s, key, col, query }) => ({ status: 200, body: await listRuns(s, key, col, query) }),
    }),
    route({
      method: 'GET',
      path: `${COL}/research/{run_id}`,
      summary: 'Get a research run (the creating key or a cluster key)',
      permission: { kind: 'action', action: 'query' },
      responses: { 200: { description: 'run', schema: S.ResearchRunSchema }, ...common },
      handler: async ({ s, key, col, params }) => ({ status: 200, body: presentRun(await resolveRun(s, key, col, params.run_id)) }),
    }),
    route({
      method: 'POST',
      path: `${COL}/research/{run_id}:cancel`,
      summary: 'Cancel a queued or running research run',
      permission: { kind: 'action', action: 'query' },
      responses: { 200: { description: 'run', schema: S.ResearchRunSchema }, ...common },
      handler: async ({ s, key, col, params }) => ({ status: 200, body: await cancelRun(s, await resolveRun(s, key, col, params.run_id)) }),
    }),

    // ------------------------------------------------------------ files
    route({
      method: 'POST',
      path: `${COL}/files`,
      summary: 'Add a file (or a new version of the file at that path)',
      permission: write,
      body: S.AddFileRequest,
      responses: { 202: { description: 'accepted', schema: FileWithJob }, ...common },
      handler: async ({ s, ns, col, body }) => {
        // Bulk ingest is many of these at once; searches arriving with them go first.
        await yieldToReads();
        const { file, job, upload } = await addFile(s, ns, col, body);
        return { status: 202, body: { file, job: presentJob(job), ...(upload ? { upload } : {}) } };
      },
    }),
    route({
      method: 'GET',
      path: `${COL}/files`,
      summary: 'List files, oldest first',
      permission: read,
      query: S.ListFilesQuery,
      responses: { 200: { description: 'page', schema: S.page(S.FileSchema) }, ...common },
      handler: async ({ s, key, col, query }) => ({ status: 200, body: await listCollectionFiles(s, key, col, query) }),
    }),
    route({
      method: 'GET',
      path: `${COL}/files/{file}`,
      summary: 'Get a file by ID or encoded path',
      permission: read,
      responses: { 200: { description: 'file', schema: S.FileSchema }, ...common },
      handler: async ({ s, col, params }) => ({ status: 200, body: await presentFile(s.store, await resolveFile(s.store, col, params.file)) }),
    }),
    route({
      method: 'PATCH',
      path: `${COL}/files/{file}`,
      summary: 'Replace metadata (200) or source (202)',
      permission: write,
      body: S.UpdateFileRequest,
      responses: { 200: { description: 'file', schema: S.FileSchema }, 202: { description: 'reindexing', schema: FileWithJob }, ...common },
      handler: async ({ s, ns, col, params, body }) => {
        const { file, job, upload } = await patchFile(s, ns, col, await resolveFile(s.store, col, params.file), body);
        return job ? { status: 202, body: { file, job: presentJob(job), ...(upload ? { upload } : {}) } } : { status: 200, body: file };
      },
    }),
    route({
      method: 'DELETE',
      path: `${COL}/files/{file}`,
      summary: 'Delete a file',
      permission: write,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: async ({ s, ns, col, params }) => ({ status: 202, body: { job: presentJob(await deleteFile(s, ns, col, await resolveFile(s.store, col, params.file))) } }),
    }),
    route({
      method: 'GET',
      path: `${COL}/files/{file}/content`,
      summary: "A short-lived signed URL for the file's bytes",
      permission: read,
      responses: { 200: { description: 'signed URL', schema: S.FileContentResponse }, 409: err('external_source or operation_in_progress'), ...common },
      handler: async ({ s, col, params }) => ({ status: 200, body: await fileContentUrl(s, await resolveFile(s.store, col, params.file)) }),
    }),
    route({
      method: 'PUT',
      path: '/uploads/{token}',
      summary: 'Signed upload of the bytes of an upload source',
      permission: { kind: 'none' },
      streamBody: true,
      responses: { 200: { description: 'received', schema: z.object({ file: S.FileSchema }) }, 400: err('invalid_request'), 404: err('not_found'), 413: err('request_too_large') },
      handler: async ({ s, params, req }) => {
        const length = req.headers['content-length'];
        const body = req.body ?? Buffer.alloc(0);
        const stream: Readable = Buffer.isBuffer(body) ? Readable.from([body]) : body;
        const file = await receiveUpload(s, params.token, stream, length === undefined ? null : Number(length));
        return { status: 200, body: { file } };
      },
    }),
    route({
      method: 'GET',
      path: '/downloads/{token}',
      summary: 'Signed download of a file version',
      permission: { kind: 'none' },
      responses: { 200: { description: 'the bytes' }, 404: err('not_found') },
      handler: async ({ s, params }) => {
        const { bytes, contentType, path } = await openDownload(s, params.token);
        return { status: 200, raw: { bytes, contentType }, headers: downloadHeaders(contentType, path) };
      },
    }),

    // ------------------------------------------------------------ access rules
    route({
      method: 'POST',
      path: `${COL}/access-rules`,
      summary: 'Create or replace the access rule on a folder or file',
      permission: write,
      body: S.CreateAccessRuleRequest,
      responses: {
        201: { description: 'created', schema: S.AccessRuleSchema },
        200: { description: 'replaced', schema: S.AccessRuleSchema },
        202: { description: 'files move', schema: RuleWithJob },
        409: err('limit_exceeded'),
        ...common,
      },
      handler: async ({ s, ns, col, body }) => ruleReply(await putRule(s, ns, col, body)),
    }),
    route({
      method: 'GET',
      path: `${COL}/access-rules`,
      summary: 'List access rules',
      permission: read,
      query: S.ListAccessRulesQuery,
      responses: { 200: { description: 'page', schema: S.page(S.AccessRuleSchema) }, ...common },
      handler: async ({ s, key, col, query }) => ({ status: 200, body: await listCollectionRules(s, key, col, query) }),
    }),
    route({
      method: 'GET',
      path: `${COL}/access-rules/{rule_id}`,
      summary: 'Get an access rule',
      permission: read,
      responses: { 200: { description: 'rule', schema: S.AccessRuleSchema }, ...common },
      handler: async ({ s, col, params }) => ({ status: 200, body: presentRule(await resolveRule(s.store, col, params.rule_id)) }),
    }),
    route({
      method: 'PATCH',
      path: `${COL}/access-rules/{rule_id}`,
      summary: 'Change readers (200) or the seal (202 when files move)',
      permission: write,
      body: S.UpdateAccessRuleRequest,
      responses: {
        200: { description: 'rule', schema: S.AccessRuleSchema },
        202: { description: 'files move', schema: RuleWithJob },
        409: err('limit_exceeded'),
        ...common,
      },
      handler: async ({ s, ns, col, params, body }) => ruleReply(await patchRule(s, ns, col, await resolveRule(s.store, col, params.rule_id), body)),
    }),
    route({
      method: 'DELETE',
      path: `${COL}/access-rules/{rule_id}`,
      summary: 'Delete an access rule',
      permission: write,
      responses: { 204: { description: 'deleted' }, 202: { description: 'files move', schema: JobEnvelope }, ...common },
      handler: async ({ s, ns, col, params }) => {
        const job = await removeRule(s, ns, col, await resolveRule(s.store, col, params.rule_id));
        return job ? { status: 202, body: { job: presentJob(job) } } : { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: `${COL}/access-rules:batch`,
      summary: 'Apply several rule operations at once (all or none)',
      permission: write,
      body: S.AccessRuleBatchRequest,
      responses: {
        200: { description: 'applied', schema: BatchReply },
        202: { description: 'files move', schema: BatchReply },
        409: err('limit_exceeded'),
        ...common,
      },
      handler: async ({ s, ns, col, body }) => {
        const { rules, job } = await batchRules(s, ns, col, body);
        return { status: job ? 202 : 200, body: { rules, job: job ? presentJob(job) : null } };
      },
    }),

    // ------------------------------------------------------------ keys
    route({
      method: 'POST',
      path: '/keys',
      summary: 'Create a key (its secret is shown once)',
      permission: keyAdmin,
      body: S.CreateKeyRequest,
      responses: { 201: { description: 'created, with secret', schema: S.KeySchema }, 409: err('already_exists'), ...common },
      handler: async ({ s, key, body }) => {
        const created = await createKey(s, key, body);
        return { status: 201, body: created.key, headers: { location: `/keys/${created.key.id}` } };
      },
    }),
    route({
      method: 'GET',
      path: '/keys',
      summary: 'List the keys this key administers',
      permission: keyAdmin,
      query: S.ListQuery,
      responses: { 200: { description: 'page', schema: S.page(S.KeySchema) }, ...common },
      handler: async ({ s, key, query }) => ({ status: 200, body: await listAdministeredKeys(s, key, query) }),
    }),
    route({
      method: 'GET',
      path: '/keys/{key_id}',
      summary: 'Get a key (without its secret)',
      permission: keyAdmin,
      responses: { 200: { description: 'key', schema: S.KeySchema }, ...common },
      handler: async ({ s, key, params }) => ({ status: 200, body: await presentKey(s, await resolveKey(s, key, params.key_id)) }),
    }),
    route({
      method: 'POST',
      path: '/keys/{key_id}:revoke',
      summary: 'Revoke a key (repeating it is a no-op)',
      permission: keyAdmin,
      responses: { 200: { description: 'key with revoked_at', schema: S.KeySchema }, ...common },
      handler: async ({ s, key, params }) => ({ status: 200, body: await revokeKey(s, await resolveKey(s, key, params.key_id)) }),
    }),

    // ------------------------------------------------------------ events
    route({
      method: 'GET',
      path: '/events',
      summary: 'Recent events the key may see (a page, or a stream with Accept: text/event-stream)',
      permission: { kind: 'namespace_or_cluster' },
      query: S.EventsQuery,
      responses: { 200: { description: 'page of events, or a text/event-stream', schema: S.page(S.EventSchema) }, ...common },
      handler: async ({ s, key, query, req }) => {
        if ((req.headers.accept ?? '').includes('text/event-stream')) {
          const after = query.after ?? req.headers['last-event-id'];
          return { status: 200, stream: await streamEvents(s, key, after) };
        }
        return { status: 200, body: await listEvents(s, key, query) };
      },
    }),

    // ------------------------------------------------------------ jobs
    route({
      method: 'GET',
      path: '/jobs/{job}',
      summary: 'Get a job',
      permission: read,
      target: (s, key, params) => resolveJob(s.store, key, params.job),
      responses: { 200: { description: 'job', schema: S.JobSchema }, ...common },
      handler: ({ target }) => ({ status: 200, body: presentJob(target as JobRow) }),
    }),
    route({
      method: 'POST',
      path: '/jobs/{job}:cancel',
      summary: 'Cancel a queued or running job',
      permission: write,
      target: (s, key, params) => resolveJob(s.store, key, params.job),
      responses: { 200: { description: 'job', schema: S.JobSchema }, ...common },
      handler: async ({ s, target }) => ({ status: 200, body: presentJob(await cancelJob(s, target as JobRow)) }),
    }),
  ];
}
