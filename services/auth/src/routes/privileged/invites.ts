import { fastifyRoute, inviteRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { ServiceApp } from '@agentyard/http';
import type { AuthConfig } from '../../config.ts';
import { AuthErrors, SignInErrors } from '../../errors.ts';
import { getUser, isValidEmail, normalizeEmail } from '../../domain/accounts.ts';
import { checkInviteName, createInvite, inviteUrl, verifyInvite } from '../../domain/invites.ts';
import { listAllInvites } from '../../domain/privileged/invites-admin.ts';

export default async function inviteRoutesPlugin(
  app: ServiceApp,
  { config, keyring, systemDb }: { config: AuthConfig; keyring: Keyring; systemDb: SystemDb },
) {
  app.route({
    ...fastifyRoute(inviteRoutes.createInvite),
    handler: async (request) => {
      const name = checkInviteName(request.body.name);
      const userId = request.identity.userId!;
      const token = await request.asUser(async (trx) => {
        if (!(await getUser(trx, userId))) throw AuthErrors.userNotFound();
        return createInvite(trx, keyring, userId, config.INVITES_PER_USER_MAX, { name });
      });
      return { success: true as const, inviteUrl: inviteUrl(config.PUBLIC_BASE_URL, token), token };
    },
  });

  app.route({
    ...fastifyRoute(inviteRoutes.verifyInvite),
    handler: async (request) => {
      await verifyInvite(app.db, request.body.token);
      return { valid: true as const, plan: 'solo' as const };
    },
  });

  app.route({
    ...fastifyRoute(inviteRoutes.adminListInvites),
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      return listAllInvites(systemDb, keyring, { limit, cursor });
    },
  });

  app.route({
    ...fastifyRoute(inviteRoutes.adminCreateInvite),
    handler: async (request) => {
      if (!isValidEmail(request.body.email)) throw SignInErrors.invalidInviteEmail();
      const email = normalizeEmail(request.body.email);
      const token = await request.asUser((trx) =>
        createInvite(trx, keyring, request.identity.userId!, config.INVITES_PER_ADMIN_MAX, { email }),
      );
      return { success: true as const, code: token, email, inviteUrl: inviteUrl(config.PUBLIC_BASE_URL, token) };
    },
  });

  app.route({
    ...fastifyRoute(inviteRoutes.deprecatedGenerate),
    handler: async () => {
      throw SignInErrors.deprecatedInviteRoute('POST /api/invite');
    },
  });
  app.route({
    ...fastifyRoute(inviteRoutes.deprecatedValidate),
    handler: async () => {
      throw SignInErrors.deprecatedInviteRoute('POST /api/invites/verify');
    },
  });
}
