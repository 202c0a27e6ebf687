import { parseCookie, stringifySetCookie } from 'cookie';
import { OAUTH_BINDING_COOKIE } from '@agentyard/proto-schemas';
import { OAUTH_FLOW_TTL_SECONDS } from './oauth-states.ts';

/**
 * The Set-Cookie value that hands the browser its flow binding (or clears it, for null): HttpOnly,
 * SameSite=Lax (the provider's redirect back is a top-level GET, so the browser sends it), only
 * under /api/auth, Secure over https, as long as the flow lives.
 */
export function oauthBindingCookie(binding: string | null, publicBaseUrl: string): string {
  return stringifySetCookie({
    name: OAUTH_BINDING_COOKIE,
    value: binding ?? '',
    maxAge: binding === null ? 0 : OAUTH_FLOW_TTL_SECONDS,
    path: '/api/auth',
    httpOnly: true,
    sameSite: 'lax',
    secure: publicBaseUrl.startsWith('https://'),
  });
}

export function readOAuthBinding(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  return parseCookie(cookieHeader)[OAUTH_BINDING_COOKIE] || undefined;
}
