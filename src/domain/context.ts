import { TroveError } from '../contract/errors.js';
import type { BlobStore, DenseHit, Store } from '../store/interface.js';
import type { LazyEmbedding } from './embed/config.js';
import type { DenseQuery } from './search/dense-pool.js';
import type { Generator } from './answer/generator.js';
import type { GenerationConfig } from './answer/config.js';
import type { WebhookConfig } from './webhooks/config.js';

/** What the domain services need from the running daemon; built once at start-up. */
export interface Services {
  /** The store: reads, and writes in `store.write(async (tx) => …)` transactions (src/store/interface.ts). */
  store: Store;
  dataDir: string;
  /** Uploaded bytes, by sha256 (src/store/blob-store.ts). */
  blobs: BlobStore;
  /** HMAC key for list and search cursors. */
  cursorSecret: Buffer;
  /** HMAC key for signed upload and download URLs. */
  urlSecret: Buffer;
  /** Directories whose files may be added as file:// sources (decisions.md §3). */
  fileRoots: string[];
  /** http(s) sources may reach private addresses (--allow-private-sources). */
  allowPrivateSources: boolean;
  /** The daemon's embedding model: its config, the id collections record, and the loaded provider. */
  embedding: LazyEmbedding;
  /** The answer generator (extractive by default) and its config, for GET /info. */
  generator: () => Promise<Generator>;
  generation: GenerationConfig;
  /** The research runner: wake it when a run is queued; abort the run being executed when canceled. */
  research: { wake(): void; abort(runRid: number): void };
  /** Nearest-neighbour scans, run on a helper thread beside the keyword stage. */
  denseSearch: (query: DenseQuery) => Promise<DenseHit[]>;
  /** Lifetime of signed upload URLs. */
  uploadTtlMs: number;
  /** Webhook delivery settings (--allow-insecure-webhooks, the retry scale, the receivers' timeout). */
  webhooks: WebhookConfig;
  /** Wakes the webhook dispatcher after deliveries were made due (a replay, a webhook turned back on). */
  wakeWebhookDispatcher: () => void;
  /** Wakes the indexing worker after jobs were queued. */
  notifyWork: () => void;
  /** Tells the indexing worker to abandon a job that was canceled while running. */
  notifyCancel: (jobId: string) => void;
  /** Base URL used for signed URLs, e.g. http://127.0.0.1:7410 */
  publicBaseUrl: () => string;
  /** False while the store is not ready to serve (start-up, shutdown). */
  ready: () => boolean;
  /**
   * Aborted when the daemon's shutdown drain is over (docs/decisions.md, "Stopping"): work still
   * running for a request gives up, and the request is answered with `shutdownError()`.
   */
  shutdown: AbortSignal;
  /** False while the indexing worker is down (crashed and about to restart). */
  indexerAlive: () => boolean;
}

/** The answer to a request still running when the shutdown drain ends: retry it once the daemon is back. */
export function shutdownError(): TroveError {
  return new TroveError('temporarily_unavailable', 'The daemon is stopping and could not finish this request in time; retry it once the daemon is back.', { reason: 'shutdown' }, { retryable: true });
}
