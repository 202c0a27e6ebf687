import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@agentyard/http';
import { catalog } from '@agentyard/proto-schemas';
import apiDocs from '../src/routes/api-docs.ts';
import consolePages, { CONSOLE_CSP } from '../src/routes/console.ts';
import { openApiDocument } from '../src/routes/openapi.ts';

/** A built console as Vite lays it out: index.html, hashed assets, a public file. */
function fakeBuild(): string {
  const dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(
    join(dist, 'index.html'),
    '<!doctype html><title>Agentyard</title><script type="module" src="/assets/index-Ab12Cd34.js"></script>',
  );
  writeFileSync(join(dist, 'assets', 'index-Ab12Cd34.js'), 'console.log("app")');
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dist, '.source-hash'), 'abc');
  return dist;
}

async function serve(t: Test, dist: string) {
  const app = createServer({ name: 'edge-web', logLevel: 'silent' });
  await app.register(consolePages, { dist });
  await app.register(apiDocs);
  t.teardown(() => app.close());
  return app;
}

t.test('every page path answers the app, never cached, under a strict policy', async (t) => {
  const app = await serve(t, fakeBuild());
  for (const url of [
    '/',
    '/dashboard',
    '/login?error=GoogleAuthFailed',
    '/reset-password?token=abc',
    '/agents/5b0c/config',
  ]) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.match(res.body, /<title>Agentyard<\/title>/);
    t.equal(res.headers['cache-control'], 'no-cache');
    t.equal(res.headers['content-security-policy'], CONSOLE_CSP);
    t.match(res.headers['content-type'], /^text\/html/);
  }
  t.match(CONSOLE_CSP, /script-src 'self'(;|$)/, 'scripts from this origin only: no inline, no eval');
  t.notMatch(CONSOLE_CSP, /unsafe/);
  const head = await app.inject({ method: 'HEAD', url: '/dashboard' });
  t.equal(head.statusCode, 200);
});

t.test('hashed assets are cached for a year; other files for an hour; the build record is not served', async (t) => {
  const app = await serve(t, fakeBuild());
  const asset = await app.inject({ method: 'GET', url: '/assets/index-Ab12Cd34.js' });
  t.equal(asset.statusCode, 200);
  t.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.match(asset.headers['content-type'], /^text\/javascript/);
  t.equal(asset.body, 'console.log("app")');
  const icon = await app.inject({ method: 'GET', url: '/favicon.svg' });
  t.equal(icon.headers['cache-control'], 'public, max-age=3600');
  t.equal(icon.headers['content-type'], 'image/svg+xml');
  const gone = await app.inject({ method: 'GET', url: '/assets/index-Old00000.js' });
  t.equal(gone.statusCode, 404, "an old build's asset is a 404, not the page as script");
  const hidden = await app.inject({ method: 'GET', url: '/.source-hash' });
  t.match(hidden.body, /<title>Agentyard/, 'dot files are not served: the path is a page');
  const outside = await app.inject({ method: 'GET', url: '/assets/..%2f..%2fetc%2fpasswd' });
  t.equal(outside.statusCode, 404, 'no way out of the build directory');
  const malformed = await app.inject({ method: 'GET', url: '/%E0%A4%A' });
  t.equal(malformed.statusCode, 400, "a malformed escape is the client's mistake");
});

t.test('/api paths are never the app', async (t) => {
  const app = await serve(t, fakeBuild());
  for (const url of ['/api', '/api/', '/api/nothing-here']) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 404, url);
    t.same(res.json(), { error: 'Not found' });
  }
});

t.test('without a build the pages say how to get one', async (t) => {
  const app = await serve(t, join(tmpdir(), 'no-such-console-build'));
  const res = await app.inject({ method: 'GET', url: '/dashboard' });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { error: /not built: run npm start/ });
});

t.test('/api/docs is Swagger UI from the installed package, on the OpenAPI document', async (t) => {
  const app = await serve(t, fakeBuild());
  const page = await app.inject({ method: 'GET', url: '/api/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.body, /<script src="\/api\/docs\/swagger-ui-bundle.js"><\/script>/);
  t.notMatch(page.body, /<script>/, 'no inline script');
  t.notMatch(page.body, /https?:\/\//, 'nothing from another host');
  t.match(page.headers['content-security-policy'], /script-src 'self';/);
  const start = await app.inject({ method: 'GET', url: '/api/docs/start.js' });
  t.match(start.body, /url: '\/api\/openapi.json'/);
  t.match(start.body, /displayOperationId: true/);
  const bundle = await app.inject({ method: 'GET', url: '/api/docs/swagger-ui-bundle.js' });
  t.equal(bundle.statusCode, 200);
  t.ok(bundle.body.length > 100_000, 'the real bundle');
  t.equal((await app.inject({ method: 'GET', url: '/api/docs/..%2Fpackage.json' })).statusCode, 404);
});

t.test('the OpenAPI documents name every operation once and the sk_ bearer scheme', async (t) => {
  for (const surface of ['web', 'backend'] as const) {
    const doc = openApiDocument(surface, 'http://127.0.0.1:3000', catalog) as {
      paths: Record<string, Record<string, { operationId: string; security: object[] }>>;
      components: { securitySchemes: Record<string, { scheme?: string; bearerFormat?: string }> };
    };
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    t.ok(
      ids.every((id) => /^[a-z]+[A-Za-z0-9]+$/.test(id)),
      `${surface}: every operation has an id`,
    );
    t.equal(new Set(ids).size, ids.length, `${surface}: ids are unique`);
    t.has(doc.components.securitySchemes.userApiKey, { scheme: 'bearer', bearerFormat: 'sk_…' });
  }
  const web = openApiDocument('web', 'http://127.0.0.1:3000', catalog) as {
    paths: Record<string, Record<string, { operationId: string; security: object[] }>>;
  };
  t.equal(web.paths['/api/agents/{id}']!.get!.operationId, 'getApiAgentsById');
  t.same(
    web.paths['/api/keys']!.get!.security,
    [{ session: [] }, { userApiKey: [] }],
    'a user route takes the session or a user API key',
  );
});
