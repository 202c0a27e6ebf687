import { prepared, sql, type AppDb } from '@agentyard/db';
import { hashToken, safeEqual } from '@agentyard/crypto';
import { isAdminEmail, readSessionCookie, type Identity } from '@agentyard/identity';
import type { Surface } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import { EdgeErrors } from './errors.ts';

export interface CallerContext {
  db: AppDb;
  admins: ReadonlySet<string>;
  /** A listed address acts as admin only once verified (everywhere but development). */
  adminNeedsVerifiedEmail: boolean;
  internalApiKey: string | undefined;
}

/** Admin by the list (spec §5.5), and by a verified address where that is required. */
const isAdmin = (email: string, emailVerified: boolean, context: CallerContext) => isAdminEmail(email, context.admins) && (emailVerified || !context.adminNeedsVerifiedEmail);

const anonymous = (surface: Surface, requestId: string): Identity => ({ surface, auth: 'none', userId: null, email: null, admin: false, sessionId: null, requestId });

/** A web caller: the session cookie's user when the session is live, else anonymous. */
export async function resolveWebCaller(request: FastifyRequest, context: CallerContext): Promise<Identity> {
  const token = readSessionCookie(request.headers.cookie);
  if (!token) return resolveUserKey(request, context);
  const lookup = sql<{ session_id: string; user_id: string; email: string; email_verified: boolean }>`select * from auth_session_identity(${hashToken(token)})`.compile(context.db);
  const { rows } = await context.db.executeQuery(prepared(lookup, 'agentyard_session_identity'));
  const session = rows[0];
  if (!session) return anonymous('web', request.id);
  return {
    surface: 'web',
    auth: 'session',
    userId: session.user_id,
    email: session.email,
    admin: isAdmin(session.email, session.email_verified, context),
    sessionId: session.session_id,
    requestId: request.id,
  };
}

/** A web caller without a cookie holding a user API key (`Authorization: Bearer sk_...`): its owner, else anonymous. */
async function resolveUserKey(request: FastifyRequest, context: CallerContext): Promise<Identity> {
  const authorization = request.headers.authorization;
  if (!authorization?.startsWith('Bearer sk_') || authorization.length > 512) return anonymous('web', request.id);
  const lookup = sql<{
    user_id: string;
    email: string;
    email_verified: boolean;
  }>`select user_id, email, email_verified from auth_api_key_identity(${hashToken(authorization.slice('Bearer '.length))})`.compile(context.db);
  const { rows } = await context.db.executeQuery(prepared(lookup, 'agentyard_api_key_identity'));
  const owner = rows[0];
  if (!owner) return anonymous('web', request.id);
  return {
    surface: 'web',
    auth: 'user-key',
    userId: owner.user_id,
    email: owner.email,
    admin: isAdmin(owner.email, owner.email_verified, context),
    sessionId: null,
    requestId: request.id,
  };
}

const header = (request: FastifyRequest, name: string): string | null => {
  const value = request.headers[name];
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 320) : null;
};

/**
 * A backend caller (spec §5.2): `Authorization: Bearer <INTERNAL_API_KEY>`, compared in constant
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
  return {
    surface: 'backend',
    auth: 'service',
    userId: header(request, 'x-user-id'),
    email,
    admin: isAdminEmail(email, context.admins),
    sessionId: null,
    requestId: request.id,
  };
}
