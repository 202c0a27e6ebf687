import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import type { Caller } from '../domain/chat-gateway.ts';
import { forwardedBody } from '../domain/forwarded-body.ts';
import type { PassThroughGateway } from '../domain/pass-through-gateway.ts';
import {
  catalogById,
  EMBEDDING_MODELS,
  type CatalogEntry,
  MODEL_CATALOG,
  PROVIDERS,
  type ProviderName,
} from '../domain/model-catalog.ts';
import { openAiCompletion } from '../domain/openai-format.ts';
import { accessForPlan, chooseModel, type Access } from '../domain/plan-access.ts';
import { turnsOf } from '../domain/providers/wire.ts';
import { checkQuota } from '../domain/privileged/token-quota.ts';
import type { AgentActivity } from '@agentyard/queue';
import type { AiRouteOptions } from './privileged/ai.ts';
import { sendEventStream, sendProviderEvents } from './event-stream.ts';
import { limitsWithinPlan, type MinuteLimits } from '../domain/limits/minute-limits.ts';
import type { MinuteWindows } from '../domain/limits/minute-windows.ts';
import { metrics } from '@agentyard/observability';
import type { Keyring } from '@agentyard/crypto';
import { openProviderKey } from '../domain/provider-keys.ts';
import { channelOfChatTurn, channelOfMessagesTurn } from '../domain/turn-origin.ts';

/** The provider APIs passed through for agents, beside the chat wire. */
export interface AgentWires {
  messages: PassThroughGateway;
  responses: PassThroughGateway;
  embeddings: PassThroughGateway;
}

/** The limits a call is counted against: the calling agent's, or the user key's, by its counter in the windows. */
interface Pace {
  holder: 'agent' | 'key';
  counter: string;
  limits: MinuteLimits;
}

/** A model as a wire's callers name it: our id, or its provider's own name (what provider SDKs send). */
const modelNamed = (name: string, among: CatalogEntry[], provider: ProviderName) =>
  catalogById.get(name) ??
  among.find((m) => m.id === name) ??
  among.find((m) => m.provider === provider && m.upstream === name);

type AgentGatewayOptions = AiRouteOptions & {
  wires: AgentWires;
  activity: Pick<AgentActivity, 'touch'>;
  minuteWindows: MinuteWindows;
  keyring: Keyring;
};

/** Who calls /v1, under which plan and which limits per minute, billed to whom. */
interface GatewayCaller {
  caller: Caller;
  access: Access;
  admin: boolean;
  aiProvider: string | null;
  pace: Pace | null;
}

/**
 * The /v1 surface: hosted agents with their own AI key, users with their API key. The plan now
 * (the active subscription; admins network) decides the models; usage is billed to the agent or user.
 */
export default async function agentGatewayRoutes(app: ServiceApp, options: AgentGatewayOptions) {
  const { gateway, wires } = options;

  app.route({
    ...fastifyRoute(aiRoutes.agentModels),
    handler: async (request) => {
      const { access } = await callerOf(request, options);
      return {
        object: 'list' as const,
        data: access.models.map((m) => ({ id: m.id, object: 'model' as const, created: 0, owned_by: m.provider })),
      };
    },
  });

  app.route({
    ...fastifyRoute(aiRoutes.agentChatCompletions),
    handler: async (request, reply) => {
      const body = request.body as typeof request.body & Record<string, unknown>;
      const calling = await callerOf(request, options);
      const { caller, access, aiProvider } = calling;
      if (caller.agentId) caller.channel = channelOfChatTurn(body.messages);
      const requested = body.model && body.model !== 'auto' ? body.model : undefined;
      const providerPrimary = catalogById.get(PROVIDERS[aiProvider as ProviderName]?.primary ?? '');
      const model =
        requested || !providerPrimary || !access.models.includes(providerPrimary) || !gateway.isUsable(providerPrimary)
          ? chooseModel(access, requested, 'general', gateway.isUsable)
          : providerPrimary;
      await admitCall(options, reply, calling, model);
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

  const chatModels = (access: Access) => access.models;
  app.route({
    ...fastifyRoute(aiRoutes.agentMessages),
    handler: (request, reply) =>
      passThrough(options, request, reply, {
        wire: wires.messages,
        url: '/v1/messages',
        catalog: MODEL_CATALOG,
        allowedOf: chatModels,
        channelOf: channelOfMessagesTurn,
      }),
  });
  app.route({
    ...fastifyRoute(aiRoutes.agentResponses),
    handler: (request, reply) =>
      passThrough(options, request, reply, {
        wire: wires.responses,
        url: '/v1/responses',
        catalog: MODEL_CATALOG,
        allowedOf: chatModels,
      }),
  });
  // Embedding models are every paid plan's (the plan is still checked: 402 without one).
  app.route({
    ...fastifyRoute(aiRoutes.agentEmbeddings),
    handler: (request, reply) =>
      passThrough(options, request, reply, {
        wire: wires.embeddings,
        url: '/v1/embeddings',
        catalog: EMBEDDING_MODELS,
        allowedOf: () => EMBEDDING_MODELS,
      }),
  });
}

/**
 * Who calls /v1 and under which plan: on the backend surface (the agent listener) a hosted agent
 * by its own AI key (a bearer, or `x-api-key` as Anthropic's clients send it), billed to the
 * agent; on the web surface a user by their API key, which the edge checked (a session does not
 * do: these are API routes), billed to the user with no agent.
 */
function callerOf(request: FastifyRequest, options: AgentGatewayOptions): Promise<GatewayCaller> {
  return request.identity.surface === 'web' ? userKeyCaller(request, options) : agentKeyCaller(request, options);
}

async function userKeyCaller(request: FastifyRequest, { lookups }: AgentGatewayOptions): Promise<GatewayCaller> {
  const { userId, auth, admin, keyId } = request.identity;
  if (auth !== 'user-key' || !userId) throw AiErrors.userKeyRequired();
  const [plan, keyLimits] = await Promise.all([
    lookups.userPlan(userId, admin),
    keyId ? lookups.keyMinuteLimits(keyId) : null,
  ]);
  const access = accessForPlan(plan);
  const budget = admin ? undefined : { userId, agentId: null, plan: access.plan };
  const pace =
    keyId && keyLimits
      ? { holder: 'key' as const, counter: `key:${keyId}`, limits: limitsWithinPlan(keyLimits, access.plan) }
      : null;
  return { caller: { userRef: userId, userId, agentId: null, budget }, access, admin, aiProvider: null, pace };
}

async function agentKeyCaller(
  request: FastifyRequest,
  { lookups, activity }: AgentGatewayOptions,
): Promise<GatewayCaller> {
  const authorization = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  const key = authorization?.startsWith('Bearer ')
    ? authorization.slice('Bearer '.length).trim()
    : typeof apiKey === 'string'
      ? apiKey.trim()
      : '';
  const found = key ? await lookups.agentByAiKey(key) : undefined;
  if (!found) throw AiErrors.invalidAgentKey();
  const { agent, admin } = found;
  void activity.touch(agent.agentId);
  const access = accessForPlan(found.plan);
  // Admins' agents draw on no budget; everyone else's reserve their call's cost at admission.
  const budget = admin ? undefined : { userId: agent.userId, agentId: agent.agentId, plan: access.plan };
  const pace = agent.minuteLimits && {
    holder: 'agent' as const,
    counter: `agent:${agent.agentId}`,
    limits: limitsWithinPlan(agent.minuteLimits, access.plan),
  };
  return {
    caller: { userRef: agent.userId, userId: agent.userId, agentId: agent.agentId, budget },
    access,
    admin,
    aiProvider: agent.aiProvider,
    pace,
  };
}

/** Before a call to `model` is sent: the plan's monthly quota, the caller's limits per minute, then their own key if any. */
async function admitCall(
  { config, system, minuteWindows, lookups, keyring }: AgentGatewayOptions,
  reply: FastifyReply,
  { caller, access, admin, pace }: GatewayCaller,
  model: CatalogEntry,
): Promise<void> {
  await checkQuota(config, system, access, caller.userRef, admin);
  await withinMinuteLimits(minuteWindows, reply, caller, pace);
  await withOwnKey(lookups, keyring, caller, model);
}

/** The caller's own key for the model's provider (BYOK), if they stored one: the call goes on it and draws on no budget. */
async function withOwnKey(
  lookups: AgentGatewayOptions['lookups'],
  keyring: Keyring,
  caller: Caller,
  model: CatalogEntry,
): Promise<void> {
  if (!caller.userId) return;
  const sealed = await lookups.sealedProviderKey(caller.userId, model.provider);
  if (!sealed) return;
  caller.ownKey = {
    provider: model.provider,
    apiKey: openProviderKey(keyring, caller.userId, model.provider, sealed),
  };
  caller.budget = undefined;
}

/** A call of an agent or user key its owner limited per minute is counted against those limits, or refused 429 with Retry-After. */
async function withinMinuteLimits(
  minuteWindows: MinuteWindows,
  reply: FastifyReply,
  caller: Caller,
  pace: Pace | null,
): Promise<void> {
  if (!pace) return;
  const { holder, counter, limits } = pace;
  const admitted = await minuteWindows.admit(counter, limits);
  if ('ticket' in admitted) {
    caller.minuteTicket = admitted.ticket;
    return;
  }
  reply.header('Retry-After', admitted.retryAfterSeconds);
  metrics.aiMinuteLimitRefusals().inc({ limit: admitted.refusedBy });
  throw AiErrors.minuteLimitReached(
    holder,
    admitted.refusedBy === 'tokensPerMinute' ? 'tokens' : 'requests',
    limits[admitted.refusedBy]!,
    admitted.retryAfterSeconds,
  );
}

/** A provider API passed through: its wire and url, the models it may serve, the plan's share of them, the turn's channel. */
interface PassedThrough {
  wire: PassThroughGateway;
  url: string;
  catalog: CatalogEntry[];
  allowedOf: (access: Access) => CatalogEntry[];
  channelOf?: (body: Record<string, unknown>) => string | null;
}

/**
 * One passed-through wire: the model must be among the plan's that it serves (400 naming them;
 * a model of the wire's provider beyond the plan is 403), then the call is reserved, sent and billed.
 */
async function passThrough(
  options: AgentGatewayOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  { wire, url, catalog, allowedOf, channelOf }: PassedThrough,
) {
  const body = request.body as Record<string, unknown> & { model: string; stream?: boolean };
  const calling = await callerOf(request, options);
  const { caller, access } = calling;
  if (caller.agentId && channelOf) caller.channel = channelOf(body);
  const allowed = allowedOf(access);
  const served = wire.servedOf(allowed);
  const model = modelNamed(body.model, catalog, served[0]?.provider ?? 'openai');
  if (model && wire.servedOf(catalog).includes(model) && !allowed.includes(model))
    throw AiErrors.modelRestricted(
      body.model,
      allowed.map((m) => m.id),
    );
  if (!model || !served.includes(model))
    throw AiErrors.notOnWire(
      body.model,
      url,
      served.map((m) => m.id),
    );
  await admitCall(options, reply, calling, model);
  if (body.stream) return sendProviderEvents(reply, await wire.stream(model, body, caller));
  return wire.complete(model, body, caller);
}
