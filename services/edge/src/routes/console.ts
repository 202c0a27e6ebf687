import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { repoRoot } from '@agentyard/config';
import type { ServiceApp } from '@agentyard/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EdgeErrors } from '../errors.ts';

/** Where `vite build` puts the console (services/console); the edge serves what it finds there at start. */
export const CONSOLE_DIST = join(repoRoot, 'services', 'console', 'dist');

/**
 * The console's policy: only its own scripts, styles, images and API; no inline script, no framing,
 * forms only to this origin (the development checkout posts to the API).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

interface Asset {
  body: Buffer;
  type: string;
  immutable: boolean;
}

/** Every file of a built console by its url path; Vite's `assets/` files carry a content hash in their names. */
export function loadConsoleAssets(dist: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.startsWith('.')) {
        const url = `/${relative(dist, path).split(sep).join('/')}`;
        assets.set(url, {
          body: readFileSync(path),
          type: TYPES[extname(path)] ?? 'application/octet-stream',
          immutable: url.startsWith('/assets/'),
        });
      }
    }
  };
  if (existsSync(dist) && statSync(dist).isDirectory()) walk(dist);
  return assets;
}

/** The decoded path of a request url; a malformed escape is the client's mistake. */
export function urlPath(url: string): string {
  try {
    return decodeURIComponent(url.split('?')[0]!);
  } catch {
    throw EdgeErrors.malformedPath();
  }
}

export function securityHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
}

/**
 * The console on the web surface: GET/HEAD of every non-`/api` path. A built file is served as is
 * (hashed assets cached for a year, immutable); any other path is a page of the single-page app,
 * answered with index.html, never cached so a new build is picked up at once.
 */
export default async function consolePages(app: ServiceApp, options: { dist?: string }) {
  const assets = loadConsoleAssets(options.dist ?? CONSOLE_DIST);
  const index = assets.get('/index.html');
  if (!index) app.log.warn(`the console is not built (${options.dist ?? CONSOLE_DIST}): npm start builds it`);
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = urlPath(request.url);
    if (path === '/api' || path.startsWith('/api/')) throw EdgeErrors.notFound();
    const asset = assets.get(path);
    if (asset && asset !== index) {
      return securityHeaders(reply, CONSOLE_CSP)
        .type(asset.type)
        .header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600')
        .send(asset.body);
    }
    if (!index) throw EdgeErrors.consoleNotBuilt();
    // A missing hashed asset is an old build's file: a 404, not the app's page served as JavaScript.
    if (path.startsWith('/assets/')) throw EdgeErrors.notFound();
    return securityHeaders(reply, CONSOLE_CSP).type(index.type).header('cache-control', 'no-cache').send(index.body);
  };
  app.route({ method: ['GET', 'HEAD'], url: '/*', config: { edgeLocal: true, unmatched: true }, handler: serve });
}
