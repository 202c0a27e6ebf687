import type { Static } from 'typebox';
import type { RuntimeProvisionBody } from '@agentyard/proto-schemas';
import { openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import { activeStatusesOf, type UserTx } from '@agentyard/db';
import type { QueueSet } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import type { AgentRuntime } from './privileged/agent-runtime.ts';
import type { AgentAllowance } from '../agents/privileged/plan-allowance.ts';
import { createProvisioningAgent } from '../agents/agents.ts';
import { AgentErrors } from '../../errors.ts';
import { createLiveStream, type LiveStreamProvider } from './live-stream.ts';
import { enqueueProvisioning } from './provisioning.ts';
import { provisionThroughBackend } from './provisioning-backend.ts';
import { AGENT_FAILURES, agentUrls } from '../agents/agent-views.ts';
import { bindChannel, keepChannelCredentials } from '../gateway/channel-vault.ts';

export interface RuntimeProvisioning {
  config: AgentsConfig;
  runtime: AgentRuntime;
  /** Whether a new agent of the caller may run (the platform's capacity, the per-user cap). */
  allowance: Pick<AgentAllowance, 'admitNew'>;
  queues: QueueSet;
  keyring: Keyring;
  /** The live-stream provider when one is configured. */
  streaming: LiveStreamProvider | null;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** The caller's row-level-security transaction. */
  asUser: <T>(work: (trx: UserTx) => Promise<T>) => Promise<T>;
}

/** The signed-in caller, from the session (never from the body). */
export interface RuntimeOwner {
  id: string;
  email: string;
  admin: boolean;
}

/** A live stream when the provider is configured; a provider failure does not fail provisioning. */
async function liveStreamFor(
  deps: RuntimeProvisioning,
  fromBackend: { streamKey?: string; liveStreamId?: string },
): Promise<{ streamKey: string | null; liveStreamId: string | null }> {
  if (!deps.streaming)
    return { streamKey: fromBackend.streamKey ?? null, liveStreamId: fromBackend.liveStreamId ?? null };
  const stream = await createLiveStream(deps.streaming).catch((error: Error) => {
    deps.log.warn({ err: { message: error.message } }, 'live stream could not be created');
    return null;
  });
  return { streamKey: stream?.streamKey ?? null, liveStreamId: stream?.liveStreamId ?? null };
}

/**
 * Provisions the caller's runtime (`POST /api/provision`): through the provisioning backend, then
 * its fallback, then the platform's own runtime, where plan and subscription rules still apply.
 */
export async function provisionUserRuntime(
  deps: RuntimeProvisioning,
  owner: RuntimeOwner,
  body: Static<typeof RuntimeProvisionBody>,
) {
  const { config, runtime, queues, log } = deps;
  if (!config.PROVISIONING_ENABLED) throw AgentErrors.provisioningDisabled();
  const user = { id: owner.id, email: owner.email };
  const { email: _ignored, ...wanted } = body;
  for (const url of [config.PROVISION_BACKEND_URL, config.PROVISION_FALLBACK_URL].filter(Boolean)) {
    try {
      const reply = await provisionThroughBackend(url, user, wanted, config.PROVISION_TIMEOUT_MS);
      await deps.asUser((trx) =>
        trx
          .updateTable('users')
          .set({ runtime_url: reply.url, runtime_instance_id: reply.instanceId ?? null })
          .where('id', '=', user.id)
          .execute(),
      );
      return {
        success: true as const,
        userId: user.id,
        url: reply.url,
        ...(await liveStreamFor(deps, reply)),
        ...(reply.subdomain ? { subdomain: reply.subdomain } : {}),
        ...(reply.container ? { container: { status: 'deploying' as const } } : {}),
      };
    } catch (error) {
      log.warn({ err: { message: (error as Error).message } }, 'provisioning backend failed; trying the next path');
    }
  }
  // Direct: the platform's own runtime. Plan and subscription rules still apply (403/429).
  await queues.available();
  await deps.allowance.admitNew({ userId: user.id, admin: owner.admin }, undefined);
  const row = await deps.asUser(async (trx) => {
    const agent = await createProvisioningAgent(trx, {
      userId: user.id,
      admin: owner.admin,
      activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES),
      name: wanted.name ?? `${wanted.agentType ?? 'business'} agent`,
      model: 'claude-opus-4-6',
      tier: undefined,
      config: {},
      defaultProvider: config.AGENT_DEFAULT_PROVIDER,
      adminAgentLimit: config.ADMIN_AGENT_LIMIT,
    });
    // The channel tokens go into the agent's vault (a malformed one refuses the whole request: no agent is left).
    if (wanted.telegramBotToken)
      await bindChannel(trx, deps.keyring, agent, 'telegram', {
        credentials: { botToken: wanted.telegramBotToken },
        settings: {},
      });
    if (wanted.discordBotToken)
      await keepChannelCredentials(trx, deps.keyring, agent, 'discord', { token: wanted.discordBotToken });
    return agent;
  });
  try {
    await runtime.deploy(row.id);
    await runtime.setStatus(row.id, 'deploying');
    await enqueueProvisioning(queues, row.id);
    await runtime.recordUserRuntime(row.id);
  } catch (error) {
    log.error({ agentId: row.id, err: { message: (error as Error).message } }, 'direct provisioning failed');
    await runtime.failDeployment(row.id, AGENT_FAILURES.directFailed, (error as Error).message);
    throw AgentErrors.provisioningFailed();
  }
  const deployed = (await runtime.load(row.id))!;
  const { url, websocketUrl } = agentUrls(config.AGENT_PUBLIC_URL, row.id);
  const token = openAgentSecret(deps.keyring, row.id, 'gateway-token', deployed.gateway_token_sealed!);
  return {
    success: true as const,
    status: 'deploying' as const,
    url,
    controlUiUrl: `${url}/?gatewayUrl=${encodeURIComponent(websocketUrl)}&token=${encodeURIComponent(token)}`,
  };
}
