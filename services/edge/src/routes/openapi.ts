import type { ServiceApp } from '@agentyard/http';
import { catalog, type RouteSpec, type Surface } from '@agentyard/proto-schemas';
import type { EdgeConfig } from '../config.ts';

/** The surface's OpenAPI document, built once: `/api/openapi.json` on the web, `/openapi.json` on the backend. */
export default async function openApi(
  app: ServiceApp,
  { surface, config, routes }: { surface: Surface; config: EdgeConfig; routes: RouteSpec[] },
) {
  const docs = openApiDocument(
    surface,
    surface === 'web' ? config.PUBLIC_BASE_URL : `http://${config.EDGE_BACKEND_HOST}:${config.EDGE_BACKEND_PORT}`,
    routes,
  );
  app.get(surface === 'web' ? '/api/openapi.json' : '/openapi.json', { config: { edgeLocal: true } }, async () => docs);
}

/** The OpenAPI 3.1 document of one surface, from the catalog's schemas (JSON Schema as is). */
export function openApiDocument(surface: Surface, serverUrl: string, routes: RouteSpec[] = catalog) {
  const paths: Record<string, Record<string, object>> = {};
  for (const spec of routes.filter((r) => r.surfaces.includes(surface))) {
    const path = spec.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
    const methods = Array.isArray(spec.method) ? spec.method : [spec.method];
    const query = spec.schema.querystring as { properties?: Record<string, object>; required?: string[] } | undefined;
    const pathParams = [...spec.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
    const parameters = [
      ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: query?.required?.includes(name) ?? false,
        schema,
      })),
    ];
    const security =
      surface === 'backend'
        ? spec.backendKey === false
          ? []
          : [{ internalApiKey: [] }]
        : spec.auth === 'none'
          ? []
          : [{ session: [] }, { userApiKey: [] }];
    for (const method of methods) {
      (paths[path] ??= {})[method.toLowerCase()] = {
        operationId: operationId(method, spec.url),
        summary: spec.summary,
        tags: [spec.service],
        parameters,
        security,
        ...(spec.schema.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: spec.schema.body } } } }
          : {}),
        responses: Object.fromEntries(
          Object.entries(spec.schema.response).map(([status, schema]) => [
            status,
            { description: status, content: { 'application/json': { schema } } },
          ]),
        ),
      };
    }
  }
  return JSON.parse(
    JSON.stringify({
      openapi: '3.1.0',
      info: { title: `Agentyard ${surface} API`, version: '1' },
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'agentyard-session' },
          internalApiKey: {
            type: 'http',
            scheme: 'bearer',
            description: "the platform's INTERNAL_API_KEY (backend callers)",
          },
          userApiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_…',
            description: 'a user API key (`Authorization: Bearer sk_…`, created at POST /api/keys): acts as its owner',
          },
        },
      },
      paths,
    }),
  );
}

/** A stable id per operation from its method and url, e.g. `getApiAgentsById` for GET /api/agents/:id. */
export function operationId(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((part) => (part === '*' ? 'path' : part.startsWith(':') ? `by-${part.slice(1)}` : part));
  const camel = words
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  return `${method.toLowerCase()}${camel}`;
}
