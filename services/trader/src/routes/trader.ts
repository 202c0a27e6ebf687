import { fastifyRoute, traderRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import { activeStatusesOf, currentPlan, type UserTx } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import type { FastifyRequest } from 'fastify';
import type { TraderConfig } from '../config.ts';
import { TraderErrors } from '../errors.ts';
import { deleteTraderKey, hasTraderKey, saveTraderKey, userTraderKey } from '../domain/trader-keys.ts';
import { jobIdOf, ownJob, recordJob } from '../domain/trader-jobs.ts';
import { ownThread, recordThread, threadIdOf } from '../domain/trader-threads.ts';
import { callTradingService, type TradingService } from '../domain/trading-service.ts';

const DEFAULT_CHAINS = 'base,polygon,mainnet,solana,unichain';

/** A trading-service key for a call, and whether it is the platform's. */
interface CallKey {
  key: string;
  platform: boolean;
}

export default async function traderRoutesPlugin(
  app: ServiceApp,
  { config, keyring }: { config: TraderConfig; keyring: Keyring },
) {
  const service: TradingService = { baseUrl: config.TRADER_API_URL, timeoutMs: config.TRADER_TIMEOUT_MS };
  const entitledPlans = new Set<string>(config.TRADER_PLATFORM_KEY_PLANS.split(',').filter(Boolean));
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const platformKey = (): CallKey => {
    if (!config.TRADER_API_KEY) throw TraderErrors.needsKey();
    return { key: config.TRADER_API_KEY, platform: true };
  };

  /** The platform key for an admin or a user whose plan is entitled to it, else 503 needsKey. */
  const entitledPlatformKey = async (trx: UserTx, request: FastifyRequest): Promise<CallKey> => {
    const { admin, userId } = request.identity;
    if (!admin && !entitledPlans.has((await currentPlan(trx, userId!, { admin, activeStatuses })) ?? ''))
      throw TraderErrors.needsKey();
    return platformKey();
  };

  /** The user's own key, else the platform key for an admin or a user whose plan is entitled to it, else 503 needsKey. */
  const keyFor = (request: FastifyRequest): Promise<CallKey> =>
    request.asUser(async (trx) => {
      const own = await userTraderKey(trx, keyring, request.identity.userId!);
      if (own) return { key: own, platform: false };
      return entitledPlatformKey(trx, request);
    });

  /**
   * The key to continue a thread with, as for jobs: the platform key only for a thread this user
   * started with it (while still entitled to it); their own key for any other (the trading service,
   * where threads belong to the key's account, then decides). Without either, the thread is not theirs: 404.
   */
  const keyForThread = (request: FastifyRequest, threadId: string): Promise<CallKey> =>
    request.asUser(async (trx) => {
      const thread = await ownThread(trx, threadId);
      if (thread?.platformKey) return entitledPlatformKey(trx, request);
      const own = await userTraderKey(trx, keyring, request.identity.userId!);
      if (own) return { key: own, platform: false };
      if (thread) throw TraderErrors.needsKey();
      throw TraderErrors.threadNotFound();
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
      return callTradingService(
        service,
        (await keyFor(request)).key,
        `/agent/balances?chains=${encodeURIComponent(chains)}`,
      );
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.prompt),
    handler: async (request) => {
      const { prompt, threadId } = request.body;
      const { key, platform } = threadId ? await keyForThread(request, threadId) : await keyFor(request);
      const answer = await callTradingService(service, key, '/agent/prompt', {
        method: 'POST',
        body: { prompt, ...(threadId ? { threadId } : {}) },
      });
      const jobId = jobIdOf(answer);
      const thread = threadIdOf(answer) ?? threadId ?? null;
      const { userId } = request.identity;
      if (jobId || thread)
        await request.asUser(async (trx) => {
          if (jobId) await recordJob(trx, userId!, jobId, platform, config.TRADER_JOB_RETENTION_DAYS);
          if (thread) await recordThread(trx, userId!, thread, platform, config.TRADER_JOB_RETENTION_DAYS);
        });
      return answer;
    },
  });

  app.route({
    ...fastifyRoute(traderRoutes.jobStatus),
    handler: async (request) => {
      const { jobId } = request.query;
      const { key, platform } = await keyForJob(request, jobId);
      const answer = await callTradingService(service, key, `/agent/job/${encodeURIComponent(jobId)}`);
      // A thread the trading service names only in the job's result is the user's to continue too.
      const thread = threadIdOf(answer);
      if (thread)
        await request.asUser((trx) =>
          recordThread(trx, request.identity.userId!, thread, platform, config.TRADER_JOB_RETENTION_DAYS),
        );
      return answer;
    },
  });
}
