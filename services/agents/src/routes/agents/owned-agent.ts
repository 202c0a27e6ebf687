import type { FastifyRequest } from 'fastify';
import { getAgent } from '../../domain/agents/agents.ts';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import type { RuntimeContext } from '../../domain/runtime/privileged/runtime-context.ts';
import type { AgentRow } from '../../domain/agents/agent-views.ts';

/**
 * The agent as its owner sees it: on the web through row-level security, on the backend scoped
 * to the caller's x-user-id. Anyone else's agent, or none, is 404.
 */
export const ownedAgentOf =
  (context: RuntimeContext) =>
  (request: FastifyRequest, id: string): Promise<AgentRow> =>
    request.identity.surface === 'web'
      ? request.asUser((trx) => getAgent(trx, id))
      : scopedAgents(context.db, request.identity.userId).get(id);

/** The owner's agent about to be reached (a turn, its Control UI, its gateway): awake, a hibernating one woken first. */
export const reachableAgentOf = (context: RuntimeContext) => {
  const owned = ownedAgentOf(context);
  return async (request: FastifyRequest, id: string): Promise<AgentRow> =>
    context.hibernation.reach(await owned(request, id));
};
