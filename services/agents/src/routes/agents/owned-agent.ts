import type { FastifyRequest } from 'fastify';
import { getAgent } from '../../domain/agents/agents.ts';
import { scopedAgents } from '../../domain/agents/agents-system.ts';
import type { RuntimeContext } from '../../domain/agents/runtime-context-system.ts';
import type { AgentRow } from '../../domain/agents/shapes.ts';

/**
 * The agent as its owner sees it: on the web through row-level security, on the backend scoped
 * to the caller's x-user-id. Anyone else's agent, or none, is 404.
 */
export const ownedAgentOf =
  (context: RuntimeContext) =>
  (request: FastifyRequest, id: string): Promise<AgentRow> =>
    request.identity.surface === 'web' ? request.asUser((trx) => getAgent(trx, id)) : scopedAgents(context.db, request.identity.userId).get(id);
