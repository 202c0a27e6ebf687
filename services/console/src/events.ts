// The per-user stream of agent status changes (GET /api/events, Server-Sent Events), applied to the
// lists the console already holds. Plain functions so the state changes are tested without a browser.
import type { AgentList, AgentDetail } from './types.ts';

export interface AgentStatusEvent { type: 'agent.status'; agentId: string; status: string; at?: string }

/** An `agent.status` event from one SSE message's data, or undefined for anything else (keep-alives, other types). */
export function parseAgentEvent(data: string): AgentStatusEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const event = value as Partial<AgentStatusEvent> | null;
  if (event?.type !== 'agent.status' || typeof event.agentId !== 'string' || typeof event.status !== 'string') return undefined;
  return { type: 'agent.status', agentId: event.agentId, status: event.status, ...(typeof event.at === 'string' ? { at: event.at } : {}) };
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
