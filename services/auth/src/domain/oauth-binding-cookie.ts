import { OAUTH_BINDING_COOKIE } from '@agentyard/proto-schemas';
import { OAUTH_FLOW_TTL_SECONDS } from './oauth-states.ts';

export { OAUTH_BINDING_COOKIE };

/**
 * How the browser's flow binding is set (`reply.setCookie`; `reply.clearCookie` ends it): HttpOnly,
 * SameSite=Lax (the provider's redirect back is a top-level GET, so the browser sends it), only
 * under /api/auth, Secure over https, as long as the flow lives.
 */
export function oauthBindingCookieOptions(publicBaseUrl: string) {
  return {
    maxAge: OAUTH_FLOW_TTL_SECONDS,
    path: '/api/auth',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: publicBaseUrl.startsWith('https://'),
  };
}
