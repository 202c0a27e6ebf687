import { createHmac } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { safeEqual } from '@agentyard/crypto';
import { SignInErrors } from '../errors.ts';
import { KEY_SET_CACHE_MS } from './security-events.ts';

export interface FarcasterSettings {
  issuer: string;
  jwksUrl: string;
  audience: string;
  sessionSecret: string;
  sessionTtlSeconds: number;
  refreshWindowSeconds: number;
  timeoutMs: number;
}

interface SessionClaims {
  fid: number;
  iat: number;
  exp: number;
}

/** Farcaster sign-in: identity tokens checked against the issuer's keys, sessions as HMAC-signed tokens. */
export class FarcasterAuth {
  readonly settings: FarcasterSettings;
  #keys: JWTVerifyGetKey;

  constructor(settings: FarcasterSettings) {
    this.settings = settings;
    this.#keys = createRemoteJWKSet(new URL(settings.jwksUrl), {
      cacheMaxAge: KEY_SET_CACHE_MS,
      timeoutDuration: settings.timeoutMs,
    });
  }

  /** The farcaster id an identity token vouches for (issuer, audience, expiry and signature checked). */
  async verifyIdentityToken(token: string): Promise<number> {
    try {
      const { payload } = await jwtVerify(token, this.#keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
      });
      const fid = typeof payload.sub === 'string' ? Number(payload.sub) : payload.sub;
      if (!Number.isSafeInteger(fid) || (fid as number) <= 0) throw new Error('sub is not a farcaster id');
      return fid as number;
    } catch {
      throw SignInErrors.invalidIdentityToken();
    }
  }

  #sign(data: string): string {
    return createHmac('sha256', this.settings.sessionSecret).update(data).digest('base64url');
  }

  /** `{base64url-data}.{base64url-signature}`, HMAC-SHA256 over the data part. */
  issueSession(fid: number, now = Date.now()): { sessionToken: string; fid: number; expiresAt: string } {
    const iat = Math.floor(now / 1000);
    const claims: SessionClaims = { fid, iat, exp: iat + this.settings.sessionTtlSeconds };
    const data = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { sessionToken: `${data}.${this.#sign(data)}`, fid, expiresAt: new Date(claims.exp * 1000).toISOString() };
  }

  /** The claims of a token we signed; unsigned (older format) or tampered tokens are refused. */
  readSession(token: string): SessionClaims {
    const parts = token.split('.');
    if (parts.length !== 2 || !parts[0] || !parts[1] || !safeEqual(parts[1], this.#sign(parts[0])))
      throw SignInErrors.invalidFarcasterSession();
    let claims: Partial<SessionClaims>;
    try {
      claims = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as Partial<SessionClaims>;
    } catch {
      throw SignInErrors.invalidFarcasterSession();
    }
    if (!Number.isSafeInteger(claims.fid) || !Number.isSafeInteger(claims.exp) || !Number.isSafeInteger(claims.iat))
      throw SignInErrors.invalidFarcasterSession();
    return claims as SessionClaims;
  }

  /** A new token for a signed one, unless it expired longer ago than the refresh window. */
  refreshSession(token: string, now = Date.now()) {
    const claims = this.readSession(token);
    if ((claims.exp + this.settings.refreshWindowSeconds) * 1000 <= now) throw SignInErrors.farcasterSessionExpired();
    return this.issueSession(claims.fid, now);
  }
}
