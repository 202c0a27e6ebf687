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
  if (typeof event?.agentId !== 'string' || typeof event.status !== 'string' || typeof event.at !== 'string')
    return undefined;
  const parsed: AgentStatusEvent = {
    agentId: event.agentId,
    status: event.status,
    previousStatus: typeof event.previousStatus === 'string' ? event.previousStatus : null,
    at: event.at,
  };
  // The end of an operation the owner asked for on the web: which, how it went, why it failed.
  if (typeof event.action === 'string' && (event.outcome === 'done' || event.outcome === 'failed')) {
    Object.assign(parsed, {
      action: event.action,
      outcome: event.outcome,
      ...(typeof event.error === 'string' ? { error: event.error } : {}),
    });
  }
  return parsed;
}

/** An operation on an agent, as its page offers it. */
export type AgentAction = 'start' | 'stop' | 'restart' | 'repair' | 'reset-memory' | 'update' | 'delete';

/**
 * The operations that make sense for an agent in `status`: none but delete while it is being
 * provisioned; start (not stop) when it is stopped; repair and delete when it is in error; a hibernating
 * agent's are a running one's.
 */
export function actionsFor(status: string): AgentAction[] {
  switch (status) {
    case 'pending':
    case 'provisioning':
    case 'deploying':
      return ['delete'];
    case 'running':
    case 'active':
    case 'suspended': // hibernating: still the owner's running agent, woken by whatever reaches it
      return ['stop', 'restart', 'repair', 'reset-memory', 'update', 'delete'];
    case 'error':
      return ['repair', 'delete'];
    default:
      return ['start', 'repair', 'reset-memory', 'update', 'delete'];
  }
}

/** How deep an agent in `status` hibernates as far as an event tells: a suspension starts with a pause (the page's next load says if it was stopped since). */
const hibernationAfter = (status: string, before: 'paused' | 'stopped' | null): 'paused' | 'stopped' | null =>
  status === 'suspended' ? (before ?? 'paused') : null;

/** The list with the event's agent in its new status; the same object when nothing changes (no re-render). */
export function applyToList(list: AgentList | undefined, event: AgentStatusEvent): AgentList | undefined {
  if (!list?.agents.some((a) => a.id === event.agentId && a.status !== event.status)) return list;
  return {
    ...list,
    agents: list.agents.map((a) =>
      a.id === event.agentId
        ? { ...a, status: event.status as typeof a.status, hibernation: hibernationAfter(event.status, a.hibernation) }
        : a,
    ),
  };
}

export function applyToDetail(
  detail: { agent: AgentDetail } | undefined,
  event: AgentStatusEvent,
): { agent: AgentDetail; status: 'ok' } | undefined {
  if (!detail || detail.agent.id !== event.agentId || detail.agent.status === event.status)
    return detail as { agent: AgentDetail; status: 'ok' } | undefined;
  return {
    ...detail,
    agent: {
      ...detail.agent,
      status: event.status as AgentDetail['status'],
      hibernation: hibernationAfter(event.status, detail.agent.hibernation),
    },
    status: 'ok',
  };
}
