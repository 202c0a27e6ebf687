import { createHmac } from 'node:crypto';
import { safeEqual } from '@agentyard/crypto';
import type { Surface } from '@agentyard/proto-schemas';

/** The header the edge sets on every request it forwards; services trust nothing else. */
export const IDENTITY_HEADER = 'x-agentyard-identity';

/**
 * Set by the edge on the plain GET it sends a service before letting a web WebSocket upgrade
 * through (services/edge/src/plugins/upgrade-check.ts): the route runs its checks and answers 200 or its refusal.
 */
export const UPGRADE_CHECK_HEADER = 'x-agentyard-upgrade-check';

/** How the edge authenticated the caller: a session cookie, a user API key, the internal API key, or nothing. */
export type AuthMethod = 'session' | 'user-key' | 'service' | 'none';

export interface Identity {
  surface: Surface;
  auth: AuthMethod;
  /** The signed-in user; for service callers, the user context they pass (`x-user-id`). */
  userId: string | null;
  email: string | null;
  admin: boolean;
  sessionId: string | null;
  /** The user API key (`sk_…`) the caller authenticated with (`auth: 'user-key'`), else null: its own limits follow it. */
  keyId: string | null;
  requestId: string;
}

interface Envelope extends Identity {
  exp: number;
}

const VERSION = 'v1';

function sign(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** Seals an identity for `ttlSeconds` (short: it only has to survive one hop). */
export function signIdentity(identity: Identity, secret: string, ttlSeconds = 30, now = Date.now()): string {
  const envelope: Envelope = { ...identity, exp: Math.floor(now / 1000) + ttlSeconds };
  const payload = Buffer.from(JSON.stringify(envelope)).toString('base64url');
  return `${VERSION}.${payload}.${sign(`${VERSION}.${payload}`, secret)}`;
}

/** The identity a header carries, or null when it is missing, forged, malformed or expired. */
export function verifyIdentity(header: string | undefined, secret: string, now = Date.now()): Identity | null {
  if (!header) return null;
  const [version, payload, signature] = header.split('.');
  if (version !== VERSION || !payload || !signature) return null;
  if (!safeEqual(signature, sign(`${version}.${payload}`, secret))) return null;
  let envelope: Envelope;
  try {
    envelope = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Envelope;
  } catch {
    return null;
  }
  if (typeof envelope.exp !== 'number' || envelope.exp * 1000 < now) return null;
  const { exp: _exp, ...identity } = envelope;
  // A key id means something only beside the key it names.
  return {
    ...identity,
    keyId: identity.auth === 'user-key' && typeof identity.keyId === 'string' ? identity.keyId : null,
  };
}

export { SESSION_COOKIE, SESSION_TTL_SECONDS, sessionCookieOptions } from './session-cookie.ts';
export {
  announceUserChanged,
  identityChangesChannel,
  userChanged,
  type IdentityChangePublisher,
} from './identity-changes.ts';

/** Admin = email in ADMIN_EMAILS, case-insensitive. */
export function isAdminEmail(email: string | null | undefined, adminEmails: ReadonlySet<string>): boolean {
  return !!email && adminEmails.has(email.trim().toLowerCase());
}
