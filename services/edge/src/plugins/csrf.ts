import { EdgeErrors } from '../errors.ts';
import type { Identity } from '@agentyard/identity';
import type { FastifyRequest } from 'fastify';
import { isWebSocketUpgrade } from './upgrade-check.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a state-changing request (or a WebSocket upgrade: no cross-site WebSocket hijacking) that a browser made cross-site while
 * the session cookie authenticates it. Same-origin browsers and clients that send no Origin
 * (servers, curl) pass.
 */
export function checkCsrf(request: FastifyRequest, identity: Identity, trustedOrigins: ReadonlySet<string>): void {
  if ((SAFE_METHODS.has(request.method) && !isWebSocketUpgrade(request)) || identity.auth !== 'session') return;
  const origin = typeof request.headers.origin === 'string' ? request.headers.origin : undefined;
  if (origin && trustedOrigins.has(origin)) return;
  const fetchSite = request.headers['sec-fetch-site'];
  const crossSite = fetchSite === 'cross-site' || (origin !== undefined && fetchSite !== 'same-origin');
  if (crossSite) throw EdgeErrors.crossSite();
}

export function trustedOriginSet(publicBaseUrl: string, extra: string): Set<string> {
  const origins = new Set([new URL(publicBaseUrl).origin]);
  for (const entry of extra
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean))
    origins.add(new URL(entry).origin);
  return origins;
}
