import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { fetchWithTimeout } from '@agentyard/http';
import { SignInErrors } from '../errors.ts';

const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const OAUTH = 'https://schemas.openid.net/secevent/oauth/event-type/';

/** The event kinds the receiver acts on or records (note the `oauth` namespace of tokens-revoked). */
export const SECURITY_EVENT_KINDS = {
  accountDisabled: `${RISC}account-disabled`,
  accountEnabled: `${RISC}account-enabled`,
  sessionsRevoked: `${RISC}sessions-revoked`,
  tokensRevoked: `${OAUTH}tokens-revoked`,
  credentialChangeRequired: `${RISC}account-credential-change-required`,
  verification: `${RISC}verification`,
} as const;

/** Key set and discovery document are cached this long (24 hours). */
export const KEY_SET_CACHE_MS = 24 * 3600 * 1000;

export interface SecurityEventToken {
  jti: string;
  iss: string;
  events: Record<string, Record<string, unknown>>;
}

export interface SecurityEventSettings {
  configurationUrl: string;
  audiences: string[];
  timeoutMs: number;
  /** Least time between two key-set fetches (an unknown `kid` refetches after it). */
  keySetCooldownMs: number;
}

interface Transmitter {
  issuer: string;
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

/** Validates security event tokens (RFC 8417) against the transmitter's discovery document and keys. */
export class SecurityEventVerifier {
  #settings: SecurityEventSettings;
  #transmitter: Promise<Transmitter> | undefined;

  constructor(settings: SecurityEventSettings) {
    this.#settings = settings;
  }

  get configured(): boolean {
    return this.#settings.audiences.length > 0;
  }

  async #discover(): Promise<Transmitter> {
    const { configurationUrl, timeoutMs, keySetCooldownMs } = this.#settings;
    const response = await fetchWithTimeout(configurationUrl, { timeoutMs, headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`discovery document answered ${response.status}`);
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (typeof document.issuer !== 'string' || typeof document.jwks_uri !== 'string')
      throw new Error('discovery document lacks issuer or jwks_uri');
    const keys = createRemoteJWKSet(new URL(document.jwks_uri), {
      cacheMaxAge: KEY_SET_CACHE_MS,
      cooldownDuration: keySetCooldownMs,
      timeoutDuration: timeoutMs,
    });
    return { issuer: document.issuer, keys, fetchedAt: Date.now() };
  }

  async #current(): Promise<Transmitter> {
    const cached = this.#transmitter ? await this.#transmitter.catch(() => undefined) : undefined;
    if (!cached || Date.now() - cached.fetchedAt > KEY_SET_CACHE_MS) {
      this.#transmitter = this.#discover();
      this.#transmitter.catch(() => {
        this.#transmitter = undefined;
      });
    }
    return this.#transmitter!;
  }

  /** The token's claims when issuer, audience and RS256 signature check out; else 400. */
  async verify(token: string): Promise<SecurityEventToken> {
    if (!this.configured) throw SignInErrors.securityEventsNotConfigured();
    let transmitter: Transmitter;
    try {
      transmitter = await this.#current();
    } catch {
      // Cannot fetch the provider's keys: the transmitter retries a non-2xx later.
      throw SignInErrors.securityEventsUnavailable();
    }
    try {
      const { payload } = await jwtVerify(token, transmitter.keys, {
        issuer: transmitter.issuer,
        audience: this.#settings.audiences,
        algorithms: ['RS256'],
      });
      const events = payload.events as unknown;
      if (typeof payload.jti !== 'string' || !payload.jti || payload.jti.length > 256) throw new Error('jti missing');
      if (!events || typeof events !== 'object' || Array.isArray(events) || Object.keys(events).length === 0)
        throw new Error('events missing');
      for (const data of Object.values(events))
        if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('event data is not an object');
      return { jti: payload.jti, iss: transmitter.issuer, events: events as SecurityEventToken['events'] };
    } catch {
      throw SignInErrors.invalidSecurityEvent();
    }
  }
}
