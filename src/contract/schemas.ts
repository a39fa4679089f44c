// zod schemas of every resource and request of the data-plane contract (retrieval-api.md) and the
// fields decisions.md §3 fills in. The same schemas validate requests, type the code and generate
// /openapi.json. Request objects are strict: unknown fields are 400 invalid_request.
import { z } from 'zod';
import { looksLikeId } from './ids.js';
import { filePathProblem, folderPathProblem } from './paths.js';

/** sha256, md5 or crc32c, lowercase hex (retrieval-api.md, File.source.checksum). */
export const CHECKSUM_PATTERN = /^(sha256:[0-9a-f]{64}|md5:[0-9a-f]{32}|crc32c:[0-9a-f]{8})$/;

const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const ResourceName = z
  .string()
  .regex(NAME_PATTERN, 'must be 1-63 lowercase letters, digits, underscores or hyphens, starting with a letter or digit')
  .refine((name) => !looksLikeId(name), 'must not look like a resource ID');

export const FilePath = z.string().superRefine((path, ctx) => {
  const problem = filePathProblem(path);
  if (problem) ctx.addIssue({ code: 'custom', message: `path ${problem}` });
});

export const FolderPath = z.string().superRefine((folder, ctx) => {
  const problem = folderPathProblem(folder);
  if (problem) ctx.addIssue({ code: 'custom', message: `folder ${problem}` });
});

const Timestamp = z.string().describe('ISO 8601 UTC date-time');
const DisplayName = z.string().max(256).nullable();
const Checksum = z.string().regex(CHECKSUM_PATTERN, "must be 'sha256:', 'md5:' or 'crc32c:' followed by lowercase hex digits");
const ContentType = z
  .string()
  .min(3)
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$/, 'must be a MIME type such as text/plain');
const DecimalString = z.string().regex(/^\d+$/);

// ---------------------------------------------------------------- namespaces

export const NamespaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  display_name: z.string().nullable(),
  usage: z.object({ collections: z.number().int(), files: z.number().int(), source_bytes: DecimalString, index_bytes: DecimalString }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Namespace = z.infer<typeof NamespaceSchema>;

export const CreateNamespaceRequest = z.strictObject({
  name: ResourceName,
  display_name: DisplayName.optional(),
  exist_ok: z.boolean().default(false),
});
export const UpdateNamespaceRequest = z.strictObject({ display_name: DisplayName });
export const DeleteNamespaceRequest = z.strictObject({ force: z.boolean().default(false) });

// ---------------------------------------------------------------- collections

// decisions.md §3: the processing profile.
export const ProcessingSchema = z
  .strictObject({
    keyword: z.boolean().default(true),
    semantic: z.boolean().default(true),
    chunk_tokens: z.number().int().min(64).max(2048).optional(),
    chunk_overlap: z.number().int().min(0).max(1024).optional(),
    ocr: z.boolean().default(true),
  })
  .refine((p) => p.chunk_overlap === undefined || p.chunk_overlap < (p.chunk_tokens ?? DEFAULT_CHUNK_TOKENS), {
    message: 'chunk_overlap must be smaller than chunk_tokens',
    path: ['chunk_overlap'],
  });
export type Processing = z.infer<typeof ProcessingSchema>;
export const DEFAULT_CHUNK_TOKENS = 400;
export const DEFAULT_CHUNK_OVERLAP = 40;

export const CollectionStatus = z.enum(['empty', 'indexing', 'ready', 'degraded', 'failed', 'deleting']);
export const AccessControl = z.enum(['off', 'enforced']);
export const FileCounts = z.object({ pending: z.number().int(), indexing: z.number().int(), ready: z.number().int(), failed: z.number().int() });

export const CollectionSchema = z.object({
  id: z.string(),
  namespace: z.string(),
  name: z.string(),
  display_name: z.string().nullable(),
  status: CollectionStatus,
  processing: ProcessingSchema,
  access_control: AccessControl,
  index_generation: z.string().nullable(),
  file_counts: FileCounts,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Collection = z.infer<typeof CollectionSchema>;

export const CreateCollectionRequest = z.strictObject({
  name: ResourceName,
  display_name: DisplayName.optional(),
  exist_ok: z.boolean().default(false),
  access_control: AccessControl.default('off'),
  processing: ProcessingSchema.optional(),
});
/**
 * PATCH's processing: the fields sent change, the others keep their values (merged onto the
 * collection's, then checked whole as ProcessingSchema). decisions.md §2 lists `processing` as
 * patchable without saying merge or replace; replacing turned keyword and OCR back on and dropped
 * chunk_tokens when a caller sent chunk_overlap alone (found by a contract audit).
 */
export const ProcessingPatchSchema = z
  .strictObject({
    keyword: z.boolean().optional(),
    semantic: z.boolean().optional(),
    chunk_tokens: z.number().int().min(64).max(2048).optional(),
    chunk_overlap: z.number().int().min(0).max(1024).optional(),
    ocr: z.boolean().optional(),
  })
  .describe('The processing fields to change; fields left out keep their current values.');

export const UpdateCollectionRequest = z.strictObject({
  display_name: DisplayName.optional(),
  processing: ProcessingPatchSchema.optional(),
  access_control: AccessControl.optional(),
});

// ---------------------------------------------------------------- files

export const FileStatus = z.enum(['pending', 'indexing', 'ready', 'failed', 'deleting']);

export const InlineSource = z.strictObject({
  type: z.literal('inline'),
  text: z.string().max(10 * 1024 * 1024),
  content_type: ContentType.default('text/plain'),
});
export const UriSource = z.strictObject({
  type: z.literal('uri'),
  uri: z.string().min(1).max(8192),
  content_type: ContentType.optional(),
  bytes: z.number().int().nonnegative().optional(),
  checksum: Checksum.optional(),
});
export const UploadSource = z.strictObject({
  type: z.literal('upload'),
  content_type: ContentType,
  bytes: z.number().int().nonnegative().optional(),
  checksum: Checksum.optional(),
});
export const SourceRequest = z.discriminatedUnion('type', [InlineSource, UriSource, UploadSource]);
export type SourceRequest = z.infer<typeof SourceRequest>;

const JsonValue: z.ZodType<unknown> = z.json();

/** True when some object in the value has an own "__proto__" key (JSON.parse makes one). */
function hasProtoKey(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) return true;
    stack.push(...Object.values(v));
  }
  return false;
}

// Records are rebuilt key by key, where "__proto__" would become a prototype and vanish: it is
// refused rather than silently dropped.
export const Metadata = z.preprocess((value, ctx) => {
  if (hasProtoKey(value)) ctx.addIssue({ code: 'custom', message: 'the key "__proto__" is not accepted in metadata' });
  return value;
}, z.record(z.string().min(1).max(256), JsonValue));

export const FileSchema = z.object({
  id: z.string(),
  path: z.string(),
  status: FileStatus,
  source: z.object({
    type: z.enum(['uri', 'upload', 'inline']),
    content_type: z.string(),
    bytes: z.number().int().optional(),
    checksum: z.string().optional(),
    uri: z.string().optional(),
  }),
  metadata: z.record(z.string(), JsonValue),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  governing_rule: z.object({ id: z.string(), file: z.string().nullable().optional(), folder: z.string().nullable().optional() }).optional(),
  // An additive field (retrieval-api.md, Versioning 3): what indexing noticed, e.g. a declared content type the bytes contradict.
  notes: z.array(z.string()).optional().describe('What the last indexing noticed about the file (a contradicted declared type, pages, OCR).'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type FileResource = z.infer<typeof FileSchema>;

export const AddFileRequest = z.strictObject({
  path: FilePath,
  source: SourceRequest,
  metadata: Metadata.default({}),
});
export const UpdateFileRequest = z
  .strictObject({ metadata: Metadata.optional(), source: SourceRequest.optional() })
  .refine((b) => b.metadata !== undefined || b.source !== undefined, 'send metadata, source or both');

export const UploadInstructions = z.object({
  url: z.string(),
  method: z.literal('PUT'),
  headers: z.object({ 'content-type': z.string() }),
  expires_at: Timestamp,
});

export const ListFilesQuery = z.strictObject({
  path: FilePath.optional(),
  prefix: z.string().min(1).max(1024).optional(),
  status: FileStatus.optional(),
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const FileContentResponse = z.object({ url: z.string(), expires_at: Timestamp });

// ---------------------------------------------------------------- jobs

export const JobType = z.enum(['index_file', 'delete_file', 'reindex_collection', 'delete_collection', 'delete_namespace', 'apply_access_rule']);
export const JobStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']);
export const JobSchema = z.object({
  id: z.string(),
  type: JobType,
  status: JobStatus,
  namespace: z.string().optional(),
  collection: z.string().optional(),
  file_id: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Job = z.infer<typeof JobSchema>;
export const ListJobsQuery = z.strictObject({
  status: JobStatus.optional(),
  type: JobType.optional(),
  collection: z.string().optional(),
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const ListQuery = z.strictObject({
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

// ---------------------------------------------------------------- keys

export const Action = z.enum(['read', 'write', 'search', 'query']);
export type Action = z.infer<typeof Action>;
export const KeyScope = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('cluster') }),
  z.strictObject({ kind: z.literal('namespace'), namespace: z.string().min(1), actions: z.array(Action).min(1) }),
  z.strictObject({ kind: z.literal('collection'), namespace: z.string().min(1), collections: z.array(z.string().min(1)).min(1), actions: z.array(Action).min(1) }),
]);
export type KeyScope = z.infer<typeof KeyScope>;

// ---------------------------------------------------------------- search

export const EvidenceLocation = z.union([
  z.object({ start_ms: z.number().int(), end_ms: z.number().int() }),
  // char_start/char_end on a page: where the snippet lies in the extracted text (docs/decisions.md, MCP).
  z.object({ page: z.number().int(), bbox: z.array(z.number()).nullable().optional(), char_start: z.number().int().optional(), char_end: z.number().int().optional() }),
  z.object({ json_path: z.string() }),
  z.object({ char_start: z.number().int(), char_end: z.number().int() }),
]);
export const EvidenceSchema = z.object({
  kind: z.enum(['text', 'transcript', 'ocr', 'json_path', 'page', 'image_region']),
  text: z.string(),
  location: EvidenceLocation.nullable().optional(),
});

const QueryText = z
  .string()
  .min(1)
  .max(32000)
  .refine((q) => /\S/.test(q), 'must contain a non-space character');

export const SortField = z.enum(['score', 'path', 'content_type', 'bytes', 'created_at', 'updated_at']);
export const Principals = z.array(z.string().refine((p) => Buffer.byteLength(p, 'utf8') <= 256, 'each principal must be at most 256 UTF-8 bytes')).max(4096);

export const SearchRequest = z.strictObject({
  query: QueryText,
  // retrieval-api.md: "default `semantic`. The matching collection processing flag must be enabled",
  // so an omitted mode on a keyword-only collection is a 400, as the contract says. The CLI and the
  // TUI send no mode and fall back to keyword there themselves (src/cli/search-request.ts).
  mode: z.enum(['keyword', 'semantic']).default('semantic'),
  interpretation: z.enum(['literal', 'natural_language']).default('literal'),
  limit: z.number().int().min(1).max(100).default(10),
  result_unit: z.enum(['file', 'passage']).default('file'),
  sort: z
    .array(z.strictObject({ field: SortField, order: z.enum(['asc', 'desc']) }))
    .max(4)
    .refine((s) => new Set(s.map((x) => x.field)).size === s.length, 'sort fields must be distinct')
    .optional(),
  // Validated separately so that its errors are invalid_filter, not invalid_request.
  filter: z.unknown().nullable().optional(),
  principals: Principals.nullable().optional(),
  cursor: z.string().nullable().optional(),
  // An optional request field added within the major version, as retrieval-api.md "Versioning"
  // rule 3 allows ("releases can add ... optional request fields, response fields").
  explain: z.boolean().optional().describe('true: each result carries `explain`, the parts its score was made from (docs/ranking.md). Does not change ranking.'),
});
export type SearchRequest = z.infer<typeof SearchRequest>;

/**
 * Why a result scored what it did (docs/ranking.md). Keyword mode: `score` is BM25 itself.
 * Semantic mode (hybrid): `score = keyword_part + semantic_part`, where `keyword_part` is BM25
 * min-max scaled over the query's candidates (0 when BM25 did not find the passage) and
 * `semantic_part = semantic_weight × cosine_scaled`, plus, once the collection has a model of its
 * own, `collection_part = collection_weight × collection_cosine_scaled`: `score` is the sum of the
 * three parts. A file's score is its best passage's.
 */
export const SearchExplanation = z.object({
  fusion: z.enum(['keyword', 'minmax']).describe('`keyword`: BM25 alone; `minmax`: minmax(BM25) + semantic_weight · minmax(cosine) + collection_weight · minmax(collection_cosine).'),
  bm25: z.number().nullable().describe("The passage's BM25 score; null when the keyword stage did not find it."),
  bm25_scaled: z.number().nullable().describe('BM25 scaled to 0..1 over this query\'s keyword candidates; null in keyword mode or without BM25.'),
  cosine: z.number().nullable().describe('Cosine similarity of passage and query; null in keyword mode or when the query has no vector.'),
  cosine_scaled: z.number().nullable().describe("Cosine scaled to 0..1 over this query's candidates; null when cosine is."),
  semantic_weight: z.number().describe("Weight of the scaled cosine: the collection's calibrated weight, 0.2 by default (0 in keyword mode)."),
  collection_cosine: z.number().nullable().describe("Cosine of the passage's file and the query in the collection's own model (docs/ranking.md); null in keyword mode, before the collection has a model, or when the model knows none of the query's words."),
  collection_cosine_scaled: z.number().nullable().describe("collection_cosine scaled to 0..1 over this query's candidates; null when the collection model took no part."),
  collection_weight: z.number().describe("Weight of the scaled collection-model cosine (0 when it took no part)."),
  keyword_part: z.number().describe('What BM25 contributed to the score.'),
  semantic_part: z.number().describe('What the embedding contributed to the score.'),
  collection_part: z.number().describe("What the collection's own model contributed to the score."),
  score: z.number().describe('The fused score, equal to the result\'s score.'),
});

export const SearchResult = z.object({
  file_id: z.string(),
  path: z.string(),
  content_type: z.string(),
  rank: z.number().int(),
  score: z.number(),
  matched_by: z.array(z.enum(['keyword', 'semantic'])),
  evidence: z.array(EvidenceSchema),
  explain: SearchExplanation.optional().describe('Present when the request sent `explain: true`.'),
});
export const SearchResponse = z.object({
  request_id: z.string(),
  index_generation: z.string().nullable(),
  execution: z.object({ mode: z.string(), interpretation: z.string(), stages: z.array(z.enum(['keyword', 'semantic'])) }),
  results: z.array(SearchResult),
  timing_ms: z.object({ retrieval: z.number().int(), total: z.number().int() }),
  warnings: z.array(z.object({ code: z.string(), message: z.string() })),
  next_cursor: z.string().nullable(),
});

// ---------------------------------------------------------------- events (decisions.md §6)

export const EventsQuery = z.strictObject({
  after: z.string().optional().describe('An event ID: only events after it.'),
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

// ---------------------------------------------------------------- misc responses

export const ErrorEnvelope = z.object({
  error: z.object({ code: z.string(), message: z.string(), request_id: z.string(), retryable: z.boolean(), details: z.record(z.string(), z.unknown()) }),
});
export const HealthResponse = z.object({ status: z.string() });
export const InfoResponse = z.object({
  api_version: z.string(),
  search_modes: z.array(z.string()),
  query_modes: z.array(z.string()),
  uri_schemes: z.array(z.string()),
  event_types: z.array(z.string()),
  embedding: z.object({ provider: z.string(), model: z.string(), dimensions: z.number().int() }).nullable(),
  generation: z.object({ provider: z.string(), model: z.string() }).nullable(),
  web_search: z.object({ enabled: z.boolean() }),
  limits: z.record(z.string(), z.number()),
  /** The key of the request (decisions.md §3): its scope tells a client what it may do. */
  key: z.lazy(() => KeySchema.omit({ secret: true })),
});

export const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next_cursor: z.string().nullable() });

// ---------------------------------------------------------------- access rules (retrieval-api.md, Access rule)

const Reader = z
  .string()
  .min(1, 'a reader must not be empty')
  .refine((r) => Buffer.byteLength(r, 'utf8') <= 256, 'each reader must be at most 256 UTF-8 bytes');
// The 1,024-reader limit is checked on the resulting list (limit_exceeded), so add_readers can reach it too.
const Readers = z.array(Reader).describe('Principals, at most 1,024 per rule, each 1-256 UTF-8 bytes.');

export const AccessRuleSchema = z.object({
  id: z.string(),
  folder: z.string().nullable(),
  file: z.string().nullable(),
  readers: z.array(z.string()),
  sealed: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const CreateAccessRuleRequest = z
  .strictObject({ folder: FolderPath.optional(), file: FilePath.optional(), readers: Readers, sealed: z.boolean().default(false) })
  .refine((b) => (b.folder === undefined) !== (b.file === undefined), 'set exactly one of folder and file')
  .refine((b) => !b.sealed || b.folder !== undefined, { message: 'only folder rules can be sealed', path: ['sealed'] });
export const UpdateAccessRuleRequest = z
  .strictObject({ readers: Readers.nullable().optional(), add_readers: Readers.optional(), remove_readers: Readers.optional(), sealed: z.boolean().nullable().optional() })
  .refine((b) => !(b.readers != null && (b.add_readers !== undefined || b.remove_readers !== undefined)), 'readers cannot accompany add_readers or remove_readers')
  .refine((b) => !(b.add_readers ?? []).some((r) => (b.remove_readers ?? []).includes(r)), 'the same principal cannot be both added and removed');
export type AccessRule = z.infer<typeof AccessRuleSchema>;
export const ListAccessRulesQuery = z
  .strictObject({
    folder: FolderPath.optional(),
    file: FilePath.optional(),
    cursor: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  })
  .refine((q) => q.folder === undefined || q.file === undefined, 'send at most one of folder and file');
export const AccessRuleBatchRequest = z.strictObject({
  operations: z
    .array(
      z.strictObject({
        op: z.enum(['upsert', 'update', 'delete']),
        folder: FolderPath.nullable().optional(),
        file: FilePath.nullable().optional(),
        readers: Readers.nullable().optional(),
        add_readers: Readers.nullable().optional(),
        remove_readers: Readers.nullable().optional(),
        sealed: z.boolean().nullable().optional(),
      }),
    )
    .min(1)
    .max(1000),
});

// ---------------------------------------------------------------- keys (retrieval-api.md, Key)

export const KeySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scope: KeyScope,
  created_at: Timestamp,
  revoked_at: Timestamp.optional(),
  secret: z.string().optional(),
});
export const CreateKeyRequest = z.strictObject({ name: ResourceName, scope: KeyScope });

// ---------------------------------------------------------------- answers and research

export const HistoryMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: z.string().max(32000) });
export const QueryImage = z.strictObject({ data: z.string().min(1), media_type: z.enum(['image/png', 'image/jpeg', 'image/webp']) });
export const AnswerRequest = z.strictObject({
  query: QueryText,
  mode: z.enum(['standard', 'ultra', 'recall']).default('standard'),
  history: z.array(HistoryMessage).max(32).optional(),
  filter: z.unknown().nullable().optional(),
  principals: Principals.nullable().optional(),
  return_sources: z.boolean().default(true),
  web_search: z.enum(['never', 'use_if_needed']).default('never'),
  query_image: QueryImage.nullable().optional(),
});
export const SourceEntry = z.object({ file_id: z.string(), path: z.string(), score: z.number(), is_cited: z.boolean(), evidence: z.array(EvidenceSchema) });
export const AnswerResponse = z.object({
  answer: z.string(),
  /** An extension (docs/decisions.md, Answers): `no_supporting_evidence` when the answer declines. */
  warnings: z.array(z.object({ code: z.string(), message: z.string() })).optional(),
  image_description: z.string().nullable(),
  mode: z.enum(['standard', 'ultra', 'recall']),
  request_id: z.string(),
  sources: z.record(z.string(), SourceEntry).optional(),
  usage: z.object({ retrieval_ms: z.number().int(), generation_ms: z.number().int(), passages_considered: z.number().int(), sources_cited: z.number().int(), credits: z.number().int() }),
});
export const ResearchRunSchema = z.object({
  id: z.string(),
  namespace: z.string(),
  collection: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']),
  mode: z.enum(['standard', 'ultra', 'recall']),
  progress: z.object({ stage: z.string(), label: z.string(), step: z.number().int().min(1), total_steps: z.number().int() }).nullable(),
  answer: z.string().nullable(),
  sources: z.record(z.string(), SourceEntry).nullable(),
  image_description: z.string().nullable(),
  usage: z.object({ credits: z.number().int() }).nullable(),
  error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Timestamp.nullable(),
});

// ---------------------------------------------------------------- workspace API (workspace-api.md; camelCase)

export const WorkspaceRole = z.enum(['viewer', 'editor', 'admin']);
export const BucketScope = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('all') }),
  z.strictObject({ mode: z.literal('selected'), bucketIds: z.array(z.string().min(1)).min(1) }),
]);
export const WorkspaceApiKeySchema = z.object({
  id: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  accessKeyId: z.string(),
  ownerKind: z.string(),
  ownerId: z.string(),
  role: WorkspaceRole,
  kind: z.string(),
  bucketScope: BucketScope,
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
  expiresAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
  revision: z.number().int(),
});
export const PatchWorkspaceApiKeyRequest = z.strictObject({ name: z.string().min(1).max(63).optional(), role: WorkspaceRole.optional(), bucketScope: BucketScope.optional() });
export const RestoreResponse = z.object({ id: z.string() });

// Webhooks (workspace-api.md; decisions.md §6). Workspace API fields are camelCase.
/** decisions.md §6 / workspace-api.md: rotation overlap 0-604,800 s, default 24 h. */
export const MAX_ROTATION_OVERLAP_S = 604_800;
export const DEFAULT_ROTATION_OVERLAP_S = 86_400;
const WebhookName = z.string().trim().min(1).max(200);
const WebhookUrl = z.string().min(1).max(2048);
const WebhookEventTypes = z.array(z.string().min(1).max(100)).max(100).nullable();
const WebhookBucketIds = z.array(z.string().min(1).max(200)).max(1000).nullable();
export const WebhookSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  eventTypes: z.array(z.string()).nullable(),
  bucketIds: z.array(z.string()).nullable(),
  enabled: z.boolean(),
  ownerKind: z.enum(['me', 'workspace']),
  disabledReason: z.string().nullable(),
  signing: z.object({ secretFingerprint: z.string() }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const WebhookWithSecret = z.object({ webhook: WebhookSchema, secret: z.string() });
export const CreateWebhookRequest = z.strictObject({
  name: WebhookName,
  url: WebhookUrl,
  eventTypes: WebhookEventTypes.optional(),
  bucketIds: WebhookBucketIds.optional(),
  owner: z.enum(['me', 'workspace']).optional(),
});
export const UpdateWebhookRequest = z
  .strictObject({ name: WebhookName.optional(), url: WebhookUrl.optional(), eventTypes: WebhookEventTypes.optional(), bucketIds: WebhookBucketIds.optional(), enabled: z.boolean().optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of name, url, eventTypes, bucketIds, enabled' });
export const RotateWebhookSecretRequest = z.strictObject({
  previousSecretExpiresInSeconds: z.number().int().min(0).max(MAX_ROTATION_OVERLAP_S).default(DEFAULT_ROTATION_OVERLAP_S),
});
export const ReplayWebhookRequest = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  onlyFailed: z.boolean().optional(),
  eventIds: z.array(z.string().regex(/^evt_[0-9a-z]+$/, 'an event ID (evt_…)')).min(1).max(1000).optional(),
});
export const WebhookDeliveriesQuery = ListQuery.extend({ status: z.enum(['pending', 'succeeded', 'failed']).optional() });
export const WebhookDeliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number().int(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const WebhookDeliveryDetail = WebhookDeliverySchema.extend({
  body: z.unknown(),
  attemptLog: z.array(z.object({ at: Timestamp, responseStatus: z.number().int().nullable(), error: z.string().nullable(), durationMs: z.number() })),
});
export const EventSchema = z.object({ id: z.string(), type: z.string(), timestamp: Timestamp, data: z.record(z.string(), z.unknown()) });
