// The node:http adapter: IncomingMessage → AppRequest → ServerResponse. All behaviour lives in the Router.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { App } from './app.js';
import { errorResponse, newRequestId } from './router.js';
import { asTroveError } from '../contract/errors.js';

export function createHttpServer(app: App): Server {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    app
      .handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body: hasBody ? req : null })
      .catch((err: unknown) => errorResponse(asTroveError(err), newRequestId()))
      .then(async (out) => {
        res.writeHead(out.status, out.headers);
        if (out.stream) {
          // Until the client goes away or the daemon stops; then the generator is closed.
          const iterator = out.stream[Symbol.asyncIterator]();
          let open = true;
          res.on('close', () => {
            open = false;
            void iterator.return?.();
          });
          res.flushHeaders();
          while (open) {
            const next = await iterator.next();
            if (next.done) break;
            res.write(next.value);
          }
          res.end();
          return;
        }
        res.end(out.body ?? undefined);
        // A body we stopped reading (413) is drained so the client reads our answer, not a reset.
        if (!req.complete) req.resume();
      });
  });
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 30000;
  server.requestTimeout = 15 * 60 * 1000;
  return server;
}
