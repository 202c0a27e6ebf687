import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import { HttpError, type ServiceApp } from '@agentyard/http';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { AgentErrors } from '../../errors.ts';
import { readAgentTranscript } from '../../domain/gateway/gateway-transcript.ts';
import type { AgentRouteDeps } from './deps.ts';
import { reachableAgentOf } from './owned-agent.ts';

/**
 * `GET /api/agents/:id/messages`: the agent's conversation as its own gateway recorded it (the
 * OpenClaw session transcript, read with the agent's gateway token). No stand-in data: when the
 * gateway cannot answer, the caller gets 502.
 */
export default async function messageRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const reachableAgent = reachableAgentOf(context);

  app.route({
    ...fastifyRoute(spec.messages),
    handler: async (request) => {
      const row = await reachableAgent(request, request.params.id);
      if (!row.gateway_url || !row.gateway_token_sealed) throw AgentErrors.gatewayUnavailable();
      const target = {
        baseUrl: row.gateway_url,
        gatewayToken: openAgentSecret(keyring, row.id, 'gateway-token', row.gateway_token_sealed),
        timeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS,
        maxAnswerBytes: config.AGENT_ANSWER_MAX_BYTES,
      };
      try {
        const transcript = await readAgentTranscript(target, {
          sessionKey: request.query.sessionKey,
          limit: request.query.limit,
        });
        return {
          agentId: row.id,
          ...transcript,
          count: transcript.messages.length,
          status: 'ok' as const,
          source: 'gateway' as const,
        };
      } catch (error) {
        if (error instanceof HttpError) throw error;
        request.log.warn(
          { agentId: row.id, err: { message: (error as Error).message } },
          'agent transcript could not be read',
        );
        throw AgentErrors.gatewayUnavailable();
      }
    },
  });
}
