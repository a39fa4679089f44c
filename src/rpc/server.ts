// Serves the operator router on a Unix socket only this OS user can open (mode 0600, inside the
// 0700 data dir): plain HTTP for queries and mutations (tRPC's standalone handler), WebSocket on the
// same socket for the live event subscription.
import { chmodSync, lstatSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import { TroveError } from '../contract/errors.js';
import type { OperatorContext, OperatorLog, OperatorRouter } from './router.js';
import { ensurePrivateTempFolder, serverSocketPath, socketPointerFile } from './socket.js';

export interface OperatorServer {
  socketPath: string;
  close(): Promise<void>;
}

/** trove's version, from the package.json beside the build (dist/ or a build folder share the root). */

/** A socket file left by a daemon that died: the data-dir lock says no daemon owns it now. */
function removeStaleSocket(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket: move it away so the operator socket can be created.`);
  rmSync(path, { force: true });
}

/**
 * Binds with a umask that leaves the socket 0600 from the moment it exists, so there is no window
 * in which another user could connect; the chmod after is for platforms that ignore it.
 */
function listenPrivately(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    let previous: number | undefined;
    try {
      previous = process.umask(0o177);
    } catch {
      // Worker threads cannot change the umask; the 0700 data dir still shuts others out.
    }
    try {
      // A Unix socket is bound synchronously inside listen(), before the umask is restored.
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
  }).then(() => chmodSync(path, 0o600));
}

export async function startOperatorServer(options: { dataDir: string; router: OperatorRouter; log: OperatorLog }): Promise<OperatorServer> {
  const { dataDir, router, log } = options;
  const { path, fallback } = serverSocketPath(dataDir);
  const pointer = socketPointerFile(dataDir);
  if (fallback) ensurePrivateTempFolder(dirname(path));
  removeStaleSocket(path);

  const onError = ({ error, path: procedure }: { error: { code: string; message: string; cause?: unknown }; path?: string | undefined }) => {
    // A TroveError is an answer (not found, bad input…), not a failure of the daemon.
    if (error.code === 'INTERNAL_SERVER_ERROR' && !(error.cause instanceof TroveError && error.cause.code !== 'internal_error')) {
      log.error('operator call failed', { procedure, cause: String((error.cause as Error | undefined)?.stack ?? error.message) });
    }
  };
  const handler = createHTTPHandler({
    router,
    onError,
    createContext: ({ res }): OperatorContext => ({
      afterReply: (fn) => res.once('finish', () => setImmediate(fn)),
    }),
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => handler(req, res));
  const wss = new WebSocketServer({ server });
  applyWSSHandler({
    wss,
    router,
    onError,
    // The ws adapter sends a reply as soon as the resolver returns; the next turn finds it sent.
    createContext: (): OperatorContext => ({ afterReply: (fn) => setTimeout(fn, 20) }),
  });

  await listenPrivately(server, path);
  if (fallback) writeFileSync(pointer, path + '\n', { mode: 0o600 });
  else rmSync(pointer, { force: true });

  let closing: Promise<void> | null = null;
  return {
    socketPath: path,
    close: () =>
      (closing ??= (async () => {
        // Subscribers are told the daemon is going; a daemon that comes back lets them resume.
        for (const client of wss.clients) {
          client.close(1001, 'daemon stopping');
          setTimeout(() => client.terminate(), 500).unref();
        }
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          // A client holding a connection open must not hold the daemon's stop.
          setTimeout(() => server.closeAllConnections(), 1000).unref();
        });
        rmSync(path, { force: true });
        if (fallback) rmSync(pointer, { force: true });
      })()),
  };
}
