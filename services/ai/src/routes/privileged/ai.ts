import type { FastifyRequest } from 'fastify';
import { fetchWithTimeout, type ServiceApp } from '@agentyard/http';
import { AI_PROVIDERS, aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { AiConfig } from '../../config.ts';
import { AiErrors } from '../../errors.ts';
import { withAlgorithmMode } from '../../domain/algorithm-mode.ts';
import type { CallerLookups } from '../../domain/privileged/caller-lookups.ts';
import { estimateTokens, type Caller, type ChatGateway } from '../../domain/chat-gateway.ts';
import { MODEL_CATALOG, PROVIDERS, type CatalogEntry } from '../../domain/model-catalog.ts';
import { usageBody } from '../../domain/openai-format.ts';
import { chooseModel, resolveAccess, type Access } from '../../domain/plan-access.ts';
import { priceOf } from '../../domain/prices.ts';
import { checkQuota } from '../../domain/privileged/token-quota.ts';
import type { UsageWriter } from '../../domain/privileged/usage-writer.ts';
import type { SystemDb } from '@agentyard/db/system';
import { sendEventStream } from '../event-stream.ts';

export interface AiRouteOptions {
  config: AiConfig;
  system: SystemDb;
  gateway: ChatGateway;
  writer: UsageWriter;
  lookups: CallerLookups;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const round = (n: number, digits = 6) => Number(n.toFixed(digits));

/** The backend caller a call is billed to: its `x-user-id` (default `anonymous`). */
export function backendCaller(request: FastifyRequest): Caller {
  const userRef = request.identity.userId ?? 'anonymous';
  return { userRef, userId: UUID.test(userRef) ? userRef : null, agentId: null };
}

/** /api/ai/*: the model catalog, and chat and cost estimates for backend callers. */
export default async function aiRoutesPlugin(app: ServiceApp, options: AiRouteOptions) {
  modelRoutes(app, options); // /api/ai/health, /api/ai/models[/:provider], /api/ai/models/select
  callRoutes(app, options); // /api/ai/chat, /api/ai/estimate-cost
}

/** A catalog model as /api/ai/models lists it: its price per million tokens, and whether a provider can serve it now. */
function describeModel(m: CatalogEntry, gateway: ChatGateway) {
  const price = priceOf(m);
  return {
    id: m.id,
    name: m.name,
    provider: m.provider,
    description: m.description,
    tags: m.tags,
    inputCost: price?.input ?? 0,
    outputCost: price?.output ?? 0,
    contextWindow: m.contextWindow,
    available: gateway.isUsable(m),
  };
}

/** Plan headers: admin bypass, else plan and an active subscription from the synced table. */
async function accessOf(request: FastifyRequest, lookups: CallerLookups): Promise<Access> {
  const headers = request.headers as Record<string, string | undefined>;
  const subscriptionId = headers['x-stripe-subscription-id']?.trim();
  const admin = request.identity.admin;
  const subscription = !admin && subscriptionId ? await lookups.activeSubscription(subscriptionId) : undefined;
  return resolveAccess({ admin, plan: headers['x-user-plan']?.trim().toLowerCase(), subscription });
}

/** The catalog: which models there are, which provider answers, which model a task gets. */
function modelRoutes(app: ServiceApp, { config, gateway, lookups }: AiRouteOptions) {
  const describe = (m: CatalogEntry) => describeModel(m, gateway);

  app.route({
    ...fastifyRoute(aiRoutes.health),
    handler: async (request, reply) => {
      if (!config.OPENROUTER_API_KEY)
        return reply.code(503).send({ status: 'error' as const, error: 'openrouter is not configured' });
      let reachable = false;
      try {
        const response = await fetchWithTimeout(`${config.OPENROUTER_BASE_URL.replace(/\/$/, '')}/models`, {
          headers: { authorization: `Bearer ${config.OPENROUTER_API_KEY}` },
          timeoutMs: config.HEALTH_TIMEOUT_MS,
        });
        await response.body?.cancel().catch(() => {});
        reachable = response.ok;
      } catch (error) {
        request.log.warn({ reason: (error as Error).message }, 'openrouter unreachable');
      }
      return {
        status: reachable ? ('healthy' as const) : ('degraded' as const),
        providers: { openrouter: reachable },
        timestamp: new Date().toISOString(),
      };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.models),
    handler: async () => {
      const models = MODEL_CATALOG.map(describe);
      return {
        models,
        count: models.length,
        openrouter: Boolean(config.OPENROUTER_API_KEY),
        timestamp: new Date().toISOString(),
      };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.providerModels),
    handler: async (request) => {
      const provider = request.params.provider.toLowerCase();
      if (!(AI_PROVIDERS as readonly string[]).includes(provider) || !PROVIDERS[provider as keyof typeof PROVIDERS])
        throw AiErrors.providerNotFound();
      const models = MODEL_CATALOG.filter((m) => m.provider === provider).map(describe);
      return { provider, models, count: models.length, timestamp: new Date().toISOString() };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.selectModel),
    handler: async (request) => {
      const access = await accessOf(request, lookups);
      const taskType = request.body?.taskType ?? 'general';
      const model = chooseModel(access, undefined, taskType, gateway.isUsable);
      return { model: { id: model.id, provider: model.provider }, taskType, timestamp: new Date().toISOString() };
    },
  });
}

/** A backend caller's chat, and what a call would cost. */
function callRoutes(app: ServiceApp, { config, system, gateway, lookups }: AiRouteOptions) {
  app.route({
    ...fastifyRoute(aiRoutes.chat),
    handler: async (request, reply) => {
      const body = request.body;
      if (body.messages.length === 0) throw AiErrors.emptyMessages();
      const access = await accessOf(request, lookups);
      const model = chooseModel(access, body.model, body.taskType ?? 'general', gateway.isUsable);
      const caller = backendCaller(request);
      // A backend call made for a known user draws on that user's budget (admins' on none).
      if (caller.userId && !request.identity.admin)
        caller.budget = { userId: caller.userId, agentId: null, plan: access.plan };
      await checkQuota(config, system, access, caller.userRef, request.identity.admin);
      const chat = {
        messages: body.algorithmMode ? withAlgorithmMode(body.messages) : body.messages,
        temperature: body.temperature,
        top_p: body.top_p,
        max_tokens: body.max_tokens,
      };
      if (body.stream) {
        const served = await gateway.stream(model, access.models, chat, caller);
        return sendEventStream(reply, served.model, served.events);
      }
      const served = await gateway.complete(model, access.models, chat, caller);
      return {
        id: served.completion.id || `chat-${request.id}`,
        model: served.model.id,
        provider: served.model.provider,
        message: { role: 'assistant' as const, content: served.completion.content },
        usage: usageBody(
          served.completion.usage ?? {
            input: estimateTokens(chat.messages.map((m) => m.content).join('\n')),
            output: estimateTokens(served.completion.content),
          },
        ),
        timestamp: new Date().toISOString(),
      };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.estimateCost),
    handler: async (request) => {
      const body = request.body;
      const text = body.messages?.length ? body.messages.map((m) => m.content).join('\n') : body.prompt;
      if (!text) throw AiErrors.nothingToEstimate();
      const access = await accessOf(request, lookups);
      const model = chooseModel(access, body.model, body.taskType ?? 'general', gateway.isUsable);
      const price = priceOf(model);
      if (!price) request.log.error({ model: model.id }, 'NO PRICE KNOWN for model: estimate without a cost');
      const inputTokens = estimateTokens(text);
      const outputTokens = body.max_tokens ?? config.DEFAULT_MAX_TOKENS;
      const inputCost = price ? (inputTokens * price.input) / 1e6 : 0;
      const outputCost = price ? (outputTokens * price.output) / 1e6 : 0;
      return {
        model: model.id,
        provider: model.provider,
        inputTokens,
        outputTokens,
        inputCost: round(inputCost, 8),
        outputCost: round(outputCost, 8),
        estimatedCost: round(inputCost + outputCost, 8),
        currency: 'USD' as const,
        timestamp: new Date().toISOString(),
      };
    },
  });
}
