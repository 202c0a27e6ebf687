import { IDENTITY_HEADER, UPGRADE_CHECK_HEADER } from '@agentyard/identity';
import type { Surface } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import { hopHeaders } from './forward.ts';
import type { ServiceRoutes } from './routing.ts';

/** The named cookies of a request (web listener: parsed by @fastify/cookie), re-serialized; undefined when none of them is there. */
function onlyCookies(request: FastifyRequest, names: ReadonlySet<string> | undefined): string | undefined {
  if (!names || !request.cookies) return undefined;
  const kept = Object.entries(request.cookies).filter(([name, value]) => names.has(name) && value !== undefined);
  return kept.length
    ? kept.map(([name, value]) => request.server.serializeCookie(name, value!, {})).join('; ')
    : undefined;
}

/**
 * What a service receives of a request's headers: neither hop-by-hop ones nor anything that would
 * speak for the caller (cookies but those the route names, the identity header, `Authorization`
 * unless the route passes it on, a web caller's `x-user-*`); the edge alone does, in the signed
 * identity header.
 */
export function forwardedHeaders(
  request: FastifyRequest,
  headers: Record<string, unknown>,
  surface: Surface,
  routes: ServiceRoutes,
) {
  const out: Record<string, string | string[]> = {};
  const url = request.routeOptions.url ?? '';
  const keepAuthorization = routes.bearerForwarded.has(url);
  const hop = hopHeaders(headers.connection);
  for (const name in headers) {
    const value = headers[name];
    if (
      value === undefined ||
      hop.has(name) ||
      name === 'content-length' ||
      name === 'cookie' ||
      name === IDENTITY_HEADER ||
      name === UPGRADE_CHECK_HEADER
    )
      continue;
    if ((name === 'authorization' && !keepAuthorization) || (surface === 'web' && name.startsWith('x-user-'))) continue;
    out[name] = value as string | string[];
  }
  const cookie = onlyCookies(request, routes.cookiesForwarded.get(url));
  if (cookie) out.cookie = cookie;
  out[IDENTITY_HEADER] = request.identityHeader;
  out['x-request-id'] = request.id;
  out['x-forwarded-for'] = request.ip;
  out['x-forwarded-proto'] = request.protocol;
  return out;
}
