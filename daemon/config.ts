// The daemon's configuration, resolved in one place from `trove daemon start`'s flags, the
// environment and `<data-dir>/config.json` (its schema: src/domain/config-file.ts), validated whole
// before anything starts, and handed to the runtime and its services as a plain object.
//
// Precedence, for each setting: flag > environment > config.json > default. Not every setting has
// every source (docs/daemon.md lists them): where the server listens, TLS, the shutdown drain, file
// roots and webhook delivery are flags and variables; models and vector memory are config.json
// and variables. Two exceptions: --allow-file-root adds to TROVE_FILE_ROOTS rather than replacing
// it, and the data dir (which holds config.json) comes from --data-dir or TROVE_DATA_DIR only.
// An empty variable counts as unset. What is wrong is thrown as a UserError (daemon/user-error.ts).
import type { z } from 'zod';
import { TroveError } from '../src/contract/errors.js';
import { issuesSentence } from '../src/contract/issues.js';
import { DEFAULT_GENERATION_API_KEY_ENV, GENERATION_DEFAULTS, type GenerationConfig } from '../src/domain/answer/config.js';
import { ConfigFileSchema, configFilePath, readConfigDocument, SETTINGS, variable, type ConfigFile, type KeySpec } from '../src/domain/config-file.js';
import { DEFAULT_EMBEDDING_API_KEY_ENV, defaultCacheDir, EMBEDDING_DEFAULTS, type EmbeddingConfig } from '../src/domain/embed/config.js';
import { DEFAULT_MCP_SETTINGS, type McpSettings } from '../src/domain/mcp-settings.js';
import { DEFAULT_VECTOR_MEMORY, resolveVectorMemory, type VectorMemory } from '../src/domain/search/vector-memory.js';
import { DEFAULT_WEBHOOK_CONFIG, type WebhookConfig } from '../src/domain/webhooks/config.js';
import { resolveDataDir as dataDirFrom } from './paths.js';
import { UserError } from './user-error.js';

/** An environment: the process's, or a CLI invocation's (src/cli/io.ts). */
type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7410;
export const DEFAULT_DRAIN_SECONDS = 10;

/** `trove daemon start`'s flags as commander hands them over: text, or true for a switch given. */
export interface DaemonFlags {
  dataDir?: string | undefined;
  ephemeral?: boolean | undefined;
  host?: string | undefined;
  port?: string | undefined;
  insecure?: boolean | undefined;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  drainSeconds?: string | undefined;
  allowFileRoot?: string[] | undefined;
  allowPrivateSources?: boolean | undefined;
  allowInsecureWebhooks?: boolean | undefined;
  webhookRetryScale?: string | undefined;
  mcpAllowedOrigin?: string[] | undefined;
  mcpAllowedHost?: string[] | undefined;
  mcpReplyBudget?: string | undefined;
}

/** The settings config.json holds (each overridden by its TROVE_* variable). */
export interface FileSettings {
  embedding: EmbeddingConfig;
  generation: GenerationConfig;
  vectorMemory: VectorMemory;
}

export interface DaemonConfig extends FileSettings {
  /** Absolute; unused with `ephemeral`, which makes a temporary data dir. */
  dataDir: string;
  ephemeral: boolean;
  host: string;
  port: number;
  /** Allow a non-loopback address without TLS (decisions.md §1). */
  insecure: boolean;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** On stop, how long requests in flight may take before they are answered 503 (docs/decisions.md, "Stopping"). */
  drainSeconds: number;
  /** TROVE_CLUSTER_KEY: accept this secret as the cluster key (decisions.md §1). */
  clusterKey: string | undefined;
  fileRoots: string[];
  allowPrivateSources: boolean;
  webhooks: WebhookConfig;
  /** The MCP endpoint's allowed origins and hosts, and its tool reply budget (src/domain/mcp-settings.ts). */
  mcp: McpSettings;
}

/** The data dir the flags and environment name (daemon/paths.ts); `cwd`: what a relative one is relative to. */
export function resolveDataDir(flags: Pick<DaemonFlags, 'dataDir'>, env: Env, cwd: string = process.cwd()): string {
  return dataDirFrom(flags.dataDir, env, cwd);
}

/** Resolves every setting (see the precedence above); throws naming the flag, variable or file field that is wrong. */
export function resolveConfig(flags: DaemonFlags, env: Env, file: ConfigFile, cwd: string = process.cwd()): DaemonConfig {
  return {
    dataDir: resolveDataDir(flags, env, cwd),
    ephemeral: flags.ephemeral ?? false,
    host: flags.host ?? variable(env, 'TROVE_HOST') ?? DEFAULT_HOST,
    port: parsePort(flags.port ?? variable(env, 'TROVE_PORT')) ?? DEFAULT_PORT,
    insecure: flags.insecure ?? false,
    tlsCert: flags.tlsCert,
    tlsKey: flags.tlsKey,
    drainSeconds: parseDrainSeconds(flags.drainSeconds ?? variable(env, 'TROVE_SHUTDOWN_DRAIN_SECONDS')) ?? DEFAULT_DRAIN_SECONDS,
    clusterKey: variable(env, 'TROVE_CLUSTER_KEY'),
    fileRoots: [...(variable(env, 'TROVE_FILE_ROOTS') ?? '').split(':').filter(Boolean), ...(flags.allowFileRoot ?? [])],
    allowPrivateSources: flags.allowPrivateSources ?? variable(env, 'TROVE_ALLOW_PRIVATE_SOURCES') === '1',
    webhooks: resolveWebhookConfig(flags, env),
    mcp: resolveMcpSettings(flags, env, file),
    ...resolveFileSettings(env, file),
  };
}

/** The config of `trove daemon start`: its data dir's config.json read and checked, then resolveConfig. */
export function loadConfig(flags: DaemonFlags, env: Env, cwd: string = process.cwd()): DaemonConfig {
  // An ephemeral data dir is made empty at start: it has no config.json.
  const file = flags.ephemeral ? {} : readConfigFile(configFilePath(resolveDataDir(flags, env, cwd)));
  return resolveConfig(flags, env, file, cwd);
}

/** config.json, checked against its schema: {} when there is none; throws naming the file and the field. */
export function readConfigFile(file: string): ConfigFile {
  let doc: Record<string, unknown>;
  try {
    doc = readConfigDocument(file);
  } catch (err) {
    if (err instanceof TroveError) throw new UserError(err.message, 1, { cause: err });
    throw err;
  }
  const parsed = ConfigFileSchema.safeParse(doc);
  if (!parsed.success) throw new UserError(`${file}: ${issuesSentence(parsed.error.issues, { schema: ConfigFileSchema, input: doc })}`);
  return parsed.data;
}

export function resolveWebhookConfig(flags: Pick<DaemonFlags, 'allowInsecureWebhooks' | 'webhookRetryScale'>, env: Env): WebhookConfig {
  return {
    ...DEFAULT_WEBHOOK_CONFIG,
    allowInsecure: flags.allowInsecureWebhooks ?? variable(env, 'TROVE_ALLOW_INSECURE_WEBHOOKS') === '1',
    retryScale: parseRetryScale(flags.webhookRetryScale ?? variable(env, 'TROVE_WEBHOOK_RETRY_SCALE')) ?? DEFAULT_WEBHOOK_CONFIG.retryScale,
  };
}

/** The MCP endpoint's settings: each one's flag, else its variable, else config.json, else the default. */
export function resolveMcpSettings(flags: Pick<DaemonFlags, 'mcpAllowedOrigin' | 'mcpAllowedHost' | 'mcpReplyBudget'>, env: Env, file: ConfigFile): McpSettings {
  const fromFlag = <S extends z.ZodType>(flag: string, spec: KeySpec<S>, raw: unknown): z.output<S> | undefined => {
    if (raw === undefined) return undefined;
    const parsed = spec.schema.safeParse(raw);
    if (!parsed.success) throw new UserError(issuesSentence(parsed.error.issues, { schema: spec.schema, input: raw, field: flag }));
    return parsed.data as z.output<S>;
  };
  const mcp = file.mcp ?? {};
  return {
    allowedOrigins: fromFlag('--mcp-allowed-origin', SETTINGS.mcp.allowedOrigins, flags.mcpAllowedOrigin) ?? fromEnv(env, SETTINGS.mcp.allowedOrigins) ?? mcp.allowedOrigins ?? DEFAULT_MCP_SETTINGS.allowedOrigins,
    allowedHosts: fromFlag('--mcp-allowed-host', SETTINGS.mcp.allowedHosts, flags.mcpAllowedHost) ?? fromEnv(env, SETTINGS.mcp.allowedHosts) ?? mcp.allowedHosts ?? DEFAULT_MCP_SETTINGS.allowedHosts,
    replyBudgetTokens: fromFlag('--mcp-reply-budget', SETTINGS.mcp.replyBudgetTokens, flags.mcpReplyBudget) ?? fromEnv(env, SETTINGS.mcp.replyBudgetTokens) ?? mcp.replyBudgetTokens ?? DEFAULT_MCP_SETTINGS.replyBudgetTokens,
  };
}

/** The settings config.json holds: each key's variable, else the file, else the default. */
export function resolveFileSettings(env: Env, file: ConfigFile): FileSettings {
  const embedding = file.embedding ?? {};
  const embeddingProvider = fromEnv(env, SETTINGS.embedding.provider) ?? embedding.provider ?? 'builtin';
  const generation = file.generation ?? {};
  const generationProvider = fromEnv(env, SETTINGS.generation.provider) ?? generation.provider ?? 'extractive';
  const memory = fromEnv(env, SETTINGS.vectors.memory) ?? file.vectors?.memory ?? DEFAULT_VECTOR_MEMORY;
  return {
    embedding: {
      provider: embeddingProvider,
      model: fromEnv(env, SETTINGS.embedding.model) ?? embedding.model ?? EMBEDDING_DEFAULTS[embeddingProvider].model,
      url: fromEnv(env, SETTINGS.embedding.url) ?? embedding.url ?? EMBEDDING_DEFAULTS[embeddingProvider].url,
      apiKeyEnv: embedding.apiKeyEnv ?? DEFAULT_EMBEDDING_API_KEY_ENV,
      dimensions: fromEnv(env, SETTINGS.embedding.dimensions) ?? embedding.dimensions,
      cacheDir: fromEnv(env, SETTINGS.embedding.cacheDir) ?? embedding.cacheDir ?? defaultCacheDir(env),
    },
    generation: {
      provider: generationProvider,
      model: fromEnv(env, SETTINGS.generation.model) ?? generation.model ?? GENERATION_DEFAULTS[generationProvider].model,
      url: fromEnv(env, SETTINGS.generation.url) ?? generation.url ?? GENERATION_DEFAULTS[generationProvider].url,
      apiKeyEnv: generation.apiKeyEnv ?? DEFAULT_GENERATION_API_KEY_ENV,
      vision: fromEnv(env, SETTINGS.generation.vision) ?? generation.vision ?? false,
    },
    vectorMemory: resolveVectorMemory(memory),
  };
}

/** A key's variable read by the key's own rule; a bad value is named by key and variable, e.g. `embedding.provider (TROVE_EMBEDDING_PROVIDER)`. */
function fromEnv<S extends z.ZodType>(env: Env, spec: KeySpec<S>): z.output<S> | undefined {
  if (spec.env === undefined) return undefined;
  const raw = variable(env, spec.env);
  if (raw === undefined) return undefined;
  const schema = spec.envSchema ?? spec.schema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UserError(issuesSentence(parsed.error.issues, { schema, input: raw, field: `${spec.key} (${spec.env})` }));
  return parsed.data as z.output<S>;
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port must be an integer from 0 to 65535, got '${value}'.`);
  return port;
}

/** Reads --drain-seconds / TROVE_SHUTDOWN_DRAIN_SECONDS; undefined when neither is set. */
export function parseDrainSeconds(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 3600) throw new UserError(`--drain-seconds / TROVE_SHUTDOWN_DRAIN_SECONDS must be a number of seconds from 0 to 3600, got '${value}'`);
  return n;
}

/** Reads --webhook-retry-scale / TROVE_WEBHOOK_RETRY_SCALE; undefined when neither is set. */
export function parseRetryScale(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UserError(`--webhook-retry-scale / TROVE_WEBHOOK_RETRY_SCALE must be a positive number, got '${value}'`);
  return n;
}
