import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ServiceApp } from '@agentyard/http';
import { securityHeaders } from './console.ts';
import { EdgeErrors } from '../errors.ts';

const swaggerDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Swagger UI's own style sheet and scripts, read once from the installed package: nothing comes from a CDN. */
const FILES: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
};

// The page loads no inline script (the policy forbids it): its start-up is a file of its own.
// Tags start collapsed: with every tag expanded, Swagger UI 5.35 stopped rendering after the first
// ten operations once the API passed about 143 (no error shown); collapsed, every tag renders and opens.
const START = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, displayOperationId: true, docExpansion: 'none', withCredentials: true, tryItOutEnabled: false });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agentyard API</title>
<link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png">
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
<main id="swagger-ui"></main>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/start.js"></script>
</body>
</html>
`;

// Swagger UI sets style attributes and inline SVG images as it renders; scripts stay self-only.
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/** Interactive docs of the web API at /api/docs: Swagger UI over /api/openapi.json. */
export default async function apiDocs(app: ServiceApp) {
  const files = new Map(
    Object.entries(FILES).map(([name, { file, type }]) => [
      name,
      { body: readFileSync(join(swaggerDist, file)), type },
    ]),
  );
  files.set('start.js', { body: Buffer.from(START), type: 'text/javascript; charset=utf-8' });
  app.get('/api/docs', { config: { edgeLocal: true } }, async (_request, reply) =>
    securityHeaders(reply, DOCS_CSP).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(PAGE),
  );
  app.get<{ Params: { file: string } }>('/api/docs/:file', { config: { edgeLocal: true } }, async (request, reply) => {
    const file = files.get(request.params.file);
    if (!file) throw EdgeErrors.notFound();
    return securityHeaders(reply, DOCS_CSP)
      .type(file.type)
      .header('cache-control', 'public, max-age=86400')
      .send(file.body);
  });
}
