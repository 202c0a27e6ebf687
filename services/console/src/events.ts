// The per-user stream of agent status changes (GET /api/events, Server-Sent Events), applied to the
// lists the console already holds. Plain functions so the state changes are tested without a browser.
import type { AgentStatusEvent as AgentStatusEventSchema } from '@agentyard/proto-schemas';
import type { Static } from 'typebox';
import type { AgentList, AgentDetail } from './types.ts';

/** The data of one `event: agent-status` message: the schema the agents service sends. */
export type AgentStatusEvent = Static<typeof AgentStatusEventSchema>;

/** An agent-status event from one SSE message's data, or undefined for anything that is not one. */
export function parseAgentEvent(data: string): AgentStatusEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const event = value as Partial<AgentStatusEvent> | null;
  if (typeof event?.agentId !== 'string' || typeof event.status !== 'string' || typeof event.at !== 'string') return undefined;
  return { agentId: event.agentId, status: event.status, previousStatus: typeof event.previousStatus === 'string' ? event.previousStatus : null, at: event.at };
}

/** The list with the event's agent in its new status; the same object when nothing changes (no re-render). */
export function applyToList(list: AgentList | undefined, event: AgentStatusEvent): AgentList | undefined {
  if (!list?.agents.some((a) => a.id === event.agentId && a.status !== event.status)) return list;
  return { ...list, agents: list.agents.map((a) => (a.id === event.agentId ? { ...a, status: event.status as typeof a.status } : a)) };
}

export function applyToDetail(detail: { agent: AgentDetail } | undefined, event: AgentStatusEvent): { agent: AgentDetail; status: 'ok' } | undefined {
  if (!detail || detail.agent.id !== event.agentId || detail.agent.status === event.status) return detail as { agent: AgentDetail; status: 'ok' } | undefined;
  return { ...detail, agent: { ...detail.agent, status: event.status as AgentDetail['status'] }, status: 'ok' };
}
