/** The web session cookie (spec §2 Session, §5.1). Only the edge reads it; auth sets and clears it. */
export const SESSION_COOKIE = 'agentyard-session';
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export function sessionCookieOptions(publicBaseUrl: string) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    path: '/',
    secure: publicBaseUrl.startsWith('https://'),
    maxAge: SESSION_TTL_SECONDS,
  };
}

/** A Set-Cookie value for `token` (Max-Age and Expires both set), or one that clears the cookie. */
export function serializeSessionCookie(token: string | null, publicBaseUrl: string, now = Date.now()): string {
  const options = sessionCookieOptions(publicBaseUrl);
  const maxAge = token === null ? 0 : options.maxAge;
  const parts = [`${SESSION_COOKIE}=${token ?? ''}`, `Max-Age=${maxAge}`, `Expires=${new Date(token === null ? 0 : now + maxAge * 1000).toUTCString()}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The session token in a Cookie header, or null. */
export function readSessionCookie(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value || null;
    }
  }
  return null;
}
