import { fastifyRoute, keyRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { AuthConfig } from '../config.ts';
import { SignInErrors } from '../errors.ts';
import { createApiKey, deleteApiKey, isValidApiKey, listApiKeys } from '../domain/api-keys.ts';
import type { Revocations } from '../domain/revocations.ts';

export default async function keyRoutesPlugin(
  app: ServiceApp,
  { config, revocations }: { config: AuthConfig; revocations: Revocations },
) {
  app.route({
    ...fastifyRoute(keyRoutes.createKey),
    handler: async (request, reply) => {
      const created = await request.asUser((trx) =>
        createApiKey(trx, request.identity.userId!, config.API_KEYS_PER_USER_MAX, request.body.name),
      );
      return reply.code(201).send(created);
    },
  });

  app.route({
    ...fastifyRoute(keyRoutes.listKeys),
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      return request.asUser((trx) => listApiKeys(trx, { limit, cursor }));
    },
  });

  app.route({
    ...fastifyRoute(keyRoutes.deleteKey),
    handler: async (request) => {
      const deleted = await request.asUser((trx) => deleteApiKey(trx, request.params.id));
      if (!deleted) throw SignInErrors.apiKeyNotFound();
      await revocations.announce(request.identity.userId!);
      return { success: true as const };
    },
  });

  for (const spec of [keyRoutes.validateKey, keyRoutes.validateKeyAlias]) {
    app.route({
      ...fastifyRoute(spec),
      handler: async (request) => ({ valid: await isValidApiKey(app.db, request.body.key) }),
    });
  }
}
