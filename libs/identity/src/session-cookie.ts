/** The web session cookie. Only the edge reads it; auth sets and clears it. */
export const SESSION_COOKIE = 'agentyard-session';
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

/**
 * How auth sets the session cookie (`reply.setCookie`, @fastify/cookie): HttpOnly, Lax, site-wide,
 * Secure over https, Max-Age and Expires both (older clients know only Expires). `reply.clearCookie`
 * with the same options ends it.
 */
export function sessionCookieOptions(publicBaseUrl: string, now = Date.now()) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    path: '/',
    secure: publicBaseUrl.startsWith('https://'),
    maxAge: SESSION_TTL_SECONDS,
    expires: new Date(now + SESSION_TTL_SECONDS * 1000),
  };
}
