// GET /openapi.json, generated from the route table and the same zod schemas that validate requests.
import { z } from 'zod';
import { API_VERSION } from '../domain/info.js';
import type { RouteDef } from './router.js';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
}

export function openApiDocument(routes: RouteDef[]): unknown {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters: unknown[] = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (r.query) {
      const q = jsonSchema(r.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[{}]/g, '').replace(/[/:-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      parameters,
      security: r.permission.kind === 'none' ? [] : [{ bearer: [] }, { apiKey: [] }],
      'x-permission': r.permission,
      responses: Object.fromEntries(
        Object.entries(r.responses).map(([status, resp]) => [
          status,
          { description: resp.description, ...(resp.schema ? { content: { 'application/json': { schema: jsonSchema(resp.schema, 'output') } } } : {}) },
        ]),
      ),
    };
    const bodySchema = r.docBody ?? r.body;
    if (bodySchema) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(bodySchema, 'input') } } };
    if (r.streamBody) op.requestBody = { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'trove retrieval API', version: API_VERSION },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
    paths,
  };
}
