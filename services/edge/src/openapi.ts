import { catalog, type RouteSpec, type Surface } from '@agentyard/proto-schemas';

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
      ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema })),
    ];
    const security = surface === 'backend'
      ? (spec.backendKey === false ? [] : [{ internalApiKey: [] }])
      : (spec.auth === 'none' ? [] : [{ session: [] }]);
    for (const method of methods) {
      (paths[path] ??= {})[method.toLowerCase()] = {
        summary: spec.summary,
        tags: [spec.service],
        parameters,
        security,
        ...(spec.schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.schema.body } } } } : {}),
        responses: Object.fromEntries(Object.entries(spec.schema.response).map(([status, schema]) => [status, { description: status, content: { 'application/json': { schema } } }])),
      };
    }
  }
  return JSON.parse(JSON.stringify({
    openapi: '3.1.0',
    info: { title: `Agentyard ${surface} API`, version: '1' },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'agentyard-session' },
        internalApiKey: { type: 'http', scheme: 'bearer' },
      },
    },
    paths,
  }));
}
