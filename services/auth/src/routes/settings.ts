import { accountRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import type { FastifyRequest } from 'fastify';
import { activeStatusesOf, currentPlan, type Plan, type UserTx } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import type { AuthConfig } from '../config.ts';
import { AuthErrors } from '../errors.ts';
import { changePassword, checkNewPassword, getUser, isAdminUser, renameUser } from '../domain/accounts.ts';
import { endOtherSessions } from '../domain/sessions.ts';
import type { SignInThrottle } from '../domain/sign-in-throttle.ts';
import type { Revocations } from '../domain/revocations.ts';
import { admitPasswordCheck } from './password-check-admission.ts';

export default async function settingsRoutes(
  app: ServiceApp,
  { config, throttle, revocations }: { config: AuthConfig; throttle: SignInThrottle; revocations: Revocations },
) {
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  // The plan is the one currentPlan answers (no plan shows as `free`).
  const profile = (
    user: { id: string; name: string; email: string; created_at: Date; email_verified_at: Date | null },
    plan: Plan | null,
  ) => ({
    id: user.id,
    name: user.name,
    email: user.email,
    isAdmin: isAdminUser(user, admins, needsVerifiedEmail),
    emailVerified: user.email_verified_at !== null,
    plan: plan ?? 'free',
    createdAt: user.created_at.toISOString(),
  });
  const planOf = (trx: UserTx, request: FastifyRequest) =>
    currentPlan(trx, request.identity.userId!, { admin: request.identity.admin, activeStatuses });

  app.route({
    ...fastifyRoute(accountRoutes.settings),
    handler: async (request) => {
      const [user, plan] = await request.asUser(
        async (trx) => [await getUser(trx, request.identity.userId!), await planOf(trx, request)] as const,
      );
      if (!user) throw AuthErrors.userNotFound();
      return profile(user, plan);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.updateSettings),
    handler: async (request) => {
      const name = request.body.name.trim();
      if (!name) throw AuthErrors.blankName();
      const [user, plan] = await request.asUser(
        async (trx) => [await renameUser(trx, request.identity.userId!, name), await planOf(trx, request)] as const,
      );
      if (!user) throw AuthErrors.userNotFound();
      return profile(user, plan);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.changePassword),
    handler: async (request, reply) => {
      const { userId, sessionId, email } = request.identity;
      const { currentPassword, newPassword } = request.body;
      checkNewPassword(newPassword);
      // The current password is a sign-in attempt for the account: a wrong one counts as a failure.
      const account = email ?? userId!;
      await admitPasswordCheck(throttle, account, request.ip, reply);
      await request.asUser(async (trx) => {
        await changePassword(trx, userId!, currentPassword, newPassword);
        await endOtherSessions(trx, userId!, sessionId);
      });
      await revocations.announce(userId!);
      await throttle.succeeded(account, request.ip);
      return { success: true as const };
    },
  });
}
