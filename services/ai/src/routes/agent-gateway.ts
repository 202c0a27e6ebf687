import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import type { AgentCaller } from '../domain/agent-keys-system.ts';
import { forwardedBody } from '../domain/forwarded-body.ts';
import { catalogById, PROVIDERS, type ProviderName } from '../domain/model-catalog.ts';
import { openAiCompletion } from '../domain/openai-format.ts';
import { accessForPlan, chooseModel, type Access } from '../domain/plan-access.ts';
import { turnsOf } from '../domain/providers/wire.ts';
import { checkQuota } from '../domain/token-quota-system.ts';
import type { AiRouteOptions } from './ai.ts';
import { sendEventStream } from './event-stream.ts';

/**
 * The OpenAI-compatible surface hosted agents use with their own AI key: the owner's plan now
 * (their active subscription; admins network) decides the models, and usage is billed to the agent.
 */
export default async function agentGatewayRoutes(app: ServiceApp, { config, system, gateway, lookups }: AiRouteOptions) {
  async function agentAccess(request: FastifyRequest): Promise<{ agent: AgentCaller; access: Access; admin: boolean }> {
    const authorization = request.headers.authorization;
    const key = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length).trim() : '';
    const found = key ? await lookups.agentByAiKey(key) : undefined;
    if (!found) throw AiErrors.invalidAgentKey();
    return { agent: found.agent, admin: found.admin, access: accessForPlan(found.plan) };
  }

  app.route({
    ...fastifyRoute(aiRoutes.agentModels),
    handler: async (request) => {
      const { access } = await agentAccess(request);
      return { object: 'list' as const, data: access.models.map((m) => ({ id: m.id, object: 'model' as const, created: 0, owned_by: m.provider })) };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.agentChatCompletions),
    handler: async (request, reply) => {
      const body = request.body as typeof request.body & Record<string, unknown>;
      const { agent, access, admin } = await agentAccess(request);
      const requested = body.model && body.model !== 'auto' ? body.model : undefined;
      const providerPrimary = catalogById.get(PROVIDERS[agent.aiProvider as ProviderName]?.primary ?? '');
      const model =
        requested || !providerPrimary || !access.models.includes(providerPrimary) || !gateway.isUsable(providerPrimary) ? chooseModel(access, requested, 'general', gateway.isUsable) : providerPrimary;
      await checkQuota(config, system, access, agent.userId, admin);
      // Admins' agents draw on no budget; everyone else's reserve their call's cost at admission.
      const budget = admin ? undefined : { userId: agent.userId, agentId: agent.agentId, plan: access.plan };
      const caller = { userRef: agent.userId, userId: agent.userId, agentId: agent.agentId, budget };
      const chat = {
        messages: turnsOf(body.messages),
        temperature: body.temperature,
        top_p: body.top_p,
        max_tokens: body.max_tokens ?? body.max_completion_tokens,
        openAiBody: forwardedBody(body),
      };
      if (body.stream) {
        const served = await gateway.stream(model, access.models, chat, caller);
        return sendEventStream(reply, served.model, served.events);
      }
      const served = await gateway.complete(model, access.models, chat, caller);
      return openAiCompletion(served.model, served.completion);
    },
  });
}
