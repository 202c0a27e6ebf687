import { accountRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import type { FastifyRequest } from 'fastify';
import { activeStatusesOf, currentPlan, type Plan, type UserTx } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import type { AuthConfig } from '../config.ts';
import { AuthErrors } from '../errors.ts';
import { changePassword, getUser, isAdminUser, renameUser } from '../domain/accounts.ts';
import { endOtherSessions } from '../domain/sessions.ts';

export default async function settingsRoutes(app: ServiceApp, { config }: { config: AuthConfig }) {
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  // The plan is the one currentPlan answers (no plan shows as `free`).
  const profile = (user: { id: string; name: string; email: string; created_at: Date; email_verified_at: Date | null }, plan: Plan | null) => ({
    id: user.id,
    name: user.name,
    email: user.email,
    isAdmin: isAdminUser(user, admins, needsVerifiedEmail),
    emailVerified: user.email_verified_at !== null,
    plan: plan ?? 'free',
    createdAt: user.created_at.toISOString(),
  });
  const planOf = (trx: UserTx, request: FastifyRequest) => currentPlan(trx, request.identity.userId!, { admin: request.identity.admin, activeStatuses });

  app.route({
    ...fastifyRoute(accountRoutes.settings),
    handler: async (request) => {
      const [user, plan] = await request.asUser(async (trx) => [await getUser(trx, request.identity.userId!), await planOf(trx, request)] as const);
      if (!user) throw AuthErrors.userNotFound();
      return profile(user, plan);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.updateSettings),
    handler: async (request) => {
      const name = request.body.name.trim();
      if (!name) throw AuthErrors.blankName();
      const [user, plan] = await request.asUser(async (trx) => [await renameUser(trx, request.identity.userId!, name), await planOf(trx, request)] as const);
      if (!user) throw AuthErrors.userNotFound();
      return profile(user, plan);
    },
  });

  app.route({
    ...fastifyRoute(accountRoutes.changePassword),
    handler: async (request) => {
      const { userId, sessionId } = request.identity;
      await request.asUser(async (trx) => {
        await changePassword(trx, userId!, request.body.currentPassword, request.body.newPassword);
        await endOtherSessions(trx, userId!, sessionId);
      });
      return { success: true as const };
    },
  });
}
