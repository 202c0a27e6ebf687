import { fetchWithTimeout } from '@agentyard/http';
import { IDENTITY_HEADER, signIdentity, type Identity } from '@agentyard/identity';
import { AiErrors } from '../../errors.ts';

/** An agent's answer to one turn. */
export interface AgentAnswer {
  id: string;
  content: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface AgentTurnTarget {
  /** Where the agents service listens (serviceUrl('agents')). */
  agentsUrl: string;
  identitySecret: string;
  /** Lifetime of the identity signed for the hop (IDENTITY_TTL_SECONDS). */
  identityTtlSeconds: number;
  timeoutMs: number;
}

/**
 * One turn of the caller's agent through the agents service's own chat route (POST /api/chat), as
 * the caller: the identity the edge signed is signed again for this one hop, so the agents service
 * checks ownership (404 for another's agent), the running state and the turn's deadline itself, and
 * its refusals reach the caller unchanged.
 */
export async function askAgent(
  target: AgentTurnTarget,
  caller: Identity,
  turn: { agentId: string; message: string },
): Promise<AgentAnswer> {
  let response: Response;
  try {
    response = await fetchWithTimeout(`${target.agentsUrl}/api/chat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        [IDENTITY_HEADER]: signIdentity(caller, target.identitySecret, target.identityTtlSeconds),
        'x-request-id': caller.requestId,
      },
      body: JSON.stringify({ agentId: turn.agentId, message: turn.message }),
      timeoutMs: target.timeoutMs,
    });
  } catch {
    throw AiErrors.agentUnreachable();
  }
  const body = (await response.json().catch(() => null)) as
    | (AgentAnswer & { error?: string; code?: string; message?: { content?: string } })
    | null;
  if (!response.ok) {
    if (response.status < 500 || response.status === 504)
      throw AiErrors.agentRefused(response.status, body?.error ?? 'The agent did not answer', body?.code);
    throw AiErrors.agentUnreachable();
  }
  if (!body || typeof body.message?.content !== 'string') throw AiErrors.agentUnreachable();
  return { id: String(body.id), content: body.message.content, ...(body.usage ? { usage: body.usage } : {}) };
}
