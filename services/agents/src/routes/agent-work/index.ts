import { agentWorkRoutes as spec, fastifyRoute, workspaceLimitsOf } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import { activeStatusesOf } from '@agentyard/db';
import { runningAgentGateway } from '../../domain/agent-work/agent-gateway-access.ts';
import { chatSessionKey, readChatHistory, runChatTurn, streamChatTurn, type ChatStreamEvent } from '../../domain/agent-work/chat.ts';
import { deleteMemoryFile, memoryPathOf, readMemory, readMemoryFile, writeMemory, writeMemoryFile } from '../../domain/agent-work/memory.ts';
import { installSkill, listSkills, removeSkill } from '../../domain/agent-work/skills.ts';
import { workspaceOfAgent } from '../../domain/agent-workspace/workspace-files.ts';
import { planCaller, planOf } from '../../domain/agents/plan-limits.ts';
import { skillLimitOf } from '../../domain/agents/plans.ts';
import type { AgentRouteDeps } from '../agents/deps.ts';
import { ownedAgentOf } from '../agents/owned-agent.ts';

/** Chat, memory and skills of a running agent, through its own OpenClaw gateway (issue 19). `auth: 'user'` routes: the identity has a user id. */
export default async function agentWorkRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const ownedAgent = ownedAgentOf(context);
  const gatewayOf = async (request: Parameters<typeof ownedAgent>[0], agentId: string) => runningAgentGateway(await ownedAgent(request, agentId), keyring);
  const readTimeoutMs = config.AGENT_GATEWAY_READ_TIMEOUT_MS;
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  /** The caller's plan (admins: network's; no subscription: free's), which sets the skill and workspace limits. */
  const planNameOf = async (request: Parameters<typeof ownedAgent>[0]) =>
    request.identity.admin ? 'network' : ((await request.asUser((trx) => planOf(trx, planCaller(request.identity, activeStatuses)))) ?? 'free');
  const turnTimeoutMs = config.AGENT_CHAT_TIMEOUT_MS;

  for (const chatSpec of [spec.chat, spec.gatewayChat]) {
    app.route({
      ...fastifyRoute(chatSpec),
      handler: async (request, reply) => {
        const { agentId, message } = request.body;
        const gateway = await gatewayOf(request, agentId);
        const sessionKey = chatSessionKey(request.identity.userId as string, request.body.sessionKey);
        const wantsStream = request.body.stream === true || (request.headers.accept ?? '').includes('text/event-stream');
        if (!wantsStream) {
          const answer = await runChatTurn(gateway, { sessionKey, message }, turnTimeoutMs, config.AGENT_ANSWER_MAX_BYTES);
          return { id: answer.id, agentId, sessionKey, message: { role: 'assistant' as const, content: answer.content }, ...(answer.usage ? { usage: answer.usage } : {}) };
        }
        // The caller leaving aborts the gateway request, and with it the agent's run.
        const left = new AbortController();
        request.raw.on('close', () => left.abort());
        reply.raw.on('close', () => left.abort());
        const events = streamChatTurn(gateway, { sessionKey, message }, turnTimeoutMs, left.signal);
        const first = await events.next(); // a gateway that refuses the turn is still a plain JSON error
        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
        const send = (event: ChatStreamEvent) =>
          raw.write(
            `event: ${event.type}\ndata: ${JSON.stringify(
              event.type === 'done'
                ? { id: event.id, agentId, sessionKey, message: { role: 'assistant', content: event.content }, ...(event.usage ? { usage: event.usage } : {}) }
                : { content: event.content },
            )}\n\n`,
          );
        try {
          if (!first.done) send(first.value);
          for await (const event of events) {
            if (raw.destroyed) break;
            send(event);
          }
        } catch (error) {
          if (!raw.destroyed)
            raw.write(
              `event: error\ndata: ${JSON.stringify({ error: (error as { statusCode?: number }).statusCode === 504 ? 'Agent gateway did not answer in time' : 'Agent gateway unavailable' })}\n\n`,
            );
        }
        raw.end();
        return reply;
      },
    });
  }

  app.route({
    ...fastifyRoute(spec.chatHistory),
    handler: async (request) => {
      const { agentId, limit = 50, cursor } = request.query;
      const gateway = await gatewayOf(request, agentId);
      const sessionKey = chatSessionKey(request.identity.userId as string, request.query.sessionKey);
      const page = await readChatHistory(gateway, sessionKey, { limit, cursor, timeoutMs: readTimeoutMs });
      return { agentId, sessionKey, ...page };
    },
  });

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
        return { agentId, ...(await writeMemoryFile(workspaceOfAgent(context.driver, agent.id), memoryPathOf(path), content, limits)) };
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
      const removed = await deleteMemoryFile(workspaceOfAgent(context.driver, agent.id), path);
      return { deleted: true as const, agentId, path: removed.path };
    },
  });

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
      const skills = await installSkill(gateway, () => workspaceOfAgent(context.driver, gateway.agentId), { name, skillMd }, limits, readTimeoutMs);
      return { agentId, ...skills, limit: limits.skills };
    },
  });

  app.route({
    ...fastifyRoute(spec.removeSkill),
    handler: async (request) => {
      const { agentId, name } = request.body;
      const gateway = await gatewayOf(request, agentId);
      await removeSkill(gateway, () => workspaceOfAgent(context.driver, gateway.agentId), name, readTimeoutMs);
      return { deleted: true as const, agentId, name };
    },
  });
}
