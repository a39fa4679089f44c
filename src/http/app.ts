import type { Services } from '../domain/context.js';
import { openApiDocument } from './openapi.js';
import { route, Router, type AppRequest, type AppResponse, type Logger, type RouteDef } from './router.js';
import { dataPlaneRoutes } from './routes.js';
import { webhookRoutes } from './workspace-routes.js';

export interface App {
  handle(req: AppRequest): Promise<AppResponse>;
  routes: RouteDef[];
}

export function createApp(s: Services, log: Logger): App {
  const routes = [...dataPlaneRoutes(), ...webhookRoutes()];
  let openapi: string | undefined;
  routes.push(
    route({
      method: 'GET',
      path: '/openapi.json',
      summary: 'This document',
      permission: { kind: 'none' },
      responses: { 200: { description: 'OpenAPI 3.1' } },
      // Built on first request, not at start-up: start-up time is part of the contract for fixtures.
      handler: () => ({ status: 200, raw: { bytes: Buffer.from((openapi ??= JSON.stringify(openApiDocument(routes)))), contentType: 'application/json; charset=utf-8' } }),
    }),
  );
  const router = new Router(routes, s, log);
  return { handle: (req) => router.handle(req), routes };
}
