// Every data-plane route: retrieval-api.md's listed endpoints plus decisions.md §2's table.
import { z } from 'zod';
import { TroveError } from '../contract/errors.js';
import * as S from '../contract/schemas.js';
import { createCollection, deleteCollection, listVisibleCollections, patchCollection, reindexCollection } from '../domain/collections.js';
import { addFile, deleteFile, fileContentUrl, listCollectionFiles, openDownload, patchFile, receiveUpload } from '../domain/files.js';
import { cancelJob, resolveJob } from '../domain/jobs.js';
import { createNamespace, deleteNamespace, listVisibleNamespaces, renameNamespaceLabel } from '../domain/namespaces.js';
import { presentCollection, presentFile, presentJob, presentNamespace } from '../domain/present.js';
import { resolveFile } from '../domain/resolve.js';
import { search } from '../domain/search/search.js';
import { FilterClauseSchema } from '../domain/search/filter.js';
import { listNamespaceJobs } from '../domain/job-lists.js';
import { infoDocument } from '../domain/info.js';
import { route, type RouteDef } from './router.js';
import type { JobRow } from '../store/jobs.js';
import { Readable } from 'node:stream';

const NS = '/namespaces/{namespace}';
const COL = `${NS}/collections/{collection}`;
const read = { kind: 'action', action: 'read' } as const;
const write = { kind: 'action', action: 'write' } as const;

const err = (description: string) => ({ description, schema: S.ErrorEnvelope });
const common = { 400: err('invalid_request'), 401: err('unauthenticated'), 403: err('forbidden'), 404: err('not_found') };
const JobEnvelope = z.object({ job: S.JobSchema });
const FileWithJob = z.object({ file: S.FileSchema, job: S.JobSchema, upload: S.UploadInstructions.optional() });

import { SEARCH_BODY_LIMIT } from '../domain/limits.js';

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
      handler: ({ s }) => ({ status: 200, body: infoDocument(s) }),
    }),

    // ------------------------------------------------------------ namespaces
    route({
      method: 'POST',
      path: '/namespaces',
      summary: 'Create a namespace',
      permission: { kind: 'cluster' },
      body: S.CreateNamespaceRequest,
      responses: { 201: { description: 'created', schema: S.NamespaceSchema }, 200: { description: 'exists (exist_ok)', schema: S.NamespaceSchema }, 409: err('already_exists'), ...common },
      handler: ({ s, body }) => {
        const { created, namespace } = createNamespace(s, body);
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
      handler: ({ s, key, query }) => ({ status: 200, body: listVisibleNamespaces(s, key, query) }),
    }),
    route({
      method: 'GET',
      path: NS,
      summary: 'Get a namespace',
      permission: read,
      responses: { 200: { description: 'namespace', schema: S.NamespaceSchema }, ...common },
      handler: ({ s, ns }) => ({ status: 200, body: presentNamespace(s.db, ns) }),
    }),
    route({
      method: 'PATCH',
      path: NS,
      summary: 'Change a namespace display name',
      permission: { kind: 'cluster' },
      body: S.UpdateNamespaceRequest,
      responses: { 200: { description: 'namespace', schema: S.NamespaceSchema }, ...common },
      handler: ({ s, ns, body }) => ({ status: 200, body: renameNamespaceLabel(s, ns, body.display_name) }),
    }),
    route({
      method: 'DELETE',
      path: NS,
      summary: 'Delete a namespace (force deletes its collections)',
      permission: { kind: 'cluster' },
      body: S.DeleteNamespaceRequest,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: ({ s, ns, body }) => ({ status: 202, body: { job: presentJob(deleteNamespace(s, ns, body.force)) } }),
    }),
    route({
      method: 'GET',
      path: `${NS}/jobs`,
      summary: 'List jobs of a namespace',
      permission: read,
      query: S.ListJobsQuery,
      responses: { 200: { description: 'page', schema: S.page(S.JobSchema) }, ...common },
      handler: ({ s, key, ns, query }) => ({ status: 200, body: listNamespaceJobs(s, key, ns, query) }),
    }),

    // ------------------------------------------------------------ collections
    route({
      method: 'POST',
      path: `${NS}/collections`,
      summary: 'Create a collection',
      permission: { kind: 'action', action: 'write', denyCollectionKeys: true },
      body: S.CreateCollectionRequest,
      responses: { 201: { description: 'created', schema: S.CollectionSchema }, 200: { description: 'exists (exist_ok)', schema: S.CollectionSchema }, 409: err('already_exists'), ...common },
      handler: ({ s, ns, body }) => {
        const { created, collection } = createCollection(s, ns, body);
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
      handler: ({ s, key, ns, query }) => ({ status: 200, body: listVisibleCollections(s, key, ns, query) }),
    }),
    route({
      method: 'GET',
      path: COL,
      summary: 'Get a collection',
      permission: read,
      responses: { 200: { description: 'collection', schema: S.CollectionSchema }, ...common },
      handler: ({ s, ns, col }) => ({ status: 200, body: presentCollection(s.db, col, ns.name) }),
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
      handler: ({ s, ns, col, body }) => {
        const { collection, job } = patchCollection(s, ns, col, body);
        return job ? { status: 202, body: { collection, job: presentJob(job) } } : { status: 200, body: collection };
      },
    }),
    route({
      method: 'DELETE',
      path: COL,
      summary: 'Delete a collection',
      permission: { kind: 'action', action: 'write', denyCollectionKeys: true },
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: ({ s, ns, col }) => ({ status: 202, body: { job: presentJob(deleteCollection(s, ns, col)) } }),
    }),
    route({
      method: 'POST',
      path: `${COL}:reindex`,
      summary: 'Reindex every file of a collection',
      permission: write,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: ({ s, ns, col }) => ({ status: 202, body: { job: presentJob(reindexCollection(s, ns, col)) } }),
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

    // ------------------------------------------------------------ files
    route({
      method: 'POST',
      path: `${COL}/files`,
      summary: 'Add a file (or a new version of the file at that path)',
      permission: write,
      body: S.AddFileRequest,
      responses: { 202: { description: 'accepted', schema: FileWithJob }, ...common },
      handler: ({ s, ns, col, body }) => {
        const { file, job, upload } = addFile(s, ns, col, body);
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
      handler: ({ s, key, col, query }) => ({ status: 200, body: listCollectionFiles(s, key, col, query) }),
    }),
    route({
      method: 'GET',
      path: `${COL}/files/{file}`,
      summary: 'Get a file by ID or encoded path',
      permission: read,
      responses: { 200: { description: 'file', schema: S.FileSchema }, ...common },
      handler: ({ s, col, params }) => ({ status: 200, body: presentFile(resolveFile(s.db, col, params.file!)) }),
    }),
    route({
      method: 'PATCH',
      path: `${COL}/files/{file}`,
      summary: 'Replace metadata (200) or source (202)',
      permission: write,
      body: S.UpdateFileRequest,
      responses: { 200: { description: 'file', schema: S.FileSchema }, 202: { description: 'reindexing', schema: FileWithJob }, ...common },
      handler: ({ s, ns, col, params, body }) => {
        const { file, job, upload } = patchFile(s, ns, col, resolveFile(s.db, col, params.file!), body);
        return job ? { status: 202, body: { file, job: presentJob(job), ...(upload ? { upload } : {}) } } : { status: 200, body: file };
      },
    }),
    route({
      method: 'DELETE',
      path: `${COL}/files/{file}`,
      summary: 'Delete a file',
      permission: write,
      responses: { 202: { description: 'accepted', schema: JobEnvelope }, ...common },
      handler: ({ s, ns, col, params }) => ({ status: 202, body: { job: presentJob(deleteFile(s, ns, col, resolveFile(s.db, col, params.file!))) } }),
    }),
    route({
      method: 'GET',
      path: `${COL}/files/{file}/content`,
      summary: "A short-lived signed URL for the file's bytes",
      permission: read,
      responses: { 200: { description: 'signed URL', schema: S.FileContentResponse }, 409: err('external_source or operation_in_progress'), ...common },
      handler: ({ s, col, params }) => ({ status: 200, body: fileContentUrl(s, resolveFile(s.db, col, params.file!)) }),
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
        const file = await receiveUpload(s, params.token!, stream, length === undefined ? null : Number(length));
        return { status: 200, body: { file } };
      },
    }),
    route({
      method: 'GET',
      path: '/downloads/{token}',
      summary: 'Signed download of a file version',
      permission: { kind: 'none' },
      responses: { 200: { description: 'the bytes' }, 404: err('not_found') },
      handler: ({ s, params }) => {
        const { bytes, contentType } = openDownload(s, params.token!);
        return { status: 200, raw: { bytes, contentType } };
      },
    }),

    // ------------------------------------------------------------ jobs
    route({
      method: 'GET',
      path: '/jobs/{job}',
      summary: 'Get a job',
      permission: read,
      target: (s, key, params) => resolveJob(s.db, key, params.job!),
      responses: { 200: { description: 'job', schema: S.JobSchema }, ...common },
      handler: ({ target }) => ({ status: 200, body: presentJob(target as JobRow) }),
    }),
    route({
      method: 'POST',
      path: '/jobs/{job}:cancel',
      summary: 'Cancel a queued or running job',
      permission: write,
      target: (s, key, params) => resolveJob(s.db, key, params.job!),
      responses: { 200: { description: 'job', schema: S.JobSchema }, ...common },
      handler: ({ s, target }) => ({ status: 200, body: presentJob(cancelJob(s, target as JobRow)) }),
    }),
  ];
}
