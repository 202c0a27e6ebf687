import { fastifyRoute, traderRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import { activeStatusesOf, currentPlan } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import type { FastifyRequest } from 'fastify';
import type { TraderConfig } from '../config.ts';
import { TraderErrors } from '../errors.ts';
import { deleteTraderKey, hasTraderKey, saveTraderKey, userTraderKey } from '../domain/trader-keys.ts';
import { jobIdOf, ownJob, recordJob } from '../domain/trader-jobs.ts';
import { callTradingService, type TradingService } from '../domain/trading-service.ts';

const DEFAULT_CHAINS = 'base,polygon,mainnet,solana,unichain';

/** A trading-service key for a call, and whether it is the platform's. */
interface CallKey {
  key: string;
  platform: boolean;
}

export default async function traderRoutesPlugin(app: ServiceApp, { config, keyring }: { config: TraderConfig; keyring: Keyring }) {
  const service: TradingService = { baseUrl: config.TRADER_API_URL, timeoutMs: config.TRADER_TIMEOUT_MS };
  const entitledPlans = new Set<string>(config.TRADER_PLATFORM_KEY_PLANS.split(',').filter(Boolean));
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const platformKey = (): CallKey => {
    if (!config.TRADER_API_KEY) throw TraderErrors.needsKey();
    return { key: config.TRADER_API_KEY, platform: true };
  };

  /** The user's own key, else the platform key for an admin or a user whose plan is entitled to it, else 503 needsKey. */
  const keyFor = (request: FastifyRequest): Promise<CallKey> =>
    request.asUser(async (trx) => {
      const own = await userTraderKey(trx, keyring, request.identity.userId!);
      if (own) return { key: own, platform: false };
      const { admin, userId } = request.identity;
      if (!admin && !entitledPlans.has((await currentPlan(trx, userId!, { admin, activeStatuses })) ?? '')) throw TraderErrors.needsKey();
      return platformKey();
    });

  /**
   * The key to poll a job with: the platform key only for a job this user started with it; their
   * own key for any other (the trading service then decides). Without either, the job is not theirs: 404.
   */
  const keyForJob = (request: FastifyRequest, jobId: string): Promise<CallKey> =>
    request.asUser(async (trx) => {
      const job = await ownJob(trx, jobId);
      if (job?.platformKey) return platformKey();
      const own = await userTraderKey(trx, keyring, request.identity.userId!);
      if (own) return { key: own, platform: false };
      if (job) throw TraderErrors.needsKey();
      throw TraderErrors.jobNotFound();
    });

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
      return callTradingService(service, (await keyFor(request)).key, `/agent/balances?chains=${encodeURIComponent(chains)}`);
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.prompt),
    handler: async (request) => {
      const { prompt, threadId } = request.body;
      const { key, platform } = await keyFor(request);
      const answer = await callTradingService(service, key, '/agent/prompt', { method: 'POST', body: { prompt, ...(threadId ? { threadId } : {}) } });
      const jobId = jobIdOf(answer);
      if (jobId) await request.asUser((trx) => recordJob(trx, request.identity.userId!, jobId, platform, config.TRADER_JOB_RETENTION_DAYS));
      return answer;
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.jobStatus),
    handler: async (request) => {
      const { jobId } = request.query;
      return callTradingService(service, (await keyForJob(request, jobId)).key, `/agent/job/${encodeURIComponent(jobId)}`);
    },
  });
}
