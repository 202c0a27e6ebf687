import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, spendingRoutes } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { providerKeys, removeProviderKey, storeProviderKey } from '../domain/provider-keys.ts';

/** Users' own provider keys (BYOK) beside their budgets: stored sealed, shown by their last 4 characters, never returned. */
export default async function providerKeyRoutes(app: ServiceApp, { keyring }: { keyring: Keyring }) {
  app.route({
    ...fastifyRoute(spendingRoutes.providerKeys),
    handler: async (request) => ({ keys: await request.asUser((trx) => providerKeys(trx)) }),
  });

  app.route({
    ...fastifyRoute(spendingRoutes.putProviderKey),
    handler: async (request) =>
      request.asUser((trx) =>
        storeProviderKey(trx, keyring, request.identity.userId!, request.params.provider, request.body.apiKey),
      ),
  });

  app.route({
    ...fastifyRoute(spendingRoutes.deleteProviderKey),
    handler: async (request) =>
      request.asUser(async (trx) => {
        if (!(await removeProviderKey(trx, request.params.provider)))
          throw AiErrors.noProviderKey(request.params.provider);
        return { keys: await providerKeys(trx) };
      }),
  });
}
