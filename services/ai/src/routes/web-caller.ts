import type { FastifyRequest } from 'fastify';
import type { Caller } from '../domain/chat-gateway.ts';
import type { CallerLookups } from '../domain/privileged/caller-lookups.ts';
import { accessForPlan, type Access } from '../domain/plan-access.ts';

/** A signed-in web caller (session or API key) and their plan now: billed to them with no agent; admins draw on no budget. 402 without a plan. */
export async function webCallerOf(
  request: FastifyRequest,
  lookups: CallerLookups,
): Promise<{ caller: Caller; access: Access }> {
  const { admin } = request.identity;
  const userId = request.identity.userId as string;
  const access = accessForPlan(await lookups.userPlan(userId, admin));
  const budget = admin ? undefined : { userId, agentId: null, plan: access.plan };
  return { caller: { userRef: userId, userId, agentId: null, budget }, access };
}
