import { DataDirLockedError } from '../../../daemon/runtime.js';
import { DEFAULT_HOST, DEFAULT_PORT, startDaemon } from '../../../daemon/main.js';
import { parseRetryScale } from '../../domain/webhooks/config.js';

export interface DaemonStartOptions {
  dataDir?: string;
  host?: string;
  port?: string;
  ephemeral?: boolean;
  json?: boolean;
  allowFileRoot?: string[];
  allowPrivateSources?: boolean;
  allowInsecureWebhooks?: boolean;
  webhookRetryScale?: string;
  insecure?: boolean;
  tlsCert?: string;
  tlsKey?: string;
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer from 0 to 65535, got '${value}'.`);
  return port;
}

const log = {
  info: (message: string, fields: Record<string, unknown> = {}) => console.error(`[trove] ${message}${Object.keys(fields).length ? ' ' + JSON.stringify(fields) : ''}`),
  warn: (message: string, fields: Record<string, unknown> = {}) => console.error(`[trove] warning: ${message}${Object.keys(fields).length ? ' ' + JSON.stringify(fields) : ''}`),
  error: (message: string, fields: Record<string, unknown> = {}) => console.error(`[trove] error: ${message} ${JSON.stringify(fields)}`),
};

/** Runs the daemon in the foreground until SIGINT or SIGTERM. */
export async function runDaemonStart(opts: DaemonStartOptions): Promise<void> {
  const envRoots = (process.env.TROVE_FILE_ROOTS ?? '').split(':').filter(Boolean);
  let daemon;
  try {
    daemon = await startDaemon({
      dataDir: opts.dataDir ?? process.env.TROVE_DATA_DIR,
      ephemeral: opts.ephemeral ?? false,
      host: opts.host ?? process.env.TROVE_HOST ?? DEFAULT_HOST,
      port: parsePort(opts.port ?? process.env.TROVE_PORT),
      clusterKey: process.env.TROVE_CLUSTER_KEY || undefined,
      fileRoots: [...envRoots, ...(opts.allowFileRoot ?? [])],
      allowPrivateSources: opts.allowPrivateSources ?? process.env.TROVE_ALLOW_PRIVATE_SOURCES === '1',
      allowInsecureWebhooks: opts.allowInsecureWebhooks ?? process.env.TROVE_ALLOW_INSECURE_WEBHOOKS === '1',
      webhookRetryScale: parseRetryScale(opts.webhookRetryScale ?? process.env.TROVE_WEBHOOK_RETRY_SCALE),
      insecure: opts.insecure ?? false,
      tlsCert: opts.tlsCert,
      tlsKey: opts.tlsKey,
      log,
    });
  } catch (err) {
    if (err instanceof DataDirLockedError || err instanceof Error) {
      console.error(`trove: ${err.message}`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
  if (opts.json) {
    process.stdout.write(JSON.stringify({ event: 'listening', url: daemon.url, data_dir: daemon.dataDir, cluster_key_file: daemon.clusterKeyFile }) + '\n');
  } else {
    console.log(`trove daemon listening on ${daemon.url}`);
    console.log(`data dir:         ${daemon.dataDir}${opts.ephemeral ? ' (ephemeral: removed on exit)' : ''}`);
    console.log(`cluster key file: ${daemon.clusterKeyFile}`);
    console.log(`try: curl -H "Authorization: Bearer $(cat ${daemon.clusterKeyFile})" ${daemon.url}/info`);
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    signals++;
    if (signals > 1) {
      console.error('[trove] second signal: exiting now');
      process.exit(130);
    }
    log.info(`${signal}: finishing in-flight requests and stopping`);
    daemon.stop().then(
      () => {
        if (opts.json) process.stdout.write(JSON.stringify({ event: 'stopped' }) + '\n');
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
