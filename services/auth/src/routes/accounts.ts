import { accountRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { adminEmailSet } from '@agentyard/config';
import { isAdminEmail, serializeSessionCookie } from '@agentyard/identity';
import type { ServiceApp } from '@agentyard/http';
import { withUser } from '@agentyard/db';
import type { AuthConfig } from '../config.ts';
import { AuthErrors } from '../errors.ts';
import { authenticate, getUser, registerUser } from '../domain/accounts.ts';
import { checkNotABot } from '../domain/bot-check.ts';
import { createSession, endSession } from '../domain/sessions.ts';

export default async function accountRoutesPlugin(app: ServiceApp, { config }: { config: AuthConfig }) {
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  const botCheck = { verifyUrl: config.CAPTCHA_VERIFY_URL, secret: config.CAPTCHA_SECRET, timeoutMs: config.CAPTCHA_TIMEOUT_MS };

  app.route({
    ...fastifyRoute(accountRoutes.register),
    handler: async (request, reply) => {
      await checkNotABot({ ...request.body, ip: request.ip }, botCheck);
      const user = await registerUser(app.db, request.body, { inviteRequired: config.INVITE_REQUIRED });
      return reply.code(201).send(user);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.login),
    handler: async (request, reply) => {
      const user = await authenticate(app.db, request.body.email, request.body.password);
      if (!user) throw AuthErrors.invalidCredentials();
      let token: string;
      try {
        token = await withUser(app.db, user.id, (trx) => createSession(trx, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] }));
      } catch (error) {
        request.log.error({ err: error }, 'session creation failed');
        throw AuthErrors.loginFailed();
      }
      reply.header('set-cookie', serializeSessionCookie(token, config.PUBLIC_BASE_URL));
      return { ok: true as const, user };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.session),
    handler: async (request) => {
      const { userId, auth } = request.identity;
      if (!userId || (auth !== 'session' && auth !== 'user-key')) return { user: null };
      const user = await request.asUserStatement((trx) => getUser(trx, userId));
      if (!user) return { user: null };
      return { user: { id: user.id, name: user.name, email: user.email, isAdmin: isAdminEmail(user.email, admins) } };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.signout),
    handler: async (request, reply) => {
      const { sessionId } = request.identity;
      if (sessionId) await request.asUser((trx) => endSession(trx, sessionId));
      reply.header('set-cookie', serializeSessionCookie(null, config.PUBLIC_BASE_URL));
      return { ok: true as const };
    },
  });
}
