import { fastifyRoute, traderRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import type { FastifyRequest } from 'fastify';
import type { TraderConfig } from '../config.ts';
import { TraderErrors } from '../errors.ts';
import { deleteTraderKey, hasTraderKey, saveTraderKey, userTraderKey } from '../domain/trader-keys.ts';
import { callTradingService, type TradingService } from '../domain/trading-service.ts';

const DEFAULT_CHAINS = 'base,polygon,mainnet,solana,unichain';

export default async function traderRoutesPlugin(app: ServiceApp, { config, keyring }: { config: TraderConfig; keyring: Keyring }) {
  const service: TradingService = { baseUrl: config.TRADER_API_URL, timeoutMs: config.TRADER_TIMEOUT_MS };

  /** The user's own key, else the platform key, else 503 needsKey. */
  const keyFor = async (request: FastifyRequest): Promise<string> => {
    const own = await request.asUser((trx) => userTraderKey(trx, keyring, request.identity.userId!));
    const key = own ?? config.TRADER_API_KEY;
    if (!key) throw TraderErrors.needsKey();
    return key;
  };

  app.route({
    ...fastifyRoute(traderRoutes.keyStatus),
    handler: async (request) => ({ configured: await request.asUser((trx) => hasTraderKey(trx)) }),
  });

  app.route({
    ...fastifyRoute(traderRoutes.saveKey),
    handler: async (request) => {
      await request.asUser((trx) => saveTraderKey(trx, keyring, request.identity.userId!, request.body.apiKey));
      return { success: true as const };
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.deleteKey),
    handler: async (request) => {
      await request.asUser((trx) => deleteTraderKey(trx));
      return { success: true as const };
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.balances),
    handler: async (request) => {
      const chains = request.query.chains ?? DEFAULT_CHAINS;
      return callTradingService(service, await keyFor(request), `/agent/balances?chains=${encodeURIComponent(chains)}`);
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.prompt),
    handler: async (request) => {
      const { prompt, threadId } = request.body;
      return callTradingService(service, await keyFor(request), '/agent/prompt', { method: 'POST', body: { prompt, ...(threadId ? { threadId } : {}) } });
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.jobStatus),
    config: { auth: traderRoutes.jobStatus.auth, validationMessage: 'jobId is required' },
    handler: async (request) => callTradingService(service, await keyFor(request), `/agent/job/${encodeURIComponent(request.query.jobId)}`),
  });
}
