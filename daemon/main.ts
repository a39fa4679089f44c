// `trove daemon start`: open the data dir and serve HTTP until SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server.js';
import { createOperatorRouter } from '../src/rpc/router.js';
import { packageVersion } from '../src/contract/version.js';
import { startOperatorServer, type OperatorServer } from '../src/rpc/server.js';
import { removeListeningRecord, writeListeningRecord } from './listening.js';
import { ERROR_TABLE } from '../src/contract/errors.js';
import { DEFAULT_DRAIN_SECONDS, DEFAULT_HOST, DEFAULT_PORT } from './config.js';
import { UserError } from './user-error.js';
import { openRuntime, type Runtime, type RuntimeOptions } from './runtime.js';

export interface DaemonOptions extends RuntimeOptions {
  host?: string;
  port?: number;
  /** Allow a non-loopback address without TLS (decisions.md §1). */
  insecure?: boolean;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  /** false: no operator socket (decisions.md §1); by default `<data-dir>/operator.sock` serves it. */
  operator?: boolean;
  /**
   * What `daemon.stop` on the operator channel does; `trove daemon start` passes its SIGTERM path
   * (stop, then exit). By default the daemon stops in-process.
   */
  onStopRequest?: () => void;
  /**
   * On stop, how long requests in flight may take to finish before they are answered 503 and
   * their connections closed (docs/decisions.md, "Stopping"); default DEFAULT_DRAIN_SECONDS.
   */
  drainSeconds?: number | undefined;
}

export interface RunningDaemon {
  url: string;
  dataDir: string;
  clusterKeyFile: string;
  runtime: Runtime;
  /** The operator channel's Unix socket, or null when it is off. */
  operatorSocket: string | null;
  stop(): Promise<void>;
}

function readTlsFile(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UserError(`Cannot read ${flag} ${file}: ${(err as Error).message}`, 1, { cause: err });
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

export async function startDaemon(options: DaemonOptions = {}): Promise<RunningDaemon> {
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const tls = options.tlsCert && options.tlsKey ? { cert: readTlsFile('--tls-cert', options.tlsCert), key: readTlsFile('--tls-key', options.tlsKey) } : null;
  if (!isLoopback(host) && !tls && !options.insecure) {
    throw new UserError(`Listening on ${host} exposes the API beyond this machine: pass --tls-cert and --tls-key, or --insecure to accept plain HTTP.`);
  }
  const drainSeconds = options.drainSeconds ?? DEFAULT_DRAIN_SECONDS;
  if (!(drainSeconds >= 0) || !Number.isFinite(drainSeconds)) throw new Error(`drainSeconds must be a number of seconds from 0, got ${drainSeconds}`);
  const runtime = await openRuntime(options);
  const http = createHttpServer(runtime.app, { log: options.log ?? { info() {}, error() {} }, tls });
  const server = http.server;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    await runtime.close();
    const code = (err as NodeJS.ErrnoException).code;
    // A conflict, as a locked data dir is: the CLI exits 6 (ERROR_TABLE's already_exists).
    if (code === 'EADDRINUSE') throw new UserError(`Port ${port} on ${host} is in use: is another daemon running? Use --port to pick another (0 picks a free one).`, ERROR_TABLE.already_exists.exitCode, { cause: err });
    // A privileged port, or an address this machine does not have: Node's message says which.
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new UserError((err as Error).message, 1, { cause: err });
    throw err;
  }
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${tls ? 'https' : 'http'}://${hostForUrl}:${address.port}`;
  runtime.setPublicBaseUrl(url);
  let stopping: Promise<void> | null = null;
  let operator: OperatorServer | null = null;
  const daemon: RunningDaemon = {
    url,
    dataDir: runtime.dataDir,
    clusterKeyFile: runtime.clusterKeyFile,
    runtime,
    operatorSocket: null,
    stop: () =>
      (stopping ??= (async () => {
        // docs/decisions.md, "Stopping": new requests are refused and event streams and operator
        // subscriptions end at once; the operator socket closes (no new operator work), then HTTP
        // stops accepting and gives requests in flight the drain, after which what still runs is
        // abandoned and answered 503; then the workers stop and the store closes.
        runtime.stopServing();
        // The CLI stops sending here at once (daemon/listening.ts).
        removeListeningRecord(runtime.dataDir);
        await operator?.close();
        await http.shutdown({ drainMs: drainSeconds * 1000, onDrainOver: () => runtime.abandonRequests() });
        await runtime.close();
      })()),
  };
  if (options.operator !== false) {
    const log = options.log ?? { info() {}, error() {} };
    try {
      operator = await startOperatorServer({
        dataDir: runtime.dataDir,
        log,
        router: createOperatorRouter({
          services: runtime.services,
          roots: runtime.roots,
          version: packageVersion(),
          startedAt: runtime.startedAt,
          httpUrl: () => url,
          socketPath: () => operator?.socketPath ?? null,
          requestStop: () => (options.onStopRequest ? options.onStopRequest() : void daemon.stop()),
          log,
        }),
      });
    } catch (err) {
      await http.shutdown({ drainMs: 0 });
      await runtime.close();
      throw err;
    }
    daemon.operatorSocket = operator.socketPath;
  }
  // Last, so a record never names a daemon that is not answering yet. An ephemeral daemon writes it
  // in its own temporary data dir, so it never hides the default data dir's daemon from the CLI.
  writeListeningRecord(runtime.dataDir, { url, pid: process.pid, started_at: new Date().toISOString() });
  return daemon;
}
