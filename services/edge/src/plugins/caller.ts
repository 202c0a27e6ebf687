import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import { prepared, sql, type AppDb } from '@agentyard/db';
import { hashToken, safeEqual } from '@agentyard/crypto';
import { isAdminEmail, SESSION_COOKIE, type Identity } from '@agentyard/identity';
import type { Surface } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import type { EdgeConfig } from '../config.ts';
import { EdgeErrors } from '../errors.ts';
import type { KnownCallers } from './known-callers.ts';

export interface CallerContext {
  db: AppDb;
  admins: ReadonlySet<string>;
  /** A listed address acts as admin only once verified (everywhere but development). */
  adminNeedsVerifiedEmail: boolean;
  internalApiKey: string | undefined;
  /** Callers resolved lately, kept while every change to them is heard of. */
  known: KnownCallers;
}

/** What resolving callers needs, from the edge's config. */
export function callerContext(config: EdgeConfig, db: AppDb, known: KnownCallers): CallerContext {
  return {
    db,
    admins: adminEmailSet(config.ADMIN_EMAILS),
    adminNeedsVerifiedEmail: adminNeedsVerifiedEmail(config.NODE_ENV),
    internalApiKey: config.INTERNAL_API_KEY,
    known,
  };
}

/** Admin by the list (ADMIN_EMAILS), and by a verified address where that is required. */
const isAdmin = (email: string, emailVerified: boolean, context: CallerContext) =>
  isAdminEmail(email, context.admins) && (emailVerified || !context.adminNeedsVerifiedEmail);

const anonymous = (surface: Surface, requestId: string): Identity => ({
  surface,
  auth: 'none',
  userId: null,
  email: null,
  admin: false,
  sessionId: null,
  keyId: null,
  requestId,
});

/** A trusted server on the backend surface (a key holder, or the edge itself), with the user context it names. */
export const serviceCaller = (
  requestId: string,
  user: { userId: string | null; email: string | null; admin: boolean } = { userId: null, email: null, admin: false },
): Identity => ({
  surface: 'backend',
  auth: 'service',
  ...user,
  sessionId: null,
  keyId: null,
  requestId,
});

/** A web caller: the session cookie's user when the session is live, else anonymous. */
export async function resolveWebCaller(request: FastifyRequest, context: CallerContext): Promise<Identity> {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return resolveUserKey(request, context);
  const tokenHash = hashToken(token);
  const session = await context.known.resolve(tokenHash, 'session', async () => {
    const lookup = sql<{
      session_id: string;
      user_id: string;
      email: string;
      email_verified: boolean;
      expires_at: Date;
    }>`select * from auth_session_identity(${tokenHash})`.compile(context.db);
    const row = (await context.db.executeQuery(prepared(lookup, 'agentyard_session_identity'))).rows[0];
    return (
      row && {
        sessionId: row.session_id,
        keyId: null,
        userId: row.user_id,
        email: row.email,
        emailVerified: row.email_verified,
        expiresAt: row.expires_at.getTime(),
      }
    );
  });
  if (!session) return anonymous('web', request.id);
  return {
    surface: 'web',
    auth: 'session',
    userId: session.userId,
    email: session.email,
    admin: isAdmin(session.email, session.emailVerified, context),
    sessionId: session.sessionId,
    keyId: null,
    requestId: request.id,
  };
}

/** A web caller without a cookie holding a user API key (`Authorization: Bearer sk_...`): its owner, else anonymous. */
async function resolveUserKey(request: FastifyRequest, context: CallerContext): Promise<Identity> {
  const authorization = request.headers.authorization;
  if (!authorization?.startsWith('Bearer sk_') || authorization.length > 512) return anonymous('web', request.id);
  const keyHash = hashToken(authorization.slice('Bearer '.length));
  const owner = await context.known.resolve(keyHash, 'user-key', async () => {
    const lookup = sql<{
      key_id: string;
      user_id: string;
      email: string;
      email_verified: boolean;
    }>`select key_id, user_id, email, email_verified from auth_api_key_identity(${keyHash})`.compile(context.db);
    const row = (await context.db.executeQuery(prepared(lookup, 'agentyard_api_key_identity'))).rows[0];
    return (
      row && {
        sessionId: null,
        keyId: row.key_id,
        userId: row.user_id,
        email: row.email,
        emailVerified: row.email_verified,
        expiresAt: Number.POSITIVE_INFINITY,
      }
    );
  });
  if (!owner) return anonymous('web', request.id);
  return {
    surface: 'web',
    auth: 'user-key',
    userId: owner.userId,
    email: owner.email,
    admin: isAdmin(owner.email, owner.emailVerified, context),
    sessionId: null,
    keyId: owner.keyId,
    requestId: request.id,
  };
}

const header = (request: FastifyRequest, name: string): string | null => {
  const value = request.headers[name];
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 320) : null;
};

/**
 * A backend caller: `Authorization: Bearer <INTERNAL_API_KEY>`, compared in constant
 * time. Missing header or prefix 401, mismatch 403, unset server key 500. The caller's user context
 * (`x-user-id`, `x-user-email`) is carried on, since key holders are trusted servers.
 */
export function resolveBackendCaller(request: FastifyRequest, context: CallerContext, keyRequired: boolean): Identity {
  if (!keyRequired) return anonymous('backend', request.id);
  if (!context.internalApiKey) throw EdgeErrors.misconfigured();
  const authorization = request.headers.authorization;
  if (!authorization?.startsWith('Bearer ')) throw EdgeErrors.unauthorized();
  if (!safeEqual(authorization.slice('Bearer '.length), context.internalApiKey)) throw EdgeErrors.forbidden();
  const email = header(request, 'x-user-email');
  return serviceCaller(request.id, {
    userId: header(request, 'x-user-id'),
    email,
    admin: isAdminEmail(email, context.admins),
  });
}
