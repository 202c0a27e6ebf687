import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseKeyring } from '@agentyard/crypto';
import { activeStatusesOf } from '@agentyard/db';
import { HttpError, openEventStream, type ServiceApp } from '@agentyard/http';
import { fastifyRoute, agentWorkRoutes as spec, workspaceLimitsOf } from '@agentyard/proto-schemas';
import { runningAgentGateway } from '../../domain/gateway/agent-gateway-access.ts';
import {
  type ChatStreamEvent,
  chatSessionKey,
  readChatHistory,
  runChatTurn,
  streamChatTurn,
} from '../../domain/gateway/chat.ts';
import {
  deleteMemoryFile,
  memoryPathOf,
  readMemory,
  readMemoryFile,
  writeMemory,
  writeMemoryFile,
} from '../../domain/workspace/memory.ts';
import { installSkill, listSkills, removeSkill } from '../../domain/workspace/skills.ts';
import { workspaceOfAgent } from '../../domain/workspace/workspace-files.ts';
import { planCaller, planOf } from '../../domain/agents/plan-limits.ts';
import { skillLimitOf } from '../../domain/agents/plans.ts';
import type { AgentsConfig } from '../../config.ts';
import type { AgentRouteDeps } from './deps.ts';
import { ownedAgentOf, reachableAgentOf } from './owned-agent.ts';

type AgentGateway = ReturnType<typeof runningAgentGateway>;
type ChatTurn = { agentId: string; sessionKey: string; message: string };

/** What the work routes share: the caller's agent and its gateway, the caller's plan, the agent's workspace. */
function agentWorkOf({ config, context }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const reachableAgent = reachableAgentOf(context);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  return {
    keyring,
    ownedAgent: ownedAgentOf(context),
    readTimeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS,
    gatewayOf: async (request: FastifyRequest, agentId: string) =>
      runningAgentGateway(await reachableAgent(request, agentId), keyring),
    /** The caller's plan (admins: network's; no subscription: free's), which sets the skill and workspace limits. */
    planNameOf: async (request: FastifyRequest) =>
      request.identity.admin
        ? 'network'
        : ((await request.asUser((trx) => planOf(trx, planCaller(request.identity, activeStatuses)))) ?? 'free'),
    workspaceOf: (agentId: string) => workspaceOfAgent(context.driver, agentId, context.workspaces.ledger(agentId)),
  };
}
type AgentWork = ReturnType<typeof agentWorkOf>;

/** A turn answered whole, once the agent has finished it. */
async function answerTurn(config: AgentsConfig, gateway: AgentGateway, { agentId, sessionKey, message }: ChatTurn) {
  const answer = await runChatTurn(
    gateway,
    { sessionKey, message },
    config.AGENT_CHAT_TIMEOUT_MS,
    config.AGENT_ANSWER_MAX_BYTES,
  );
  return {
    id: answer.id,
    agentId,
    sessionKey,
    message: { role: 'assistant' as const, content: answer.content },
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
}

/** A turn streamed as events while the agent writes it; the caller leaving aborts the gateway request, and with it the agent's run. */
async function streamTurn(
  config: AgentsConfig,
  request: FastifyRequest,
  reply: FastifyReply,
  gateway: AgentGateway,
  { agentId, sessionKey, message }: ChatTurn,
): Promise<void> {
  const left = new AbortController();
  request.raw.on('close', () => left.abort());
  reply.raw.on('close', () => left.abort());
  const events = streamChatTurn(
    gateway,
    { sessionKey, message },
    config.AGENT_CHAT_TIMEOUT_MS,
    config.AGENT_ANSWER_MAX_BYTES,
    left.signal,
  );
  const first = await events.next(); // a gateway that refuses the turn is still a plain JSON error
  const stream = openEventStream(reply);
  const send = (event: ChatStreamEvent) =>
    stream.send(
      event.type,
      event.type === 'done'
        ? {
            id: event.id,
            agentId,
            sessionKey,
            message: { role: 'assistant', content: event.content },
            ...(event.usage ? { usage: event.usage } : {}),
          }
        : { content: event.content },
    );
  try {
    if (!first.done) send(first.value);
    for await (const event of events) {
      if (stream.left.aborted) break;
      send(event);
    }
  } catch (error) {
    // The stream's errors are AgentWorkErrors (gatewayFailure): their messages are the caller's to read.
    stream.send('error', { error: error instanceof HttpError ? error.message : 'Agent gateway unavailable' });
  }
  stream.end();
}

/** A turn with the agent (answered whole, or streamed) and the chat's history. */
function chatRoutes(app: ServiceApp, { config, context }: AgentRouteDeps, work: AgentWork) {
  for (const chatSpec of [spec.chat, spec.gatewayChat]) {
    app.route({
      ...fastifyRoute(chatSpec),
      handler: async (request, reply) => {
        const { agentId, message } = request.body;
        const owned = await work.ownedAgent(request, agentId);
        // A turn holds its agent awake from before it is woken until the turn ends.
        const release = await context.hibernation.hold(owned.id);
        reply.raw.on('close', release);
        let gateway: AgentGateway;
        try {
          gateway = runningAgentGateway(await context.hibernation.reach(owned), work.keyring);
        } catch (error) {
          release();
          throw error;
        }
        const turn = {
          agentId,
          sessionKey: chatSessionKey(request.identity.userId as string, request.body.sessionKey),
          message,
        };
        const wantsStream =
          request.body.stream === true || (request.headers.accept ?? '').includes('text/event-stream');
        if (!wantsStream) {
          try {
            return await answerTurn(config, gateway, turn);
          } finally {
            release();
          }
        }
        await streamTurn(config, request, reply, gateway, turn);
        return reply;
      },
    });
  }

  app.route({
    ...fastifyRoute(spec.chatHistory),
    handler: async (request) => {
      const { agentId, limit = 50, cursor } = request.query;
      const gateway = await work.gatewayOf(request, agentId);
      const sessionKey = chatSessionKey(request.identity.userId as string, request.query.sessionKey);
      const page = await readChatHistory(gateway, sessionKey, { limit, cursor, timeoutMs: work.readTimeoutMs });
      return { agentId, sessionKey, ...page };
    },
  });
}

/** The agent's memory: read through its gateway, a file of it written or deleted on its workspace. */
function memoryRoutes(app: ServiceApp, work: AgentWork) {
  const { gatewayOf, ownedAgent, planNameOf, workspaceOf, readTimeoutMs } = work;
  app.route({
    ...fastifyRoute(spec.memory),
    handler: async (request) => {
      const { agentId, path } = request.query;
      const gateway = await gatewayOf(request, agentId);
      if (path !== undefined) return { agentId, ...(await readMemoryFile(gateway, memoryPathOf(path), readTimeoutMs)) };
      return { agentId, ...(await readMemory(gateway, readTimeoutMs)) };
    },
  });

  app.route({
    ...fastifyRoute(spec.writeMemory),
    handler: async (request) => {
      const { agentId, path, content } = request.body;
      if (path !== undefined) {
        const agent = await ownedAgent(request, agentId);
        const limits = workspaceLimitsOf(await planNameOf(request));
        return { agentId, ...(await writeMemoryFile(workspaceOf(agent.id), memoryPathOf(path), content, limits)) };
      }
      const gateway = await gatewayOf(request, agentId);
      return { agentId, ...(await writeMemory(gateway, content, readTimeoutMs)) };
    },
  });

  app.route({
    ...fastifyRoute(spec.deleteMemory),
    handler: async (request) => {
      const { agentId, path } = request.query;
      const agent = await ownedAgent(request, agentId);
      const removed = await deleteMemoryFile(workspaceOf(agent.id), path);
      return { deleted: true as const, agentId, path: removed.path };
    },
  });
}

/** The agent's skills, listed, installed and removed within the caller's plan. */
function skillRoutes(app: ServiceApp, { context }: AgentRouteDeps, work: AgentWork) {
  const { gatewayOf, planNameOf, workspaceOf, readTimeoutMs } = work;
  app.route({
    ...fastifyRoute(spec.skills),
    handler: async (request) => {
      const { agentId } = request.query;
      const gateway = await gatewayOf(request, agentId);
      const limit = skillLimitOf(await planNameOf(request));
      return { agentId, ...(await listSkills(gateway, readTimeoutMs)), limit };
    },
  });

  app.route({
    ...fastifyRoute(spec.installSkill),
    handler: async (request) => {
      const { agentId, name, skillMd } = request.body;
      const gateway = await gatewayOf(request, agentId);
      const plan = await planNameOf(request);
      const limits = { skills: skillLimitOf(plan), workspace: workspaceLimitsOf(plan) };
      // One skill change of an agent at a time: the limit is checked on what the last change left.
      const skills = await context.workspaces.skillChange(gateway.agentId, () =>
        installSkill(gateway, () => workspaceOf(gateway.agentId), { name, skillMd }, limits, readTimeoutMs),
      );
      return { agentId, ...skills, limit: limits.skills };
    },
  });

  app.route({
    ...fastifyRoute(spec.removeSkill),
    handler: async (request) => {
      const { agentId, name } = request.body;
      const gateway = await gatewayOf(request, agentId);
      await context.workspaces.skillChange(gateway.agentId, () =>
        removeSkill(gateway, () => workspaceOf(gateway.agentId), name, readTimeoutMs),
      );
      return { deleted: true as const, agentId, name };
    },
  });
}

/** Chat, memory and skills of a running agent, through its own OpenClaw gateway (issue 19). `auth: 'user'` routes: the identity has a user id. */
export default async function agentWorkRoutes(app: ServiceApp, deps: AgentRouteDeps) {
  const work = agentWorkOf(deps);
  chatRoutes(app, deps, work);
  memoryRoutes(app, work);
  skillRoutes(app, deps, work);
}
