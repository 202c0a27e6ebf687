import { agentChannelRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import { getAgent } from '../../domain/agents/agents.ts';
import { bindChannel, channelBindings, supportedChannel, unbindChannel } from '../../domain/gateway/channel-vault.ts';
import { channelViews } from '../../domain/gateway/channel-status.ts';
import { enqueueConfigApply } from '../../domain/runtime/config-apply.ts';
import type { AgentRouteDeps } from './deps.ts';

/**
 * An agent's messaging channels (issue 29), its owner's only (another user's agent is 404).
 * Credentials go into the agent's vault and never come back; a change is applied by the lifecycle
 * queue's rebuild of the container, which writes the token file and the channel's config section.
 */
export default async function channelRoutes(app: ServiceApp, { config, queues }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);

  app.route({
    ...fastifyRoute(spec.agentChannels),
    handler: async (request) => {
      const { agent, bindings } = await request.asUser(async (trx) => {
        const agent = await getAgent(trx, request.params.id);
        return { agent, bindings: await channelBindings(trx, agent.id) };
      });
      return { channels: await channelViews(agent, bindings, keyring, config.AGENT_GATEWAY_READ_TIMEOUT_MS) };
    },
  });

  app.route({
    ...fastifyRoute(spec.connectChannel),
    handler: async (request) => {
      const { channel } = request.params;
      const { botToken, ...settings } = request.body;
      await queues.available();
      const { agent, binding } = await request.asUser(async (trx) => {
        const agent = await getAgent(trx, request.params.id);
        supportedChannel(channel);
        return {
          agent,
          binding: await bindChannel(trx, keyring, agent, channel, { credentials: { botToken }, settings }),
        };
      });
      await enqueueConfigApply(queues, agent.id, binding.updatedAt);
      const [view] = await channelViews(agent, [binding], keyring, config.AGENT_GATEWAY_READ_TIMEOUT_MS);
      return { success: true as const, channel: view! };
    },
  });

  app.route({
    ...fastifyRoute(spec.disconnectChannel),
    handler: async (request) => {
      const { channel } = request.params;
      await queues.available();
      const { agent, disconnected } = await request.asUser(async (trx) => {
        const agent = await getAgent(trx, request.params.id);
        return { agent, disconnected: await unbindChannel(trx, agent.id, channel) };
      });
      if (disconnected) await enqueueConfigApply(queues, agent.id, new Date());
      return { success: true as const, channel, disconnected };
    },
  });
}
