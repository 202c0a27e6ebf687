import { accountRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import { SESSION_COOKIE, sessionCookieOptions } from '@agentyard/identity';
import type { ServiceApp } from '@agentyard/http';
import { withUser } from '@agentyard/db';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import type { AuthConfig } from '../config.ts';
import { AuthErrors } from '../errors.ts';
import { authenticate, getUser, isAdminUser, registerUser } from '../domain/accounts.ts';
import { checkNotABot } from '../domain/bot-check.ts';
import { requestEmailVerification, verifyEmail } from '../domain/email-verification.ts';
import type { EmailVerificationMailJob } from '../domain/privileged/outbound-email.ts';
import { EMAIL_VERIFICATION_MAIL_JOB } from '../domain/job-names.ts';
import { createSession, endSession } from '../domain/sessions.ts';
import type { SignInThrottle } from '../domain/sign-in-throttle.ts';
import type { Revocations } from '../domain/revocations.ts';
import { admitPasswordCheck } from './password-check-admission.ts';

export const VERIFICATION_SENT = 'A verification link is on its way to your email address.';

export default async function accountRoutesPlugin(
  app: ServiceApp,
  {
    config,
    queues,
    throttle,
    revocations,
  }: { config: AuthConfig; queues: QueueSet; throttle: SignInThrottle; revocations: Revocations },
) {
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  const botCheck = {
    verifyUrl: config.CAPTCHA_VERIFY_URL,
    secret: config.CAPTCHA_SECRET,
    timeoutMs: config.CAPTCHA_TIMEOUT_MS,
  };
  const mailVerification = (verificationId: string) =>
    queues.add(
      QUEUES.email,
      EMAIL_VERIFICATION_MAIL_JOB,
      { kind: 'email-verification', verificationId } satisfies EmailVerificationMailJob,
      { jobId: `verify-${verificationId}` },
    );

  app.route({
    ...fastifyRoute(accountRoutes.register),
    handler: async (request, reply) => {
      await checkNotABot({ ...request.body, ip: request.ip }, botCheck);
      await queues.available();
      const { user, verificationId } = await registerUser(app.db, request.body, {
        inviteRequired: config.INVITE_REQUIRED,
      });
      await mailVerification(verificationId);
      return reply.code(201).send(user);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.login),
    handler: async (request, reply) => {
      const { email, password } = request.body;
      // Before the password hash runs: a flood against one account costs a Redis call each, not argon2.
      await admitPasswordCheck(throttle, email, request.ip, reply);
      const user = await authenticate(app.db, email, password);
      if (!user) throw AuthErrors.invalidCredentials();
      await throttle.succeeded(email, request.ip);
      let session: { token: string; emailVerified: boolean };
      try {
        session = await withUser(app.db, user.id, async (trx) => ({
          token: await createSession(trx, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] }),
          emailVerified: (await getUser(trx, user.id))?.email_verified_at != null,
        }));
      } catch (error) {
        request.log.error({ err: error }, 'session creation failed');
        throw AuthErrors.loginFailed();
      }
      reply.setCookie(SESSION_COOKIE, session.token, sessionCookieOptions(config.PUBLIC_BASE_URL));
      return { ok: true as const, user: { ...user, emailVerified: session.emailVerified } };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.session),
    handler: async (request) => {
      const { userId, auth } = request.identity;
      if (!userId || (auth !== 'session' && auth !== 'user-key')) return { user: null };
      const user = await request.asUserStatement((trx) => getUser(trx, userId));
      if (!user) return { user: null };
      return {
        user: {
          id: user.id,
          name: user.name,
          email: user.email,
          isAdmin: isAdminUser(user, admins, needsVerifiedEmail),
          emailVerified: user.email_verified_at !== null,
        },
      };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.signout),
    handler: async (request, reply) => {
      const { sessionId, userId } = request.identity;
      if (sessionId && userId) {
        await request.asUser((trx) => endSession(trx, sessionId));
        await revocations.announce(userId);
      }
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(config.PUBLIC_BASE_URL));
      return { ok: true as const };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.verifyEmail),
    handler: async (request) => {
      await verifyEmail(app.db, request.body.token);
      return { success: true as const };
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.resendVerification),
    handler: async (request) => {
      await queues.available();
      const { verificationId } = await request.asUser((trx) => requestEmailVerification(trx, request.identity.userId!));
      await mailVerification(verificationId);
      return { success: true as const, message: VERIFICATION_SENT };
    },
  });
}
